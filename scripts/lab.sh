# SPDX-License-Identifier: GPL-2.0-only
# A two-namespace veth lab, shared by the demo and the integration tests.
#
# The caller re-runs itself in a private network and mount namespace
# (lab_enter), as xdp-tools' test runner does: its veths, its bpffs and every
# pin vanish with it, even on a crash, and the host's interfaces are never
# touched. The sender lives in a named netns of its own (removed by lab_down).
#
#   fgA  10.200.0.1/24, fd00:200::1/64   the protected host, floodgate's side
#   fgB  (in $SENDER_NS)                 where floodgate-flood injects frames

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
# The traffic generator (tools/flood/), a binary of its own.
FLOOD_GEN=${FLOOD_GEN:-$REPO/build/floodgate-flood}
SENDER_NS=fgsend$$

# lab_enter "$0" "$@": re-executes the calling script inside the sandbox.
lab_enter() {
	local script=$1
	shift
	if [ -z "${FG_IN_SANDBOX:-}" ]; then
		FG_IN_SANDBOX=1 exec unshare -n -m -- bash "$script" "$@"
	fi
	mount --make-rprivate /
	# sysfs shows the netns of whoever mounted it: remount it for ours.
	mount -t sysfs sysfs /sys
	mount -t bpf bpf /sys/fs/bpf
	# Named netns live as files in /run/netns: keep ours off the host's.
	mkdir -p /run/netns
	mount -t tmpfs tmpfs /run/netns
	# floodgate's state (bans by hand) too: a lab's bans never reach the
	# host's /var/lib/floodgate, nor another lab's.
	mkdir -p /var/lib/floodgate
	mount -t tmpfs -o mode=0700 tmpfs /var/lib/floodgate
	ip link set lo up
}

# lab_drop_backscatter: build/drop_backscatter.bpf.o on fgB, native XDP. It
# drops what comes back to the spoofed ranges (the SYN-ACKs a spoofed SYN
# flood earns), as the internet would take them away, and lets fgB accept
# what fgA sends with XDP_TX (GRO alone did not, here). bpftool loads it and
# attaches it from the sender's netns through nsenter, which keeps the
# lab's mount namespace and so /sys/fs/bpf (`ip -n` remounts /sys without
# it; iproute2's own loader failed there on 6.1, silently). Fails unless
# the program is attached.
lab_drop_backscatter() {
	local pin=/sys/fs/bpf/lab-backscatter
	bpftool prog load "$REPO/build/drop_backscatter.bpf.o" "$pin" type xdp &&
		nsenter --net="/run/netns/$SENDER_NS" bpftool net attach xdpdrv pinned "$pin" dev fgB
	rm -f "$pin"
	ip -n "$SENDER_NS" link show fgB | grep -q 'prog/xdp'
}

lab_down() {
	ip netns del "$SENDER_NS" 2>/dev/null
	return 0
}

lab_up() {
	ip netns add "$SENDER_NS"
	# Two queues a side: one ring per sending CPU, so concurrent generators
	# do not overflow a single ring.
	ip link add fgA numtxqueues 2 numrxqueues 2 type veth peer name fgB \
		numtxqueues 2 numrxqueues 2
	ip link set fgB netns "$SENDER_NS"
	# fgB's own IPv6 (router solicitations, MLD reports in its first
	# seconds) would reach fgA as traffic no test sent, and create state
	# under a `match = any` policy; the generator needs no address.
	ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgB.disable_ipv6=1
	ip addr add 10.200.0.1/24 dev fgA
	ip addr add fd00:200::1/64 dev fgA nodad
	ip link set fgA up
	ip -n "$SENDER_NS" link set lo up
	ip -n "$SENDER_NS" link set fgB up
	FGA_MAC=$(cat /sys/class/net/fgA/address)
	# XDP_TX'd frames arrive at a veth only with an XDP program or GRO
	# on it; GRO covers the tc-hook runs.
	ethtool -K fgA gro on >/dev/null
}

# count_sources ADDR...: an nft netdev-ingress counter for each source. It
# sees what XDP and tc passed, before the IP stack, then drops it so that the
# stack does no further work.
count_sources() {
	local rules="" addr i=0 j
	for addr in "$@"; do
		if [[ $addr == *:* ]]; then
			rules+="ip6 saddr $addr counter name c$i drop; "
		else
			rules+="ip saddr $addr counter name c$i drop; "
		fi
		i=$((i + 1))
	done
	nft delete table netdev fgcount 2>/dev/null || true
	{
		echo "table netdev fgcount {"
		for ((j = 0; j < i; j++)); do echo "counter c$j { }"; done
		echo "chain in { type filter hook ingress device fgA priority 0; $rules }"
		echo "}"
	} | nft -f -
}

# received INDEX: packets counted for the INDEX-th source of count_sources.
received() {
	nft -j list counter netdev fgcount "c$1" | python3 -c \
		'import json,sys; print([o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o][0])'
}

# flood ARGS...: runs the generator in the sender netns; JSON on stdout.
flood() {
	ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" --json "$@"
}

# json_get JSON EXPR: evaluates a Python expression over the parsed JSON `d`.
# wait_until SECONDS COMMAND...: polls COMMAND every 50ms until it succeeds,
# for state the kernel releases asynchronously (RCU). Fails after SECONDS.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.05
	done
}

json_get() {
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}
