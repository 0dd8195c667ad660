#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: floodgate's throughput beside a bare XDP_DROP, an nftables meter
# and iptables hashlimit, on the veth lab of scripts/lab.sh.
#
#   1. build/bench_prog: BPF_PROG_TEST_RUN ns/packet of the XDP program.
#   2. The veth lab: build/floodgate-flood (2 threads, 60-byte UDP frames) floods
#      fgA from 1, 1k (consecutive), 1k-scat (1k scattered over a /8), 1M and
#      16M (random over a /8) sources, and each receiver
#      configuration on fgA counts what it received, on the receiving side:
#
#      bare           XDP_DROP, native   rx_queue_*_xdp_drops (ethtool -S)
#      simplest       the simplest limiter (tests/bench/simplest.bpf.c), XDP
#                     native: rx_queue_*_xdp_packets and _xdp_drops
#      floodgate-xdp  floodgate --hook xdp   global.packets (stats --json)
#      floodgate-tc   floodgate --hook tc    global.packets (stats --json)
#      nft-meter      netdev ingress meter   its two rule counters, summed
#      hashlimit      iptables raw hashlimit a counting rule before it
#
#      Each limiter admits the same per-source limit (1/minute, burst 1 by
#      default) and tracks up to TABLE_SIZE sources (simplest: 65,536, the
#      table issue 25 defines it with). At 1M and 16M sources, floodgate-xdp,
#      nft-meter and hashlimit also run with tables of SMALL_TABLE (65,536)
#      entries, as RECEIVER@64k (the churn path whatever the table size). Every run also reads fgA's own
#      rx_packets and the generator's sent - tx_dropped, and flags a run whose
#      three counts disagree.
#
#   The runs go round-robin over every (receiver, sources) pair, ROUNDS times,
#   each receiver set up and removed per run (so every run starts with empty
#   state). Results in bench-results/: bench.csv (every run), medians.csv,
#   runs-detail.csv, bench.png, bench_prog.txt and report.txt (all of the
#   printed report).
#
# Environment knobs:
#   FG_BENCH_DURATION  seconds per run (default 2.5)
#   FG_BENCH_ROUNDS    repetitions of the whole round-robin (default 3: 30
#                      runs a round, about 3 minutes; 3 keep the whole
#                      benchmark within about 10 minutes)
#   FG_BENCH_SINK      stack: what a limiter passes goes on into the IP stack,
#                      as on a protected host (default); drop: it is dropped
#                      at the first hook after the limiter, so the figure
#                      shows the limiter without the stack behind it
#   FG_BENCH_BUDGET    stop starting new rounds when the script would pass
#                      this many seconds (default 660); reported if it happens
#   FG_BENCH_PROG      0: skip build/bench_prog (default 1)
#   FG_BENCH_RECEIVERS, FG_BENCH_SETS  only these receivers (RECEIVER@64k for
#                      a churn run) and source sets, space-separated, for
#                      example "floodgate-xdp floodgate-xdp@64k" and "1M": an
#                      A/B of two builds in minutes (default: all)
#   FG_BENCH_OUT       where the results go (default bench-results)
#   FG_BENCH_BUILD_ONLY  1: build the simplest limiter into FG_BENCH_OUT and
#                      stop (tests/scripts/test_bench_build.sh)
#   FG_BENCH_SENDER    the generator's --sender (default xdp: live frames; a
#                      kernel that refuses them fails the runs rather than
#                      have the slower socket sender's speed reported as a
#                      receiver's; docs/traffic-generator.md)
#   FG_BENCH_LIMIT_RATE, FG_BENCH_LIMIT_UNIT (second or minute),
#   FG_BENCH_LIMIT_BURST  the per-source limit of every limiter (default
#                      1/minute, burst 1: every source of every set exceeds it)
#   FG_BENCH_FG_EXTRA  more global lines for floodgate's config, for example
#                      "new_sources = off" (default: none, floodgate's defaults)
#   FG_BENCH_CROWDSEC  0: skip the CrowdSec stream scenario at the end
#                      (scripts/bench-crowdsec.sh; FG_BENCH_DECISIONS, 100000)
#   FG_BENCH_SYNFLOOD  0: skip the SYN-flood scenario at the end
#                      (scripts/bench-synflood.sh: FG_SYNFLOOD_* knobs there;
#                      FG_BENCH_ROUNDS rounds, about 30 s a round)
#
# Everything runs in private network and mount namespaces (lab_enter): the
# veths, nftables tables, iptables rules and BPF pins vanish with them.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: run as root (it creates network namespaces and loads BPF)" >&2
	exit 1
fi
source "$(dirname "$0")/lab.sh"
lab_enter "$0" "$@"

DURATION=${FG_BENCH_DURATION:-2.5}
ROUNDS=${FG_BENCH_ROUNDS:-3}
SINK=${FG_BENCH_SINK:-stack}
BUDGET=${FG_BENCH_BUDGET:-660}
FG_EXTRA=${FG_BENCH_FG_EXTRA:-}
RUN_PROG=${FG_BENCH_PROG:-1}
SENDER=${FG_BENCH_SENDER:-xdp}
THREADS=2
SETTLE=0.3 # seconds after each teardown, for the kernel's deferred frees

# The per-source limit: by default one every source exceeds (1/minute, burst
# 1: a source's first packet passes, its later ones do not), so that every
# limiter owes the same verdicts and only speed differs.
LIMIT_RATE=${FG_BENCH_LIMIT_RATE:-1}     # packets per LIMIT_UNIT per source
LIMIT_UNIT=${FG_BENCH_LIMIT_UNIT:-minute} # second or minute
LIMIT_BURST=${FG_BENCH_LIMIT_BURST:-1}   # packets
case $LIMIT_UNIT in
second) FG_UNIT=s HASHLIMIT_UNIT=sec ;;
minute) FG_UNIT=min HASHLIMIT_UNIT=min ;;
*)
	echo "bench: FG_BENCH_LIMIT_UNIT must be second or minute" >&2
	exit 2
	;;
esac
TABLE_SIZE=1048576 # sources each limiter can track
SMALL_TABLE=65536  # the churn runs' other table size (RECEIVER@64k)
SIMPLEST_TABLE=65536

RECEIVERS=(bare simplest floodgate-xdp floodgate-tc nft-meter hashlimit)
SOURCE_SETS=(1 1k 1k-scat 1M 16M)
# The churn path: the limiters with a table, again with SMALL_TABLE entries.
CHURN_RECEIVERS=(floodgate-xdp@64k nft-meter@64k hashlimit@64k)
CHURN_SETS=(1M 16M)
# A subset, to compare two builds of one change quickly (the report's ratios
# then cover only the pairs run).
if [ -n "${FG_BENCH_RECEIVERS:-}" ]; then
	read -ra picked <<<"$FG_BENCH_RECEIVERS"
	RECEIVERS=() CHURN_RECEIVERS=()
	for r in "${picked[@]}"; do
		case $r in *@64k) CHURN_RECEIVERS+=("$r") ;; *) RECEIVERS+=("$r") ;; esac
	done
fi
if [ -n "${FG_BENCH_SETS:-}" ]; then
	read -ra SOURCE_SETS <<<"$FG_BENCH_SETS"
	read -ra CHURN_SETS <<<"$(printf '%s\n' "${SOURCE_SETS[@]}" | grep -xE '1M|16M' | tr '\n' ' ')"
fi
declare -A SRC_SPEC=(
	[1]=10.0.0.1
	[1k]=10.0.0.0+1000
	# The same count scattered over a /8 as abusers' addresses are (the
	# consecutive 1k never share a slot of floodgate's refusal cache).
	[1k-scat]=10.0.0.0/8+1000
	[1M]=10.0.0.0+1000000
	[16M]=10.0.0.0/8
)

OUT=${FG_BENCH_OUT:-$REPO/bench-results}
WORK=$(mktemp -d /tmp/fg-bench.XXXXXX)
FG_CONF=$WORK/floodgate.conf
RUNS_CSV=$OUT/bench.csv
DETAIL_CSV=$OUT/runs-detail.csv
MEDIANS_CSV=$OUT/medians.csv
REPORT=$OUT/report.txt
cleanup() {
	rm -rf "$WORK"
	lab_down
}
trap cleanup EXIT

case $SINK in stack | drop) ;; *)
	echo "bench: FG_BENCH_SINK must be stack or drop" >&2
	exit 2
	;;
esac

# --- helpers -----------------------------------------------------------------

log() { echo "$@" | tee -a "$REPORT"; }

rx_packets() { cat /sys/class/net/fgA/statistics/rx_packets; }

# wait_quiet: until fgA's rx_packets stops moving (50 ms apart), so that the
# frames still queued when the generator returns are processed and counted
# before any counter is read. Gives up after 2 s.
wait_quiet() {
	local prev now i
	prev=$(rx_packets)
	for ((i = 0; i < 40; i++)); do
		sleep 0.05
		now=$(rx_packets)
		[ "$now" = "$prev" ] && return 0
		prev=$now
	done
	return 0
}

# sender_flood SPEC: floods fgA from SPEC for DURATION; JSON on stdout. The
# same command as lab.sh's flood, under a timeout so that a hung generator
# fails its run instead of the whole benchmark.
sender_flood() {
	timeout -k 5 $((${DURATION%.*} + 60)) \
		ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" --json \
		--dst 10.200.0.1 --src "$1" --threads "$THREADS" --duration "$DURATION" \
		--sender "$SENDER"
}

# flood_summary FILE: "sent tx_dropped elapsed_ns max_batch_ns" of the
# generator's JSON (a file: with 1M sources it lists a million counts).
flood_summary() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["sent"], d["tx_dropped"], d["elapsed_ns"], d["max_batch_ns"])' "$1"
}

# The lab of lab.sh, with one veth queue per sender thread: with a single
# queue, two generator threads overflow its ring (tx_dropped), and the
# receiver's work stays on one CPU. IPv6 is off on the sender end so that no
# neighbour discovery reaches fgA and every counter can be compared exactly.
bench_lab_up() {
	lab_up
	ethtool -L fgA rx "$THREADS" tx "$THREADS"
	ip netns exec "$SENDER_NS" ethtool -L fgB rx "$THREADS" tx "$THREADS"
	ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgB.disable_ipv6=1
	# lab_up turned GRO on: without an XDP program on fgA, frames arrive
	# only with GRO on (LAB-NOTES), which the tc, nft and iptables runs need.
}

# --- receivers: setup_X, count_X ("received limited passed"), teardown_X -------
# received: every frame the receiver's counter saw; limited: dropped by the
# limit; passed: let through. received - limited - passed is what the
# receiver dropped for another reason.

setup_bare() { ip link set dev fgA xdpdrv obj "$REPO/build/baseline.bpf.o" sec xdp; }
count_bare() {
	ethtool -S fgA | awk '/rx_queue_[0-9]+_xdp_drops:/ { s += $2 } END { printf "%.0f %.0f 0\n", s, s }'
}
teardown_bare() { ip link set dev fgA xdpdrv off; }

# The simplest limiter, built here for the benchmark's limit: a fixed window
# of one LIMIT_UNIT admitting the larger of LIMIT_RATE and LIMIT_BURST (with
# the default, 1/minute burst 1, a source's first packet passes and the rest
# are dropped: the verdicts the other limiters owe).
build_simplest() {
	local window_ns=1000000000 allowance=$LIMIT_RATE
	[ "$LIMIT_UNIT" = minute ] && window_ns=60000000000
	[ "$LIMIT_BURST" -gt "$allowance" ] && allowance=$LIMIT_BURST
	clang -g -O2 -target bpf -mcpu=v3 -I"/usr/include/$(gcc -print-multiarch)" -I"$REPO/include" \
		-DSIMPLEST_WINDOW_NS="${window_ns}ULL" -DSIMPLEST_LIMIT="$allowance" \
		-DSIMPLEST_ENTRIES="$SIMPLEST_TABLE" -c "$REPO/tests/bench/simplest.bpf.c" \
		-o "$WORK/simplest.bpf.o"
}
setup_simplest() { ip link set dev fgA xdpdrv obj "$WORK/simplest.bpf.o" sec xdp; }
# xdp_packets: every frame the program ran on; xdp_drops: its refusals.
count_simplest() {
	ethtool -S fgA | awk '/rx_queue_[0-9]+_xdp_packets:/ { p += $2 }
		/rx_queue_[0-9]+_xdp_drops:/ { d += $2 } END { printf "%.0f %.0f %.0f\n", p, d, p - d }'
}
teardown_simplest() { ip link set dev fgA xdpdrv off; }

write_floodgate_conf() {
	{
		echo "max_sources = $TABLE"
		[ -z "$FG_EXTRA" ] || echo "$FG_EXTRA"
		printf '\n[policy p]\nmatch = udp\nrate = %s/%s\nburst = %s\n' "$LIMIT_RATE" "$FG_UNIT" "$LIMIT_BURST"
	} >"$FG_CONF"
}

# sink_setup / sink_teardown: with SINK=drop, what floodgate passes is dropped
# at nftables netdev ingress, the first hook after XDP and tc.
sink_setup() {
	[ "$SINK" = drop ] || return 0
	nft -f - <<-EOF
		table netdev fgsink {
			chain in { type filter hook ingress device fgA priority 0; drop; }
		}
	EOF
}
sink_teardown() {
	[ "$SINK" = drop ] || return 0
	nft delete table netdev fgsink
}

setup_floodgate() {
	write_floodgate_conf
	"$FLOODGATE" load fgA -c "$FG_CONF" --hook "$1" >/dev/null
	sink_setup
}
count_floodgate() {
	"$FLOODGATE" stats fgA --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
p = d["policies"]
print(d["global"]["packets"], sum(x["dropped_packets"] for x in p), sum(x["passed_packets"] for x in p))'
}
teardown_floodgate() {
	sink_teardown
	"$FLOODGATE" unload fgA >/dev/null
}

setup_floodgate_xdp() { setup_floodgate xdp; }
count_floodgate_xdp() { count_floodgate; }
teardown_floodgate_xdp() { teardown_floodgate; }
setup_floodgate_tc() { setup_floodgate tc; }
count_floodgate_tc() { count_floodgate; }
teardown_floodgate_tc() { teardown_floodgate; }

# The meter rule counts what it drops, the last rule what passes; a packet
# whose source cannot be added to a full meter skips the meter rule and is
# counted by the last one. `limit ... burst B` admits B packets above the
# rate's own allowance.
setup_nft_meter() {
	local verdict=accept
	[ "$SINK" = drop ] && verdict=drop
	rm -f "$WORK/nft-counters"
	nft -f - <<-EOF
		table netdev fgbench {
			counter limited { }
			counter passed { }
			chain in {
				type filter hook ingress device fgA priority 0;
				udp dport 9 meter m size $TABLE { ip saddr limit rate over $LIMIT_RATE/$LIMIT_UNIT burst $LIMIT_BURST packets } counter name limited drop
				counter name passed $verdict
			}
		}
	EOF
}
# `nft list counter` fetches every element of the table's meter first (a
# minute with a million of them); `nft reset counter` does not, and returns
# the value it clears. The cleared values are summed in a file.
count_nft_meter() {
	local limited passed total_limited=0 total_passed=0
	limited=$(nft reset counter netdev fgbench limited | awk '/packets/ { print $2 }')
	passed=$(nft reset counter netdev fgbench passed | awk '/packets/ { print $2 }')
	[ -e "$WORK/nft-counters" ] && read -r total_limited total_passed <"$WORK/nft-counters"
	total_limited=$((total_limited + limited))
	total_passed=$((total_passed + passed))
	echo "$total_limited $total_passed" >"$WORK/nft-counters"
	echo "$((total_limited + total_passed)) $total_limited $total_passed"
}
teardown_nft_meter() { nft delete table netdev fgbench; }

# Rule 1 counts every IPv4 packet from fgA: hashlimit drops, uncounted, the
# packets of a new source it cannot insert (table at htable-max). Rule 2 is
# the limit, rule 3 counts (and with SINK=drop drops) what passes. Each run
# gets a hashtable of its own name: the old one is freed asynchronously, and
# a rule that found it would inherit its state.
HASHLIMIT_NAME=
setup_hashlimit() {
	local verdict=ACCEPT
	[ "$SINK" = drop ] && verdict=DROP
	HASHLIMIT_NAME=fgb$1
	iptables -t raw -A PREROUTING -i fgA
	iptables -t raw -A PREROUTING -i fgA -p udp --dport 9 -m hashlimit \
		--hashlimit-mode srcip --hashlimit-above "$LIMIT_RATE/$HASHLIMIT_UNIT" \
		--hashlimit-burst "$LIMIT_BURST" --hashlimit-name "$HASHLIMIT_NAME" \
		--hashlimit-htable-size "$TABLE" --hashlimit-htable-max "$TABLE" -j DROP
	iptables -t raw -A PREROUTING -i fgA -j "$verdict"
	# The kernel's xt_hashlimit made this table: the match really runs.
	[ -e "/proc/net/ipt_hashlimit/$HASHLIMIT_NAME" ]
}
count_hashlimit() {
	iptables -t raw -L PREROUTING -v -x -n | awk 'NR > 2 { c[NR - 2] = $1 } END { print c[1], c[2], c[3] }'
}
teardown_hashlimit() { iptables -t raw -F PREROUTING; }

# reset_receivers: removes whatever a failed run left behind, quietly.
reset_receivers() {
	ip link set dev fgA xdpdrv off 2>/dev/null || true
	"$FLOODGATE" unload fgA >/dev/null 2>&1 || true
	nft delete table netdev fgbench 2>/dev/null || true
	nft delete table netdev fgsink 2>/dev/null || true
	iptables -t raw -F PREROUTING 2>/dev/null || true
}

# --- memory per tracked source ---------------------------------------------------

# measure_memory: the sources4 map (the flood's sources are IPv4) as the
# kernel accounts it, while loaded.
measure_memory() {
	local map=/sys/fs/bpf/floodgate/fgA/sources4 in_use
	bpftool -j map show pinned "$map" >"$WORK/map.json"
	in_use=$("$FLOODGATE" status fgA | sed -n 's/^ *sources4: *\([0-9]*\) of .*/\1/p')
	python3 - "$WORK/map.json" "$in_use" >"$WORK/memory.txt" <<-'PY'
		import json, sys
		m = json.load(open(sys.argv[1]))
		used = int(sys.argv[2] or 0)
		mem = m["bytes_memlock"]
		print(f"sources4 map: {m['type']}, key {m['bytes_key']} B, value {m['bytes_value']} B, "
		      f"max_entries {m['max_entries']}, memlock {mem} B ({mem / 2**20:.1f} MiB)")
		per = mem / m['max_entries']
		# The goal is 96 B a slot; the map's fixed header, under 1 KiB
		# whatever its size, is what separates 96.0009 from 96 at a
		# million entries, so it is judged apart.
		header = mem - 96 * m['max_entries']
		met = header < 1024
		print(f"  per table slot (memlock / max_entries): {per:.4f} B, memlock beyond 96 B a slot "
		      f"{header} B (goal: 96 B a slot and a fixed header under 1 KiB: {'met' if met else 'missed'})")
		if used:
		    print(f"  per source in use ({used} entries after the run): {mem / used:.1f} B")
		else:
		    print("  entries in use: unknown (floodgate status gave none)")
	PY
}

# --- one run -------------------------------------------------------------------

# receiver_of LABEL: sets fn (the setup_/count_/teardown_ suffix) and TABLE
# from a label RECEIVER, RECEIVER@64k (a table of SMALL_TABLE entries) or
# RECEIVER:1q (the scaling runs: one queue, one sender thread).
receiver_of() {
	local recv=${1%:1q}
	recv=${recv%@*}
	fn=${recv//-/_}
	TABLE=$TABLE_SIZE
	[[ $1 == *@64k ]] && TABLE=$SMALL_TABLE
	return 0
}

# queue_packets: "q0 q1 ...", the frames each of fgA's receive queues ran
# through XDP (each queue's NAPI runs on the CPU whose sender filled it).
queue_packets() {
	ethtool -S fgA | awk '/rx_queue_[0-9]+_xdp_packets:/ { printf "%s ", $2 }'
}

# run_one LABEL SOURCES ROUND ID: sets up, floods, counts, tears down, and
# appends a row to the CSVs. Runs in a subshell with errexit: any failure
# fails the run.
run_one() {
	local label=$1 recv=$1 srcs=$2 round=$3 id=$4 fn TABLE
	local before after rx0 rx1 q0 q1 sent tx_dropped elapsed_ns max_batch_ns
	receiver_of "$label"

	"setup_$fn" "$id"
	before=$("count_$fn")
	rx0=$(rx_packets)
	q0=$(queue_packets)
	sender_flood "${SRC_SPEC[$srcs]}" >"$WORK/flood.json"
	wait_quiet
	after=$("count_$fn")
	rx1=$(rx_packets)
	q1=$(queue_packets)
	if [ "$label" = floodgate-xdp ] && [ "$srcs" = 1M ] && [ ! -e "$WORK/memory.txt" ]; then
		measure_memory
	fi
	"teardown_$fn"

	read -r sent tx_dropped elapsed_ns max_batch_ns < <(flood_summary "$WORK/flood.json")
	python3 - "$recv" "$srcs" "$round" "$before" "$after" "$((rx1 - rx0))" \
		"$sent" "$tx_dropped" "$elapsed_ns" "$max_batch_ns" "$RUNS_CSV" "$DETAIL_CSV" \
		"$q0" "$q1" <<-'PY'
		import sys
		recv, sset, rnd, before, after, rx, sent, txd, ens, mbn, runs, detail, q0, q1 = sys.argv[1:]
		# what each receive queue's NAPI ran (veth counts it as xdp_packets
		# with or without an XDP program, GRO being on)
		queues = [int(b) - int(a) for a, b in zip(q0.split(), q1.split())]
		b = [int(x) for x in before.split()]
		a = [int(x) for x in after.split()]
		received, limited, passed = (a[i] - b[i] for i in range(3))
		rx, sent, txd, ens, mbn = int(rx), int(sent), int(txd), int(ens), int(mbn)
		secs = ens / 1e9
		mpps = received / secs / 1e6
		delivered = sent - txd
		checks = []
		if received != rx:
		    checks.append(f"counter {received} != fgA rx_packets {rx}")
		if rx != delivered:
		    checks.append(f"fgA rx_packets {rx} != sent - tx_dropped {delivered}")
		if txd:
		    checks.append(f"tx_dropped {txd}")
		other = received - limited - passed
		with open(runs, "a") as f:
		    f.write(f"{recv},{sset},{rnd},{received},{secs:.6f},{mpps:.4f}\n")
		with open(detail, "a") as f:
		    f.write(f"{recv},{sset},{rnd},{received},{secs:.6f},{mpps:.4f},{limited},{passed},"
		            f"{other},{rx},{sent},{txd},{mbn / 1e6:.1f},{'ok' if not checks else 'check'},"
		            f"{' '.join(f'{q / secs / 1e6:.4f}' for q in queues)}\n")
		pct = 100 * passed / received if received else 0
		line = f"{mpps:8.3f} Mpps  received {received:>10} in {secs:.3f} s, passed {pct:5.1f}%"
		if any(queues):
		    line += " (queues " + " + ".join(f"{q / secs / 1e6:.2f}" for q in queues) + ")"
		if other:
		    line += f", other drops {other}"
		if checks:
		    line += "  CHECK: " + "; ".join(checks)
		print(line)
	PY
}

# check_counter RECEIVER: on an uncongested, paced run, the receiver's counter
# must equal fgA's rx_packets and what the generator delivered.
check_counter() {
	local recv=$1 fn TABLE before after rx0 rx1 sent txd got verdict=ok
	receiver_of "$recv"
	"setup_$fn" "check"
	before=$("count_$fn")
	rx0=$(rx_packets)
	timeout -k 5 60 ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" \
		--json --dst 10.200.0.1 --src 10.0.0.0+1000 --count 100000 --rate 200000 >"$WORK/flood.json"
	wait_quiet
	after=$("count_$fn")
	rx1=$(rx_packets)
	"teardown_$fn"
	read -r sent txd _ _ < <(flood_summary "$WORK/flood.json")
	got=$((${after%% *} - ${before%% *}))
	if [ "$got" -ne $((rx1 - rx0)) ] || [ "$got" -ne $((sent - txd)) ] || [ "$txd" -ne 0 ]; then
		verdict=MISMATCH
	fi
	printf '   %-14s counter %7d  fgA rx_packets %7d  sent %7d  tx_dropped %d  %s\n' \
		"$recv" "$got" $((rx1 - rx0)) "$sent" "$txd" "$verdict"
	[ $verdict = ok ]
}

# FG_BENCH_BUILD_ONLY=1: build what this script builds itself (the simplest
# limiter, for the limit the knobs ask) into FG_BENCH_OUT and stop, before
# any lab: make test
# never runs the benchmark, and tests/scripts/test_bench_build.sh runs this.
if [ "${FG_BENCH_BUILD_ONLY:-0}" = 1 ]; then
	build_simplest
	mkdir -p "$OUT" && cp "$WORK/simplest.bpf.o" "$OUT/"
	echo "bench: built $OUT/simplest.bpf.o ($(stat -c %s "$OUT/simplest.bpf.o") bytes)"
	trap - EXIT # no lab to take down
	rm -rf "$WORK"
	exit 0
fi

# --- the benchmark -----------------------------------------------------------------

mkdir -p "$OUT"
rm -f "$OUT"/bench.csv "$OUT"/medians.csv "$OUT"/runs-detail.csv "$OUT"/bench.png \
	"$OUT"/bench_prog.txt "$OUT"/report.txt "$OUT"/plot.dat
echo "receiver,sources,run,received,seconds,mpps" >"$RUNS_CSV"
echo "receiver,sources,run,received,seconds,mpps,limited,passed,other_drops,fgA_rx_packets,sent,tx_dropped,max_batch_ms,status,queue_mpps" >"$DETAIL_CSV"

log "floodgate benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs"
log "  $(iptables -V); $(nft --version); $(bpftool version | head -1)"
log "  load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on these CPUs shows up as noise)"
log

# 1. BPF_PROG_TEST_RUN micro-benchmark
log "== build/bench_prog (BPF_PROG_TEST_RUN)"
section_start=$SECONDS
if [ "$RUN_PROG" = 0 ]; then
	prog_status="skipped (FG_BENCH_PROG=0)"
	log "$prog_status"
elif "$REPO/build/bench_prog" >"$OUT/bench_prog.txt" 2>&1; then
	tee -a "$REPORT" <"$OUT/bench_prog.txt"
	prog_status=ok
else
	prog_status="FAILED (exit $?)"
	tee -a "$REPORT" <"$OUT/bench_prog.txt"
	log "bench_prog: $prog_status"
fi
log "(bench_prog: $((SECONDS - section_start)) s)"
log

# 2. veth lab
bench_lab_up
build_simplest
TABLE=$TABLE_SIZE
write_floodgate_conf
log "== veth lab: fgB (sender netns) -> fgA, $THREADS generator threads, $THREADS veth queues, 60-byte UDP frames, ${DURATION} s per run"
log "   limit: $LIMIT_RATE/$LIMIT_UNIT per source address, burst $LIMIT_BURST, tables of $TABLE_SIZE sources; passed traffic: $SINK"
log "   simplest: tests/bench/simplest.bpf.c, $SIMPLEST_TABLE-entry LRU, fixed window of one $LIMIT_UNIT; RECEIVER@64k: a table of $SMALL_TABLE entries"
[ "$SENDER" = xdp ] || log "   generator: --sender $SENDER (FG_BENCH_SENDER): NOT the benchmark; the sender, not the receivers, sets these rates, so no ratio or goal below means anything"
log "   floodgate config (max_sources = $TABLE_SIZE):"
sed 's/^/     | /' "$FG_CONF" | tee -a "$REPORT"

# Preflight: hashlimit really is the xt match (iptables-nft might translate
# it), and, on an uncongested paced run, every receiver's counter equals
# fgA's rx_packets and what the generator sent.
setup_hashlimit 0
netlink=$(nft --debug=netlink list chain ip raw PREROUTING 2>&1 || true)
hashlimit_ok=1
if grep -q 'match name hashlimit' <<<"$netlink"; then
	log "   hashlimit: the kernel runs xt_hashlimit through nft_compat ([ match name hashlimit ])"
else
	hashlimit_ok=0
	log "   hashlimit: no xt hashlimit match in the ruleset: its runs do not measure hashlimit"
fi
teardown_hashlimit

log
log "== counter check: 100000 frames from 1k sources at 200 kpps (uncongested)"
preflight_ok=1
for recv in "${RECEIVERS[@]}"; do
	set +e
	(
		set -e
		check_counter "$recv"
	) 2>"$WORK/err" | tee -a "$REPORT"
	rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" -ne 0 ]; then
		preflight_ok=0
		reset_receivers
		log "   $recv: counter check FAILED: $(tr '\n' ' ' <"$WORK/err")"
	fi
done

log
log "== runs (round-robin, $ROUNDS rounds)"
# receivers_at SOURCES: the receivers run at SOURCES, churn variants included.
receivers_at() {
	printf '%s\n' "${RECEIVERS[@]}"
	[[ " ${CHURN_SETS[*]} " == *" $1 "* ]] && printf '%s\n' "${CHURN_RECEIVERS[@]}"
	return 0
}
total=$((ROUNDS * (${#RECEIVERS[@]} * ${#SOURCE_SETS[@]} + ${#CHURN_RECEIVERS[@]} * ${#CHURN_SETS[@]})))
section_start=$SECONDS
n=0
failed_runs=()
rounds_done=0
for ((round = 1; round <= ROUNDS; round++)); do
	round_start=$SECONDS
	for srcs in "${SOURCE_SETS[@]}"; do
		for recv in $(receivers_at "$srcs"); do
			n=$((n + 1))
			printf '[%3d/%d] round %d  %-14s %-7s ' "$n" "$total" "$round" "$recv" "$srcs" | tee -a "$REPORT"
			set +e
			(
				set -e
				run_one "$recv" "$srcs" "$round" "$n"
			) 2>"$WORK/err" | tee -a "$REPORT"
			rc=${PIPESTATUS[0]}
			set -e
			if [ "$rc" -ne 0 ]; then
				reset_receivers
				log "FAILED (exit $rc): $(tr '\n' ' ' <"$WORK/err")"
				failed_runs+=("$recv/$srcs/round $round")
				echo "$recv,$srcs,$round,,,FAILED" >>"$RUNS_CSV"
				echo "$recv,$srcs,$round,,,,,,,,,,,failed" >>"$DETAIL_CSV"
			fi
			sleep "$SETTLE"
		done
	done
	rounds_done=$round
	# Would one more round overrun the budget?
	if [ "$round" -lt "$ROUNDS" ] && [ $((SECONDS + SECONDS - round_start + 15)) -gt "$BUDGET" ]; then
		log "STOPPED EARLY: another round would pass the ${BUDGET} s budget ($SECONDS s so far)"
		break
	fi
done

# Scaling across CPUs: the same receivers with one queue a side and one
# sender thread, beside the two of every run above.
SCALING_RECEIVERS=(simplest floodgate-xdp)
SCALING_SETS=(1 1k)
SCALING_ROUNDS=${FG_BENCH_SCALING_ROUNDS:-3}
log
log "== scaling: 1 receive queue and 1 sender thread ($SCALING_ROUNDS rounds)"
THREADS=1
ethtool -L fgA rx 1 tx 1
ip netns exec "$SENDER_NS" ethtool -L fgB rx 1 tx 1
for ((round = 1; round <= SCALING_ROUNDS; round++)); do
	for srcs in "${SCALING_SETS[@]}"; do
		for recv in "${SCALING_RECEIVERS[@]}"; do
			n=$((n + 1))
			printf '[%3d] round %d  %-16s %-4s ' "$n" "$round" "$recv:1q" "$srcs" | tee -a "$REPORT"
			set +e
			(
				set -e
				run_one "$recv:1q" "$srcs" "$round" "$n"
			) 2>"$WORK/err" | tee -a "$REPORT"
			rc=${PIPESTATUS[0]}
			set -e
			if [ "$rc" -ne 0 ]; then
				reset_receivers
				log "FAILED (exit $rc): $(tr '\n' ' ' <"$WORK/err")"
				failed_runs+=("$recv:1q/$srcs/round $round")
			fi
			sleep "$SETTLE"
		done
	done
done

# --- report ----------------------------------------------------------------------

log "(runs: $((SECONDS - section_start)) s)"
log
python3 - "$DETAIL_CSV" "$MEDIANS_CSV" "$OUT/plot.dat" "$WORK/plot.series" "${RECEIVERS[*]} ${CHURN_RECEIVERS[*]}" "${SOURCE_SETS[*]}" \
	2>&1 <<-'PY' | tee -a "$REPORT"
	import csv, statistics, sys
	detail, medians_csv, plot_dat, plot_series, receivers, sets = sys.argv[1:]
	receivers, sets = receivers.split(), sets.split()
	runs = {}
	failed = {}
	for r in csv.DictReader(open(detail)):
	    key = (r["receiver"], r["sources"])
	    if r["status"] == "failed":
	        failed[key] = failed.get(key, 0) + 1
	        continue
	    runs.setdefault(key, []).append(r)

	cell = {}
	with open(medians_csv, "w") as f:
	    f.write("receiver,sources,runs,failed,median_mpps,min_mpps,max_mpps,median_passed_pct\n")
	    for rcv in receivers:
	        for s in sets:
	            rs = runs.get((rcv, s), [])
	            mpps = [float(r["mpps"]) for r in rs]
	            if mpps:
	                pct = statistics.median(100 * int(r["passed"]) / max(int(r["received"]), 1) for r in rs)
	                cell[rcv, s] = (statistics.median(mpps), min(mpps), max(mpps), pct, len(mpps))
	                f.write(f"{rcv},{s},{len(mpps)},{failed.get((rcv, s), 0)},{cell[rcv, s][0]:.4f},"
	                        f"{min(mpps):.4f},{max(mpps):.4f},{pct:.2f}\n")
	            else:
	                f.write(f"{rcv},{s},0,{failed.get((rcv, s), 0)},,,,\n")

	print("received Mpps at fgA, median (min-max) over runs")
	print(f"{'sources':<8}" + "".join(f"{r:>22}" for r in receivers))
	for s in sets:
	    row = f"{s:<8}"
	    for rcv in receivers:
	        c = cell.get((rcv, s))
	        row += f"{c[0]:>8.3f} ({c[1]:.2f}-{c[2]:.2f})".rjust(22) if c else f"{'n/a':>22}"
	    print(row)
	print()
	print("share of received frames the receiver let through (median %)")
	print(f"{'sources':<8}" + "".join(f"{r:>15}" for r in receivers))
	for s in sets:
	    print(f"{s:<8}" + "".join(f"{cell[r, s][3]:>15.1f}" if (r, s) in cell else f"{'n/a':>15}"
	                              for r in receivers))
	print()
	pairs = [(a, b) for a in ("floodgate-xdp", "floodgate-tc")
	         for b in ("bare", "simplest", "nft-meter", "hashlimit")]
	pairs += [("floodgate-xdp@64k", b + "@64k") for b in ("nft-meter", "hashlimit")]
	short = lambda r: r.replace("floodgate-", "fg-").replace("-meter", "")
	print("ratios of the medians")
	print(f"{'sources':<8}" + "".join(f"{short(a) + '/' + short(b):>19}" for a, b in pairs))
	for s in sets:
	    row = f"{s:<8}"
	    for a, b in pairs:
	        x, y = cell.get((a, s)), cell.get((b, s))
	        row += f"{x[0] / y[0]:>19.2f}" if x and y and y[0] else f"{'n/a':>19}"
	    print(row)
	# The goals of issue 25, each beside its figure: fg / simplest at every
	# source count (the goal at 1k), and the churn path against nft and
	# hashlimit with tables of 1M and of 64k entries.
	goals = [("floodgate-xdp", "simplest", s, (1.0, 1.2) if s.startswith("1k") else None)
	          for s in sets]
	goals += [("floodgate-xdp" + t, b + t, s, (4, None))
	          for s in ("1M", "16M") for t in ("", "@64k") for b in ("nft-meter", "hashlimit")]
	print()
	print("issue 25 (medians; a ratio of received Mpps, with the share each let through)")
	for a, b, s, want in goals:
	    x, y = cell.get((a, s)), cell.get((b, s))
	    goal = "no goal" if not want else f"goal >= {want[0]}" + (f", stretch {want[1]}" if want[1] else "")
	    if not (x and y and y[0]):
	        print(f"  {a} / {b} at {s}: n/a ({goal})")
	        continue
	    ratio = x[0] / y[0]
	    # The machine's speed drifts between rounds (other work on these
	    # CPUs): the ratio within each round, the two runs minutes apart.
	    per_round = sorted(float(p["mpps"]) / float(q["mpps"])
	                       for p in runs.get((a, s), []) for q in runs.get((b, s), [])
	                       if p["run"] == q["run"] and float(q["mpps"]))
	    verdict = ""
	    if want:
	        verdict = ": met" if ratio >= want[0] else ": missed"
	        if want[1] and ratio >= want[1]:
	            verdict += ", stretch met"
	    print(f"  {a} / {b} at {s:<7}: {ratio:5.2f} ({goal}{verdict}); "
	          f"passed {x[3]:.2f}% vs {y[3]:.2f}%; by round "
	          + ", ".join(f"{r:.2f}" for r in per_round))
	# Two receive queues, one generator thread on each CPU: what each queue
	# (each CPU's NAPI) ran through XDP.
	print()
	print("per receive queue, XDP receivers (median Mpps per queue; 2 sender threads, 2 queues)")
	for rcv in receivers:
	    for s in sets:
	        qs = [[float(q) for q in (r.get("queue_mpps") or "").split()] for r in runs.get((rcv, s), [])]
	        qs = [q for q in qs if any(q)]
	        if qs:
	            per = [statistics.median(q[i] for q in qs) for i in range(len(qs[0]))]
	            print(f"  {rcv:<18} {s:<7} " + " + ".join(f"{q:.2f}" for q in per) + f" = {sum(per):.2f}")
	print()
	print("scaling: received Mpps with 1 queue + 1 sender thread and with 2 + 2 (medians)")
	for key in sorted(k for k in runs if k[0].endswith(":1q")):
	    one = statistics.median(float(r["mpps"]) for r in runs[key])
	    two = cell.get((key[0][:-3], key[1]))
	    print(f"  {key[0][:-3]:<18} {key[1]:<7} 1 queue {one:6.2f}   2 queues "
	          + (f"{two[0]:6.2f}   x{two[0] / one:.2f}" if two and one else "n/a"))
	n_runs = sum(len(v) for v in runs.values())
	n_check = [r for v in runs.values() for r in v if r["status"] != "ok"]
	print()
	print(f"runs: {n_runs} measured, {sum(failed.values())} failed; "
	      f"counter cross-checks (receiver counter = fgA rx_packets = sent - tx_dropped, "
	      f"no tx_dropped): {n_runs - len(n_check)} ok, {len(n_check)} flagged")
	for r in n_check:
	    print(f"  flagged: {r['receiver']} {r['sources']} round {r['run']}: counter {r['received']}, "
	          f"rx_packets {r['fgA_rx_packets']}, sent {r['sent']}, tx_dropped {r['tx_dropped']}")
	if n_check and all(r["sources"] == "16M" and 0 < int(r["received"]) - int(r["fgA_rx_packets"]) <= 3
	                   and r["fgA_rx_packets"] == r["sent"] for r in n_check):
	    print("  (a counter a few above rx_packets with 16M sources: 10.0.0.0/8 holds 10.200.0.255,\n"
	          "   fgA's broadcast address; the port-unreachable sent to it is looped back into\n"
	          "   fgA's receive path, seen by netfilter but not by the veth's rx_packets)")
	with open(plot_dat, "w") as f:
	    f.write("# sources " + " ".join(f"{r}_median {r}_min {r}_max" for r in receivers) + "\n")
	    for s in sets:
	        vals = []
	        for rcv in receivers:
	            c = cell.get((rcv, s))
	            vals += [f"{c[0]:.4f} {c[1]:.4f} {c[2]:.4f}"] if c else ["NaN NaN NaN"]
	        f.write(f"{s} " + " ".join(vals) + "\n")
	# gnuplot's histogram refuses a column with no value: list those with one.
	with open(plot_series, "w") as f:
	    for i, rcv in enumerate(receivers):
	        if any((rcv, s) in cell for s in sets):
	            f.write(f"{2 + 3 * i} {rcv}\n")
PY

log
log "== floodgate memory per tracked source (max_sources = $TABLE_SIZE), after a 1M-source floodgate-xdp run"
if [ -e "$WORK/memory.txt" ]; then
	tee -a "$REPORT" <"$WORK/memory.txt"
else
	log "   not measured (the floodgate-xdp 1M run failed)"
fi

# draw_chart: grouped bars of the medians, one per receiver, log scale.
draw_chart() {
	local terminal=pngcairo plot_cmd= col recv
	gnuplot -e 'set terminal pngcairo' 2>/dev/null || terminal=png
	while read -r col recv; do
		if [ -z "$plot_cmd" ]; then
			plot_cmd="plot '$OUT/plot.dat' using $col:$((col + 1)):$((col + 2)):xtic(1) title '$recv'"
		else
			plot_cmd+=", '' using $col:$((col + 1)):$((col + 2)) title '$recv'"
		fi
	done <"$WORK/plot.series"
	if [ -z "$plot_cmd" ]; then
		echo "no run measured anything" >&2
		return 1
	fi
	gnuplot <<-EOF
		set terminal $terminal size 1000,600 noenhanced
		set output '$OUT/bench.png'
		set title "Packets received at fgA (veth, 60-byte UDP, $THREADS sender threads): median of $rounds_done runs, bars min-max"
		set style data histogram
		set style histogram errorbars gap 2 lw 1
		set style fill solid 0.85 border -1
		set logscale y
		set yrange [0.1:*]
		set ylabel "Mpps received (log scale)"
		set xlabel "distinct source addresses"
		set grid ytics mytics
		set key top right
		$plot_cmd
	EOF
	[ $? -eq 0 ] || return 1
	echo "$terminal"
}

log
if terminal=$(draw_chart 2>"$WORK/gnuplot.err") && [ -s "$OUT/bench.png" ]; then
	log "chart: $OUT/bench.png ($terminal)"
else
	log "chart: FAILED: $(tr '\n' ' ' <"$WORK/gnuplot.err")"
	failed_runs+=("chart")
fi

# The CrowdSec decision stream into bans (scripts/bench-crowdsec.sh), in
# namespaces of its own.
if [ "${FG_BENCH_CROWDSEC:-1}" = 1 ]; then
	log
	if ! env -u FG_IN_SANDBOX bash "$REPO/scripts/bench-crowdsec.sh" 2>&1 | tee -a "$REPORT"; then
		failed_runs+=("crowdsec")
	fi
fi

# Feed files: 1M prefixes by floodgate load/reload against nft -f, same run
# (scripts/bench-feeds.sh, in namespaces of its own).
if FG_IN_SANDBOX= "$REPO/scripts/bench-feeds.sh" >"$OUT/feeds.txt" 2>&1; then
	while read -r line; do log "$line"; done <"$OUT/feeds.txt"
else
	log "feeds: FAILED: $(tail -3 "$OUT/feeds.txt" | tr '\n' ' ')"
	failed_runs+=("feeds")
fi

# The SYN-flood scenario of issue 22: four protections against a spoofed SYN
# flood while a client connects (scripts/bench-synflood.sh, in namespaces of
# its own; bench-results/synflood.csv).
if [ "${FG_BENCH_SYNFLOOD:-1}" = 1 ]; then
	log
	if ! FG_BENCH_OUT=$OUT FG_BENCH_ROUNDS=$ROUNDS env -u FG_IN_SANDBOX \
		bash "$REPO/scripts/bench-synflood.sh" >"$OUT/synflood.log" 2>&1; then
		failed_runs+=("synflood")
	fi
	# Its report (synflood.log has its errors too).
	[ ! -e "$OUT/synflood.txt" ] || tee -a "$REPORT" <"$OUT/synflood.txt"
fi

log "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
log "results: $RUNS_CSV, $MEDIANS_CSV, $DETAIL_CSV, $REPORT"
log "bench_prog: $prog_status; counter preflight: $([ $preflight_ok = 1 ] && echo ok || echo FAILED); rounds: $rounds_done of $ROUNDS; total time $SECONDS s"
problems=("${failed_runs[@]}")
[[ $prog_status == ok || $prog_status == skipped* ]] || problems+=(bench_prog)
[ $preflight_ok = 1 ] || problems+=(counter-check)
[ $hashlimit_ok = 1 ] || problems+=(hashlimit-not-xt)
if [ ${#problems[@]} -gt 0 ]; then
	log "FAILURES: ${problems[*]}"
	exit 1
fi
