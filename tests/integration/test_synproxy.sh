#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# [synproxy] end to end in the veth lab: a listener on fgA's port 8080,
# real clients in the sender's namespace (10.200.0.2, fd00:200::2). With
# the proxy loaded, floodgate answers each SYN with a cookie at XDP and
# nftables' synproxy (floodgate's table inet floodgate_synproxy_fgA) opens
# the connection to the listener when the client's ACK comes back:
#   (a) sequential connects complete and echo their data;
#   (b) under a spoofed SYN flood they still do, the proxy counts its
#       SYN-ACKs, and the listener's stack sends no SYN cookie of its own
#       and drops nothing from its listen queue;
#   (c) ACKs with random cookies reach no socket and are counted;
#   (d) a connection opened before the load keeps exchanging data;
#   (e) IPv6 connects work;
#   (f) unload, a reload without [synproxy] and a killed load followed by
#       load or unload leave no floodgate table and restore
#       net.netfilter.nf_conntrack_tcp_loose, which stays strict while a
#       second interface still uses the proxy;
#   (g) the tc hook proxies too;
#   (h) with another firewall loaded (a table inet hostfw that drops
#       `ct state invalid` in input at filter priority, and Docker's
#       iptables-nft chains), before or after floodgate: connects still
#       complete, and load, reload and unload leave the other tables as
#       they were;
#   (j) a SYN the hook cannot answer (its frame cannot grow) goes on to
#       nftables' synproxy, counted, never dropped uncounted;
#   (k) `synacks` caps the SYN-ACKs a spoofed flood earns: no more than
#       the burst plus the rate over the flood's time, the rest counted;
#   (i) a bulk iperf3 transfer to a protected port keeps its throughput:
#       the ratio with/without [synproxy], measured in this run, is
#       printed against the issue's 90% and asserted only >= 50% (see
#       there why).
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
LISTENER=""
EARLY=""
IPERF=""
FOREIGN=""
trap 'stop_children $LISTENER $EARLY $IPERF; foreign_down; lab_down; rm -rf "$WORK"' EXIT
PORT=8080
IPERF_PORT=5201
# The spoofed SYN flood's rate (tests/kernels/guest.sh lowers it under TCG).
FLOOD_PPS=${FG_SYNPROXY_FLOOD_PPS:-20000}
LOOSE=/proc/sys/net/netfilter/nf_conntrack_tcp_loose

lab_up
ip -n "$SENDER_NS" addr add 10.200.0.2/24 dev fgB
ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgB.disable_ipv6=0
ip -n "$SENDER_NS" addr add fd00:200::2/64 dev fgB nodad
# The SYN-ACKs leave fgA by XDP_TX, and fgB takes them with a native XDP
# program that drops those to the spoofed range. So the generator holds
# its program on the sender's loopback (--hold lo), or each of its batches
# would wait for an RCU grace period (in the 6.1 guest, over a second).
check "the sender's backscatter drop is attached to fgB" lab_drop_backscatter

cat >"$WORK/synproxy.conf" <<CONF
[synproxy]
ports = $PORT
CONF
# The same host without the proxy: a policy elsewhere.
cat >"$WORK/none.conf" <<CONF
[policy other]
match = udp dport 9
per   = src/32 src/64
rate  = 1000/s
burst = 1000
CONF

TCP_LAB=$REPO/scripts/tcp_lab.py

# connects ADDR N: N sequential connects from the sender, each echoing a
# line, with 3 s for the connect and each read (a connection rides out one
# lost segment: the first retransmission comes after 1 s); prints how many
# echoed. The test asserts that each does, and prints how many took over
# 1 s (none expected: a slow one is a retransmission, or a loaded machine).
connects() {
	local out
	out=$(ip netns exec "$SENDER_NS" python3 "$TCP_LAB" connects "$1" "$PORT" "$2" 3)
	python3 -c 'import json, sys
d = json.loads(sys.argv[1])
slow = sum(1 for ms in d["echo_ms"] if ms is None or ms > 1000)
print("    %d of %d connects to %s took over 1 s or failed %s"
      % (slow, len(d["echo_ms"]), sys.argv[2], d["errors"] or ""), file=sys.stderr)
print(d["done"])' "$out" "$1"
}

nstat_value() {
	nstat -az "$1" | awk -v k="$1" '$1 == k {print $2}'
}

# The listener's count of handshake ACKs refused for a TSecr it never
# sent (Linux 6.15 and later; 0 where the kernel has no such counter).
tsecr_rejected() {
	local v
	v=$(nstat_value TcpExtTSEcrRejected)
	echo "${v:-0}"
}

stat_of() {
	json_get "$("$FLOODGATE" stats fgA --json)" "d['global']['$1']"
}

no_table() {
	! nft list tables | grep -q floodgate
}

# (h)'s other firewall: a host table that drops what conntrack finds
# invalid (the usual first rule of an nftables input chain), and the
# chains Docker makes with iptables-nft (DOCKER-USER in FORWARD, DOCKER
# in nat's PREROUTING and OUTPUT, the masquerade of its bridge, a
# published port). Docker's FORWARD policy drop is left out: nothing here
# is forwarded, and the host's policy would outlive the test.
foreign_up() {
	FOREIGN=1
	HAD_FILTER=0 HAD_NAT=0
	nft list table ip filter >/dev/null 2>&1 && HAD_FILTER=1
	nft list table ip nat >/dev/null 2>&1 && HAD_NAT=1
	nft -f - <<'NFT'
table inet hostfw {
	chain input {
		type filter hook input priority filter; policy accept;
		ct state invalid counter drop
		ct state established,related accept
		iif lo accept
	}
}
NFT
	iptables-nft -N DOCKER-USER
	iptables-nft -A DOCKER-USER -j RETURN
	iptables-nft -I FORWARD -j DOCKER-USER
	iptables-nft -t nat -N DOCKER
	iptables-nft -t nat -A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
	iptables-nft -t nat -A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER
	iptables-nft -t nat -A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
	iptables-nft -t nat -A DOCKER -i docker0 -j RETURN
	iptables-nft -t nat -A DOCKER ! -i docker0 -p tcp --dport 18080 -j DNAT \
		--to-destination 172.17.0.2:80
}

# Takes the other firewall away, even half made (the EXIT trap calls it).
foreign_down() {
	[ -n "$FOREIGN" ] || return 0
	nft delete table inet hostfw 2>/dev/null
	iptables-nft -D FORWARD -j DOCKER-USER 2>/dev/null
	iptables-nft -F DOCKER-USER 2>/dev/null
	iptables-nft -X DOCKER-USER 2>/dev/null
	iptables-nft -t nat -D PREROUTING -m addrtype --dst-type LOCAL -j DOCKER 2>/dev/null
	iptables-nft -t nat -D OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER \
		2>/dev/null
	iptables-nft -t nat -D POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE 2>/dev/null
	iptables-nft -t nat -F DOCKER 2>/dev/null
	iptables-nft -t nat -X DOCKER 2>/dev/null
	# The tables iptables-nft made for them, when the host had none.
	[ "$HAD_FILTER" = 1 ] || nft delete table ip filter 2>/dev/null
	[ "$HAD_NAT" = 1 ] || nft delete table ip nat 2>/dev/null
	FOREIGN=""
	return 0
}

# The other firewall's rules, without its counters.
foreign_ruleset() {
	nft -s list table inet hostfw 2>&1
	nft -s list table ip filter 2>&1
	nft -s list table ip nat 2>&1
}

# iperf_bps: one 3 s bulk transfer from the sender's namespace to the
# iperf3 server on fgA's side; prints the receiver's bits per second.
iperf_bps() {
	ip netns exec "$SENDER_NS" iperf3 -c 10.200.0.1 -p "$IPERF_PORT" -t 3 -J |
		python3 -c 'import json, sys
d = json.load(sys.stdin)
print(int(d.get("end", {}).get("sum_received", {}).get("bits_per_second", 0)))'
}

# median3 A B C: the middle one.
median3() {
	printf '%s\n' "$@" | sort -n | sed -n 2p
}

python3 "$TCP_LAB" serve "$PORT" "$WORK/listening" &
LISTENER=$!
# Bounds, not delays: a python start takes seconds under the 6.1 guest's
# emulation, and the load must come after the early connection is up.
wait_until 30 test -e "$WORK/listening"

# The host's own value, which every path below must give back.
echo 1 >"$LOOSE"

# (d) first: a connection from before the load.
mkdir "$WORK/early"
ip netns exec "$SENDER_NS" python3 "$TCP_LAB" early 10.200.0.1 "$PORT" "$WORK/early" &
EARLY=$!
wait_until 30 test -e "$WORK/early/connected"
check "the early connection echoed before the load" grep -qx yes "$WORK/early/connected"

# An interface nftables cannot name a table after: refused before
# anything changes.
ip link add 'fgq+1' type veth peer name fgq1peer
expect_exit 4 "[synproxy] on an interface named fgq+1" "$FLOODGATE" load 'fgq+1' \
	-c "$WORK/synproxy.conf"
check "the message says why" grep -q "nftables cannot name its table after it" <<<"$LAST_ERR"
check "which installed no table" no_table
check "and left nf_conntrack_tcp_loose alone" test "$(cat "$LOOSE")" -eq 1
check "and attached nothing" bash -c "! ip link show 'fgq+1' | grep -q xdp"
ip link del 'fgq+1'

expect_exit 0 "load with [synproxy] (this kernel passes the support probe)" "$FLOODGATE" load fgA \
	-c "$WORK/synproxy.conf"
check "the probe's dry-run table was never installed" \
	bash -c "! nft list tables | grep -q floodgate_probe"
check "the nftables table is installed" nft list table inet floodgate_synproxy_fgA
check "conntrack's TCP pick-up is strict while loaded" test "$(cat "$LOOSE")" -eq 0
status=$("$FLOODGATE" status fgA)
check "status shows the proxied ports and the table: $(grep synproxy <<<"$status")" \
	grep -q "synproxy: ports $PORT (mss 1460/1440, wscale 7, sack, timestamps, synacks off), program [0-9]*; nftables table inet floodgate_synproxy_fgA installed" <<<"$status"
check "status --json shows them" test "$(json_get "$("$FLOODGATE" status fgA --json)" \
	'(lambda s: (s["ports"], s["nftables_installed"]))(d["interfaces"][0]["synproxy"])')" = "('$PORT', True)"

touch "$WORK/early/go"
wait_until 30 test -e "$WORK/early/result"
check "(d) the connection opened before the load still echoes" \
	grep -qx ok "$WORK/early/result"
stop_children "$EARLY"
EARLY=""

# (a)
rejected_before=$(tsecr_rejected)
got=$(connects 10.200.0.1 60)
check "(a) 60 of 60 sequential connects echo through the proxy (got $got)" test "$got" -eq 60
# synproxy's own ACK to the listener must echo the listener's timestamp
# as sent (the table's output chain, user/attach/synproxy_nft.c). Without
# it the listener refused that ACK on every connect, and 1 to 5 connects
# in 400 then waited over a second for its SYN-ACK timer.
check "(a) the listener refused none of synproxy's handshake ACKs (TSEcrRejected +$(($(tsecr_rejected) - rejected_before)))" \
	test "$(tsecr_rejected)" -eq "$rejected_before"
check "(a) the proxy answered their SYNs" test "$(stat_of synproxy_synacks)" -ge 60
check "(a) and accepted their cookies" test "$(stat_of synproxy_cookies_accepted)" -ge 60
if [ "$got" -ne 60 ]; then
	ethtool -S fgA | grep -v ": 0$"
	ip netns exec "$SENDER_NS" ethtool -S fgB | grep -v ": 0$"
	ip netns exec "$SENDER_NS" nstat -az | grep -E "SynRetrans|RetransSegs|TCPTimeouts|OutRsts|InErrs"
	nstat -az | grep -E "SynRetrans|RetransSegs|OutRsts|InErrs|Syncookies"
	"$FLOODGATE" stats fgA --json
	nft list table inet floodgate_synproxy_fgA
	cat /proc/net/stat/synproxy
fi

# (b) A spoofed SYN flood from across 10.0.0.0/9 (outside the lab's
# 10.200.0.0/24) while a client connects.
cookies_before=$(nstat_value TcpExtSyncookiesSent)
drops_before=$(nstat_value TcpExtListenDrops)
synacks_before=$(stat_of synproxy_synacks)
to_stack_before=$(stat_of synproxy_to_stack)
rejected_before=$(tsecr_rejected)
flood --proto tcp --dst 10.200.0.1 --src 10.0.0.0/9 --dport "$PORT" --rate "$FLOOD_PPS" \
	--duration 3 --hold lo >"$WORK/synflood.json" &
flood_pid=$!
got=$(connects 10.200.0.1 50)
wait $flood_pid
sent=$(json_get "$(cat "$WORK/synflood.json")" 'd["sent"]')
synacks=$(($(stat_of synproxy_synacks) - synacks_before))
to_stack=$(($(stat_of synproxy_to_stack) - to_stack_before))
echo "    SYN flood: $sent spoofed SYNs ($(json_get "$(cat "$WORK/synflood.json")" 'd["sender"]') sender)," \
	"$synacks SYN-ACKs from the proxy, $to_stack passed on to nftables' synproxy"
check "(b) 50 of 50 connects echo during the SYN flood (got $got)" test "$got" -eq 50
check "(b) the listener refused none of their handshake ACKs (TSEcrRejected +$(($(tsecr_rejected) - rejected_before)))" \
	test "$(tsecr_rejected)" -eq "$rejected_before"
check "(b) no flood frame was lost on the veth (the test's premise)" \
	test "$(json_get "$(cat "$WORK/synflood.json")" 'd["tx_dropped"]')" -eq 0
# Live XDP frames have a page's tailroom and are all answered at the hook;
# the generator's socket sender delivers skbs, as a peer's stack does, and
# those too short to grow go on to nftables' synproxy, as (j) shows.
check "(b) the proxy answered the flood, at the hook or through nftables ($synacks + $to_stack for $sent SYNs + 50)" \
	test "$((synacks + to_stack))" -ge "$sent"
check "(b) the listener's stack sent no SYN cookie of its own" \
	test "$(nstat_value TcpExtSyncookiesSent)" -eq "$cookies_before"
check "(b) and dropped nothing from its listen queue" \
	test "$(nstat_value TcpExtListenDrops)" -eq "$drops_before"

# (c) ACKs with a made-up cookie, from random sources: none reaches a
# socket (the stack would answer each with a reset).
refused_before=$(stat_of synproxy_cookies_refused)
rsts_before=$(nstat_value TcpOutRsts)
flood --proto tcp-ack --dst 10.200.0.1 --src 10.0.0.0/9 --dport "$PORT" --count 5000 --hold lo \
	>"$WORK/ackflood.json"
sent=$(json_get "$(cat "$WORK/ackflood.json")" 'd["sent"]')
refused=$(($(stat_of synproxy_cookies_refused) - refused_before))
check "(c) all $sent forged ACKs are counted as refused cookies (got $refused)" \
	test "$refused" -eq "$sent"
check "(c) no forged ACK reached the stack (no reset sent)" \
	test "$(nstat_value TcpOutRsts)" -eq "$rsts_before"

# (j) SYNs whose frames have too little room at their end to grow into the
# SYN-ACK (small skbs from the sender's own stack): each is answered at the
# hook or, counted, passed on to nftables' synproxy, which answers it
# (/proc/net/stat/synproxy's syn_received); none is dropped uncounted. The
# kernel's SYN-ACKs to the spoofed sources have no route: not sent.
synproxy_syn_received() {
	local n=0 entries received rest
	while read -r entries received rest; do
		n=$((n + 0x$received))
	done < <(tail -n +2 /proc/net/stat/synproxy)
	echo "$n"
}
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.fgA.rp_filter=0
synacks_before=$(stat_of synproxy_synacks)
to_stack_before=$(stat_of synproxy_to_stack)
received_before=$(synproxy_syn_received)
ip netns exec "$SENDER_NS" python3 "$TCP_LAB" syns fgB "$FGA_MAC" 10.200.0.1 "$PORT" 2000
seen() {
	echo $(($(stat_of synproxy_synacks) - synacks_before + $(stat_of synproxy_to_stack) - to_stack_before))
}
seen_all() { [ "$(seen)" -ge 2000 ]; }
wait_until 10 seen_all
to_stack=$(($(stat_of synproxy_to_stack) - to_stack_before))
check "(j) each of 2000 option-less SYNs from the sender's stack is answered at the hook or passed on ($((2000 - to_stack)) and $to_stack)" \
	test "$(seen)" -eq 2000
check "(j) nftables' synproxy answered those passed on (syn_received +$(($(synproxy_syn_received) - received_before)))" \
	test "$(($(synproxy_syn_received) - received_before))" -ge "$to_stack"

# (k) synacks = 100/h against 5,000 spoofed SYNs: the buckets start full
# (burst 100 in all) and refill at 100 an hour in all, so the proxy
# answers at most 100 + 100 x the hours from the reload to the count
# (timed here, around the whole flood), plus one for the coarse clock's
# tick; every other SYN is counted capped. The flood outnumbers what the
# cap can answer however slowly it is sent (under emulation 5,000 SYNs
# took 2 minutes before --hold lo, 11 s after), so some are capped by
# construction.
cat >"$WORK/capped.conf" <<CONF
[synproxy]
ports = $PORT
synacks = 100/h
CONF
expect_exit 0 "(k) reload with synacks = 100/h" "$FLOODGATE" reload fgA -c "$WORK/capped.conf"
check "(k) status shows the cap" bash -c "'$FLOODGATE' status fgA | grep -q 'synacks 100/h)'"
check "(k) and so does status --json" test "$(json_get "$("$FLOODGATE" status fgA --json)" \
	'd["interfaces"][0]["synproxy"]["synacks"]')" = 100/h
start_ns=$(date +%s%N)
synacks_before=$(stat_of synproxy_synacks)
capped_before=$(stat_of synproxy_synacks_capped)
to_stack_before=$(stat_of synproxy_to_stack)
flood --proto tcp --dst 10.200.0.1 --src 10.0.0.0/9 --dport "$PORT" --count 5000 \
	--rate "$FLOOD_PPS" --hold lo >"$WORK/cappedflood.json"
sent=$(json_get "$(cat "$WORK/cappedflood.json")" 'd["sent"]')
# Answered: at the hook, or (a frame too short to grow, which the cap let
# through first) handed to nftables' synproxy, as in (b).
counted() {
	echo $(($(stat_of synproxy_synacks) - synacks_before + $(stat_of synproxy_to_stack) - to_stack_before \
		+ $(stat_of synproxy_synacks_capped) - capped_before))
}
counted_all() { [ "$(counted)" -ge "$sent" ]; }
wait_until 10 counted_all
answered=$(($(stat_of synproxy_synacks) - synacks_before + $(stat_of synproxy_to_stack) - to_stack_before))
capped=$(($(stat_of synproxy_synacks_capped) - capped_before))
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
bound=$((100 + 100 * elapsed_ms / 3600000 + 1 + 1))
echo "    (k) $sent SYNs in ${elapsed_ms} ms: $answered answered, $capped capped (bound $bound)"
check "(k) the proxy answered at most the cap's burst and rate ($answered <= $bound)" \
	test "$answered" -le "$bound"
check "(k) and counted every other SYN capped ($answered + $capped = $sent)" \
	test "$((answered + capped))" -eq "$sent"
check "(k) the cap refused some (the flood outnumbers it)" test "$capped" -gt 0
expect_exit 0 "(k) reload without the cap" "$FLOODGATE" reload fgA -c "$WORK/synproxy.conf"
got=$(connects 10.200.0.1 5)
check "(k) which lifts it: connects echo again (got $got of 5)" test "$got" -eq 5

# (e)
rejected_before=$(tsecr_rejected)
got=$(connects fd00:200::1 20)
check "(e) 20 of 20 IPv6 connects echo through the proxy (got $got)" test "$got" -eq 20
check "(e) the listener refused none of their handshake ACKs (TSEcrRejected +$(($(tsecr_rejected) - rejected_before)))" \
	test "$(tsecr_rejected)" -eq "$rejected_before"

# (f) Every way out leaves no table and gives the sysctl back.
expect_exit 0 "unload" "$FLOODGATE" unload fgA
check "(f) unload leaves no floodgate table" no_table
check "(f) unload restores nf_conntrack_tcp_loose" test "$(cat "$LOOSE")" -eq 1

expect_exit 0 "load with [synproxy] again" "$FLOODGATE" load fgA -c "$WORK/synproxy.conf"
expect_exit 0 "reload without [synproxy]" "$FLOODGATE" reload fgA -c "$WORK/none.conf"
check "(f) the reload removed the table" no_table
check "(f) and restored nf_conntrack_tcp_loose" test "$(cat "$LOOSE")" -eq 1
synacks_before=$(stat_of synproxy_synacks)
got=$(connects 10.200.0.1 10)
check "(f) connects go straight to the listener after it (got $got of 10)" test "$got" -eq 10
check "(f) with no SYN-ACK from the proxy" test "$(stat_of synproxy_synacks)" -eq "$synacks_before"
expect_exit 0 "reload adding [synproxy] back" "$FLOODGATE" reload fgA -c "$WORK/synproxy.conf"
check "(f) the reload installed the table" nft list table inet floodgate_synproxy_fgA
got=$(connects 10.200.0.1 10)
check "(f) connects go through the proxy again (got $got of 10)" test "$got" -eq 10
check "(f) which answered their SYNs" test "$(stat_of synproxy_synacks)" -ge 10
expect_exit 0 "unload after the reloads" "$FLOODGATE" unload fgA
check "(f) no table after the reloads and unload" no_table
check "(f) nf_conntrack_tcp_loose back after the reloads and unload" test "$(cat "$LOOSE")" -eq 1

# Two interfaces: the sysctl comes back only when the last one unloads.
lab_up_second
expect_exit 0 "load fgA with [synproxy]" "$FLOODGATE" load fgA -c "$WORK/synproxy.conf"
expect_exit 0 "load fgC with [synproxy]" "$FLOODGATE" load fgC -c "$WORK/synproxy.conf"
expect_exit 0 "unload fgA" "$FLOODGATE" unload fgA
check "(f) fgC's table stays" nft list table inet floodgate_synproxy_fgC
check "(f) pick-up stays strict while fgC uses the proxy" test "$(cat "$LOOSE")" -eq 0
expect_exit 0 "unload fgC" "$FLOODGATE" unload fgC
check "(f) the last unload restores nf_conntrack_tcp_loose" test "$(cat "$LOOSE")" -eq 1
check "(f) and leaves no table" no_table
ip link del fgC

# (g) The same at tc, where the SYN-ACK is redirected out of fgA.
expect_exit 0 "load with [synproxy] at tc" "$FLOODGATE" load fgA --hook tc \
	-c "$WORK/synproxy.conf"
got=$(connects 10.200.0.1 20)
check "(g) 20 of 20 connects echo through the proxy at tc (got $got)" test "$got" -eq 20
check "(g) the proxy at tc answered their SYNs" test "$(stat_of synproxy_synacks)" -ge 20
got=$(connects fd00:200::1 10)
check "(g) 10 of 10 IPv6 connects at tc (got $got)" test "$got" -eq 10
expect_exit 0 "unload the tc proxy" "$FLOODGATE" unload fgA
check "(g) no table after the tc proxy" no_table

# A load killed once its table is installed (and again once attached):
# the next load, or an unload, takes what it left.
for step in nftables attached; do
	FG_TEST_DIE_AT=$step "$FLOODGATE" load fgA -c "$WORK/synproxy.conf" >/dev/null 2>&1
	check "(f) a load killed at '$step' left its table (what the next command clears)" \
		nft list table inet floodgate_synproxy_fgA
	if [ $step = nftables ]; then
		expect_exit 0 "unload after a load killed at '$step'" "$FLOODGATE" unload fgA
	else
		expect_exit 0 "load after a load killed at '$step'" "$FLOODGATE" load fgA \
			-c "$WORK/synproxy.conf"
		got=$(connects 10.200.0.1 10)
		check "(f) that load proxies (got $got of 10)" test "$got" -eq 10
		expect_exit 0 "unload it" "$FLOODGATE" unload fgA
	fi
	check "(f) no table left after a load killed at '$step'" no_table
	check "(f) nf_conntrack_tcp_loose restored after a load killed at '$step'" \
		test "$(cat "$LOOSE")" -eq 1
	check "(f) no pin folder left after a load killed at '$step'" \
		test -z "$(ls /sys/fs/bpf/floodgate 2>/dev/null | grep fgA)"
done

# (h) Another firewall, started after floodgate (as a firewall restarted
# later would be: at the same priority its chain would then run first),
# then floodgate loaded and reloaded with it in place.
expect_exit 0 "load with [synproxy] before the other firewall" "$FLOODGATE" load fgA \
	-c "$WORK/synproxy.conf"
foreign_up
foreign=$(foreign_ruleset)
got=$(connects 10.200.0.1 20)
check "(h) 20 of 20 connects echo with a firewall that drops invalid started after the load (got $got)" \
	test "$got" -eq 20
got=$(connects fd00:200::1 10)
check "(h) 10 of 10 IPv6 connects with it (got $got)" test "$got" -eq 10
expect_exit 0 "unload with the other firewall in place" "$FLOODGATE" unload fgA
check "(h) unload left the other firewall's tables as they were" \
	test "$(foreign_ruleset)" = "$foreign"
expect_exit 0 "load with [synproxy] after the other firewall" "$FLOODGATE" load fgA \
	-c "$WORK/synproxy.conf"
check "(h) the load left the other firewall's tables as they were" \
	test "$(foreign_ruleset)" = "$foreign"
got=$(connects 10.200.0.1 20)
check "(h) 20 of 20 connects echo with the firewall there before the load (got $got)" \
	test "$got" -eq 20
# A host firewall's restart that flushed the ruleset takes floodgate's
# table too; a reload puts it back (docs/config.md).
nft delete table inet floodgate_synproxy_fgA
expect_exit 0 "reload after the table was removed by hand" "$FLOODGATE" reload fgA \
	-c "$WORK/synproxy.conf"
check "(h) the reload put the table back" nft list table inet floodgate_synproxy_fgA
check "(h) and left the other firewall's tables as they were" \
	test "$(foreign_ruleset)" = "$foreign"
got=$(connects 10.200.0.1 10)
check "(h) 10 of 10 connects after that reload (got $got)" test "$got" -eq 10
echo "    hostfw's invalid drop: $(nft list table inet hostfw | grep -o 'counter packets [0-9]*' | head -n 1)"
expect_exit 0 "unload again" "$FLOODGATE" unload fgA
check "(h) unload leaves no floodgate table with the other firewall there" no_table
check "(h) the other firewall's tables as they were after everything" \
	test "$(foreign_ruleset)" = "$foreign"
foreign_down
check "(h) the test's firewall is gone" bash -c "! nft list tables | grep -q hostfw"

# (i) A bulk transfer to a protected port: iperf3 with floodgate loaded
# without [synproxy] (a policy elsewhere), then with it on iperf3's port,
# alternating by reload, 3 tries each, medians compared. Only the ratio of
# two figures of this run is asserted, and only >= 50%: the machine is
# shared and a 3 s transfer on two cores swings by tens of percent, so
# the issue's 90% is printed rather than asserted, while a proxy that
# sent established packets through a slow path (or dropped some) would
# fall far below half.
# FG_SYNPROXY_IPERF=0 (the 6.1 guest) leaves (i) out: under emulation a
# throughput ratio says nothing, and its six reloads cost minutes each.
if [ "${FG_SYNPROXY_IPERF:-1}" = 0 ]; then
	echo "    (i) not run: FG_SYNPROXY_IPERF=0"
	finish
fi
cat >"$WORK/iperf-proxy.conf" <<CONF
[synproxy]
ports = $IPERF_PORT
CONF
iperf3 -s -p "$IPERF_PORT" >/dev/null 2>&1 &
IPERF=$!
wait_until 5 bash -c "ss -Hltn 'sport = :$IPERF_PORT' | grep -q LISTEN"
expect_exit 0 "load without [synproxy] for iperf3" "$FLOODGATE" load fgA -c "$WORK/none.conf"
without=() with=()
for try in 1 2 3; do
	without+=("$(iperf_bps)")
	expect_exit 0 "reload adding [synproxy] on iperf3's port ($try)" "$FLOODGATE" reload fgA \
		-c "$WORK/iperf-proxy.conf"
	with+=("$(iperf_bps)")
	synacks=$(stat_of synproxy_synacks)
	expect_exit 0 "reload without it ($try)" "$FLOODGATE" reload fgA -c "$WORK/none.conf"
done
expect_exit 0 "unload after iperf3" "$FLOODGATE" unload fgA
stop_children "$IPERF"
IPERF=""
w=$(median3 "${without[@]}")
p=$(median3 "${with[@]}")
ratio=$((p * 100 / (w > 0 ? w : 1)))
echo "    iperf3 without [synproxy]: ${without[*]} bit/s (median $((w / 1000000)) Mbit/s)"
echo "    iperf3 with [synproxy]:    ${with[*]} bit/s (median $((p / 1000000)) Mbit/s)"
echo "    ratio $ratio% (the issue asks >= 90%: $([ "$ratio" -ge 90 ] && echo met || echo NOT met))"
check "(i) iperf3 through the proxy keeps >= 50% of its throughput without it ($ratio%)" \
	test "$ratio" -ge 50
check "(i) the transfers with [synproxy] went through the proxy ($synacks SYN-ACKs)" \
	test "$synacks" -ge 2

finish
