#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The man pages build/man/floodgate.8 and floodgate.conf.5 (make all): mandoc
# finds nothing to warn about, floodgate(8) lists every command and option of
# `floodgate help --list` and every environment variable floodgate reads,
# and floodgate.conf(5) every key the parser knows,
# section by section, as its "expected one of" messages list them, each
# with its default unless DESCRIPTION names it required, and its example
# configs pass `floodgate check`. Both
# sides are read from the binary and the pages; no list is kept here. No
# lab: nothing here reaches the kernel.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
MAN8=${MAN8:-$REPO/build/man/floodgate.8}
MAN5=${MAN5:-$REPO/build/man/floodgate.conf.5}
source "$REPO/tests/integration/assert.sh"

if [ ! -x "$FLOODGATE" ] || [ ! -f "$MAN8" ] || [ ! -f "$MAN5" ]; then
	echo "test_man: $FLOODGATE or the pages in build/man are not built; skipped"
	exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# same DESCRIPTION WANT GOT: two sorted lists, one item a line, are equal.
same() {
	local diffs
	if diffs=$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$3")); then
		ok "$1"
	else
		not_ok "$1: < the table, > the page:"$'\n'"$diffs"
	fi
}

# --- mandoc -------------------------------------------------------------------
if command -v mandoc >/dev/null; then
	for page in "$MAN8" "$MAN5"; do
		lint=$(mandoc -T lint -W warning "$page" 2>&1)
		[ -z "$lint" ] && ok "mandoc -T lint -W warning: $(basename "$page") is clean" ||
			not_ok "mandoc -T lint -W warning $(basename "$page"):"$'\n'"$lint"
	done
else
	not_ok "mandoc is not installed (scripts/install-deps.sh installs it)"
fi

# --- the footer: as man(1) shows it (groff), the system is Linux, not BSD ------
# (an empty .Os reads "BSD" under groff's mdoc).
if command -v groff >/dev/null; then
	for page in "$MAN8" "$MAN5"; do
		footer=$(groff -Tascii -mdoc "$page" 2>/dev/null | col -b | grep -v '^[[:space:]]*$' | tail -n 1)
		check "$(basename "$page"): man shows Linux in the footer, not BSD: '$footer'" \
			bash -c "grep -q '^Linux' <<<\"\$1\" && ! grep -q BSD <<<\"\$1\"" _ "$footer"
	done
fi

# --- floodgate(8): commands and options ----------------------------------------
# help --list: "CMD --long,-l=VALUE ...", the options sorted, without the
# "!" of a required one (the page says "Required." in words).
"$FLOODGATE" help --list >"$WORK/list" || not_ok "help --list failed"
from_list=$(while IFS=$'\t' read -r name args root options help; do
	printf '%s' "$name"
	tr ' ' '\n' <<<"$options" | tr -d '!' | sort | sed 's/^/ /' | tr -d '\n'
	echo
done <"$WORK/list" | sort)

# The page's source: ".It Cm NAME" in COMMANDS opens a command; its options
# are the ".It Fl" items of the list under it; COMMON OPTIONS are every
# command's. An item is written back in help --list's form.
from_page=$(awk '
	function option(   i, name, letter, value) {
		for (i = 2; i <= NF; i++) {
			if ($i == "Fl" && $(i + 1) ~ /^\\-/) name = "-" substr($(i + 1), 2)
			else if ($i == "Fl") letter = ",-" $(i + 1)
			else if ($i == "Ar") value = "=" $(i + 1)
		}
		return name letter value
	}
	/^\.Sh / { section = substr($0, 5); next }
	/^\.Bl/ { depth++; next }
	/^\.El/ { depth--; next }
	section == "COMMANDS" && depth == 1 && /^\.It Cm / { cmd = $3; cmds[cmd] = 1; next }
	section == "COMMANDS" && depth == 2 && /^\.It Fl / { own[cmd] = own[cmd] " " option(); next }
	section == "COMMON OPTIONS" && /^\.It Fl / { common = common " " option() }
	END { for (c in cmds) print c "\t" own[c] common }
' "$MAN8" | while IFS=$'\t' read -r name options; do
	printf '%s' "$name"
	tr ' ' '\n' <<<"$options" | sed '/^$/d' | sort | sed 's/^/ /' | tr -d '\n'
	echo
done | sort)
[ "$(wc -l <<<"$from_list")" -ge 10 ] && ok "help --list lists $(wc -l <<<"$from_list") commands" ||
	not_ok "help --list lists too few commands: $from_list"
same "floodgate(8) has every command and option of help --list, and no other" \
	"$from_list" "$from_page"

# --- floodgate(8): ENVIRONMENT has every variable floodgate reads -------------
# getenv("NAME") in user/, or a NAME_ENV "NAME" macro it reads through; the
# FG_TEST_ ones are the tests' fault injection, not the user's.
from_code=$(grep -rhoE 'getenv\("[A-Z_]+"\)|_ENV[[:space:]]+"[A-Z_]+"' "$REPO/user" |
	grep -oE '"[A-Z_]+"' | tr -d '"' | grep -v '^FG_TEST_' | sort -u)
from_env=$(awk '/^\.Sh / { env = ($0 == ".Sh ENVIRONMENT"); next }
	env && /^\.It Ev / { print $3 }' "$MAN8" | sort -u)
[ -n "$from_code" ] || not_ok "no getenv() found under $REPO/user"
same "floodgate(8) ENVIRONMENT lists every variable user/ reads (but FG_TEST_*)" \
	"$from_code" "$from_env"

# --- floodgate.conf(5): keys per section --------------------------------------
# The sections the parser knows: before the first one, and those its
# "unknown section" message names.
printf '[zz-unknown]\n' >"$WORK/section.conf"
chmod 600 "$WORK/section.conf"
sections=$("$FLOODGATE" check -c "$WORK/section.conf" 2>&1 |
	sed -n 's/.*(expected \(.*\))$/\1/p' | sed 's/, / /g; s/ or / /; s/\[policy NAME\]/[policy NAME]/' |
	grep -o '\[[^]]*\]')
[ "$(wc -l <<<"$sections")" -ge 4 ] && ok "the parser names $(wc -l <<<"$sections") sections" ||
	not_ok "no sections in the parser's message: $sections"

# keys_of_parser HEADER: the keys the parser expects after HEADER ("" for
# the global ones), from its message about an unknown key there.
keys_of_parser() {
	printf '%s\nzz_unknown = 1\n' "${1/NAME/p}" >"$WORK/key.conf"
	chmod 600 "$WORK/key.conf"
	"$FLOODGATE" check -c "$WORK/key.conf" 2>&1 |
		sed -n 's/.*(expected one of: \([^;)]*\).*/\1/p' | tr -d ',' | tr ' ' '\n' | sort
}

# keys_of_page HEADER: the ".It Ic" keys under the .Ss heading that names
# HEADER ("" for the one without brackets: the global keys).
keys_of_page() {
	awk -v want="$1" '
		/^\.Sh / { in_keys = ($0 == ".Sh KEYS"); heading = ""; next }
		in_keys && /^\.Ss / {
			heading = substr($0, 5)
			mine = (want == "" ? heading !~ /\[/ : index(heading, want) > 0)
			next
		}
		in_keys && mine && /^\.It Ic / { print $3 }
	' "$MAN5" | sort
}

for header in "" $(tr ' ' '_' <<<"$sections"); do
	header=${header//_/ }
	want=$(keys_of_parser "$header")
	got=$(keys_of_page "$header")
	[ -n "$want" ] || not_ok "no keys from the parser for '${header:-global}'"
	same "floodgate.conf(5) has every key of ${header:-the global section}, and no other" \
		"$want" "$got"
done

# --- floodgate.conf(5): its EXAMPLES are configs `check` accepts ---------------
# Each literal block (.Bd -literal ... .Ed) of EXAMPLES, as a file of its own.
rm -f "$WORK"/example-*.conf
awk -v dir="$WORK" '
	/^\.Sh / { ex = ($0 == ".Sh EXAMPLES"); next }
	ex && /^\.Bd -literal/ { n++; file = sprintf("%s/example-%d.conf", dir, n); next }
	ex && /^\.Ed/ { file = ""; next }
	ex && file != "" { print > file }
' "$MAN5"
examples=$(ls "$WORK"/example-*.conf 2>/dev/null)
[ -n "$examples" ] || not_ok "floodgate.conf(5) has no example config"
for f in $examples; do
	chmod 600 "$f"
	out=$("$FLOODGATE" check -c "$f" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && ok "floodgate.conf(5) example $(basename "$f"): check accepts it" ||
		not_ok "floodgate.conf(5) example $(basename "$f"): check exits $rc: $out"
done

# --- floodgate.conf(5): a default for every key, or "Required." ----------------
# A key left without a default (its item says "Required.", or a bare
# "Default: none (...)") must be one DESCRIPTION names as required, in the
# first parenthesis after "required"; every other key says what applies
# when it is not given.
no_default=$(awk '
	/^\.Sh / { in_keys = ($0 == ".Sh KEYS"); next }
	in_keys && /^\.It Ic / { key = $3; after_default = 0; next }
	in_keys && key != "" && /^Required\.$/ { print key }
	in_keys && key != "" && /^Default: none \(/ { print key }
	in_keys && key != "" && after_default && /^none \(/ { print key }
	in_keys { after_default = ($0 == "Default:") }
' "$MAN5" | sort -u)
named_required=$(awk '
	/^\.Sh / { in_desc = ($0 == ".Sh DESCRIPTION"); next }
	in_desc && /required/ { seen = 1 }
	in_desc && seen && /^\.Po/ { inside = 1; next }
	in_desc && inside && /^\.Pc/ { exit }
	in_desc && inside && /^\.Ic / { print $2 }
' "$MAN5" | sort -u)
[ -n "$named_required" ] || not_ok "floodgate.conf(5): DESCRIPTION names no required key"
same "floodgate.conf(5): the keys without a default are the required ones DESCRIPTION names" \
	"$named_required" "$no_default"

finish
