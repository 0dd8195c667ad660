#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Feed files at scale, on real veth traffic: a [deny] file of 1,000,000 mixed
# IPv4/IPv6 prefixes (scripts/feedgen.py, seeded) loads and reloads; a listed
# source is dropped and an unlisted one passes; `status` shows each list's
# prefixes and memory, and a reload reclaims the old slot; reloads between
# two 1M lists under a flood never show a half-written list; a reload that
# needs more room than the load made is refused and changes nothing.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
FLOOD_PPS=2000

# X = 10.0.1.0/24 is in list A only, Y = 10.0.2.0/24 in list B only.
# S = 10.0.3.1 is dropped by both: A allows 10.0.3.0/24 but denies S's /32,
# B denies the /24. Only a half-written list (A's /24 without its /32, or
# neither list) passes S; packets lost on the way cannot make it pass.
echo "    generating two feeds of 1,000,000 prefixes"
python3 "$REPO/scripts/feedgen.py" --seed 23 --count 1000000 --out "$WORK/a.netset" \
	--line "10.0.1.0/24 ; SBL1" --line "10.0.3.1" &
python3 "$REPO/scripts/feedgen.py" --seed 24 --count 1000000 --out "$WORK/b.netset" \
	--line "10.0.2.0/24" --line "10.0.3.0/24"
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
sent() { json_get "$1" 'd["sent"]'; }

lab_up
count_sources 10.0.1.1 10.0.2.1 10.0.3.1 "$V4_LISTED" "$V6_LISTED" 10.0.4.1

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

flood --dst 10.200.0.1 --src 10.0.1.1 --count 100 >/dev/null
flood --dst 10.200.0.1 --src "$V4_LISTED" --count 100 >/dev/null
flood --dst fd00:200::1 --src "$V6_LISTED" --count 100 >/dev/null
flood --dst 10.200.0.1 --src 10.0.3.1 --count 100 >/dev/null
flood --dst 10.200.0.1 --src 10.0.4.1 --count 100 >/dev/null
check "listed sources are dropped (10.0.1.1, $V4_LISTED, $V6_LISTED)" \
	test "$(received 0)/$(received 3)/$(received 4)" = 0/0/0
check "an unlisted source passes; S, denied inside an allowed /24, is dropped" \
	test "$(received 5)/$(received 2)" = 100/0

t0=$(date +%s%N)
expect_exit 0 "reload the 1,000,000 prefixes" "$FLOODGATE" reload fgA -c "$WORK/a.conf"
t1=$(date +%s%N)
RELOAD_S=$(elapsed "$t0" "$t1")
echo "    reload: $RELOAD_S s"
check "the old slot is reclaimed: memlock as after the load ($(lists "['memlock_bytes']"))" \
	test "$(lists "['memlock_bytes']")" -eq "$memlock"

# --- A <-> B under a flood from X, Y and S ------------------------------------
ROUNDS=4
duration=$(python3 -c "print(round(($ROUNDS + 1.5) * $RELOAD_S + 2, 1))")
for i in 0 1 2; do
	flood --dst 10.200.0.1 --src 10.0.$((i + 1)).1 --rate $FLOOD_PPS --duration "$duration" \
		>"$WORK/flood$i.json" &
	pids[i]=$!
done
before=("$(received 0)" "$(received 1)" "$(received 2)")
sleep 0.5
reloads=0
for ((r = 0; r < ROUNDS; r++)); do
	conf=$([ $((r % 2)) -eq 0 ] && echo b || echo a)
	"$FLOODGATE" reload fgA -c "$WORK/$conf.conf" >/dev/null && reloads=$((reloads + 1))
done
wait "${pids[@]}"
for i in 0 1 2; do
	got[i]=$(($(received $i) - ${before[i]}))
	sent[i]=$(sent "$(cat "$WORK/flood$i.json")")
	echo "    source 10.0.$((i + 1)).1: ${got[i]} of ${sent[i]} passed"
done
check "$ROUNDS reloads between A and B ran during the flood ($reloads)" test "$reloads" -eq $ROUNDS
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
flood --dst 10.200.0.1 --src 10.0.1.1 --count 100 >/dev/null
flood --dst 10.200.0.1 --src 10.0.2.1 --count 100 >/dev/null
check "  ... list A still decides: X dropped, Y passes" \
	test "$(($(received 0) - x))/$(($(received 1) - y))" = 0/100
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
