#!/usr/bin/env bash
# Runs every test suite: cmocka unit tests, BPF_PROG_TEST_RUN tests, and the
# netns+veth integration tests. Prints one closing line
# "suites: N passed, M failed, K skipped".
#
# A suite is skipped when it exits 77 (for example, not root) or when cmocka
# skipped one of its tests (for example, the two-CPU tests on one CPU). Each
# skip is listed with its reason. Locally a skip does not fail the run.
#
# Strict mode (FG_STRICT=1, or CI=true as CI sets it; .ci/run uses it): a
# skip is a failure, with its reason printed, so CI cannot pass without
# running every test.
#
# FG_SUITES=REGEX runs only the suites whose name matches (scripts/mutants.sh
# uses it to run the suites relevant to a mutant).
set -uo pipefail
cd "$(dirname "$0")/.."

STRICT=0
if [ "${FG_STRICT:-0}" = 1 ] || [ "${CI:-}" = true ]; then
	STRICT=1
fi
SUITES_RE=${FG_SUITES:-.}

passed=0 failed=0 skipped=0
failures=() skips=()
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

# skip_reason: why the suite in $LOG skipped: cmocka's list of skipped
# tests with the line each printed before skip(), or the suite's last line
# that says "skip".
skip_reason() {
	local tests
	tests=$(sed -n 's/^\[  SKIPPED \] \(test_[a-z0-9_]*\)$/\1/p' "$LOG" | sort -u | tr '\n' ' ')
	if [ -n "$tests" ]; then
		echo "cmocka skipped: ${tests% }; $(grep -i 'skip:' "$LOG" | sort -u | tr '\n' ' ')"
	else
		grep -i 'skip' "$LOG" | tail -n 1
	fi
}

run_suite() {
	local name=$1 rc start=$SECONDS reason
	shift
	[[ $name =~ $SUITES_RE ]] || return 0
	echo "=== $name"
	"$@" 2>&1 | tee "$LOG"
	rc=${PIPESTATUS[0]}
	# cmocka exits 0 when its only "failures" are skipped tests.
	if [ "$rc" -eq 0 ] && grep -q '^\[  SKIPPED \] [0-9]* test' "$LOG"; then
		rc=77
	fi
	if [ "$rc" -eq 77 ]; then
		reason=$(skip_reason)
		if [ "$STRICT" -eq 1 ]; then
			failed=$((failed + 1))
			failures+=("$name (skipped, a failure in strict mode: $reason)")
		else
			skipped=$((skipped + 1))
			skips+=("$name: $reason")
		fi
	elif [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name (exit $rc)")
	fi
	echo "--- $name: exit $rc in $((SECONDS - start)) s"
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "${FG_FAIL_FAST:-0}" = 1 ]; then
		summary
	fi
}

summary() {
	echo
	for s in "${skips[@]}"; do
		echo "SKIPPED: $s"
	done
	for f in "${failures[@]}"; do
		echo "FAILED: $f"
	done
	[ "$STRICT" -eq 1 ] && echo "(strict mode: a skip is a failure)"
	echo "suites: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite "$(basename "$t")" "$t"
done
for t in tests/scripts/test_*.sh tests/integration/test_*.sh; do
	run_suite "$(basename "$t")" bash "$t"
done
[ $((passed + failed + skipped)) -gt 0 ] || {
	echo "no suite matched FG_SUITES='$SUITES_RE'"
	exit 1
}
summary
