# SPDX-License-Identifier: GPL-2.0-only
# Shared by the integration tests: the lab (scripts/lab.sh) and assertions.
# Each test ends with "NAME: N passed, M failed" and exits non-zero on any
# failure; 77 means skipped.

if [ "$(id -u)" -ne 0 ]; then
	echo "$(basename "$0"): needs root; skipped"
	exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lab.sh"
lab_enter "$0" "$@"
trap lab_down EXIT

source "$(dirname "${BASH_SOURCE[0]}")/assert.sh"

# spoof_lab_up RATE BURST NEW_SOURCES: the spoofed-flood lab of
# test_spoof.sh and test_new_sources.sh: floodgate on fgA limits udp dport 9
# per source to RATE/s with BURST, in a table of 65,536 entries, and nft
# counts what the two real sources 192.0.2.1 and 192.0.2.2 get through.
spoof_lab_up() {
	local conf
	conf=$(mktemp)
	cat >"$conf" <<-CONF
		max_sources = 65536
		new_sources = $3
		[policy per-ip]
		match = udp dport 9
		per   = src/32 src/64
		rate  = $1/s
		burst = $2
	CONF
	lab_up
	expect_exit 0 "load with a 65,536-entry table" "$FLOODGATE" load fgA -c "$conf"
	rm -f "$conf"
	count_sources 192.0.2.1 192.0.2.2
}

# The second lab, for two hosts or two interfaces of one host: fgC
# (10.201.0.1) and its peer fgD in the sender's netns. The test removes fgC.
lab_up_second() {
	ip link add fgC numtxqueues 2 numrxqueues 2 type veth peer name fgD \
		numtxqueues 2 numrxqueues 2
	ip link set fgD netns "$SENDER_NS"
	ip -n "$SENDER_NS" link set fgD up
	# As fgB's: no IPv6 of its own reaches fgC as traffic no test sent.
	ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgD.disable_ipv6=1
	ip addr add 10.201.0.1/24 dev fgC
	ip link set fgC up
	FGC_MAC=$(cat /sys/class/net/fgC/address)
	ethtool -K fgC gro on >/dev/null
}

# flood_second ARGS...: the generator on the second lab (fgD -> fgC).
flood_second() {
	ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgD --dst-mac "$FGC_MAC" --json "$@"
}

# flood_both SECONDS SRC: the same source floods fgA and fgC at once, at
# 20000/s each, to udp dport 9; sets FLOOD_A and FLOOD_SECOND (the
# generators' JSON). Needs $WORK.
flood_both() {
	flood_second --dst 10.201.0.1 --src "$2" --dport 9 --rate 20000 --duration "$1" \
		>"$WORK/flood_second.json" &
	local pid=$!
	FLOOD_A=$(flood --dst 10.200.0.1 --src "$2" --dport 9 --rate 20000 --duration "$1")
	wait $pid
	FLOOD_SECOND=$(cat "$WORK/flood_second.json")
}

# require_redis: skips the suite (exit 77) on a machine without redis-server.
require_redis() {
	if ! command -v redis-server >/dev/null; then
		echo "$TEST_NAME: redis-server is not installed (scripts/install-deps.sh); skipped"
		exit 77
	fi
}

# stop_children PID...: stops the suite's background processes and reaps
# them (empty arguments are skipped).
stop_children() {
	local pid
	for pid in "$@"; do
		[ -n "$pid" ] || continue
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	return 0
}
