# SPDX-License-Identifier: GPL-2.0-only
# Shared by the integration tests: the lab (scripts/lab.sh) and assertions.
# Each test ends with "NAME: N passed, M failed" and exits non-zero on any
# failure; 77 means skipped.

if [ "$(id -u)" -ne 0 ]; then
	echo "$(basename "$0"): needs root; skipped"
	exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lab.sh"
lab_enter "$0" "$@"
trap lab_down EXIT

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

# spoof_lab_up RATE BURST NEW_SOURCES: the spoofed-flood lab of
# test_spoof.sh and test_new_sources.sh: floodgate on fgA limits udp dport 9
# per source to RATE/s with BURST, in a table of 65,536 entries, and nft
# counts what the two real sources 192.0.2.1 and 192.0.2.2 get through.
spoof_lab_up() {
	local conf
	conf=$(mktemp)
	cat >"$conf" <<-CONF
		max_sources = 65536
		new_sources = $3
		[policy per-ip]
		match = udp dport 9
		per   = src/32 src/64
		rate  = $1/s
		burst = $2
	CONF
	lab_up
	expect_exit 0 "load with a 65,536-entry table" "$FLOODGATE" load fgA -c "$conf"
	rm -f "$conf"
	count_sources 192.0.2.1 192.0.2.2
}
