#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# floodgate beside another XDP program on one interface, through libxdp's
# multiprog dispatcher. The other program is build/baseline.bpf.o, loaded
# with xdp-loader (xdp-tools). Checks, in both load orders, that `status`
# says floodgate shares the interface through the dispatcher, that unloading
# either program leaves the other attached, and that nothing is left after.
#
# Needs a kernel that allows BPF_PROG_TYPE_EXT: `make test-kernels` runs it
# on Debian's 6.1. Where the kernel refuses EXT it exits 77 (skipped).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
OTHER_OBJ=$REPO/build/baseline.bpf.o

# id_of NAME: the id xdp-loader shows for the program NAME on fgA, or nothing.
id_of() {
	xdp-loader status fgA 2>/dev/null | awk -v name="$1" '$0 ~ name { print $4; exit }'
}

status_says() {
	"$FLOODGATE" status fgA | grep -q "$1"
}

no_xdp_left() {
	! ip link show fgA | grep -q xdp
}

lab_up
xdp-loader load -m native fgA "$OTHER_OBJ" 2>&1
if [ -z "$(id_of xdp_dispatcher)" ]; then
	echo "SKIP: libxdp's dispatcher does not load on $(uname -r) (needs BPF_PROG_TYPE_EXT)"
	exit 77
fi

echo "# the other program first, then floodgate"
expect_exit 0 "floodgate load beside xdp-loader's program" "$FLOODGATE" load fgA
check "status: attached" status_says "program id $(id_of fg_xdp), attached"
check "status: shares through the dispatcher" \
	status_says "xdp: *through libxdp's dispatcher, beside 1 other program"
other=$(id_of baseline_drop)
expect_exit 0 "floodgate unload" "$FLOODGATE" unload fgA
check "  ... removes floodgate's program" test -z "$(id_of fg_xdp)"
check "  ... leaves the other one, same id ($other)" test "$(id_of baseline_drop)" = "$other"
expect_exit 0 "xdp-loader unloads the other one" xdp-loader unload fgA --all
check "  ... and no XDP is left" no_xdp_left

echo "# floodgate first, then the other program"
expect_exit 0 "floodgate load alone" "$FLOODGATE" load fgA
check "status: through the dispatcher, alone in it" \
	status_says "xdp: *through libxdp's dispatcher, beside 0 other programs"
ours=$(id_of fg_xdp)
expect_exit 0 "xdp-loader loads beside floodgate" xdp-loader load -m native fgA "$OTHER_OBJ"
check "status: beside 1 other program" \
	status_says "xdp: *through libxdp's dispatcher, beside 1 other program"
expect_exit 0 "xdp-loader unloads only its program" xdp-loader unload fgA -i "$(id_of baseline_drop)"
check "  ... floodgate's program stays attached, same id ($ours)" test "$(id_of fg_xdp)" = "$ours"
check "  ... and status still says attached" status_says "program id $ours, attached"
expect_exit 0 "floodgate unload" "$FLOODGATE" unload fgA
check "  ... and no XDP is left" no_xdp_left

finish
