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

source "$(dirname "${BASH_SOURCE[0]}")/assert.sh"

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
