#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Sources that first appear during a spoofed flood: a random-source flood
# across 10.0.0.0/8 against a table of 65,536 entries runs past the
# new-source budget, then a light source (5 frames at once, every 0.1 s) and
# a heavy one (20,000/s against a limit of 1000/s) appear. Each must get its
# own state by its second packet: the light one loses at most its first
# packet, the heavy one is held within 2% of burst + rate x elapsed.
# On a 2-CPU lab this test cannot tell the designs apart: each real source's
# generator preempts the spoofing thread on its CPU, and the budget refills
# meanwhile, so even the old design usually lets the first packet in.
# test_new_sources_during_spoofed_flood (test_prog) is the one that fails
# without the seen-twice reserve.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
RATE=1000
BURST=100
NEW_SOURCES=${NEW_SOURCES:-2000/s}
SPOOF_RATE=${SPOOF_RATE:-300000}
# The flood runs until the real sources are done, then is stopped: it
# outlasts them by construction, however slow a busy machine makes them.
# This is only its upper bound.
FLOOD_MAX_SECONDS=300
ROUNDS=10

spoof_lab_up "$RATE" "$BURST" "$NEW_SOURCES"

overflowing() {
	[ "$("$FLOODGATE" stats fgA --json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["global"]["budget_overflow"])')" -gt 1000 ]
}

# Capped so that the veth ring never overflows: a frame lost on the wire
# would be blamed on floodgate.
flood --dst 10.200.0.1 --src 10.0.0.0/8 --rate "$SPOOF_RATE" --threads 2 --duration $FLOOD_MAX_SECONDS \
	>"$WORK/spoof.json" &
spoof_pid=$!
check "the spoofed flood runs past the new-source budget" wait_until 3 overflowing

# Both real sources first appear now, while the flood goes on.
flood --dst 10.200.0.1 --src 192.0.2.2 --rate 20000 --batch 1 --duration 2 \
	>"$WORK/heavy.json" &
heavy_pid=$!
light_sent=0
light_start=$SECONDS
for ((round = 0; round < ROUNDS; round++)); do
	# One call sends the 5 frames back to back; the pause only paces rounds.
	flood --dst 10.200.0.1 --src 192.0.2.1 --count 5 --batch 5 >"$WORK/light.json"
	light_sent=$((light_sent + $(json_get "$(cat "$WORK/light.json")" 'd["sent"]')))
	sleep 0.1
done
echo "    light: $ROUNDS rounds in $((SECONDS - light_start)) s"
wait $heavy_pid
running_spoof=$(kill -0 $spoof_pid 2>/dev/null && echo yes || echo no)
# The generator is the child of the background shell that runs `flood`;
# on SIGTERM it stops and still prints its report.
pkill -TERM -P $spoof_pid 2>/dev/null
wait $spoof_pid

spoof=$(cat "$WORK/spoof.json")
heavy=$(cat "$WORK/heavy.json")
stats=$("$FLOODGATE" stats fgA --json)
echo "    spoofed: $(json_get "$spoof" 'd["sent"]') frames from random sources"
echo "    stats:   $stats"
light_got=$(received 0)
heavy_got=$(received 1)
check "no frame was lost on the veth (the test's premise)" \
	test "$(json_get "$spoof" 'max(d["tx_dropped"], 0)')" -eq 0
check "the flood outlasted both real sources" test "$running_spoof" = yes
check "the light source lost at most its first packet ($light_got of $light_sent)" \
	test "$light_got" -ge $((light_sent - 1))
check "the heavy source is within 2% of burst + rate x elapsed" python3 - "$heavy" "$heavy_got" <<PY
import json, sys
d, got = json.loads(sys.argv[1]), int(sys.argv[2])
elapsed = (d["end_ns"] - d["start_ns"]) / 1e9
want = $BURST + $RATE * elapsed
print(f"    heavy: admitted {got}, burst + rate x elapsed = {want:.1f} ({d['sent']} sent in {elapsed:.3f} s)")
sys.exit(0 if abs(got - want) <= 0.02 * want else 1)
PY
created=$(json_get "$stats" 'd["global"]["sources_created"]')
flood_seconds=$(json_get "$spoof" '-(-(d["end_ns"] - d["start_ns"]) // 10**9)')
check "the flood did not churn the table ($created entries created in ${flood_seconds} s, budget $NEW_SOURCES, burst as much)" \
	test "$created" -le $((${NEW_SOURCES%/s} * (flood_seconds + 2)))
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
