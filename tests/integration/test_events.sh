#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate events --json` while a flood from a /16 of random sources hits
# fgA: every line is a well-formed event, their number stays within the cap
# the `events` key sets (burst + rate x elapsed, elapsed measured from the
# load to the reader's end), and events_suppressed rises with the flood.
# A ban by hand that runs out is reported by the reader (ban_expired).
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
READER=
trap '[ -n "$READER" ] && kill "$READER" 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT

EVENTS_PER_S=50
cat >"$WORK/events.conf" <<CONF
events = $EVENTS_PER_S/s

[policy flood]
match = udp dport 9
rate  = 1/s
burst = 1
CONF

suppressed() {
	"$FLOODGATE" stats fgA --json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["global"]["events_suppressed"])'
}

lab_up
expect_exit 0 "load with events = $EVENTS_PER_S/s" "$FLOODGATE" load fgA -c "$WORK/events.conf"
start=$(date +%s.%N)
"$FLOODGATE" events fgA --json >"$WORK/events.json" 2>"$WORK/events.err" &
READER=$!

# Each source's second packet starts a refusal: far more events are due
# than the cap allows.
flood --dst 10.200.0.1 --src 10.0.0.0/16 --rate 100000 --duration 1.5 >/dev/null
first=$(suppressed)
flood --dst 10.200.0.1 --src 10.0.0.0/16 --rate 100000 --duration 1.5 >/dev/null
second=$(suppressed)
echo "    events_suppressed: $first after the first flood, $second after the second"
check "events_suppressed counts the events over the cap" test "$first" -gt 1000
check "  ... and rises with the flood" test "$second" -gt "$first"

# The reader sees a ban by hand run out, from its scan of the bans.
expect_exit 0 "ban 10.9.9.9 for 1 s" "$FLOODGATE" ban fgA 10.9.9.9 --for 1s
check "the reader reports the ban's end" \
	wait_until 5 grep -q '"type":"ban_expired","source":"10.9.9.9/32"' "$WORK/events.json"
kill -TERM "$READER"
wait "$READER"
rc=$?
READER=
end=$(date +%s.%N)
check "events exits 0 on SIGTERM" test "$rc" -eq 0

lines=$(grep -c '"type":"refusing"\|"type":"budget_exhausted"' "$WORK/events.json")
limit=$(python3 -c "import math; print(math.floor($EVENTS_PER_S + $EVENTS_PER_S * ($end - $start)))")
echo "    $lines datapath events in $(python3 -c "print(round($end - $start, 2))") s, cap $limit"
head -3 "$WORK/events.json" | sed 's/^/    /'
check "events flowed: at least one CPU's burst of them" test "$lines" -ge $((EVENTS_PER_S / 2))
check "  ... and no more than burst + rate x elapsed" test "$lines" -le "$limit"
check "every line is an event object with time, type, source and policy" python3 -c '
import json, re, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["time"]), e
    assert e["type"] in ("refusing", "budget_exhausted", "ban_expired"), e
    if e["type"] == "ban_expired":
        assert e["source"] == "10.9.9.9/32" and e["policy"] is None, e
    else:
        assert re.fullmatch(r"10\.0\.\d+\.\d+/32|overflow", e["source"]), e
        assert e["policy"] == "flood", e
' "$WORK/events.json"

# Text mode: one readable line per event.
"$FLOODGATE" events fgA >"$WORK/events.txt" 2>&1 &
READER=$!
"$FLOODGATE" ban fgA 10.9.9.8 --for 1s
check "text: a ban_expired line" wait_until 5 grep -q ' ban_expired  *10.9.9.8/32 policy (by hand)$' \
	"$WORK/events.txt"
kill -TERM "$READER"
wait "$READER"
READER=
expect_exit 5 "events on an interface without floodgate" "$FLOODGATE" events nosuch0
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
