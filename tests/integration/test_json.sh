#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every --json output is JSON (python3 -m json.tool accepts it) and carries
# hostile names back intact: interfaces named with a quote and a backslash,
# with control characters, and with a byte that is not UTF-8 (which comes
# back as U+FFFD), and a capture file whose name holds all of these and a
# newline (replay echoes it). Linux refuses only '/', ':', whitespace and
# names over 15 bytes in an interface name.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
EVENTS_PID=""
trap 'lab_down; [ -n "$EVENTS_PID" ] && kill "$EVENTS_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

QUOTED='a"b\c'             # a quote and a backslash
CONTROL=$'q\x01\x7fz'      # control characters (JSON escapes \x01 as \u0001)
NOT_UTF8=$'u\xffv'         # not UTF-8: written as "u\ufffdv"
CAPTURE=$'cap"\\\x01\n\xff.pcap'

# as_json NAME: the string the JSON must hold for NAME (bytes that are not
# UTF-8 become U+FFFD), as Python sees it.
EXPECT='import os, sys
def as_json(arg):
    return os.fsencode(arg).decode("utf-8", "replace")'

# check_json DESCRIPTION EXPR COMMAND...: COMMAND's stdout is one JSON
# document that json.tool accepts and for which the Python expression EXPR
# (over the document `d` and the names `args`) is true.
check_json() {
	local desc=$1 expr=$2
	shift 2
	"$@" >"$WORK/out.json" 2>"$WORK/out.err"
	if ! python3 -m json.tool "$WORK/out.json" >/dev/null; then
		not_ok "$desc: not JSON: $(head -c 300 "$WORK/out.json")"
		return
	fi
	check "$desc" python3 -c "$EXPECT
import json
d = json.load(open(sys.argv[1], encoding='utf-8'))
args = [as_json(a) for a in sys.argv[2:]]
sys.exit(0 if ($expr) else 1)" "$WORK/out.json" "$QUOTED" "$CONTROL" "$NOT_UTF8" "$WORK/$CAPTURE"
}

cat >"$WORK/tight.conf" <<'CONF'
[policy tight]
match  = udp dport 9
rate   = 10/s
burst  = 10
action = ban 10m
# The lab's UDP source is real; a UDP ban needs the operator's word.
ban_unverified = yes
CONF
chmod 600 "$WORK/tight.conf"

lab_up
# fgA, renamed: the lab's traffic reaches the interface with the quote.
ip link set fgA down
ip link set fgA name "$QUOTED"
ip link set "$QUOTED" up
ip link add name "$CONTROL" type veth peer name fgjson1
ip link add name "$NOT_UTF8" type veth peer name fgjson2
ip link set "$CONTROL" up
ip link set "$NOT_UTF8" up

expect_exit 0 "load on $QUOTED" "$FLOODGATE" load "$QUOTED" -c "$WORK/tight.conf"
expect_exit 0 "load on q\\x01\\x7fz (tc)" "$FLOODGATE" load "$CONTROL" --hook tc
expect_exit 0 "load on u\\xffv (generic XDP)" "$FLOODGATE" load "$NOT_UTF8" --mode generic

# --- events, while a flood gets its source banned ------------------------------
"$FLOODGATE" events "$QUOTED" --json >"$WORK/events.json" 2>"$WORK/events.err" &
EVENTS_PID=$!
sleep 0.5
out=$(flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --rate 2000 --count 500)
echo "    flood: $out"

# --- status, stats, top, bans ------------------------------------------------
check_json "status --json lists every interface by its name" \
	'sorted(i["interface"] for i in d["interfaces"]) == sorted(args[:3])' \
	"$FLOODGATE" status --json
check_json "status IFACE --json: the interface and its pin folder round-trip" \
	'd["interfaces"][0]["interface"] == args[0] and d["interfaces"][0]["pinned"].endswith("/" + args[0])' \
	"$FLOODGATE" status "$QUOTED" --json
check_json "status --json of the tc interface with control characters" \
	'd["interfaces"][0]["interface"] == args[1] and d["interfaces"][0]["xdp"] is None' \
	"$FLOODGATE" status "$CONTROL" --json
check_json "stats --json counts the flood under its interface's name" \
	'd["interface"] == args[0] and d["policies"][0]["dropped_packets"] > 0' \
	"$FLOODGATE" stats "$QUOTED" --json
check_json "stats --json of a name that is not UTF-8 says U+FFFD" \
	'd["interface"] == args[2] == "u\ufffdv"' \
	"$FLOODGATE" stats "$NOT_UTF8" --json
check_json "top --json shows the flooding source" \
	'd["sources"][0]["source"] == "10.0.1.1/32" and d["sources"][0]["policy"] == "tight"' \
	"$FLOODGATE" top "$QUOTED" --json
check_json "bans --json shows the policy's ban" \
	'd["interface"] == args[0] and d["bans"][0]["prefix"] == "10.0.1.1/32" and d["bans"][0]["policy"] == "tight"' \
	"$FLOODGATE" bans "$QUOTED" --json
check_json "bans --json with no bans, control characters in the name" \
	'd == {"interface": args[1], "bans": []}' \
	"$FLOODGATE" bans "$CONTROL" --json

# The unban ends the ban: `events` reports it within its second's scan.
expect_exit 0 "unban the source" "$FLOODGATE" unban "$QUOTED" 10.0.1.1
check "events reports the unban" wait_until 5 grep -q '"type":"unbanned"' "$WORK/events.json"
kill -INT "$EVENTS_PID"
wait "$EVENTS_PID"
check "events exits 0 on SIGINT" test $? -eq 0
EVENTS_PID=""
check "events --json is JSON lines" bash -c 'python3 -m json.tool --json-lines "$1" >/dev/null' _ "$WORK/events.json"
check "events --json reports the ban with its policy" python3 -c '
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
sys.exit(not any(e["type"] == "banned" and e["policy"] == "tight" and e["source"] == "10.0.1.1/32"
                 for e in events))' "$WORK/events.json"

# --- replay echoes the capture's name ------------------------------------------
python3 - "$WORK/$CAPTURE" <<'PY'
import struct, sys
frame = bytes(6) + bytes.fromhex("020000000001") + b"\x08\x00"
ip = bytes.fromhex("4500001c0000400040110000") + bytes([10, 0, 1, 1, 10, 200, 0, 1])
frame += ip + struct.pack("!HHHH", 1234, 9, 8, 0)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)
PY
check_json "replay --json gives the capture's name back" \
	'd["capture"] == args[3] and d["frames"] == 1 and d["top_sources"][0]["source"] == "10.0.1.1"' \
	"$FLOODGATE" replay -c "$WORK/tight.conf" "$WORK/$CAPTURE" --json

for name in "$QUOTED" "$CONTROL" "$NOT_UTF8"; do
	"$FLOODGATE" unload "$name" >/dev/null
done
finish
