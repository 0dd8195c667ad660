#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate --version`: the Makefile's version, the git revision it was
# built from (when built in a clone), the libbpf and libxdp versions, and
# the kernel's features, each compared with what the system says. No lab.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLOODGATE=${FLOODGATE:-$REPO/build/floodgate}
source "$REPO/tests/integration/assert.sh"

if [ ! -x "$FLOODGATE" ]; then
	echo "test_version: $FLOODGATE is not built; skipped"
	exit 77
fi

# line FIELD: the value after "FIELD: " in $OUT.
line() { sed -n "s/^ *$1: //p" <<<"$OUT"; }
# is DESCRIPTION GOT WANT
is() { [ "$2" = "$3" ] && ok "$1: $2" || not_ok "$1: '$2', expected '$3'"; }

ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT
for words in --version version; do
	OUT=$("$FLOODGATE" $words 2>"$ERR")
	rc=$?
	is "floodgate $words exits" "$rc" 0
	is "  ... and prints nothing on stderr" "$(cat "$ERR")" ""
done

version=$(sed -n 's/^VERSION *:= *//p' "$REPO/Makefile")
is "the first line names the Makefile's version" "$(head -n 1 <<<"$OUT")" "floodgate $version"

# The revision: a commit of this clone, as git describe --always --dirty
# wrote it at build time (the tree may have changed since: only the commit
# is compared).
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	rev=$(line revision)
	commit=${rev%-dirty}
	commit=${commit##*-g}
	if [ -n "$commit" ] && git -C "$REPO" cat-file -e "$commit^{commit}" 2>/dev/null; then
		ok "the revision '$rev' is a commit of this clone"
	else
		not_ok "the revision '$rev' is not a commit of this clone"
	fi
else
	is "no revision line outside a clone" "$(line revision)" ""
fi

libbpf=$(pkg-config --modversion libbpf)
is "libbpf: major.minor of the installed one" "$(line libbpf)" "${libbpf%.*}"
is "libxdp: the one built against" "$(line libxdp)" "$(pkg-config --modversion libxdp) (built against)"
is "kernel: uname -r" "$(line kernel)" "$(uname -r)"

[ -r /sys/kernel/btf/vmlinux ] && btf=yes || btf=no
is "BTF" "$(line 'BTF ([^)]*)')" "$btf"
case $(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null) in
0) jit=no ;; 1 | 2) jit=yes ;; *) jit=unknown ;;
esac
is "BPF JIT" "$(line 'BPF JIT ([^)]*)')" "$jit"
ext=$(line "freplace programs ([^)]*)")
if [ "$(id -u)" -eq 0 ]; then
	grep -Eq '^(yes|no)$' <<<"$ext" && ok "freplace probed as root: $ext" ||
		not_ok "freplace as root: '$ext', expected yes or no"
	OUT=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FLOODGATE" --version 2>&1)
	is "  ... and not probed without root" "$(line 'freplace programs ([^)]*)')" \
		"not probed (the probe needs root)"
fi

finish
