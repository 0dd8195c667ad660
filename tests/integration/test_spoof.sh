#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The spoofed-flood case at small scale: a flood from random sources across
# 10.0.0.0/8 against a table of 65,536 entries, while a legitimate source
# sends under its limit and an abusive fixed source far above it. The
# legitimate source must keep every packet, and the abuser must stay at
# burst + rate x elapsed: its state must never be evicted and recreated with
# a fresh burst.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
RATE=1000
BURST=1000
SECONDS_TO_FLOOD=3
NEW_SOURCES=${NEW_SOURCES:-50000/s}

# Taken before the lab and the load: the budget cannot have started earlier.
load_ns=$(date +%s%N)
spoof_lab_up "$RATE" "$BURST" "$NEW_SOURCES"

# Both real sources get their state before the flood starts, so that the
# test does not depend on who wins the race for the budget's first tokens
# (a real source that arrives mid-flood meets the overflow bucket, which is
# what the budget is for, and is not what this test measures).
flood --dst 10.200.0.1 --src 192.0.2.1 --count 1 >/dev/null
flood --dst 10.200.0.1 --src 192.0.2.2 --count 1 >/dev/null
check "both real sources have state before the flood" test \
	"$(bpftool map dump pinned /sys/fs/bpf/floodgate/fgA/sources4 | grep -c '"policy_id"')" -eq 2

# The real sources are outside 10.0.0.0/8, so no spoofed frame counts as
# theirs. The spoofed flood holds the device for fast batches; the two real sources
# send one frame per call (see scripts/demo.sh).
# Capped so that the veth ring never overflows: a frame lost on the wire
# would be blamed on floodgate.
flood --dst 10.200.0.1 --src 10.0.0.0/8 --rate 300000 --duration $SECONDS_TO_FLOOD \
	>"$WORK/spoof.json" &
spoof_pid=$!
flood --dst 10.200.0.1 --src 192.0.2.1 --rate 200 --batch 1 \
	--duration $SECONDS_TO_FLOOD >"$WORK/legit.json" &
legit_pid=$!
flood --dst 10.200.0.1 --src 192.0.2.2 --rate 20000 --batch 1 \
	--duration $SECONDS_TO_FLOOD >"$WORK/abuser.json"
wait $legit_pid $spoof_pid

spoof=$(cat "$WORK/spoof.json")
legit=$(cat "$WORK/legit.json")
abuser=$(cat "$WORK/abuser.json")
stats=$("$FLOODGATE" stats fgA --json)
stats_ns=$(date +%s%N)
echo "    spoofed: $(json_get "$spoof" 'd["sent"]') frames from random sources"
echo "    stats:   $stats"
legit_sent=$(json_get "$legit" 'd["sent"]')
# tx_dropped is -1 when the generator cannot read it: that is not "none".
check "no frame was lost on the veth (the test's premise)" \
	test "$(json_get "$spoof" 'd["tx_dropped"]')" -eq 0
# minus the frame each sent before the flood
legit_got=$(($(received 0) - 1))
abuser_got=$(($(received 1) - 1))
check "the legitimate source kept every packet ($legit_got of $legit_sent)" \
	test "$legit_got" -eq "$legit_sent"
check "the spoofed flood did run past the new-source budget" \
	test "$(json_get "$stats" 'd["global"]["budget_overflow"]')" -gt 0
# The budget (50000/s, burst 50000 by default) bounds the state created
# between load and the stats read, plus the policy's overflow bucket. A
# budget that is not enforced creates one entry per spoofed frame.
check "sources created within the budget's burst + rate x elapsed" python3 - "$stats" \
	"$load_ns" "$stats_ns" <<'PY'
import json, sys
created = json.loads(sys.argv[1])["global"]["sources_created"]
elapsed = (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
bound = 50000 + 50000 * elapsed + 1
print(f"    sources_created {created}, bound {bound:.0f} over {elapsed:.3f} s")
sys.exit(0 if created <= bound else 1)
PY

# The abuser's bound, as in test_cli.sh: it sends one frame per call at a
# steady 20k/s, so it is never idle longer than one pacing interval plus
# the longest call.
check "the abuser stayed at burst + rate x elapsed" python3 - "$abuser" "$abuser_got" <<PY
import json, sys
d, got = json.loads(sys.argv[1]), int(sys.argv[2])
elapsed = (d["end_ns"] - d["start_ns"]) / 1e9
gap = d["max_batch_ns"] / 1e9 + 1 / d["rate"]
lo = $BURST - 1 + $RATE * (elapsed - 2 * gap) - 1
hi = $BURST + $RATE * (elapsed + gap) + 1
print(f"    abuser: admitted {got}, expected {lo:.1f}..{hi:.1f} ({d['sent']} sent in {elapsed:.3f} s, tx_dropped {d['tx_dropped']})")
sys.exit(0 if lo <= got <= hi else 1)
PY
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
