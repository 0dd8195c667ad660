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
#   (g) the tc hook proxies too.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
LISTENER=""
EARLY=""
trap 'stop_children $LISTENER $EARLY; lab_down; rm -rf "$WORK"' EXIT
PORT=8080
# The spoofed SYN flood's rate (tests/kernels/guest.sh lowers it under TCG).
FLOOD_PPS=${FG_SYNPROXY_FLOOD_PPS:-20000}
LOOSE=/proc/sys/net/netfilter/nf_conntrack_tcp_loose

lab_up
ip -n "$SENDER_NS" addr add 10.200.0.2/24 dev fgB
ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgB.disable_ipv6=0
ip -n "$SENDER_NS" addr add fd00:200::2/64 dev fgB nodad
# The SYN-ACKs leave fgA by XDP_TX: fgB accepts them with a native XDP
# program of its own (GRO alone did not let them through here), which
# drops those to the spoofed range as the internet would take them away.
ip -n "$SENDER_NS" link set fgB xdpdrv obj "$REPO/build/drop_backscatter.bpf.o" sec xdp

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

# An echo server on both families; it writes its port file once it listens.
cat >"$WORK/echo.py" <<'PY'
import socket, socketserver, sys
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(4096)
            if not data:
                return
            self.request.sendall(data)
class Server(socketserver.ThreadingTCPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
srv = Server(("::", int(sys.argv[1])), Echo)
open(sys.argv[2], "w").close()
srv.serve_forever()
PY

# connects.py ADDR PORT N: N sequential connects, each sending a line and
# reading it back; prints how many completed. The 3 s timeout lets a
# connection ride out one lost segment (the first retransmission comes
# after 1 s): the test asserts that each completes, and prints how many
# took longer than 1 s (none expected: a slow one is a retransmission, or
# a loaded machine).
cat >"$WORK/connects.py" <<'PY'
import socket, sys, time
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
done = slow = 0
for i in range(n):
    start = time.monotonic()
    try:
        with socket.create_connection((addr, port), timeout=3) as s:
            msg = b"hello %d\n" % i
            s.sendall(msg)
            got = b""
            while len(got) < len(msg):
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            done += got == msg
    except OSError as e:
        print("connect %d: %r" % (i, e), file=sys.stderr)
    if time.monotonic() - start > 1:
        slow += 1
print("    %d of %d connects to %s took over 1 s" % (slow, n, addr), file=sys.stderr)
print(done)
PY

# early.py ADDR PORT DIR: connects and echoes once, writes DIR/connected,
# waits for DIR/go, echoes again and writes the outcome to DIR/result.
cat >"$WORK/early.py" <<'PY'
import os, socket, sys, time
addr, port, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def echo(s, msg):
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    return got == msg
s = socket.create_connection((addr, port), timeout=2)
first = echo(s, b"before\n")
open(os.path.join(d, "connected"), "w").write("yes" if first else "no")
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
try:
    ok = echo(s, b"after\n")
except OSError as e:
    ok = False
open(os.path.join(d, "result.tmp"), "w").write("ok" if ok else "lost")
os.rename(os.path.join(d, "result.tmp"), os.path.join(d, "result"))
PY

connects() {
	ip netns exec "$SENDER_NS" python3 "$WORK/connects.py" "$1" "$PORT" "$2"
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

python3 "$WORK/echo.py" "$PORT" "$WORK/listening" &
LISTENER=$!
wait_until 5 test -e "$WORK/listening"

# The host's own value, which every path below must give back.
echo 1 >"$LOOSE"

# (d) first: a connection from before the load.
mkdir "$WORK/early"
ip netns exec "$SENDER_NS" python3 "$WORK/early.py" 10.200.0.1 "$PORT" "$WORK/early" &
EARLY=$!
wait_until 5 test -e "$WORK/early/connected"
check "the early connection echoed before the load" grep -qx yes "$WORK/early/connected"

expect_exit 0 "load with [synproxy]" "$FLOODGATE" load fgA -c "$WORK/synproxy.conf"
check "the nftables table is installed" nft list table inet floodgate_synproxy_fgA
check "conntrack's TCP pick-up is strict while loaded" test "$(cat "$LOOSE")" -eq 0
status=$("$FLOODGATE" status fgA)
check "status shows the proxied ports and the table: $(grep synproxy <<<"$status")" \
	grep -q "synproxy: ports $PORT (mss 1460/1440, wscale 7, sack, timestamps), program [0-9]*; nftables table inet floodgate_synproxy_fgA installed" <<<"$status"
check "status --json shows them" test "$(json_get "$("$FLOODGATE" status fgA --json)" \
	'(lambda s: (s["ports"], s["nftables_installed"]))(d["interfaces"][0]["synproxy"])')" = "('$PORT', True)"

touch "$WORK/early/go"
wait_until 5 test -e "$WORK/early/result"
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
rejected_before=$(tsecr_rejected)
flood --proto tcp --dst 10.200.0.1 --src 10.0.0.0/9 --dport "$PORT" --rate "$FLOOD_PPS" \
	--duration 3 >"$WORK/synflood.json" &
flood_pid=$!
got=$(connects 10.200.0.1 50)
wait $flood_pid
sent=$(json_get "$(cat "$WORK/synflood.json")" 'd["sent"]')
synacks=$(($(stat_of synproxy_synacks) - synacks_before))
echo "    SYN flood: $sent spoofed SYNs, $synacks SYN-ACKs from the proxy"
check "(b) 50 of 50 connects echo during the SYN flood (got $got)" test "$got" -eq 50
check "(b) the listener refused none of their handshake ACKs (TSEcrRejected +$(($(tsecr_rejected) - rejected_before)))" \
	test "$(tsecr_rejected)" -eq "$rejected_before"
check "(b) no flood frame was lost on the veth (the test's premise)" \
	test "$(json_get "$(cat "$WORK/synflood.json")" 'd["tx_dropped"]')" -eq 0
check "(b) the proxy answered the flood ($synacks SYN-ACKs for $sent SYNs + 50)" \
	test "$synacks" -ge "$sent"
check "(b) the listener's stack sent no SYN cookie of its own" \
	test "$(nstat_value TcpExtSyncookiesSent)" -eq "$cookies_before"
check "(b) and dropped nothing from its listen queue" \
	test "$(nstat_value TcpExtListenDrops)" -eq "$drops_before"

# (c) ACKs with a made-up cookie, from random sources: none reaches a
# socket (the stack would answer each with a reset).
refused_before=$(stat_of synproxy_cookies_refused)
rsts_before=$(nstat_value TcpOutRsts)
flood --proto tcp-ack --dst 10.200.0.1 --src 10.0.0.0/9 --dport "$PORT" --count 5000 \
	>"$WORK/ackflood.json"
sent=$(json_get "$(cat "$WORK/ackflood.json")" 'd["sent"]')
refused=$(($(stat_of synproxy_cookies_refused) - refused_before))
check "(c) all $sent forged ACKs are counted as refused cookies (got $refused)" \
	test "$refused" -eq "$sent"
check "(c) no forged ACK reached the stack (no reset sent)" \
	test "$(nstat_value TcpOutRsts)" -eq "$rsts_before"

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

finish
