#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# max_bans: a bans table of 131,072 holds 100,000 bans from outside the
# datapath, every one of them enforced on real traffic; a full table
# refuses `floodgate ban` (exit 5) and a policy's ban, and counts both;
# `status` shows the table, its occupancy and the policies' share; a
# reload with another max_bans resizes the table through the in-place
# upgrade, carrying the bans, or is refused when they would not fit.
# (The policies' share itself is tested in test_prog, test_max_bans_*.)
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
BANS=/sys/fs/bpf/floodgate/fgA/bans
write_conf() {
	cat >"$WORK/$1.conf" <<-CONF
		max_bans = $1
		[policy flood]
		match  = udp dport 7
		rate   = 1/s
		burst  = 10
		action = ban 1h
		ban_unverified = yes
	CONF
}
write_conf 131072
write_conf 65536
write_conf 262144

# put_bans FIRST N: N bans by hand (/32, until unbanned) of FIRST (an IPv4
# address) and the N-1 addresses after it, straight into the trie with one
# `bpftool batch` (struct fg_src_lpm_key -> struct fg_ban, little endian).
put_bans() {
	python3 - "$1" "$2" "$BANS" >"$WORK/batch" <<-'PY'
		import ipaddress, struct, sys
		first, n, path = int(ipaddress.IPv4Address(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
		value = struct.pack("<QQIIBB6x", 2**64 - 1, 0, 1, 0, 4, 32).hex(" ")
		for i in range(n):
		    key = struct.pack("<IBBH16s", 64, 0, 4, 0, (first + i).to_bytes(4, "big")).hex(" ")
		    print(f"map update pinned {path} key hex {key} value hex {value}")
	PY
	bpftool batch file "$WORK/batch" >/dev/null
}

global_stat() {
	json_get "$("$FLOODGATE" stats fgA --json)" "d['global']['$1']"
}

status_json() {
	json_get "$("$FLOODGATE" status fgA --json)" "$1"
}

lab_up
expect_exit 0 "load with max_bans = 131072" "$FLOODGATE" load fgA -c "$WORK/131072.conf"
check "the bans trie has 131,072 entries" \
	bash -c "bpftool -j map show pinned $BANS | grep -q '\"max_entries\":131072'"

start=$(date +%s.%N)
put_bans 172.16.0.0 100000
end=$(date +%s.%N)
echo "    100,000 bans put with bpftool batch in $(python3 -c "print(round($end - $start, 2))") s"
# bpftool skipped runtime's bans_may_exist: a reload sets it (docs/json.md, "Bans
# need evidence"), as the datapath would otherwise skip the trie.
expect_exit 0 "reload after bans written with bpftool (sets bans_may_exist)" \
	"$FLOODGATE" reload fgA -c "$WORK/131072.conf"
status=$("$FLOODGATE" status fgA)
grep -E '^  (bans|ban share)' <<<"$status" | sed 's/^/    /'
check "status: 100000 of 131072 bans in use" \
	grep -qE '^  bans: +100000 of 131072 entries in use' <<<"$status"
check "status: the policies' share is 131072 - 8192" \
	grep -q 'policies hold 0 of their 122880' <<<"$status"

# Every one of the 100,000 sources, once each, on real traffic.
banned_before=$(global_stat banned)
flood --dst 10.200.0.1 --src 172.16.0.0+100000 --count 100000 >"$WORK/flood.json"
sent=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["sent"] - abs(d["tx_dropped"]))' \
	"$WORK/flood.json")
banned=$(($(global_stat banned) - banned_before))
echo "    sent $sent frames from 100,000 sources; $banned dropped as banned"
check "  ... all 100,000 sent" test "$sent" -eq 100000
check "  ... every one dropped by its ban" test "$banned" -eq 100000
count_sources 172.17.134.160 10.0.5.1
flood --dst 10.200.0.1 --src 172.17.134.160 --count 10 >/dev/null # the next after the last
flood --dst 10.200.0.1 --src 10.0.5.1 --count 10 >/dev/null
check "an address after the last ban passes" test "$(received 0)" -eq 10
check "  ... and another unbanned one" test "$(received 1)" -eq 10

# Full: the rest by hand, then one more of each kind.
put_bans 172.20.0.0 31072
check "status: the table is full" \
	bash -c "'$FLOODGATE' status fgA | grep -qE '^  bans: +131072 of 131072'"
expect_exit 5 "floodgate ban on a full table: refused" "$FLOODGATE" ban fgA 198.51.100.7
echo "    $LAST_ERR"
check "  ... saying the table is full, its size, and what to do" \
	grep -q "the bans table is full (max_bans = 131072, 8192 of them kept.*unban.*raise max_bans" \
	<<<"$LAST_ERR"
check "  ... and not banned" bash -c "! '$FLOODGATE' bans fgA | grep -q '^198.51.100.7/32'"
check "  ... counted (status --json: bans_refused_full = 1)" \
	test "$(status_json 'd["interfaces"][0]["bans_refused_full"]')" -eq 1
flood --dst 10.200.0.1 --src 10.0.6.1 --dport 7 --count 20 >/dev/null
check "a policy's ban on a full table: counted as ban_insert_failed" \
	test "$(global_stat ban_insert_failed)" -ge 1
check "  ... and none added" test "$(global_stat bans_added)" -eq 0

# reload with a smaller max_bans: the bans would not fit; refused.
expect_exit 1 "reload with max_bans = 65536 under 131,072 bans: refused" \
	"$FLOODGATE" reload fgA -c "$WORK/65536.conf"
echo "    $LAST_ERR" | head -3
check "  ... saying the bans in force do not fit" \
	grep -q "max_bans = 65536 holds fewer than the bans in force" <<<"$LAST_ERR"
check "  ... the running table untouched" \
	bash -c "bpftool -j map show pinned $BANS | grep -q '\"max_entries\":131072'"

# reload with a larger one: resized in place, every ban carried.
start=$(date +%s.%N)
expect_exit 0 "reload with max_bans = 262144: resized through the upgrade" \
	"$FLOODGATE" reload fgA -c "$WORK/262144.conf"
end=$(date +%s.%N)
echo "    $LAST_ERR"
echo "    the reload took $(python3 -c "print(round($end - $start, 2))") s"
check "  ... saying the bans were carried" \
	grep -q "converted: .*131072 bans in force (into a table of 262144)" <<<"$LAST_ERR"
check "status: 131072 of 262144" \
	bash -c "'$FLOODGATE' status fgA | grep -qE '^  bans: +131072 of 262144'"
expect_exit 0 "floodgate ban fits now" "$FLOODGATE" ban fgA 198.51.100.7
banned_before=$(global_stat banned)
flood --dst 10.200.0.1 --src 172.16.0.0+100000 --count 100000 >/dev/null
check "the 100,000 bans still hold after the resize" \
	test "$(($(global_stat banned) - banned_before))" -eq 100000
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
