# SPDX-License-Identifier: GPL-2.0-only
# The assertions every test script shares, with or without a lab. Each test
# ends with "NAME: N passed, M failed" (finish) and exits non-zero on any
# failure.

TEST_NAME=$(basename "$0" .sh)
PASSED=0
FAILED=0

ok() {
	PASSED=$((PASSED + 1))
	echo "ok   - $*"
}

not_ok() {
	FAILED=$((FAILED + 1))
	echo "FAIL - $*"
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# expect_exit CODE DESCRIPTION COMMAND...: runs COMMAND, keeps its stderr in
# $LAST_ERR, and passes when it exits with CODE.
expect_exit() {
	local want=$1 desc=$2 rc
	shift 2
	LAST_ERR=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$desc (exit $rc)"
	else
		not_ok "$desc: exit $rc, expected $want; stderr: $LAST_ERR"
	fi
}

finish() {
	echo "$TEST_NAME: $PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit
}
