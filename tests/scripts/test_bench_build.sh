#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scripts/bench.sh compiles the simplest limiter itself, for the limit its
# knobs ask (not through make), and make test never runs the benchmark: a
# build that broke (a new include) was once seen only by running it.
# FG_BENCH_BUILD_ONLY=1 runs that build alone, for the default limit
# (1/minute) and a per-second one; each object must be eBPF with the XDP
# program's section in it.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: scripts/bench.sh runs as root only"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
check() { # NAME COMMAND...
	local name=$1
	shift
	if "$@"; then echo "ok   - $name"; else echo "FAIL - $name"; failed=1; fi
}
for unit in minute second; do
	out=$(FG_BENCH_BUILD_ONLY=1 FG_BENCH_LIMIT_UNIT=$unit FG_BENCH_OUT="$work/$unit" \
		bash scripts/bench.sh 2>&1) && rc=0 || rc=$?
	check "bench.sh builds the simplest limiter (limit per $unit): exit $rc" test "$rc" -eq 0
	check "  ... and says where: $(tail -1 <<<"$out")" \
		grep -q "^bench: built $work/$unit/simplest.bpf.o ([0-9]* bytes)" <<<"$out"
	check "  ... an eBPF object with an xdp section" \
		bash -c "readelf -h '$work/$unit/simplest.bpf.o' | grep -q 'Linux BPF' &&
			readelf -S '$work/$unit/simplest.bpf.o' | grep -q ' xdp '"
done
[ "$failed" = 0 ] && echo "test_bench_build: passed" || echo "test_bench_build: FAILED"
exit "$failed"
