#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate reload` with real traffic on a real veth: reloading the loaded
# config works; a source that exhausted its bucket stays limited across a
# reload that changes another policy's rate, and that rate takes effect; a
# removed policy's state is deleted; a broken reload, or one that changes a
# key fixed at load, changes nothing; reloads during a flood never admit
# beyond the limit; every pinned map is there until unload, none after.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
FLOOD_PPS=20000
HOLD_RATE=10
HOLD_BURST=50
TUNE_BURST=20
# Every map floodgate pins (user/maps/pinned.c, fg_pinned_maps[]).
PINNED_MAPS="access_lists bans dport_match event_budget events fleet_counts fleet_holds host_sources
fleet_state global_stats logs new_source_budget policy_sets policy_stats runtime sources sources4 sport_match
src_match windows own_addrs known4 ban_strikes ban_count synproxy_xdp synproxy_tc presence4_first presence4"

# write_config FILE TUNE_RATE WITH_GONE [GLOBAL_LINE]
write_config() {
	{
		[ -n "${4:-}" ] && echo "$4"
		cat <<-CONF
			[policy hold]
			match = udp dport 9
			rate  = $HOLD_RATE/s
			burst = $HOLD_BURST

			[policy tune]
			match = udp dport 10
			rate  = $2/s
			burst = $TUNE_BURST
		CONF
		if [ "$3" = yes ]; then
			printf '[policy gone]\nmatch = udp dport 11\nrate = 100/s\nburst = 10\n'
		fi
		printf '[policy rest]\nmatch = any\nrate = 100000/s\n'
	} >"$1"
}
write_config "$WORK/a.conf" 100 yes
write_config "$WORK/b.conf" 1000 yes
write_config "$WORK/c.conf" 1000 no
write_config "$WORK/hook.conf" 1000 yes "hook = tc"
write_config "$WORK/mode.conf" 1000 yes "xdp_mode = generic"
write_config "$WORK/sources.conf" 1000 yes "max_sources = 1024"
write_config "$WORK/sources6.conf" 1000 yes "max_sources_ipv6 = 2048"
write_config "$WORK/clock.conf" 1000 yes "clock = coarse"
write_config "$WORK/iface.conf" 1000 yes "interface = lo"
printf '[policy w]\nmatch = udp dport 12\nalgorithm = sliding_window\nrate = 5/s\n' \
	>"$WORK/window.conf"
cat "$WORK/b.conf" >>"$WORK/window.conf"
printf '[policy a]\nmatch = udp\nrate = 0/s\n' >"$WORK/bad.conf"

# within JSON... -- COUNT RATE BURST: COUNT admitted over the floods whose
# generator JSONs are given (first to last) lies in
# [burst + rate (sending time - 2 gap) - 1, burst + rate (first start to
# last end + gap) + 1]. Sending time is the sum of the runs' spans; the
# upper bound counts the whole time from the first frame to the last,
# reloads included, so a fresh burst after a reload would break it.
within() {
	python3 - "$@" <<'PY'
import json, sys
args = sys.argv[1:]
sep = args.index("--")
floods = [json.loads(a) for a in args[:sep]]
count, rate, burst = int(args[sep + 1]), float(args[sep + 2]), int(args[sep + 3])
gap = max(f["max_batch_ns"] / 1e9 + 64 / f["rate"] for f in floods)
sending = sum((f["end_ns"] - f["start_ns"]) / 1e9 for f in floods)
whole = (floods[-1]["end_ns"] - floods[0]["start_ns"]) / 1e9
lo = burst + rate * (sending - 2 * gap * len(floods)) - 1
hi = burst + rate * (whole + gap) + 1
ok = lo <= count <= hi
print(f"    admitted {count}, expected {lo:.1f}..{hi:.1f} (burst {burst} + {rate:g}/s x "
      f"{sending:.3f} s sending, {whole:.3f} s overall) {'ok' if ok else 'OUT OF BOUNDS'}")
sys.exit(0 if ok else 1)
PY
}

# policy_entries NAME: entries of `sources4` and `known4` (the lab's sources
# are IPv4) that belong to policy NAME (a token_bucket policy: its id is the
# FNV-1a hash of its name).
policy_entries() {
	python3 -c '
import json, sys
h = 2166136261
for c in sys.argv[1].encode():
    h = ((h ^ c) * 16777619) & 0xffffffff
print(sum(1 for path in sys.argv[2:] for e in json.load(open(path))
          if e["formatted"]["key"]["policy_id"] == h))' "$1" \
		<(bpftool -j map dump pinned "$PIN/sources4") <(bpftool -j map dump pinned "$PIN/known4")
}

generation() {
	json_get "$("$FLOODGATE" stats fgA --json)" 'd["generation"]'
}

# pinned_state: what a refused reload must not change.
pinned_state() {
	bpftool map dump pinned "$PIN/runtime"
	bpftool map dump pinned "$PIN/policy_sets" | md5sum
	bpftool map dump pinned "$PIN/sources4" | md5sum
	bpftool map dump pinned "$PIN/known4" | md5sum
	bpftool map dump pinned "$PIN/sources" | md5sum
	bpftool net show dev fgA
}

# all_pins_present: the pin folder holds exactly the pinned maps, and each
# is a map of the attached program.
all_pins_present() {
	local prog_id map_ids name id
	[ "$(ls "$PIN" | sort | tr '\n' ' ')" = "$(echo $PINNED_MAPS | tr ' ' '\n' | sort |
		tr '\n' ' ')" ] || return 1
	prog_id=$("$FLOODGATE" status fgA | sed -n 's/.*program id \([0-9]*\),.*/\1/p')
	map_ids=" $(bpftool -j prog show id "$prog_id" | json_get "$(cat)" \
		'" ".join(str(i) for i in d["map_ids"])') "
	for name in $PINNED_MAPS; do
		case $name in global_stats | policy_stats | runtime | policy_sets | sources4 | sources) ;;
		*) continue ;; # the program may not reference every map directly
		esac
		id=$(bpftool -j map show pinned "$PIN/$name" | json_get "$(cat)" 'd["id"]')
		[[ $map_ids == *" $id "* ]] || return 1
	done
}

lab_up
count_sources 10.0.1.1 10.0.2.1 10.0.3.1 10.0.1.2

# --- reload of the loaded config: the defect of issue 7 ---------------------
expect_exit 0 "load A" "$FLOODGATE" load fgA -c "$WORK/a.conf"
check "every map is pinned, and they are the program's" all_pins_present
expect_exit 0 "reload with the very config loaded" "$FLOODGATE" reload fgA -c "$WORK/a.conf"
check "status shows the windows and logs tables (1 entry each)" bash -c \
	"'$FLOODGATE' status fgA | grep -q 'windows:  0 of 1 ' &&
	 '$FLOODGATE' status fgA | grep -q 'logs:     0 of 1 '"

# --- an exhausted source stays limited across a reload of another policy ----
hold1=$(flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --rate $FLOOD_PPS --duration 0.5)
echo "    hold flood before reload: $hold1"
check "the hold source exhausted its bucket" test "$(received 0)" -lt "$(json_get "$hold1" 'd["sent"]')"
gen=$(generation)
expect_exit 0 "reload B: tune's rate 100/s -> 1000/s" "$FLOODGATE" reload fgA -c "$WORK/b.conf"
check "  ... bumps the generation" test "$(generation)" -eq "$((gen + 1))"
hold2=$(flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --rate $FLOOD_PPS --duration 0.5)
echo "    hold flood after reload: $hold2"
check "the hold source stays limited: one burst over both floods" \
	within "$hold1" "$hold2" -- "$(received 0)" $HOLD_RATE $HOLD_BURST

tune=$(flood --dst 10.200.0.1 --src 10.0.2.1 --dport 10 --rate $FLOOD_PPS --duration 1)
echo "    tune flood: $tune"
check "tune's new rate (1000/s) takes effect" within "$tune" -- "$(received 1)" 1000 $TUNE_BURST

# --- a removed policy's state is reclaimed ------------------------------------
flood --dst 10.200.0.1 --src 10.0.3.1 --dport 11 --count 100 >/dev/null
check "the gone policy has state ($(policy_entries gone) entries)" \
	test "$(policy_entries gone)" -ge 1
expect_exit 0 "reload C removes the gone policy" "$FLOODGATE" reload fgA -c "$WORK/c.conf"
check "  ... deletes its state" test "$(policy_entries gone)" -eq 0
check "  ... keeps the hold policy's state" test "$(policy_entries hold)" -ge 1

# --- refused reloads change nothing -------------------------------------------
before=$(pinned_state)
gen=$(generation)
expect_exit 3 "reload with a broken config" "$FLOODGATE" reload fgA -c "$WORK/bad.conf"
check "  ... names FILE:LINE:" grep -q "^$WORK/bad.conf:3: " <<<"$LAST_ERR"
for key in hook xdp_mode max_sources max_sources_ipv6 clock interface; do
	case $key in
	hook) file=hook ;; xdp_mode) file=mode ;; max_sources) file=sources ;;
	max_sources_ipv6) file=sources6 ;; clock) file=clock ;; interface) file=iface ;;
	esac
	expect_exit 3 "reload that changes $key" "$FLOODGATE" reload fgA -c "$WORK/$file.conf"
	check "  ... names $key" grep -q "^$WORK/$file.conf: $key = [^ ]* cannot change by reload" \
		<<<"$LAST_ERR"
done
expect_exit 3 "reload that adds a first sliding_window policy" \
	"$FLOODGATE" reload fgA -c "$WORK/window.conf"
check "  ... names the windows table" grep -q '`windows`' <<<"$LAST_ERR"
check "refused reloads leave maps, policy and attachment untouched" \
	test "$before" = "$(pinned_state)"
check "  ... and the generation ($gen)" test "$(generation)" -eq "$gen"

# --- reloads during a running flood never admit beyond the limit -------------
flood --dst 10.200.0.1 --src 10.0.1.2 --dport 9 --rate $FLOOD_PPS --duration 2 \
	>"$WORK/during.json" &
flood_pid=$!
reloads=0
while kill -0 $flood_pid 2>/dev/null; do
	conf=$([ $((reloads % 2)) -eq 0 ] && echo b || echo c)
	"$FLOODGATE" reload fgA -c "$WORK/$conf.conf" >/dev/null && reloads=$((reloads + 1))
done
wait $flood_pid
echo "    flood during $reloads reloads: $(cat "$WORK/during.json")"
check "several reloads ran during the flood ($reloads)" test "$reloads" -ge 3
check "admitted within the hold limit during the reloads" \
	within "$(cat "$WORK/during.json")" -- "$(received 3)" $HOLD_RATE $HOLD_BURST

# --- every map present through load, reload and unload ------------------------
check "every map is still pinned after the reloads" all_pins_present
expect_exit 0 "unload" "$FLOODGATE" unload fgA
check "  ... leaves no pin" test ! -e "$PIN"

# --- the same at the tc hook, loaded with --hook overriding the config -------
expect_exit 0 "load A --hook tc" "$FLOODGATE" load fgA -c "$WORK/a.conf" --hook tc
expect_exit 0 "reload of the same file keeps the --hook tc load" \
	"$FLOODGATE" reload fgA -c "$WORK/b.conf"
check "  ... and the program stays at tc" bash -c "'$FLOODGATE' status fgA | grep -q 'tc ingress'"
check "every map is pinned at tc too" all_pins_present
expect_exit 0 "unload (tc)" "$FLOODGATE" unload fgA
check "  ... leaves no pin" test ! -e "$PIN"

# --- a stale pin of another layout is refused, naming the map -----------------
mkdir -p "$PIN"
bpftool map create "$PIN/policy_sets" type array key 4 value 8 entries 2 name policy_sets
expect_exit 1 "status over a stale policy_sets pin of another size" "$FLOODGATE" status fgA
check "  ... names the map" grep -q "pinned map $PIN/policy_sets is not the one" <<<"$LAST_ERR"
expect_exit 5 "reload over it: no program of theirs to upgrade from" \
	"$FLOODGATE" reload fgA -c "$WORK/b.conf"
check "  ... says so, and what to remove" \
	grep -q "have another layout .* no program of theirs is attached to fgA .*rm -r $PIN" <<<"$LAST_ERR"
rm -r "$PIN"

finish
