#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bash completion, completion/floodgate: sourced in this shell, its
# function is called with COMP_WORDS and COMP_CWORD set as bash sets them,
# and COMPREPLY is checked: the commands, each command's options (those of
# `floodgate help --list`, and no other command's), an interface (lo), enum
# values, config files, policy names from the configs, and, from a stand-in
# floodgate, the policies loaded and the bans for unban; and the words bash
# splits at '=' and ':' ("--hook=tc", an IPv6 ban) as bash splits them. No
# lab.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
COMPLETION=${COMPLETION:-$REPO/completion/floodgate}
source "$REPO/tests/integration/assert.sh"

if [ ! -x "$FLOODGATE" ]; then
	echo "test_completion: $FLOODGATE is not built; skipped"
	exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export FLOODGATE_CONF_DIR=$WORK/etc
mkdir -p "$FLOODGATE_CONF_DIR"

if ! source "$COMPLETION" 2>"$WORK/err" || ! declare -F _floodgate >/dev/null; then
	not_ok "sourcing $COMPLETION: $(cat "$WORK/err")"
	finish
fi
[ "$(complete -p floodgate 2>/dev/null)" = "complete -F _floodgate floodgate" ] &&
	ok "complete -F _floodgate floodgate" || not_ok "no completion for floodgate: $(complete -p floodgate 2>&1)"

# complete WORD...: completes the last WORD of "BIN WORD..."; sets REPLY
# to COMPREPLY, sorted, one a line.
BIN=$FLOODGATE
# complete_line LINE WORDS...: completes the last of WORDS (as bash split
# LINE) and leaves the sorted offers in REPLY.
complete_line() {
	local line=$1
	shift
	COMP_WORDS=("$BIN" "$@")
	COMP_CWORD=$#
	COMP_LINE="$BIN $line"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_floodgate
	REPLY=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort)
}
complete_words() { complete_line "$*" "$@"; }
# offers DESCRIPTION WORD WORDS...: completing WORDS offers WORD.
offers() {
	local desc=$1 want=$2
	shift 2
	complete_words "$@"
	grep -qxF -- "$want" <<<"$REPLY" && ok "$desc" || not_ok "$desc: no '$want' in: $(tr '\n' ' ' <<<"$REPLY")"
}
# replies DESCRIPTION WANT WORDS...: completing WORDS offers exactly WANT
# (one a line, sorted).
replies() {
	local desc=$1 want=$2
	shift 2
	complete_words "$@"
	[ "$REPLY" = "$want" ] && ok "$desc" ||
		not_ok "$desc: '$(tr '\n' ' ' <<<"$REPLY")', expected '$(tr '\n' ' ' <<<"$want")'"
}

# --- commands ------------------------------------------------------------------
"$FLOODGATE" help --list >"$WORK/list"
commands=$(cut -f1 "$WORK/list" | sort)
replies "the first word: every command of help --list, help and --version" \
	"$(printf '%s\n' $commands help --version | sort)" ""
replies "'lo' completes to load alone" "load" lo
replies "after -vv too" "load" -vv lo
replies "help COMMAND" "$(printf '%s\n' $commands --list | sort)" help ""

# --- options per command: help --list's, and no other ---------------------------
while IFS=$'\t' read -r name args root options help; do
	want=$(for o in $options; do o=${o%%=*}; o=${o%!}; tr ',' '\n' <<<"$o"; done | sort)
	replies "$name -: its options of help --list, and no other command's" "$want" "$name" -
done <"$WORK/list"
offers "load --h offers --hook" --hook load --h
complete_words unban lo -
lacks_for=$(grep -cxE -- '--for|--json|--config|-c' <<<"$REPLY")
[ "$lacks_for" -eq 0 ] && ok "unban -: not ban's --for, nor --json or -c" ||
	not_ok "unban - offers another command's options: $(tr '\n' ' ' <<<"$REPLY")"

# --- values and arguments --------------------------------------------------------
offers "stats IFACE: lo" lo stats l
offers "load IFACE: lo" lo load ""
replies "load --hook: its words" "$(printf '%s\n' tc xdp)" load lo --hook ""
replies "load --mode: its words" "$(printf '%s\n' generic native)" load --mode ""
replies "an option's value is not taken for IFACE" "lo" top -n 5 l
touch "$WORK/a.conf" "$WORK/b.txt"
offers "-c FILE: a .conf file" "$WORK/a.conf" check -c "$WORK/"
complete_words check -c "$WORK/"
grep -qF b.txt <<<"$REPLY" && not_ok "-c FILE offers b.txt: $REPLY" || ok "  ... and not a .txt"
replies "check takes no IFACE" "" check ""

printf 'interface = lo\n[policy ssh]\nmatch = tcp dport 22\nrate = 1/s\n[policy web-1]\nmatch = tcp dport 80\nrate = 9/s\n' \
	>"$FLOODGATE_CONF_DIR/lo.conf"
printf '[policy other]\nmatch = udp\nrate = 1/s\n' >"$FLOODGATE_CONF_DIR/eth9.conf"
replies "top IFACE --policy: the policies of IFACE's config" "$(printf '%s\n' ssh web-1)" \
	top lo --policy ""
replies "  ... every config's without IFACE's" "$(printf '%s\n' other ssh web-1)" \
	top fg-none0 --policy ""

# unban: the bans of `floodgate bans IFACE --json`, from a stand-in binary.
cat >"$WORK/floodgate" <<STUB
#!/bin/sh
if [ "\$1" = bans ] && [ "\$2" = lo ]; then
	echo '{"interface":"lo","bans":[{"prefix":"192.0.2.0/24","family":4},{"prefix":"2001:db8::/32","family":6}]}'
	exit 0
fi
if [ "\$1" = status ] && [ "\$2" = lo ]; then
	echo '{"interfaces":[{"interface":"lo","tables":[{"name":"sources4"}],"policies":[{"name":"loaded-a","algorithm":"gcra"},{"name":"loaded-b","algorithm":"gcra"}]}]}'
	exit 0
fi
exec "$FLOODGATE" "\$@"
STUB
chmod +x "$WORK/floodgate"
BIN=$WORK/floodgate
replies "unban IFACE: the active bans" "$(printf '%s\n' 192.0.2.0/24 2001:db8::/32 | sort)" unban lo ""
replies "  ... by prefix" "192.0.2.0/24" unban lo 192
replies "top IFACE --policy: the policies loaded on IFACE first (status --json, as top reads them)" \
	"$(printf '%s\n' loaded-a loaded-b)" top lo --policy ""
replies "ban IFACE: no bans offered (an address to ban is new)" "" ban lo ""

# bash splits a word at '=' and ':' (COMP_WORDBREAKS): "--hook=" is the
# words "--hook" "=", and "2001:d" is "2001" ":" "d"; COMPREPLY replaces
# the last of them only.
# split_replies DESCRIPTION WANT LINE WORD...: completing LINE, which bash
# splits into WORDS, offers exactly WANT.
split_replies() {
	local desc=$1 want=$2 line=$3
	shift 3
	complete_line "$line" "$@"
	[ "$REPLY" = "$want" ] && ok "$desc" ||
		not_ok "$desc: '$(tr '\n' ' ' <<<"$REPLY")', expected '$(tr '\n' ' ' <<<"$want")'"
}
split_replies "load --hook=: its words" "$(printf '%s\n' tc xdp)" \
	"load lo --hook=" load lo --hook =
split_replies "load --hook=x: xdp" "xdp" "load lo --hook=x" load lo --hook = x
split_replies "check --config=DIR/a: the .conf file" "$WORK/a.conf" \
	"check --config=$WORK/a" check --config = "$WORK/a"
split_replies "load --config=FILE l: FILE is not taken for IFACE" "lo" \
	"load --config=a.conf l" load --config = a.conf l
split_replies "top --count=5 lo --policy: the policies loaded" "$(printf '%s\n' loaded-a loaded-b)" \
	"top --count=5 lo --policy " top --count = 5 lo --policy ""
split_replies "unban IFACE 2001:d: the rest of the IPv6 ban" "db8::/32" \
	"unban lo 2001:d" unban lo 2001 : d
split_replies "unban IFACE 2001:: the rest of the IPv6 ban" "db8::/32" \
	"unban lo 2001:" unban lo 2001 :

finish
