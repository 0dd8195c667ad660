#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate replay` on captures written by tcpdump itself: the generator
# floods the lab veth from IPv4 and IPv6 sources while tcpdump captures on
# fgA (Ethernet, snaplen shorter than the frames) and on `any` (Linux cooked).
# The replay's totals must equal the generator's counts, byte costs must use
# the wire length, and each source's passed count must equal a reference
# computed from the capture's own timestamps. Also: the JSON schema of the
# counters is that of `stats --json`, replay leaves no pin behind, and bad
# input gets a clear error.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; kill $TCPDUMP_PIDS 2>/dev/null; rm -rf "$WORK"' EXIT
SIZE=200     # frame size; the fgA capture keeps 96 bytes of each
COUNT=10000  # frames per family
# Each capture's ring (-B 32 MiB, -s at most 256) holds every frame sent even
# if tcpdump gets no CPU until the flood ends: no drop depends on speed. The
# 6.1 guest (emulated, two tcpdumps waking per frame) sets a lower
# FG_REPLAY_PPS all the same.
PPS=${FG_REPLAY_PPS:-20000}
TCPDUMP_PIDS=""

cat >"$WORK/replay.conf" <<CONF
[policy v4]
match = udp dport 9
per   = src/32 src/128
rate  = 1000/s
burst = 50

[policy v6]
match     = udp dport 10
per       = src/32 src/128
algorithm = sliding_log
rate      = 100/100ms
CONF

lab_up

# start_tcpdump NAME ARGS...: captures in the background until stop_tcpdumps,
# and returns once tcpdump says it is listening.
start_tcpdump() {
	local name=$1
	shift
	# Immediate mode and -U: every frame reaches the file as it arrives,
	# not when a ring block or stdio buffer fills.
	tcpdump -n -U --immediate-mode --time-stamp-precision nano -B 32768 \
		-w "$WORK/$name.pcap" "$@" \
		2>"$WORK/$name.err" &
	TCPDUMP_PIDS+=" $!"
	wait_until 10 grep -q "listening on" "$WORK/$name.err"
}

# stop_tcpdumps SIZE...: once each capture file has reached its SIZE (its
# header and one record per frame sent), stops the captures.
stop_tcpdumps() {
	local pid name size names=(eth any)
	for size in "$@"; do
		name=${names[0]}
		names=("${names[@]:1}")
		wait_until 10 test "$(stat -c %s "$WORK/$name.pcap")" -ge "$size" ||
			echo "    $name.pcap: $(stat -c %s "$WORK/$name.pcap") bytes, expected $size"
	done
	for pid in $TCPDUMP_PIDS; do
		kill -INT "$pid"
		wait "$pid"
	done
	TCPDUMP_PIDS=""
}

check "tcpdump listens on fgA" start_tcpdump eth -i fgA -Q in -s 96 'udp dst port 9 or udp dst port 10'
# libpcap sizes each ring slot for the largest frame the device can carry;
# `any` has no MTU, so without -s a slot is 64 KiB and the 32 MiB ring holds
# 512 frames. With -s 256 (the frames are $SIZE bytes, kept whole) it holds
# tens of thousands.
check "tcpdump listens on any" start_tcpdump any -i any -s 256 'udp dst port 9 or udp dst port 10'
out4=$(flood --dst 10.200.0.1 --src 10.0.1.1+4 --dport 9 --size $SIZE --rate $PPS --count $COUNT)
out6=$(flood --dst fd00:200::1 --src fd00:1::1+3 --dport 10 --size $SIZE --rate $PPS --count $COUNT)
echo "    flood v4: $out4"
echo "    flood v6: $out6"
sent4=$(json_get "$out4" 'd["sent"]')
sent6=$(json_get "$out6" 'd["sent"]')
sent=$((sent4 + sent6))
# Records: 16 bytes of header and 96 captured (eth), or the frame with a
# 20-byte SLL2 header instead of the 14-byte Ethernet one (any).
stop_tcpdumps $((24 + sent * (16 + 96))) $((24 + sent * (16 + SIZE - 14 + 20)))
check "the generator sent every frame ($sent)" test "$sent" -eq $((2 * COUNT))
check "tcpdump on fgA dropped nothing" grep -q "^0 packets dropped by kernel" "$WORK/eth.err"
check "tcpdump on any dropped nothing" grep -q "^0 packets dropped by kernel" "$WORK/any.err"

# --- the Ethernet capture, truncated by snaplen ------------------------------
rep=$("$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap" --json -n 100)
echo "    replay: ${rep:0:400}..."
check "linktype is Ethernet" test "$(json_get "$rep" 'd["linktype"]')" = EN10MB
check "every frame sent was replayed ($sent)" test "$(json_get "$rep" 'd["run"]')" -eq "$sent"
check "every frame counts as truncated" test "$(json_get "$rep" 'd["truncated"]')" -eq "$sent"
check "v4 matched = IPv4 frames sent ($sent4)" \
	test "$(json_get "$rep" 'd["policies"][0]["matched_packets"]')" -eq "$sent4"
check "v6 matched = IPv6 frames sent ($sent6)" \
	test "$(json_get "$rep" 'd["policies"][1]["matched_packets"]')" -eq "$sent6"
check "matched bytes use the wire length ($SIZE a frame)" \
	test "$(json_get "$rep" 'd["policies"][0]["matched_bytes"] + d["policies"][1]["matched_bytes"]')" \
	-eq $((sent * SIZE))
check "passed + dropped = matched, per policy" \
	test "$(json_get "$rep" 'all(p["passed_packets"] + p["dropped_packets"] == p["matched_packets"] for p in d["policies"])')" = True
check "both policies dropped something" \
	test "$(json_get "$rep" 'all(p["dropped_packets"] > 0 for p in d["policies"])')" = True

# per_source_match REPLAY_JSON (FIRST_SOURCE FLOOD_JSON)...: each source's
# passed + dropped in the replay equals what the generator sent from it
# (its per_source lists FIRST_SOURCE + i).
per_source_match() {
	python3 - "$@" <<'PY'
import ipaddress, json, sys
rep = json.loads(sys.argv[1])
seen = {s["source"]: s["passed"] + s["dropped"] for s in rep["top_sources"]}
ok = True
for first, flood in zip(sys.argv[2::2], map(json.loads, sys.argv[3::2])):
    for i, n in enumerate(flood["per_source"]):
        src = str(ipaddress.ip_address(first) + i)
        ok &= seen.get(src) == n
        print(f"    {src}: generator {n}, replay {seen.get(src)}")
sys.exit(0 if ok and len(seen) == sum(len(json.loads(f)["per_source"]) for f in sys.argv[3::2]) else 1)
PY
}
check "per source: replayed = sent" per_source_match "$rep" 10.0.1.1 "$out4" fd00:1::1 "$out6"

# reference PCAP REPLAY_JSON: the passed count of every source, recomputed
# from the capture's own timestamps with the textbook definitions (a bucket
# of 50 tokens gaining one per ms; at most 100 admissions in any 100 ms).
reference() {
	python3 - "$@" <<'PY'
import ipaddress, json, struct, sys
data = open(sys.argv[1], "rb").read()
rep = json.loads(sys.argv[2])
magic = struct.unpack_from("<I", data)[0]
assert magic == 0xa1b23c4d, "expected a nanosecond pcap"
off, state, passed, latest = 24, {}, {}, 0
while off < len(data):
    sec, frac, caplen, _ = struct.unpack_from("<IIII", data, off)
    frame, off = data[off + 16:off + 16 + caplen], off + 16 + caplen
    now = max(sec * 10**9 + frac, latest)  # the replay clock never goes back
    latest = now
    if frame[12:14] == b"\x08\x00":
        src, kind = str(ipaddress.ip_address(frame[26:30])), "bucket"
    else:
        src, kind = str(ipaddress.ip_address(frame[22:38])), "log"
    if kind == "bucket":  # level in token-ns: a token is 10**6, one unit a ns
        level, last = state.get(src, (50 * 10**6, now))
        level = min(50 * 10**6, level + (now - last))
        ok = level >= 10**6
        state[src] = (level - 10**6 if ok else level, now)
    else:
        log = state.setdefault(src, [])
        ok = sum(now - t < 100 * 10**6 for t in log[-100:]) < 100
        if ok:
            log.append(now)
    passed[src] = passed.get(src, 0) + ok
got = {s["source"]: s["passed"] for s in rep["top_sources"]}
for src in sorted(passed):
    print(f"    {src}: reference {passed[src]}, replay {got.get(src)}")
sys.exit(0 if passed == got else 1)
PY
}
check "per source: passed = the reference from the capture's timestamps" \
	reference "$WORK/eth.pcap" "$rep"

# --- the `any` capture: Linux cooked (SLL2) ----------------------------------
rep_any=$("$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/any.pcap" --json)
check "the any capture is Linux cooked ($(json_get "$rep_any" 'd["linktype"]'))" \
	grep -qx "LINUX_SLL2\|LINUX_SLL" <<<"$(json_get "$rep_any" 'd["linktype"]')"
check "cooked: every frame sent was replayed" \
	test "$(json_get "$rep_any" 'd["run"] + d["outgoing_skipped"]')" -eq "$sent"
check "cooked: matched = sent" \
	test "$(json_get "$rep_any" 'sum(p["matched_packets"] for p in d["policies"])')" -eq "$sent"
check "cooked: byte counts are the Ethernet frames' ($SIZE a frame)" \
	test "$(json_get "$rep_any" 'd["wire_bytes"]')" -eq $((sent * SIZE))

# --- the counters' schema is that of stats --json ---------------------------
pins=$(find /sys/fs/bpf)
"$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap" >/dev/null
check "replay creates no pins" test "$pins" = "$(find /sys/fs/bpf)"
expect_exit 0 "load the same config on fgA" "$FLOODGATE" load fgA -c "$WORK/replay.conf"
stats=$("$FLOODGATE" stats fgA --json)
keys='sorted(d["global"]), [sorted(p) for p in d["policies"]]'
check "global and policies have the keys of stats --json" \
	test "$(json_get "$stats" "$keys")" = "$(json_get "$rep" "$keys")"
before=$("$FLOODGATE" stats fgA --json)
"$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap" >/dev/null
check "a replay leaves the loaded instance's counters alone" \
	test "$before" = "$("$FLOODGATE" stats fgA --json)"
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- text output and bad input ----------------------------------------------
text=$("$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap" -n 2)
check "text output has the policy table" grep -q "^  v4 " <<<"$text"
check "text output lists 2 sources" test "$(grep -c '^  10\.0\.1\.\|^  fd00:1::' <<<"$text")" -eq 2
echo "not a capture" >"$WORK/text.pcap"
expect_exit 3 "a file that is not a capture" "$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/text.pcap"
check "  ... says so" grep -q "not a readable pcap or pcapng capture" <<<"$LAST_ERR"
head -c 24 "$WORK/eth.pcap" >"$WORK/empty.pcap"
expect_exit 3 "an empty capture" "$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/empty.pcap"
check "  ... says so" grep -q "holds no frames" <<<"$LAST_ERR"
head -c 1000 "$WORK/eth.pcap" >"$WORK/cut.pcap"
expect_exit 0 "a capture cut short" "$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/cut.pcap"
check "  ... warns" grep -q "stops after" <<<"$LAST_ERR"
expect_exit 2 "no capture" "$FLOODGATE" replay -c "$WORK/replay.conf"
expect_exit 2 "no config" "$FLOODGATE" replay "$WORK/eth.pcap"
expect_exit 2 "bad -n" "$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap" -n many
printf '[policy a]\nmatch = udp\nrate = 0/s\n' >"$WORK/bad.conf"
expect_exit 3 "a broken config" "$FLOODGATE" replay -c "$WORK/bad.conf" "$WORK/eth.pcap"
check "  ... names FILE:LINE:" grep -q "^$WORK/bad.conf:3: " <<<"$LAST_ERR"
expect_exit 4 "as a non-root user" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$FLOODGATE" replay -c "$WORK/replay.conf" "$WORK/eth.pcap"

finish
