#!/usr/bin/env bash
# Runs every test suite: cmocka unit tests, BPF_PROG_TEST_RUN tests, and the
# netns+veth integration tests. Prints one closing line "N passed, M failed".
# A suite that exits 77 is counted as skipped (for example, not root).
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0
failures=()

run_suite() {
	local name=$1
	shift
	echo "=== $name"
	local start=$SECONDS
	"$@"
	local rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)); echo "--- $name: skipped" ;;
	*) failed=$((failed + 1)); failures+=("$name (exit $rc)") ;;
	esac
	echo "--- $name: exit $rc in $((SECONDS - start)) s"
}

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite "$(basename "$t")" "$t"
done
for t in tests/integration/test_*.sh; do
	run_suite "$(basename "$t")" bash "$t"
done

echo
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
