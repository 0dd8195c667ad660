#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command line of the real binary, without a lab: every command's --help
# and -h, -v/-vv, and the exit code and message of each kind of bad usage.
# Nothing here reaches the kernel: every case stops before a command runs,
# except `check`, which only reads a file.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
SAMPLE=$REPO/floodgate.conf.sample
COMMANDS=(load reload unload status stats top run check replay ban unban bans)
NEED_IFACE=(reload unload stats top run ban unban bans)
source "$REPO/tests/integration/assert.sh"

# run ARGS...: runs floodgate; sets RC, OUT and ERR.
run() {
	local err_file
	err_file=$(mktemp)
	OUT=$("$FLOODGATE" "$@" 2>"$err_file")
	RC=$?
	ERR=$(cat "$err_file")
	rm -f "$err_file"
}

# expect CODE DESCRIPTION ARGS...: floodgate ARGS exits with CODE.
expect() {
	local want=$1 desc=$2
	shift 2
	run "$@"
	if [ "$RC" -eq "$want" ]; then
		ok "$desc (exit $RC)"
	else
		not_ok "$desc: exit $RC, expected $want; stderr: $ERR"
	fi
}

# has DESCRIPTION TEXT PATTERN: TEXT contains the fixed string PATTERN.
has() {
	if grep -qF -- "$3" <<<"$2"; then ok "$1"; else not_ok "$1: no '$3' in: $2"; fi
}

lacks() {
	if grep -qF -- "$3" <<<"$2"; then not_ok "$1: '$3' in: $2"; else ok "$1"; fi
}

if [ ! -x "$FLOODGATE" ]; then
	echo "test_usage: $FLOODGATE is not built; skipped"
	exit 77
fi

# --- help ------------------------------------------------------------------
expect 0 "help" help
for cmd in "${COMMANDS[@]}"; do
	has "  help lists $cmd" "$OUT" "  $cmd "
done
lacks "  help does not list flood" "$OUT" "  flood "
has "  help names the exit codes" "$OUT" "Exit codes: 0 ok"
expect 2 "no command" 
has "  ... prints the usage on stderr" "$ERR" "Usage: floodgate"

for cmd in "${COMMANDS[@]}"; do
	for flag in --help -h; do
		expect 0 "$cmd $flag" "$cmd" "$flag"
		has "  ... prints $cmd's usage" "$OUT" "Usage: floodgate [-v] $cmd "
		[ -z "$ERR" ] && ok "  ... and nothing on stderr" || not_ok "  ... stderr: $ERR"
	done
	expect 0 "help $cmd" help "$cmd"
	has "  ... prints $cmd's usage" "$OUT" "Usage: floodgate [-v] $cmd "
done
run ban --help
has "ban --help names --for" "$OUT" "--for DURATION"
run load --help
has "load --help names --hook" "$OUT" "--hook xdp|tc"
lacks "load --help has no --for" "$OUT" "--for"
expect 0 "--help wins over a missing IFACE" unload --help
expect 2 "help of an unknown command" help frobnicate

# --- verbosity ---------------------------------------------------------------
expect 0 "-vv before the command" -vv check -c "$SAMPLE"
expect 0 "-v -v before the command" -v -v check -c "$SAMPLE"
expect 0 "-vvv" -vvv check -c "$SAMPLE"
expect 0 "-vv after the command" check -vv -c "$SAMPLE"
expect 0 "--verbose" check --verbose -c "$SAMPLE"
expect 2 "-vx is not verbosity" -vx check -c "$SAMPLE"

# --- bad usage ---------------------------------------------------------------
expect 2 "unknown command" frobnicate
has "  ... names it" "$ERR" "unknown command 'frobnicate'"
expect 2 "unban with --for" unban IFACE 192.0.2.7 --for 10s
has "  ... names the option" "$ERR" "unknown option '--for'"
lacks "  ... not its value" "$ERR" "10s"
expect 2 "unknown long option" stats fgA --bogus
has "  ... names it" "$ERR" "unknown option '--bogus'"
expect 2 "unknown option with a value" stats fgA --bogus=7
has "  ... names it without the value" "$ERR" "unknown option '--bogus'"
expect 2 "unknown short option" stats fgA -q
has "  ... names it" "$ERR" "unknown option '-q'"
expect 2 "a value for a flag" stats fgA --json=yes
has "  ... says so" "$ERR" "option '--json' takes no value"
expect 2 "option of another command" load fgA --json
has "  ... names it" "$ERR" "unknown option '--json'"
expect 2 "missing value" load fgA -c
has "  ... names the option" "$ERR" "option '-c' needs a value"
expect 2 "missing value of a long option" load fgA --hook
has "  ... names the option" "$ERR" "option '--hook' needs a value"
expect 2 "bad --hook value" load fgA --hook bogus
expect 2 "bad --mode value" load fgA --mode bogus
expect 2 "extra argument" unload fgA fgB
has "  ... names it" "$ERR" "unexpected argument 'fgB'"
for cmd in "${NEED_IFACE[@]}"; do
	expect 2 "$cmd without IFACE" "$cmd"
	has "  ... says so" "$ERR" "'$cmd' needs an interface"
	has "  ... points to its help" "$ERR" "floodgate $cmd --help"
done
expect 2 "ban without an address" ban fgA
has "  ... says so" "$ERR" "needs an address"
expect 2 "reload without -c" reload fgA
has "  ... says so" "$ERR" "'reload' needs -c FILE"
expect 2 "check without -c" check
expect 2 "interface name too long" unload abcdefghijklmnopq
expect 2 "interface name with a slash" unload a/b
expect 2 "ban of a bad address" ban fgA 10.0.0.x
expect 2 "ban with host bits set" ban fgA 10.0.0.1/24
has "  ... names the network" "$ERR" "10.0.0.0/24"
expect 2 "replay without a capture" replay -c "$SAMPLE"
has "  ... says so" "$ERR" "'replay' needs a capture file"
expect 2 "replay -n that is not a number" replay -c "$SAMPLE" x.pcap -n ten
expect 2 "top -n 0" top fgA -n 0
has "  ... names the range" "$ERR" "-n must be 1..10000"
expect 2 "top -n above 10000" top fgA -n 10001
expect 2 "run with an option of another command" run fgA --json
has "  ... names it" "$ERR" "unknown option '--json'"

finish
