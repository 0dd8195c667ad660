#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every algorithm on real traffic over veth and on the real clock (the
# cmocka and BPF_PROG_TEST_RUN suites inject the clock): leaky_bucket,
# fixed_window and sliding_window in native XDP with the precise clock, then
# token_bucket and sliding_window with `clock = coarse` in generic XDP
# (`--mode generic`), so that the coarse clock's branch is loaded, passes
# the verifier and runs. Each source's admitted count, counted by nft
# behind floodgate, must lie within the algorithm's bound over the
# generator's measured elapsed time (see within_bound). Catches: an
# algorithm that admits too much or too little on the real clock (for
# example a window that never rolls, or a burst applied per window), a
# coarse clock that does not advance, a --mode generic that attaches
# native, a count list that came back empty.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
FLOOD_PPS=100000
FLOOD_SECONDS=1

# One policy per algorithm, told apart by destination port. The GCRA pair
# (token_bucket, leaky_bucket) is 1000/s with a burst of 200; the windows
# are 100 per 100 ms (1000/s).
algorithms_conf() { # CLOCK
	cat <<CONF
clock = $1
[policy tb]
match = udp dport 10
algorithm = token_bucket
rate = 1000/s
burst = 200
[policy lb]
match = udp dport 11
algorithm = leaky_bucket
rate = 1000/s
burst = 200
[policy fw]
match = udp dport 12
algorithm = fixed_window
rate = 100/100ms
[policy sw]
match = udp dport 13
algorithm = sliding_window
rate = 100/100ms
[policy mon]
match = udp dport 14
rate = 1000/s
burst = 200
action = monitor
CONF
}

# within_bound FLOOD-JSON ALGORITHM CLOCK COUNT...: every source's admitted
# count within the bound, and exactly 4 counts. A source is idle at most one
# pacing interval plus the longest batch (gap); the coarse clock lags the
# real one by up to its resolution, added to gap.
#   GCRA (rate r, burst b): [b + r (E - 2 gap) - 1, b + r (E + gap) + 1]
#   fixed_window (N per W): every whole window inside the run admits N (a
#     source sends far more than N in any W), the partial ones at the edges
#     up to N each: [N (floor((E - 2 gap) / W) - 1), N (ceil((E + gap) / W) + 1)]
#   sliding_window: no aligned window holds more than N, so the same upper
#     bound. Its steady state is N - 1 a window, but a source idle at the
#     end of a window loses that window's credit for good, and the
#     generator reports only its longest stall, so the lower bound is a
#     loose N/2 per whole window: it still catches a window that never
#     rolls (N in all) or a clock that stands still.
within_bound() {
	python3 - "$@" <<'PY'
import json, math, sys, time
flood, alg, clock = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
counts = [int(c) for c in sys.argv[4:]]
elapsed = (flood["end_ns"] - flood["start_ns"]) / 1e9
gap = flood["max_batch_ns"] / 1e9 + 64 / flood["rate"]
if clock == "coarse":
    gap += time.clock_getres(6)  # CLOCK_MONOTONIC_COARSE
if alg in ("token_bucket", "leaky_bucket"):
    lo = 200 + 1000 * (elapsed - 2 * gap) - 1
    hi = 200 + 1000 * (elapsed + gap) + 1
else:
    n, w = 100, 0.1
    hi = n * (math.ceil((elapsed + gap) / w) + 1)
    if alg == "fixed_window":
        lo = n * (math.floor((elapsed - 2 * gap) / w) - 1)
    else:
        lo = n / 2 * math.floor(elapsed / w)
ok = len(counts) == 4
if not ok:
    print(f"    expected 4 counts, got {len(counts)}")
for i, n in enumerate(counts):
    ok &= lo <= n <= hi
    print(f"    {alg} source {i}: admitted {n}, expected {lo:.1f}..{hi:.1f} "
          f"({elapsed:.4f} s, gap {gap * 1e3:.2f} ms) {'ok' if lo <= n <= hi else 'OUT OF BOUNDS'}")
sys.exit(0 if ok else 1)
PY
}

# rodata_has NAME VALUE: the attached program's .rodata sets NAME to VALUE
# (found through the program's own maps: other floodgates may be loaded on
# this machine outside the lab).
rodata_has() {
	local prog_id
	prog_id=$("$FLOODGATE" status fgA | sed -n 's/.*program id \([0-9]*\),.*/\1/p')
	python3 - "$prog_id" "$1" "$2" <<'PY'
import json, subprocess, sys
prog_id, name, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
bpftool = lambda *a: json.loads(subprocess.check_output(["bpftool", "-j", *a]))
for map_id in bpftool("prog", "show", "id", prog_id).get("map_ids", []):
    if not bpftool("map", "show", "id", str(map_id))["name"].endswith(".rodata"):
        continue
    for entry in bpftool("map", "dump", "id", str(map_id)):
        for var in entry.get("formatted", {}).get("value", {}).get(".rodata", []):
            if name in var:
                print(f"    {name} = {var[name]}")
                sys.exit(0 if var[name] == want else 1)
sys.exit(f"    {name} not found in program {prog_id}'s rodata")
PY
}

# run_algorithm ALGORITHM DPORT CLOCK: floods 4 sources at DPORT.
run_algorithm() {
	local alg=$1 dport=$2 clock=$3 out counts i
	local base="10.0.$dport"
	count_sources "$base.1" "$base.2" "$base.3" "$base.4"
	out=$(flood --dst 10.200.0.1 --src "$base.1+4" --dport "$dport" --rate $FLOOD_PPS \
		--duration $FLOOD_SECONDS)
	counts=""
	for i in 0 1 2 3; do counts+="$(received $i) "; done
	# shellcheck disable=SC2086 # one argument per count
	check "$alg ($clock clock): per-source admitted within its bound" \
		within_bound "$out" "$alg" "$clock" $counts
}

lab_up

algorithms_conf precise >"$WORK/precise.conf"
expect_exit 0 "load native XDP, precise clock" "$FLOODGATE" load fgA -c "$WORK/precise.conf" \
	--mode native
check "  ... attached in native mode" bash -c "ip -d link show fgA | grep -q 'xdp id'"
run_algorithm leaky_bucket 11 precise
run_algorithm fixed_window 12 precise
run_algorithm sliding_window 13 precise

# action = monitor through the real CLI: every frame reaches the stack, and
# the would-drops are what a token bucket of 1000/s and 200 would refuse.
# Catches a monitor that drops, or one that never counts a would-drop.
count_sources 10.0.14.1 10.0.14.2 10.0.14.3 10.0.14.4
out=$(flood --dst 10.200.0.1 --src 10.0.14.1+4 --dport 14 --rate 20000 --duration 0.5)
received_all=0
for i in 0 1 2 3; do received_all=$((received_all + $(received $i))); done
check "monitor: every frame sent reached the stack ($received_all)" \
	test "$received_all" -eq "$(json_get "$out" 'd["sent"]')"
stats=$("$FLOODGATE" stats fgA --json)
check "monitor: would_drop is sent minus the 4 buckets' bound" python3 - "$out" "$stats" <<'PY'
import json, sys
flood, stats = json.loads(sys.argv[1]), json.loads(sys.argv[2])
mon = next(p for p in stats["policies"] if p["name"] == "mon")
elapsed = (flood["end_ns"] - flood["start_ns"]) / 1e9
gap = flood["max_batch_ns"] / 1e9 + 64 / flood["rate"]
admit_lo = 4 * (200 + 1000 * (elapsed - 2 * gap) - 1)
admit_hi = 4 * (200 + 1000 * (elapsed + gap) + 1)
lo, hi = flood["sent"] - admit_hi, flood["sent"] - admit_lo
print(f"    monitor: would_drop {mon['would_drop_packets']}, expected {lo:.0f}..{hi:.0f}; "
      f"passed {mon['passed_packets']} of {flood['sent']}")
sys.exit(0 if lo <= mon["would_drop_packets"] <= hi and
         mon["passed_packets"] == flood["sent"] and mon["dropped_packets"] == 0 else 1)
PY
expect_exit 0 "unload" "$FLOODGATE" unload fgA

algorithms_conf coarse >"$WORK/coarse.conf"
expect_exit 0 "load generic XDP, coarse clock" "$FLOODGATE" load fgA -c "$WORK/coarse.conf" \
	--mode generic
check "  ... attached in generic mode (ip link)" bash -c \
	"ip -d link show fgA | grep -q 'xdpgeneric'"
check "  ... status says generic" bash -c "'$FLOODGATE' status fgA | grep -q '^fgA: xdp (generic)'"
check "  ... the program reads the coarse clock (its rodata)" rodata_has fg_coarse_clock 1
run_algorithm token_bucket 10 coarse
run_algorithm sliding_window 13 coarse
expect_exit 0 "unload" "$FLOODGATE" unload fgA
check "  ... removes the pins" test ! -e "$PIN"

finish
