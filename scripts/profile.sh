#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make profile: where floodgate's XDP program spends its time, by perf
# sampling of the JITed program (this kernel refuses the fentry programs
# `bpftool prog profile` needs). On the veth lab of scripts/lab.sh, with
# the benchmark's config (one udp policy, 1/minute burst 1, max_sources
# 1048576), two generator threads flood fgA from one source (every packet
# a refusal of a hot source), then from 1M sources (the churn path), and
# `perf record -a -g` samples both CPUs meanwhile. The report lists the
# symbols by their share of the samples: the JITed program
# (bpf_prog_<tag>_fg_xdp), and the kernel helpers it calls
# (bpf_ktime_get_ns, the LRU hash's lookup and insert, the LPM trie, ...).
#
# Then the program's own samples by source line (build/jit_lines, from the
# kernel's JITed line info, taken while the program is still attached): which
# lines of bpf/ and include/ the time goes to, each map read's cache miss
# landing on the first line that uses the value it loads.
#
# The simplest limiter (tests/bench/simplest.bpf.c) is profiled under the
# same hot-key flood, for comparison.
#
#   FG_PROFILE_SECONDS  seconds sampled per flood (default 4)
#   FG_PROFILE_OUT      where profile.txt and the perf data go
#                       (default bench-results)
#
# net.core.bpf_jit_kallsyms (machine-wide: it names JITed programs in
# /proc/kallsyms) is set to 1 for the run and restored after.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "profile: run as root" >&2
	exit 1
fi
source "$(dirname "$0")/lab.sh"
# net.core.bpf_jit_kallsyms belongs to the host's network namespace: set it
# here, before entering the sandbox, and restore it once the sandbox exits.
if [ -z "${FG_IN_SANDBOX:-}" ]; then
	kallsyms_was=$(sysctl -n net.core.bpf_jit_kallsyms)
	sysctl -qw net.core.bpf_jit_kallsyms=1
	rc=0
	FG_IN_SANDBOX=1 unshare -n -m -- bash "$0" "$@" || rc=$?
	sysctl -qw net.core.bpf_jit_kallsyms="$kallsyms_was"
	exit $rc
fi
lab_enter "$0" "$@"

SECONDS_SAMPLED=${FG_PROFILE_SECONDS:-4}
JIT_LINES=$REPO/build/jit_lines
OUT=${FG_PROFILE_OUT:-$REPO/bench-results}
WORK=$(mktemp -d /tmp/fg-profile.XXXXXX)
cleanup() {
	"$FLOODGATE" unload fgA >/dev/null 2>&1 || true
	rm -rf "$WORK"
	lab_down
}
trap cleanup EXIT
mkdir -p "$OUT"
REPORT=$OUT/profile.txt
: >"$REPORT"

lab_up
ethtool -L fgA rx 2 tx 2
ip netns exec "$SENDER_NS" ethtool -L fgB rx 2 tx 2
cat >"$WORK/floodgate.conf" <<-EOF
	max_sources = 1048576

	[policy p]
	match = udp
	rate = 1/min
	burst = 1
EOF

# attach_floodgate / attach_simplest, and detach_X: the program profiled.
# The simplest limiter is build/simplest.bpf.o (100 a second per source: a
# hot source is refused all but 100 times a second).
attach_floodgate() { "$FLOODGATE" load fgA -c "$WORK/floodgate.conf" --hook xdp >/dev/null; }
detach_floodgate() { "$FLOODGATE" unload fgA >/dev/null; }
attach_simplest() { ip link set dev fgA xdpdrv obj "$REPO/build/simplest.bpf.o" sec xdp; }
detach_simplest() { ip link set dev fgA xdpdrv off; }

# profile_flood NAME SOURCES [PROGRAM]: floods fgA from SOURCES through
# PROGRAM (floodgate, or simplest), samples while it runs, and appends the
# symbols with at least 0.5% of the samples to the report.
profile_flood() {
	local name=$1 srcs=$2 prog=${3:-floodgate} flood_pid
	"attach_$prog"
	ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" --json \
		--dst 10.200.0.1 --src "$srcs" --threads 2 \
		--duration $((SECONDS_SAMPLED + 3)) >"$WORK/flood-$name.json" &
	flood_pid=$!
	sleep 2 # past the generator's setup (1M source lists) and first packets
	perf record -q -a -g -o "$OUT/perf-$name.data" -- sleep "$SECONDS_SAMPLED" 2>/dev/null
	wait "$flood_pid"
	# by source line, while the program the samples hit is still loaded
	prog_id=$(ip -d link show dev fgA | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	perf script -i "$OUT/perf-$name.data" -F ip 2>/dev/null |
		"$JIT_LINES" "$prog_id" 25 >"$WORK/lines.txt"
	"detach_$prog"
	{
		echo "== $name: $prog XDP, 2 sender threads, --src $srcs, perf record -a -g, ${SECONDS_SAMPLED} s"
		echo "   (self time by symbol, both CPUs; the generator's own symbols are listed too)"
		perf report -i "$OUT/perf-$name.data" --no-children --sort symbol --stdio \
			--percent-limit 0.5 -g none 2>/dev/null | grep -v '^#' | grep -v '^$' |
			sed 's/[ -]*$//' | tee "$WORK/symbols.txt"
		# the same samples in groups (all symbols, not only those >= 0.5%)
		perf report -i "$OUT/perf-$name.data" --no-children --sort symbol --stdio \
			-g none 2>/dev/null | awk '
			/^ *[0-9.]+%/ { p = $1 + 0; s = $3
				if (s ~ /^bpf_prog_.*_fg_/) g["floodgate JITed code (bpf_prog_*_fg_*)"] += p
				else if (s ~ /^bpf_prog_.*_simplest$/) g["the simplest limiter JITed code"] += p
				else if (s ~ /^bpf_prog_/) g["other BPF programs (the generator)"] += p
				else if (s ~ /clock|ktime/) g["clock (bpf_ktime_get_ns: pvclock, ktime)"] += p
				else if (s ~ /htab|lookup_nulls|lru/) g["hash maps (lookup, hash, LRU)"] += p
				else if (s ~ /trie_/) g["LPM tries (bans, lists)"] += p
				else if (s ~ /spin_lock/) g["spin locks"] += p }
			END { for (k in g) printf "   %6.2f%%  %s\n", g[k], k }' | sort -rn
		cat "$WORK/lines.txt"
		echo
	} | tee -a "$REPORT"
}

echo "floodgate profile, $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs" | tee -a "$REPORT"
echo "JITed programs: $(grep -c ' bpf_prog_' /proc/kallsyms) in /proc/kallsyms" | tee -a "$REPORT"
echo | tee -a "$REPORT"
profile_flood hot-key 10.0.0.1
profile_flood 1M-sources 10.0.0.0+1000000
profile_flood simplest-hot-key 10.0.0.1 simplest
echo "report: $REPORT; perf data: $OUT/perf-*.data (perf report -i FILE)"
