#!/usr/bin/env bash
# scripts/check-layers.py passes on the tree, and fails on a copy of the
# tree with one upward include, and on one with a cycle inside a layer.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHECK=scripts/check-layers.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

python3 "$CHECK" . || fail "the tree itself breaks the layering"

fresh_copy() {
	rm -rf "$work/tree"
	mkdir -p "$work/tree"
	cp -r user "$work/tree/user"
}

# An upward include: the base layer calling the CLI.
fresh_copy
sed -i '0,/#include "base\/err.h"/s//#include "cli\/exit.h"/' "$work/tree/user/base/err.c"
grep -q '"cli/exit.h"' "$work/tree/user/base/err.c" || fail "could not plant the upward include"
if out=$(python3 "$CHECK" "$work/tree"); then
	fail "an upward include (base -> cli) passed"
fi
grep -q 'user/base/err.c:.*base includes cli/exit.h' <<<"$out" || fail "no FILE:LINE for the upward include: $out"

# A cycle within one layer, through .c files only (as the old circle ran):
# maps/batch.c includes maps/loaded.h and maps/loaded.c includes maps/batch.h.
fresh_copy
sed -i '0,/#include "maps\/batch.h"/s//#include "maps\/batch.h"\n#include "maps\/loaded.h"/' "$work/tree/user/maps/batch.c"
sed -i '0,/#include "maps\/loaded.h"/s//#include "maps\/loaded.h"\n#include "maps\/batch.h"/' "$work/tree/user/maps/loaded.c"
if out=$(python3 "$CHECK" "$work/tree"); then
	fail "a cycle maps/batch <-> maps/loaded passed"
fi
grep -q 'circle: .*maps/batch' <<<"$out" || fail "the cycle was not named: $out"

# A write to stdout, and an exit code, below the CLI layer.
fresh_copy
printf 'int fg_planted(void)\n{\n\tprintf("x");\n\treturn FG_EXIT_OK;\n}\n' >>"$work/tree/user/maps/batch.c"
if out=$(python3 "$CHECK" "$work/tree"); then
	fail "printf and FG_EXIT_OK in maps/ passed"
fi
grep -q 'user/maps/batch.c:[0-9]*: printf' <<<"$out" || fail "the stdout write was not named: $out"
grep -q 'user/maps/batch.c:[0-9]*: FG_EXIT_OK' <<<"$out" || fail "the exit code was not named: $out"
# ... but the same words in a comment or a string are no use of them.
fresh_copy
printf '/* printf FG_EXIT_OK stdout */\nconst char *fg_planted = "printf(stdout)";\n' >>"$work/tree/user/maps/batch.c"
python3 "$CHECK" "$work/tree" >/dev/null || fail "a comment or string naming printf was reported"

# A file outside any layer folder.
fresh_copy
echo 'int x;' >"$work/tree/user/stray.c"
set +e
python3 "$CHECK" "$work/tree" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a file outside the layer folders exited $rc, not 2"
echo "check-layers: the tree passes; an upward include, a cycle, stdout or an exit code below the CLI, and a stray file fail"
