#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stacked VLAN tags must not carry a denied or banned source past floodgate.
# The kernel strips any number of priority-only (VID 0) 802.1Q/802.1ad tags
# and delivers the IP packet inside, so frames with 3 and 4 tags, any mix,
# IPv4 and IPv6, whole and fragmented, are sent from a raw packet socket to
# a UDP socket: first without floodgate, to prove the kernel delivers them,
# then at --hook xdp and --hook tc, where none may arrive. Last, at tc,
# datagrams whose IPv6 headers end past the first 256 bytes, in paged data,
# meet their port policy.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
RECEIVER_PID=
trap '[ -n "$RECEIVER_PID" ] && kill "$RECEIVER_PID" 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
PORT=9999
DENIED4=10.0.8.1 DENIED6=2001:db8:8::1 BANNED4=10.0.7.1

cat >"$WORK/deny.conf" <<'CONF'
[deny]
src = 10.0.8.0/24, 2001:db8:8::/48

[policy rest]
match = any
rate  = 100000/s
CONF

# The sender: hand-built frames through an AF_PACKET socket. Prints the
# number of datagrams (what a socket would receive) and of frames sent.
cat >"$WORK/send.py" <<'PY'
import socket, struct, sys

dev, dst_mac, src4, src6 = sys.argv[1:5]
DST4, DST6, PORT = "10.200.0.1", "fd00:200::1", 9999
Q, AD = 0x8100, 0x88A8

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF

def udp(src, dst, family, payload):
    length = 8 + len(payload)
    if family == 4:
        pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, length)
    else:
        pseudo = (socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst)
                  + struct.pack("!IxxxB", length, 17))
    hdr = struct.pack("!HHHH", 40000, PORT, length, 0)
    c = csum(pseudo + hdr + payload) or 0xFFFF
    return struct.pack("!HHHH", 40000, PORT, length, c) + payload

def ipv4(src, dst, proto, body, ident, frag_field):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ident, frag_field, 64, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + body

def ipv6(src, dst, nexthdr, body):
    return (struct.pack("!IHBB", 6 << 28, len(body), nexthdr, 64)
            + socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + body)

def ipv4_fragments(src, payload, ident, size=1000):
    l4 = udp(src, DST4, 4, payload)
    out = []
    for off in range(0, len(l4), size):
        more = 0x2000 if off + size < len(l4) else 0
        out.append((0x0800, ipv4(src, DST4, 17, l4[off:off + size], ident, more | off // 8)))
    return out

def ipv6_fragments(src, payload, ident, size=1000):
    l4 = udp(src, DST6, 6, payload)
    out = []
    for off in range(0, len(l4), size):
        more = 1 if off + size < len(l4) else 0
        frag = struct.pack("!BBHI", 17, 0, off | more, ident)
        out.append((0x86DD, ipv6(src, DST6, 44, frag + l4[off:off + size])))
    return out

def frame(tags, ethertype, packet):
    mac = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex("020000000001")
    out = mac + struct.pack("!H", tags[0] if tags else ethertype)
    for i, _ in enumerate(tags):
        inner = tags[i + 1] if i + 1 < len(tags) else ethertype
        out += struct.pack("!HH", 3 << 13, inner)
    return out + packet

sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((dev, 0))
datagrams = frames = 0
# VID 0 (priority-only) tags: the kernel strips them with no VLAN device
# configured, as it would strip any tag of a configured VLAN.
whole = [[Q, Q, Q], [Q, Q, Q, Q], [AD, AD, Q], [AD, Q, AD, Q]]
for tags in whole:
    for n in range(5):
        packets = [(0x0800, ipv4(src4, DST4, 17, udp(src4, DST4, 4, b"x" * 32), 100 + n, 0))]
        if src6 != "-":
            packets.append((0x86DD, ipv6(src6, DST6, 17, udp(src6, DST6, 6, b"x" * 32))))
        for ethertype, packet in packets:
            sock.send(frame(tags, ethertype, packet))
            datagrams += 1
            frames += 1
for tags in [[Q, Q, Q], [AD, AD, Q, Q]]:
    for n in range(2):
        groups = [ipv4_fragments(src4, b"f" * 2500, 7000 + n + 10 * len(tags))]
        if src6 != "-":
            groups.append(ipv6_fragments(src6, b"f" * 2500, 9000 + n + 10 * len(tags)))
        for group in groups:
            for ethertype, packet in group:
                sock.send(frame(tags, ethertype, packet))
                frames += 1
            datagrams += 1
print(datagrams, frames)
PY

# The receiver: UDP sockets on PORT, IPv4 and IPv6; keeps the count of
# datagrams from each source in a file.
cat >"$WORK/receive.py" <<'PY'
import json, os, select, socket, sys

out, port = sys.argv[1], int(sys.argv[2])
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.bind(("0.0.0.0", port))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s6.bind(("::", port))
# Bound: datagrams sent from now on are received (the test waits for this).
open(out + ".ready", "w").close()
counts = {}
while True:
    for s in select.select([s4, s6], [], [])[0]:
        _, addr = s.recvfrom(65536)
        counts[addr[0]] = counts.get(addr[0], 0) + 1
        with open(out + ".tmp", "w") as f:
            json.dump(counts, f)
        os.replace(out + ".tmp", out)
PY

lab_up
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.fgA.rp_filter=0
ip route add 10.0.0.0/8 dev fgA
ip -6 route add 2001:db8::/32 dev fgA
echo '{}' >"$WORK/counts"
python3 "$WORK/receive.py" "$WORK/counts" "$PORT" &
RECEIVER_PID=$!
# A datagram sent before the sockets are bound is refused, not queued: on a
# loaded machine python's start-up took longer than the sender's.
check "the receiver's sockets are bound" wait_until 10 test -e "$WORK/counts.ready"

# socket_count ADDR: datagrams from ADDR so far.
socket_count() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' \
		"$WORK/counts" "$1"
}

# send SRC4 SRC6: sends every framing once; sets DATAGRAMS and FRAMES.
send() {
	read -r DATAGRAMS FRAMES < <(ip netns exec "$SENDER_NS" \
		python3 "$WORK/send.py" fgB "$FGA_MAC" "$1" "$2")
}

global_stat() {
	json_get "$("$FLOODGATE" stats fgA --json)" "d['global']['$1']"
}

both_received() {
	test $(($(socket_count "$1") + $(socket_count "$2"))) -ge "$3"
}

# --- without floodgate: the kernel delivers every one of these -------------
send "$DENIED4" "$DENIED6"
check "without floodgate, stacked-tag datagrams reach the socket ($DATAGRAMS in $FRAMES frames)" \
	wait_until 10 both_received "$DENIED4" "$DENIED6" "$DATAGRAMS"
baseline4=$(socket_count "$DENIED4") baseline6=$(socket_count "$DENIED6") baseline_banned=0

rounds=0
for hook in xdp tc; do
	expect_exit 0 "load --hook $hook" "$FLOODGATE" load fgA -c "$WORK/deny.conf" --hook "$hook"
	expect_exit 0 "ban $BANNED4" "$FLOODGATE" ban fgA "$BANNED4"
	send "$DENIED4" "$DENIED6"
	denied_frames=$FRAMES
	send "$BANNED4" -
	check "$hook: floodgate judged every frame" wait_until 10 \
		bash -c "[ \$('$FLOODGATE' stats fgA --json | python3 -c \
			'import json,sys; g=json.load(sys.stdin)[\"global\"]; print(g[\"denied\"] + g[\"banned\"])') \
			-ge $((denied_frames + FRAMES)) ]"
	check "$hook: every frame of the denied source was dropped" \
		test "$(global_stat denied)" -eq "$denied_frames"
	check "$hook: every frame of the banned source was dropped" \
		test "$(global_stat banned)" -eq "$FRAMES"
	check "$hook: no denied IPv4 datagram reached the socket" \
		test "$(socket_count "$DENIED4")" -eq "$baseline4"
	check "$hook: no denied IPv6 datagram reached the socket" \
		test "$(socket_count "$DENIED6")" -eq "$baseline6"
	check "$hook: no banned datagram reached the socket" \
		test "$(socket_count "$BANNED4")" -eq "$baseline_banned"
	check "$hook: nothing was taken for non-IP or malformed" \
		test "$(global_stat non_ip)" -eq 0 -a "$(global_stat malformed)" -eq 0
	# a source that no list names still gets through the same framing
	send 10.0.6.1 2001:db8:6::1
	rounds=$((rounds + 1))
	check "$hook: an unlisted source's stacked-tag datagrams still arrive" \
		wait_until 10 both_received 10.0.6.1 2001:db8:6::1 $((DATAGRAMS * rounds))
	expect_exit 0 "unload" "$FLOODGATE" unload fgA
done

# --- tc: headers past the first 256 bytes, in paged data ---------------------
# An AF_PACKET frame larger than a page is built with only its Ethernet
# header linear, and without GRO the veth hands it to tc as it is: fg_tc's
# first pull makes 256 bytes readable, and three 128-byte destination-
# options headers put the UDP port at byte 438. Judged malformed, the
# datagrams got past the port policy under `malformed = pass`.
cat >"$WORK/long-chain.conf" <<CONF
malformed = pass
[policy port]
match = udp dport $PORT
rate  = 1/min
burst = 2
CONF
cat >"$WORK/send_chain.py" <<'PY'
import socket, struct, sys

dev, dst_mac, src, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
DST, PORT = "fd00:200::1", 9999
# A destination-options header of 128 bytes: one unknown option of the
# "skip it" kind (type 0x1e), 124 bytes long (Linux refuses long padding).
def dstopts(nexthdr):
    return struct.pack("!BBBB", nexthdr, 128 // 8 - 1, 0x1E, 124) + b"\0" * 124
payload = b"p" * 5000
length = 8 + len(payload)
pseudo = (socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, DST)
          + struct.pack("!IxxxB", length, 17))
def csum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF
udp = struct.pack("!HHHH", 40000, PORT, length, 0) + payload
udp = udp[:6] + struct.pack("!H", csum(pseudo + udp) or 0xFFFF) + udp[8:]
body = dstopts(60) + dstopts(60) + dstopts(17) + udp
ip6 = (struct.pack("!IHBB", 6 << 28, len(body), 60, 64) + socket.inet_pton(socket.AF_INET6, src)
       + socket.inet_pton(socket.AF_INET6, DST))
frame = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex("020000000001") \
    + struct.pack("!H", 0x86DD) + ip6 + body
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((dev, 0))
for _ in range(count):
    sock.send(frame)
PY
ip link set fgA mtu 9000
ip -n "$SENDER_NS" link set fgB mtu 9000
ethtool -K fgA gro off >/dev/null
send_chain() {
	ip netns exec "$SENDER_NS" python3 "$WORK/send_chain.py" fgB "$FGA_MAC" "$1" "$2"
}
received_at_least() {
	test "$(socket_count "$1")" -ge "$2"
}
policy_stat() {
	json_get "$("$FLOODGATE" stats fgA --json)" "d['policies'][0]['$1']"
}
send_chain 2001:db8:24::1 3
check "without floodgate, datagrams behind a long chain arrive" \
	wait_until 10 received_at_least 2001:db8:24::1 3
expect_exit 0 "load --hook tc" "$FLOODGATE" load fgA -c "$WORK/long-chain.conf" --hook tc
send_chain 2001:db8:25::1 5
check "tc: floodgate judged the 5 frames" wait_until 10 \
	bash -c "[ \$('$FLOODGATE' stats fgA --json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)[\"global\"][\"packets\"])') -ge 5 ]"
check "tc: none was judged malformed" test "$(global_stat malformed)" -eq 0
check "tc: the port policy matched all 5" test "$(policy_stat matched_packets)" -eq 5
check "tc: it dropped all but its burst of 2" test "$(policy_stat dropped_packets)" -eq 3
check "tc: 2 datagrams arrived" wait_until 10 received_at_least 2001:db8:25::1 2
check "tc: and no more" test "$(socket_count 2001:db8:25::1)" -eq 2
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
