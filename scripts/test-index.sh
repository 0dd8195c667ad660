#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the index of the tests: each test file's path and its opening
# comment, which says what it proves. The comments are the only description
# of the tests (docs/testing.md); nothing lists them by hand.
# Usage: scripts/test-index.sh [--missing]
#   --missing  prints only the files without an opening comment, and exits
#              1 if there is one (tests/scripts/test_docs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# opening_comment FILE: the comment after the shebang and SPDX lines, its
# markers stripped; empty when the file opens with code.
opening_comment() {
	awk '
	NR == 1 && /^#!/ { next }
	/SPDX-License-Identifier/ && !started { next }
	!started && /^#/ { shell = 1 }
	!started && /^\/\*/ { c = 1 }
	!started && !shell && !c { exit }
	{ started = 1 }
	shell { if (!/^#/) exit; sub(/^# ?/, ""); print; next }
	c {
		end = /\*\//
		sub(/^ *\*\/$/, ""); sub(/ ?\*\/$/, ""); sub(/^\/\* ?/, ""); sub(/^ \* ?/, "")
		if ($0 != "") print
		if (end) exit
	}' "$1"
}

missing=0
for f in tests/unit/test_*.c tests/prog/*.c tests/scripts/test_*.sh \
	tests/integration/test_*.sh tests/kernels/test_*.sh; do
	[ -e "$f" ] || continue
	case "$f" in tests/prog/fixtures.c | tests/prog/main.c) continue ;; esac
	text=$(opening_comment "$f")
	if [ "${1:-}" = --missing ]; then
		[ -n "$text" ] || { echo "$f: no opening comment saying what it proves"; missing=1; }
		continue
	fi
	echo "$f"
	sed 's/^/    /' <<<"$text"
	echo
done
exit $missing
