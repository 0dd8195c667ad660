#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The docs hold together: every relative link in README.md and docs/*.md
# names a file that exists and a heading that is there
# (scripts/check-docs.py), the README stays at most 300 lines, and every test
# file opens with the comment that is its only description
# (scripts/test-index.sh). Each check is shown failing on a planted fault: a
# link to a missing file, to a missing heading, a README of 301 lines, a
# test file without its comment. The exit codes in README.md and docs/cli.md
# are exit.h's, the requirements ask for root as main.c does, the README
# puts make install's files under PREFIX, and a
# reference to a README heading by name names one it has.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
planted=tests/integration/test_zz_planted_no_comment.sh
trap 'rm -rf "$work"; rm -f "$planted"' EXIT
passed=0
failed=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
not_ok() { echo "FAIL - $1"; failed=$((failed + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

out=$(python3 scripts/check-docs.py . 2>&1) && rc=0 || rc=$?
[ -z "$out" ] || echo "$out" | sed 's/^/    /'
check "every link in README.md and docs/ resolves, README ≤ 300 lines" test "$rc" -eq 0
check "README.md has $(wc -l <README.md) lines" test "$(wc -l <README.md)" -le 300
check "the README links to docs/ (at least 10 pages)" \
	test "$(grep -o '](docs/[a-z0-9-]*\.md' README.md | sort -u | wc -l)" -ge 10

# A copy of the docs to break, one fault at a time.
copy() {
	rm -rf "$work/repo"
	mkdir -p "$work/repo"
	cp -r README.md docs "$work/repo/"
}
# fails_with PATTERN: check-docs.py on the copy exits 1 naming PATTERN.
fails_with() {
	local out rc=0
	out=$(python3 scripts/check-docs.py "$work/repo" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -q -- "$1" <<<"$out"
}
copy
echo 'See [nothing](docs/no-such-page.md).' >>"$work/repo/README.md"
check "a link to a missing file fails, with its line" fails_with "README.md:$(wc -l <"$work/repo/README.md"): docs/no-such-page.md: no such file"
copy
echo 'See [the CLI](cli.md#no-such-heading).' >>"$work/repo/docs/install.md"
check "a link to a missing heading fails" fails_with "docs/install.md:.*no heading #no-such-heading"
copy
echo 'See [the CLI](cli.md#exit-codes).' >>"$work/repo/docs/install.md"
check "  ... and the same link to a heading that is there passes" python3 scripts/check-docs.py "$work/repo"
copy
while [ "$(wc -l <"$work/repo/README.md")" -lt 301 ]; do echo >>"$work/repo/README.md"; done
check "a README of 301 lines fails" fails_with "301 lines, more than 300"

# The exit codes the docs describe are those user/cli/exit.h declares.
codes=$(grep -o '^\s*X([A-Z]*, [0-9]*' user/cli/exit.h | grep -o '[0-9]*$' | sort -n | tr '\n' ' ')
cli_codes=$(sed -n '/^## Exit codes/,/^## [^E]/p' docs/cli.md | grep -o '^| [0-9]* |' | tr -dc '0-9\n' | sort -n | tr '\n' ' ')
readme_codes=$(sed -n '/^Exit codes:/,/^$/p' README.md | grep -o '\b[0-9]\b [a-z]' | grep -o '^[0-9]' | sort -n | tr '\n' ' ')
check "docs/cli.md's exit codes ($cli_codes) are exit.h's ($codes)" test -n "$codes" -a "$cli_codes" = "$codes"
check "the README's exit codes ($readme_codes) are exit.h's" test "$readme_codes" = "$codes"

# A reference to a README heading by its name (README then the quoted
# heading, with or without a comma), in any file
# of the tree (the shipped rules and fail2ban action among them) names a
# heading the README still has: the manual moved to docs/.
stale=$(git ls-files -z | xargs -0 grep -nHoE 'README,? "[^"]*' 2>/dev/null |
	while IFS= read -r ref; do
		heading=${ref#*\"}
		grep -qE "^#+ $(sed 's/[][\.*^$/]/\\&/g' <<<"$heading")" README.md || echo "$ref"
	done || true)
check "every README \"Heading\" reference names a heading of README.md${stale:+: $stale}" test -z "$stale"

# Where `make install` puts the dashboard and rules: PREFIX/share/floodgate,
# PREFIX being the Makefile's default, not the package's /usr.
prefix=$(sed -n 's/^PREFIX[[:space:]]*?=[[:space:]]*//p' Makefile)
misplaced=$(grep -n 'share/floodgate' README.md | grep -vF -e 'PREFIX/share/floodgate' -e "$prefix/share/floodgate" || true)
check "README.md names make install's share/floodgate under PREFIX ($prefix)${misplaced:+: $misplaced}" \
	test -n "$prefix" -a -z "$misplaced"

# Who may run floodgate: main.c refuses every command but check, help and
# --version unless geteuid() is 0 (base/util.h fg_is_root), whatever the
# capabilities; the requirements must not offer capabilities instead.
grep -q 'geteuid() == 0' user/base/util.h && grep -q 'cmd->root && !fg_is_root()' user/cli/main.c
check "  (the CLI still refuses every non-root caller: fg_is_root is geteuid() == 0)" test $? -eq 0
offered=$(grep -nE '[Rr]oot,? or `?CAP_' README.md docs/install.md || true)
check "README.md and docs/install.md ask for root, not root or capabilities${offered:+: $offered}" \
	test -z "$offered"

out=$(scripts/test-index.sh --missing 2>&1) && rc=0 || rc=$?
[ -z "$out" ] || echo "$out" | sed 's/^/    /'
check "every test file opens with a comment saying what it proves" test "$rc" -eq 0
files=$(ls tests/unit/test_*.c tests/prog/*.c tests/scripts/test_*.sh tests/integration/test_*.sh \
	tests/kernels/test_*.sh 2>/dev/null | grep -cv 'tests/prog/\(fixtures\|main\)\.c$')
check "the index has one entry per test file ($files)" \
	test "$(scripts/test-index.sh | grep -c '^tests/')" -eq "$files"
printf '#!/usr/bin/env bash\nsource lib.sh\n' >"$planted"
out=$(scripts/test-index.sh --missing 2>&1) && rc=0 || rc=$?
rm -f "$planted"
check "a test file without its comment fails the index" \
	test "$rc" -eq 1 -a "$out" = "$planted: no opening comment saying what it proves"

echo "test_docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
