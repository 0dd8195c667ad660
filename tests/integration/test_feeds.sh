#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Feed files at scale, on real veth traffic: a [deny] file of 1,000,000 mixed
# IPv4/IPv6 prefixes (scripts/feedgen.py, seeded) loads and reloads; a listed
# source is dropped and an unlisted one passes; `status` shows each list's
# prefixes and memory, and a reload either way reclaims the old slot, as
# does the reload after one killed before its flip; reloads between two 1M
# lists under a flood never show a half-written list; a reload that needs
# more room than the load made is refused and changes nothing.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
FLOOD_PPS=2000

# Three consecutive sources, so that one generator sends them in turn:
# X = 10.0.3.1 is in list A only, Y = 10.0.3.2 in list B only, and
# S = 10.0.3.3 is dropped by both: A allows 10.0.3.0/24 but denies X's and
# S's /32s, B denies 10.0.3.2/31. Only a half-written list (A's /24 without
# its /32s, or neither list) passes S; packets lost on the way cannot make
# it pass.
echo "    generating two feeds of 1,000,000 prefixes"
python3 "$REPO/scripts/feedgen.py" --seed 23 --count 1000000 --out "$WORK/a.netset" \
	--line "10.0.3.1/32 ; SBL1" --line "10.0.3.3" &
python3 "$REPO/scripts/feedgen.py" --seed 24 --count 1000000 --out "$WORK/b.netset" \
	--line "10.0.3.2/31"
wait
V6_LISTED=$(grep -m1 -o '^[0-9a-f]*:[0-9a-f:]*/' "$WORK/a.netset" | tr -d /)
V6_LISTED=${V6_LISTED%::}::1
V4_LISTED=$(grep -m1 -o '^1[1-9][0-9]*\.[0-9.]*/2[0-4]' "$WORK/a.netset" | cut -d/ -f1)
V4_LISTED=${V4_LISTED%.*}.$((${V4_LISTED##*.} + 1))

policy='[policy rest]\nmatch = any\nrate = 100000/s\naction = monitor\n'
printf "$policy[deny]\nfile = $WORK/a.netset\n[allow]\nsrc = 10.0.3.0/24\n" >"$WORK/a.conf"
printf "$policy[deny]\nfile = $WORK/b.netset\n" >"$WORK/b.conf"
printf "$policy[deny]\nfile = $WORK/a.netset\nfile = $WORK/b.netset\n" >"$WORK/both.conf"
printf '1.2.3.4\n5.6.7.8/33\n' >"$WORK/bad.netset"
printf "$policy[deny]\nfile = $WORK/bad.netset\n" >"$WORK/bad.conf"

status_json() { "$FLOODGATE" status fgA --json | json_get "$(cat)" "d['interfaces'][0]$1"; }
lists() { status_json "['lists']$1"; }
elapsed() { python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e9:.2f}')" "$@"; }

lab_up
count_sources 10.0.3.1 10.0.3.2 10.0.3.3 "$V4_LISTED" "$V6_LISTED" 10.0.4.1

expect_exit 3 "a bad feed line fails the load" "$FLOODGATE" load fgA -c "$WORK/bad.conf"
check "  ... at the feed's FILE:LINE:" grep -q "^$WORK/bad.netset:2: bad line '5.6.7.8/33'" \
	<<<"$LAST_ERR"

t0=$(date +%s%N)
expect_exit 0 "load a deny file of 1,000,000 prefixes" "$FLOODGATE" load fgA -c "$WORK/a.conf"
t1=$(date +%s%N)
echo "    load: $(elapsed "$t0" "$t1") s"
check "status: [deny] holds 1,000,002 prefixes, [allow] 1" \
	test "$(lists "['deny']['prefixes']")/$(lists "['allow']['prefixes']")" = 1000002/1
memlock=$(lists "['memlock_bytes']")
echo "    status: $("$FLOODGATE" status fgA | grep -E '^  (allow|deny|lists):')"
check "status: the lists' memory ($memlock bytes) is shown, doubled for a reload" \
	test "$memlock" -gt 0 -a "$(lists "['deny']['reload_peak_bytes']")" -eq \
	$((2 * $(lists "['deny']['memory_bytes']")))

flood --dst 10.200.0.1 --src 10.0.3.1+3 --count 300 >/dev/null
flood --dst 10.200.0.1 --src "$V4_LISTED" --count 100 >/dev/null
flood --dst fd00:200::1 --src "$V6_LISTED" --count 100 >/dev/null
flood --dst 10.200.0.1 --src 10.0.4.1 --count 100 >/dev/null
check "listed sources are dropped (10.0.3.1, $V4_LISTED, $V6_LISTED)" \
	test "$(received 0)/$(received 3)/$(received 4)" = 0/0/0
check "unlisted and allowed sources pass; S, denied inside an allowed /24, is dropped" \
	test "$(received 5)/$(received 1)/$(received 2)" = 100/100/0

t0=$(date +%s%N)
expect_exit 0 "reload the 1,000,000 prefixes" "$FLOODGATE" reload fgA -c "$WORK/a.conf"
t1=$(date +%s%N)
echo "    reload: $(elapsed "$t0" "$t1") s"
check "the old slot is reclaimed: memlock as after the load ($(lists "['memlock_bytes']"))" \
	test "$(lists "['memlock_bytes']")" -eq "$memlock"
# Back into slot 0: the old slot's keys, collected while the new ones are
# written, now come after the written slot's in the trie's order.
expect_exit 0 "reload them again, back into slot 0" "$FLOODGATE" reload fgA -c "$WORK/a.conf"
check "  ... slot 1 is reclaimed too ($(lists "['memlock_bytes']"))" \
	test "$(lists "['memlock_bytes']")" -eq "$memlock"
# A reload of B killed after writing the idle slot, before the flip, leaves
# B's lists there; the next reload (of A) deletes them first, while its
# collector walks the slot in force.
FG_TEST_STOP_AT=reload-carried "$FLOODGATE" reload fgA -c "$WORK/b.conf" >/dev/null 2>&1 &
killed_pid=$!
check "a reload stops after writing the idle slot" wait_until 60 process_stopped "$killed_pid"
kill -KILL "$killed_pid"
wait "$killed_pid" 2>/dev/null
check "  ... killed there, it leaves both slots' lists ($(lists "['memlock_bytes']"))" \
	test "$(lists "['memlock_bytes']")" -gt "$memlock"
expect_exit 0 "  ... and the next reload succeeds" "$FLOODGATE" reload fgA -c "$WORK/a.conf"
check "  ... and leaves one slot's lists ($(lists "['memlock_bytes']"))" \
	test "$(lists "['memlock_bytes']")" -eq "$memlock"

# --- A <-> B under a flood from X, Y and S ------------------------------------
# One generator thread sends X, Y, S, X, Y, S, ... from the one CPU it is
# pinned to, so they reach one of fgA's receive queues (a veth picks it by
# the sending CPU) and are judged in that order. After each reload to B the test waits for
# two passes of X, which only B passes: the Y sent between them was judged
# under B, and dropped. After each reload to A (and under the load's A at
# first) it waits for two passes of Y. So every window sees every source
# whatever the machine's speed; the flood then stops. Its duration and the
# deadline only bound a run that goes wrong.
ROUNDS=4
FLOOD_MAX_SECONDS=300
WINDOW_DEADLINE_SECONDS=60
passed_twice() { [ "$(received "$1")" -ge $(($2 + 2)) ]; }
before=("$(received 0)" "$(received 1)" "$(received 2)")
flood --dst 10.200.0.1 --src 10.0.3.1+3 --rate $FLOOD_PPS --duration $FLOOD_MAX_SECONDS \
	>"$WORK/flood.json" &
flood_pid=$!
windows=0
reloads=0
wait_until $WINDOW_DEADLINE_SECONDS passed_twice 1 "${before[1]}" && windows=$((windows + 1))
for ((r = 0; r < ROUNDS; r++)); do
	if [ $((r % 2)) -eq 0 ]; then conf=b passer=0; else conf=a passer=1; fi
	n=$(received $passer)
	"$FLOODGATE" reload fgA -c "$WORK/$conf.conf" >/dev/null && reloads=$((reloads + 1))
	wait_until $WINDOW_DEADLINE_SECONDS passed_twice $passer "$n" && windows=$((windows + 1))
done
running_flood=$(kill -0 $flood_pid 2>/dev/null && echo yes || echo no)
# The generator is the child of the background shell that runs `flood`;
# on SIGTERM it stops and still prints its report.
pkill -TERM -P $flood_pid 2>/dev/null
wait $flood_pid
report=$(cat "$WORK/flood.json")
for i in 0 1 2; do
	got[i]=$(($(received $i) - ${before[i]}))
	sent[i]=$(json_get "$report" "d['per_source'][$i]")
	echo "    source 10.0.3.$((i + 1)): ${got[i]} of ${sent[i]} passed"
done
check "no frame was lost on the veth (the test's premise)" \
	test "$(json_get "$report" 'max(d["tx_dropped"], 0)')" -eq 0
check "the flood ran until the test stopped it" test "$running_flood" = yes
check "$ROUNDS reloads between A and B ran during the flood ($reloads)" test "$reloads" -eq $ROUNDS
check "every window saw its source pass twice: X under each B, Y under A and each A ($windows of $((ROUNDS + 1)))" \
	test "$windows" -eq $((ROUNDS + 1))
check "S, dropped by both lists, never passed: no half-written list" \
	test "${got[2]}" -eq 0
check "X (in A only) passed under B and was dropped under A" \
	test "${got[0]}" -gt 0 -a "${got[0]}" -lt "${sent[0]}"
check "Y (in B only) passed under A and was dropped under B" \
	test "${got[1]}" -gt 0 -a "${got[1]}" -lt "${sent[1]}"

# --- a reload past the room made at load is refused, and changes nothing -------
state() {
	status_json "['generation'], d['interfaces'][0]['lists']"
	bpftool map dump pinned "$PIN/policy_sets" | md5sum
}
before=$(state)
expect_exit 3 "reload with 2,000,000 prefixes beside the 1,000,000 in force" \
	"$FLOODGATE" reload fgA -c "$WORK/both.conf"
check "  ... says how to grow it" \
	grep -q "Grow it: floodgate unload fgA && floodgate load fgA -c $WORK/both.conf" <<<"$LAST_ERR"
check "  ... and changes nothing (generation, lists, memory, policy slots)" \
	test "$before" = "$(state)"
x=$(received 0)
y=$(received 1)
flood --dst 10.200.0.1 --src 10.0.3.1 --count 100 >/dev/null
flood --dst 10.200.0.1 --src 10.0.3.2 --count 100 >/dev/null
check "  ... list A still decides: X dropped, Y passes" \
	test "$(($(received 0) - x))/$(($(received 1) - y))" = 0/100
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
