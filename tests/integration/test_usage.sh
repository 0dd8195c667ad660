#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command line of the real binary, without a lab: every command's --help
# and -h, -v/-vv, and the exit code and message of each kind of bad usage.
# The commands, their arguments and the options each takes come from
# `floodgate help --list` (docs/cli.md, CLI reference), so a command added to the
# table is tried here without a second list. Nothing here reaches the
# kernel: every case stops before a command runs, except `check`, which only
# reads a file.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
SAMPLE=$REPO/floodgate.conf.sample
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
source "$REPO/tests/integration/assert.sh"

# run ARGS...: runs floodgate (behind the command in RUNNER, if any); sets
# RC, OUT and ERR.
RUNNER=()
run() {
	local err_file
	err_file=$(mktemp)
	OUT=$("${RUNNER[@]}" "$FLOODGATE" "$@" 2>"$err_file")
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

# --- help --list: the commands this test walks ------------------------------
# One line per command: NAME <tab> ARGS <tab> root|- <tab> OPTIONS <tab> HELP.
COMMANDS=()
declare -A ARGS NEEDS_ROOT OPTIONS ALL_OPTIONS
expect 0 "help --list" help --list
LIST=$OUT
[ -z "$ERR" ] && ok "  ... and nothing on stderr" || not_ok "  ... stderr: $ERR"
OPTION_RE='^--[a-z][a-z-]*(,-[a-zA-Z])?(=[^ !=]+)?!?$'
while IFS= read -r line; do
	IFS=$'\t' read -r name args root options help <<<"$line"
	if [ "$(tr -cd '\t' <<<"$line" | wc -c)" -ne 4 ] || [ -z "$help" ] ||
		! grep -Eq '^[a-z]+$' <<<"$name" || ! grep -Eq '^(root|-)$' <<<"$root" ||
		! grep -Eq '^(-|IFACE\??|IFACE\?? [^ ]+|[A-Z][^ ]*)$' <<<"$args"; then
		not_ok "help --list: malformed line: $line"
		continue
	fi
	for o in $options; do
		grep -Eq "$OPTION_RE" <<<"$o" || not_ok "help --list: $name: malformed option '$o'"
		ALL_OPTIONS[${o%%[,=!]*}]=1
	done
	[ -n "${ARGS[$name]+set}" ] && not_ok "help --list: $name listed twice"
	COMMANDS+=("$name")
	ARGS[$name]=$args
	NEEDS_ROOT[$name]=$root
	OPTIONS[$name]=$options
done <<<"$LIST"
[ "${#COMMANDS[@]}" -ge 10 ] && ok "help --list lists ${#COMMANDS[@]} commands: ${COMMANDS[*]}" ||
	not_ok "help --list lists ${#COMMANDS[@]} commands: $LIST"

# words for COMMAND's arguments, enough to pass the checks of their number:
# fgA for IFACE, ARG for the one after it.
positionals() {
	local word out=()
	for word in ${ARGS[$1]}; do
		case $word in
		-) ;;
		IFACE | IFACE\?) out+=(fgA) ;;
		*) out+=(ARG) ;;
		esac
	done
	echo "${out[@]}"
}

# the argument COMMAND takes after IFACE ("CAPTURE"), if any.
argument() {
	local word
	for word in ${ARGS[$1]}; do
		case $word in
		- | IFACE | IFACE\?) ;;
		*) echo "$word" ;;
		esac
	done
}

# the required options of COMMAND, each with a value (-c: the sample).
required_options() {
	local o
	for o in ${OPTIONS[$1]}; do
		[ "${o: -1}" = '!' ] && echo "${o%%[,=]*} $SAMPLE"
	done
}

# --- help ------------------------------------------------------------------
expect 0 "help" help
for cmd in "${COMMANDS[@]}"; do
	has "  help lists $cmd" "$OUT" "  $cmd "
done
lacks "  help does not list flood" "$OUT" "  flood "
has "  help names the exit codes" "$OUT" "Exit codes: 0 ok"
has "  help names help --list" "$OUT" "help --list"
expect 2 "no command" 
has "  ... prints the usage on stderr" "$ERR" "Usage: floodgate"

for cmd in "${COMMANDS[@]}"; do
	for flag in --help -h; do
		expect 0 "$cmd $flag" "$cmd" "$flag"
		has "  ... prints $cmd's usage" "$OUT" "Usage: floodgate [-v] $cmd "
		[ -z "$ERR" ] && ok "  ... and nothing on stderr" || not_ok "  ... stderr: $ERR"
	done
	case ${ARGS[$cmd]} in
	IFACE\?*) has "  ... IFACE is optional" "$OUT" "$cmd [IFACE]" ;;
	IFACE*) has "  ... IFACE is required" "$OUT" "$cmd IFACE" ;;
	esac
	USAGE=$OUT
	for o in ${OPTIONS[$cmd]}; do
		long=${o%%[,=!]*}
		has "  ... names $long" "$USAGE" "$long"
	done
	expect 0 "help $cmd" help "$cmd"
	has "  ... prints $cmd's usage" "$OUT" "Usage: floodgate [-v] $cmd "
done

# --- every option of every command, from the list ------------------------------
for cmd in "${COMMANDS[@]}"; do
	for o in ${OPTIONS[$cmd]}; do
		long=${o%%[,=!]*}
		letter=$(grep -o ',-.' <<<"$o" | cut -c2-)
		value=$(grep -o '=[^!]*' <<<"$o" | cut -c2-)
		if [ -z "$value" ]; then
			expect 2 "$cmd $long=yes" "$cmd" "$long=yes"
			has "  ... takes no value" "$ERR" "option '$long' takes no value"
			continue
		fi
		expect 2 "$cmd $long without its value" "$cmd" "$long"
		has "  ... needs a value" "$ERR" "option '$long' needs a value"
		if [ -n "$letter" ]; then
			expect 2 "$cmd $letter without its value" "$cmd" "$letter"
			has "  ... needs a value" "$ERR" "option '$letter' needs a value"
		fi
		if [[ $value == *"|"* ]]; then # an enum: its words, and no other
			words=$(sed 's/|\([^|]*\)$/ or \1/; s/|/, /g' <<<"$value")
			expect 2 "$cmd $long bogus" "$cmd" "$long" bogus
			has "  ... names the words" "$ERR" "${letter:-$long} must be $words, not 'bogus'"
		fi
		if [ "${o: -1}" = '!' ]; then
			# shellcheck disable=SC2046
			expect 2 "$cmd without $long" "$cmd" $(positionals "$cmd")
			has "  ... says so" "$ERR" "'$cmd' needs ${letter:-$long} $value"
		fi
	done
	for long in "${!ALL_OPTIONS[@]}"; do
		grep -Eq -- "(^| )$long([,=! ]|$)" <<<"${OPTIONS[$cmd]}" && continue
		expect 2 "$cmd $long (another command's option)" "$cmd" "$long"
		has "  ... names it" "$ERR" "unknown option '$long'"
	done
done

# --- the arguments of every command, from the list -----------------------------
for cmd in "${COMMANDS[@]}"; do
	# shellcheck disable=SC2046
	expect 2 "$cmd with an extra argument" "$cmd" $(positionals "$cmd") extra
	has "  ... names it" "$ERR" "unexpected argument 'extra'"
	case ${ARGS[$cmd]} in
	IFACE\?*) ;;
	IFACE*)
		expect 2 "$cmd without IFACE" "$cmd"
		has "  ... says so" "$ERR" "'$cmd' needs an interface"
		has "  ... points to its help" "$ERR" "floodgate $cmd --help"
		;;
	esac
	arg=$(argument "$cmd")
	if [ -n "$arg" ]; then
		# shellcheck disable=SC2046
		expect 2 "$cmd without $arg" "$cmd" $(positionals "$cmd" | sed 's/ *ARG$//') \
			$(required_options "$cmd")
		has "  ... says so" "$ERR" "'$cmd' needs "
		lacks "  ... and what" "$ERR" "(null)"
	fi
done

# --- root: the table's check, before anything runs ------------------------------
if [ "$(id -u)" -ne 0 ] || ! "${NOBODY[@]}" test -x "$FLOODGATE" 2>/dev/null; then
	echo "# not root, or nobody cannot run $FLOODGATE: the root checks are skipped"
else
	RUNNER=(timeout 10 "${NOBODY[@]}")
	for cmd in "${COMMANDS[@]}"; do
		# shellcheck disable=SC2046
		set -- "$cmd" $(positionals "$cmd") $(required_options "$cmd")
		if [ "${NEEDS_ROOT[$cmd]}" = root ]; then
			expect 4 "nobody: floodgate $*" "$@"
			has "  ... says it must run as root" "$ERR" "must run as root ("
		else
			run "$@"
			lacks "nobody: floodgate $* is not refused for want of root" "$ERR" "root"
		fi
	done
	RUNNER=()
fi

# --- by hand: what the rows say, as the manual says it ---------------------------
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
