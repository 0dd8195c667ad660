#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The real CLI on a real veth with real traffic: load with XDP and with tc,
# flood from several sources, check per-source admitted counts against
# burst + rate x elapsed, check `stats --json` against what was sent, and
# check that bad input changes nothing and unload leaves nothing.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
RATE=1000
BURST=200
FLOOD_PPS=200000
FLOOD_SECONDS=2

cat >"$WORK/limit.conf" <<CONF
# one limit under test, and a generous catch-all
[policy flood]
match = udp dport 9
per   = src/32 src/64
rate  = $RATE/s
burst = $BURST

[policy rest]
match = any
rate  = 100000/s
CONF
printf '[policy a]\nmatch = udp\nrate = 0/s\n' >"$WORK/bad.conf"

lab_up

# --- bad input, nothing loaded --------------------------------------------
expect_exit 4 "load on an unknown interface" "$FLOODGATE" load nosuch0
check "  ... says so" grep -q "unknown interface 'nosuch0'" <<<"$LAST_ERR"
expect_exit 2 "bad --hook value" "$FLOODGATE" load fgA --hook bogus
expect_exit 2 "unknown command" "$FLOODGATE" frobnicate
expect_exit 2 "unknown option" "$FLOODGATE" stats fgA --bogus
expect_exit 3 "check of a broken config" "$FLOODGATE" check -c "$WORK/bad.conf"
check "  ... names FILE:LINE:" grep -q "^$WORK/bad.conf:3: " <<<"$LAST_ERR"
expect_exit 3 "load of a broken config" "$FLOODGATE" load fgA -c "$WORK/bad.conf"
check "  ... leaves no pins" test ! -e "$PIN"
expect_exit 5 "stats when not loaded" "$FLOODGATE" stats fgA
expect_exit 5 "unload when not loaded" "$FLOODGATE" unload fgA
expect_exit 4 "load as a non-root user" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$FLOODGATE" load fgA
check "  ... says so" grep -q "must run as root" <<<"$LAST_ERR"
expect_exit 0 "check of the sample config" "$FLOODGATE" check -c "$REPO/floodgate.conf.sample"

# pinned_state: what a failed command must not change.
pinned_state() {
	bpftool map dump pinned "$PIN/runtime"
	bpftool map dump pinned "$PIN/policy_sets" | md5sum
	bpftool net show dev fgA
}

# per_source_within JSON: each source's nft count within the GCRA bound.
# The generator sends round-robin from start_ns to end_ns; a source is idle
# at most one pacing interval plus the longest batch (gap). Admitted must lie
# in [burst + rate (elapsed - 2 gap) - 1, burst + rate (elapsed + gap) + 1].
per_source_within() {
	python3 - "$1" "$2" "$RATE" "$BURST" <<'PY'
import json, sys
flood, counts = json.loads(sys.argv[1]), [int(c) for c in sys.argv[2].split()]
rate, burst = int(sys.argv[3]), int(sys.argv[4])
elapsed = (flood["end_ns"] - flood["start_ns"]) / 1e9
gap = flood["max_batch_ns"] / 1e9 + 64 / flood["rate"] if flood.get("rate") else flood["max_batch_ns"] / 1e9
lo = burst + rate * (elapsed - 2 * gap) - 1
hi = burst + rate * (elapsed + gap) + 1
ok = True
for i, n in enumerate(counts):
    verdict = "ok" if lo <= n <= hi else "OUT OF BOUNDS"
    ok &= lo <= n <= hi
    print(f"    source {i}: admitted {n}, expected {lo:.1f}..{hi:.1f} "
          f"(burst {burst} + {rate}/s x {elapsed:.4f} s) {verdict}")
sys.exit(0 if ok else 1)
PY
}

run_hook() {
	local hook=$1 out stats sent counts i before prog_id
	echo "# hook $hook"
	expect_exit 0 "load --hook $hook" "$FLOODGATE" load fgA -c "$WORK/limit.conf" --hook "$hook"
	expect_exit 5 "a second load is refused" "$FLOODGATE" load fgA --hook "$hook"
	check "  ... says already loaded" grep -q "already loaded" <<<"$LAST_ERR"
	check "status shows the hook and policies" bash -c \
		"'$FLOODGATE' status fgA | grep -q 'flood ' && '$FLOODGATE' status fgA | grep -q attached"

	before=$(pinned_state)
	expect_exit 3 "reload with a broken config" "$FLOODGATE" reload fgA -c "$WORK/bad.conf"
	check "  ... names FILE:LINE:" grep -q "^$WORK/bad.conf:3: " <<<"$LAST_ERR"
	check "  ... leaves the loaded floodgate untouched" test "$before" = "$(pinned_state)"

	count_sources 10.0.1.1 10.0.1.2 10.0.1.3 10.0.1.4
	out=$(flood --dst 10.200.0.1 --src 10.0.1.1+4 --dport 9 --rate $FLOOD_PPS \
		--duration $FLOOD_SECONDS)
	echo "    flood: $out"
	counts=""
	for i in 0 1 2 3; do counts+="$(received $i) "; done
	check "per-source admitted within burst + rate x elapsed ($hook)" \
		per_source_within "$out" "$counts"

	stats=$("$FLOODGATE" stats fgA --json)
	echo "    stats: $stats"
	sent=$(json_get "$out" 'd["sent"]')
	check "stats: matched equals what was sent ($sent)" \
		test "$(json_get "$stats" 'd["policies"][0]["matched_packets"]')" = "$sent"
	check "stats: passed equals what reached the stack" \
		test "$(json_get "$stats" 'd["policies"][0]["passed_packets"]')" = \
		"$(python3 -c "print(sum(int(x) for x in '$counts'.split()))")"
	check "stats: dropped = matched - passed" \
		test "$(json_get "$stats" 'd["policies"][0]["dropped_packets"]')" = \
		"$(json_get "$stats" 'd["policies"][0]["matched_packets"] - d["policies"][0]["passed_packets"]')"
	check "bpftool shows the fields of sources" bash -c \
		"bpftool map dump pinned $PIN/sources | grep -q '\"tat_ns\"' &&
		 bpftool map dump pinned $PIN/sources | grep -q '\"policy_id\"'"

	prog_id=$("$FLOODGATE" status fgA | sed -n 's/.*program id \([0-9]*\),.*/\1/p')
	check "status names the attached program ($prog_id)" test -n "$prog_id"
	expect_exit 0 "unload" "$FLOODGATE" unload fgA
	check "  ... removes the pins" test ! -e "$PIN"
	check "  ... detaches XDP" bash -c "! ip link show fgA | grep -q xdp"
	check "  ... removes our clsact qdisc" bash -c "! tc qdisc show dev fgA | grep -q clsact"
	check "  ... frees program $prog_id" wait_until 5 bash -c "! bpftool prog show id $prog_id 2>/dev/null"
}

run_hook xdp
run_hook tc

# Two loads at once: the lock lets exactly one win.
"$FLOODGATE" load fgA >/dev/null 2>&1 &
pid1=$!
"$FLOODGATE" load fgA >/dev/null 2>&1 &
pid2=$!
wait $pid1; rc1=$?
wait $pid2; rc2=$?
check "concurrent loads: one wins, one is refused ($rc1, $rc2)" \
	test "$((rc1 + rc2))" -eq 5 -a "$((rc1 * rc2))" -eq 0
expect_exit 0 "unload after the race" "$FLOODGATE" unload fgA

finish
