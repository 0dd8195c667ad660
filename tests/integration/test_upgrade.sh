#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Upgrades across map layouts, with two builds: build/floodgate and
# build/layout-b/floodgate, whose `bans` value is padded (FG_TEST_LAYOUT_PAD;
# `make tests` builds both). While one source floods, `load` with the other
# build takes over: the source stays limited across the switch (admissions
# within burst + rate x elapsed: its bucket is shared, not reset, and no
# moment is unprotected), the ban survives, the counters are carried by
# policy name, and the pins become the new build's. Then back again, at tc.
# Then the upgrade from the layout before sources4, which splits its
# `sources` table: FG_PRE_SOURCES4 (default build/pre-sources4/floodgate,
# which `make tests` builds from git history; set empty to leave it out).
# Then the upgrade from the layout before max_bans, with a larger `bans`:
# FG_PRE_MAXBANS (default build/pre-maxbans/floodgate, the same way).
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
FLOOD_PID=
trap '[ -n "$FLOOD_PID" ] && kill "$FLOOD_PID" 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
FG_A=$FLOODGATE
FG_B=$(dirname "$FLOODGATE")/layout-b/floodgate
if [ ! -x "$FG_B" ]; then
	echo "test_upgrade: $FG_B is missing (make tests builds it)"
	exit 1
fi

RATE=10
BURST=1000
cat >"$WORK/up.conf" <<CONF
[policy flood]
match = udp dport 9
rate  = $RATE/s
burst = $BURST
CONF

# ban_expiry_kept BINARY BANNED_AT: whether 10.9.9.9's 10-minute ban by hand,
# placed at BANNED_AT (date +%s.%N), is still there with the expiry it was
# given: its time left is 600 s less what has elapsed since (1 s for the
# reads), however long the loads in between took (minutes under emulation).
ban_expiry_kept() {
	local left
	left=$("$1" bans fgA | awk '$1 == "10.9.9.9/32" && $3 == 1 && /\(by hand\)/ { sub(/s$/, "", $2); print $2 }')
	[ -n "$left" ] && python3 -c "import sys, time
left, at = float(sys.argv[1]), float(sys.argv[2])
elapsed = time.time() - at
if not 600 - elapsed - 1 <= left <= 600:
    sys.exit('    10.9.9.9: %.1f s left of 600, %.1f s after the ban' % (left, elapsed))" "$left" "$2"
}

prog_id() {
	bpftool -j net show dev fgA | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]
ids = [p["id"] for p in d["xdp"]] + [p["id"] for p in d["tc"]]
print(ids[0] if ids else 0)'
}

lab_up
count_sources 10.0.0.1
expect_exit 0 "load with build A" "$FG_A" load fgA -c "$WORK/up.conf"
banned_at=$(date +%s.%N)
expect_exit 0 "ban 10.9.9.9 for 10 minutes" "$FG_A" ban fgA 10.9.9.9 --for 10m
expect_exit 1 "build B cannot read A's pins (status)" "$FG_B" status fgA
old_id=$(prog_id)

# Long enough to outlast build B's load; the emulated 6.1 guest, where that
# load verifies two objects slowly, sets a longer FG_UPGRADE_FLOOD_SECS.
FLOOD_SECS=${FG_UPGRADE_FLOOD_SECS:-8}
start=$(date +%s.%N)
flood --dst 10.200.0.1 --src 10.0.0.1 --rate 20000 --duration "$FLOOD_SECS" >/dev/null &
FLOOD_PID=$!
# Past the burst, the bucket is empty: a reset would hand out a new one.
wait_until 5 test "$(received 0)" -ge "$BURST"
expect_exit 0 "load with build B takes over mid-flood" "$FG_B" load fgA -c "$WORK/up.conf"
echo "    $LAST_ERR"
check "  ... saying what was shared and converted" \
	grep -q "upgraded from map layout .*shared: sources4, sources,.*known4[^;]*; converted: .*1 bans" <<<"$LAST_ERR"
# A switch after the flood would prove nothing: a reset bucket would
# admit another burst only while the flood lasts.
check "  ... while the flood was still running" kill -0 "$FLOOD_PID"
wait "$FLOOD_PID"
FLOOD_PID=
end=$(date +%s.%N)
admitted=$(received 0)
limit=$(python3 -c "import math; print(math.floor($BURST + $RATE * ($end - $start)))")
echo "    admitted $admitted of a $FLOOD_SECS s flood at 20000/s; burst + rate x elapsed = $limit"
check "the source stayed limited across the switch" test "$admitted" -le "$limit"
check "  ... after its whole burst" test "$admitted" -ge "$BURST"

new_id=$(prog_id)
check "a new program ($new_id) replaced the old ($old_id)" \
	bash -c "[ '$new_id' -ne 0 ] && [ '$new_id' -ne '$old_id' ]"
expect_exit 0 "build B reads the pins now (status)" "$FG_B" status fgA
expect_exit 1 "  ... and build A no longer can" "$FG_A" status fgA
check "the ban survived with its expiry" ban_expiry_kept "$FG_B" "$banned_at"
passed=$("$FG_B" stats fgA --json | python3 -c \
	'import json,sys; print([p for p in json.load(sys.stdin)["policies"] if p["name"] == "flood"][0]["passed_packets"])')
check "the policy's counters were carried ($passed passed)" test "$passed" -ge "$BURST"
check "no staging or retired folder is left" \
	bash -c "! ls -A /sys/fs/bpf/floodgate | grep -q ':'"

# Back to build A, at tc this time.
expect_exit 0 "upgrade back to build A" "$FG_A" load fgA -c "$WORK/up.conf"
check "  ... the ban is still there" bash -c "'$FG_A' bans fgA | grep -q '^10.9.9.9/32'"
expect_exit 0 "unload" "$FG_A" unload fgA
expect_exit 0 "load at tc with build A" "$FG_A" load fgA -c "$WORK/up.conf" --hook tc
old_id=$(prog_id)
expect_exit 0 "build B takes over at tc" "$FG_B" load fgA -c "$WORK/up.conf"
new_id=$(prog_id)
check "  ... the tc filter's program was replaced in place ($old_id -> $new_id)" \
	bash -c "[ '$new_id' -ne 0 ] && [ '$new_id' -ne '$old_id' ] && tc filter show dev fgA ingress | grep -q 'id $new_id'"
expect_exit 0 "unload with build B" "$FG_B" unload fgA
check "  ... leaves nothing attached" bash -c "[ \"\$(bpftool -j net show dev fgA | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(len(d[\"xdp\"]) + len(d[\"tc\"]))')\" = 0 ]"

# From the layout before sources4 (one `sources` for every family), built
# from the last commit before it: its IPv4 state is split into sources4, a
# copy, so the old program's admissions during the copy (a fraction of a
# second here) are the slack of one second at RATE.
PRE_SOURCES4=${FG_PRE_SOURCES4-$(dirname "$FLOODGATE")/pre-sources4/floodgate}
if [ -n "$PRE_SOURCES4" ] && [ ! -x "$PRE_SOURCES4" ]; then
	check "the build before sources4 exists ($PRE_SOURCES4: make tests builds it from git history)" \
		false
elif [ -n "$PRE_SOURCES4" ]; then
	FG_PRE_SOURCES4=$PRE_SOURCES4
	expect_exit 0 "load with the build before sources4" "$FG_PRE_SOURCES4" load fgA \
		-c "$WORK/up.conf"
	expect_exit 1 "this build's status over those pins" "$FG_A" status fgA
	check "  ... says a load or reload upgrades them in place" \
		grep -q "another map layout.*upgrades it in place" <<<"$LAST_ERR"
	base=$(received 0)
	start=$(date +%s.%N)
	flood --dst 10.200.0.1 --src 10.0.0.1 --rate 20000 --duration "$FLOOD_SECS" >/dev/null &
	FLOOD_PID=$!
	past_burst() { [ $(($(received 0) - base)) -ge "$BURST" ]; }
	wait_until 5 past_burst
	expect_exit 0 "build A takes over mid-flood" "$FG_A" load fgA -c "$WORK/up.conf"
	echo "    $LAST_ERR"
	check "  ... splitting the old sources" \
		grep -q "converted: .*[1-9][0-9]* sources (IPv4 keys into sources4).*reset: nothing" \
		<<<"$LAST_ERR"
	# in sources4, or already in known4: it has been known for a while
	check "  ... the flooding source's state is in sources4 or known4" bash -c \
		"bpftool -j map dump pinned /sys/fs/bpf/floodgate/fgA/sources4 | grep -q '\"addr\":\[10,0,0,1\]' ||
		 bpftool -j map dump pinned /sys/fs/bpf/floodgate/fgA/known4 | grep -q '\"addr\":\[10,0,0,1\]'"
	wait "$FLOOD_PID"
	FLOOD_PID=
	end=$(date +%s.%N)
	admitted=$(($(received 0) - base))
	limit=$(python3 -c "import math; print(math.floor($BURST + $RATE * ($end - $start) + $RATE))")
	check "the source stayed limited across the split ($admitted <= $limit)" \
		test "$admitted" -le "$limit"
	expect_exit 0 "unload" "$FG_A" unload fgA
else
	echo "    (FG_PRE_SOURCES4 empty: the upgrade from before sources4 is not run)"
fi

# From the layout before max_bans (main before issue 23: a `bans` trie of
# 65,536 and an 8-byte `ban_count`), built from git history: a load with
# max_bans = 131072 takes over, carrying the bans in force (by hand and a
# policy's) into the larger trie, and recounting the policies' share.
PRE_MAXBANS=${FG_PRE_MAXBANS-$(dirname "$FLOODGATE")/pre-maxbans/floodgate}
if [ -n "$PRE_MAXBANS" ] && [ ! -x "$PRE_MAXBANS" ]; then
	check "the build before max_bans exists ($PRE_MAXBANS: make tests builds it)" false
elif [ -n "$PRE_MAXBANS" ]; then
	cat >"$WORK/ban.conf" <<-CONF
		[policy flood]
		match  = udp dport 9
		rate   = $RATE/s
		burst  = 10
		action = ban 1h
		ban_unverified = yes
	CONF
	{ echo "max_bans = 131072"; cat "$WORK/ban.conf"; } >"$WORK/big.conf"
	expect_exit 0 "load with the build before max_bans" "$PRE_MAXBANS" load fgA -c "$WORK/ban.conf"
	banned_at=$(date +%s.%N)
	expect_exit 0 "  ... ban 10.9.9.9 by hand" "$PRE_MAXBANS" ban fgA 10.9.9.9 --for 10m
	flood --dst 10.200.0.1 --src 10.0.0.7 --count 50 >/dev/null
	check "  ... and the policy banned 10.0.0.7" \
		bash -c "'$PRE_MAXBANS' bans fgA | grep -q '^10.0.0.7/32 .*flood'"
	expect_exit 0 "this build with max_bans = 131072 takes over" "$FG_A" load fgA -c "$WORK/big.conf"
	echo "    $LAST_ERR"
	check "  ... carrying both bans into the larger trie" \
		grep -q "converted: .*2 bans in force (into a table of 131072), the count of policy bans (recounted)" \
		<<<"$LAST_ERR"
	check "  ... a trie of 131,072 now" bash -c \
		"bpftool -j map show pinned /sys/fs/bpf/floodgate/fgA/bans | grep -q '\"max_entries\":131072'"
	check "  ... the ban by hand kept its expiry" ban_expiry_kept "$FG_A" "$banned_at"
	check "  ... the policy's ban too" bash -c "'$FG_A' bans fgA | grep -q '^10.0.0.7/32 .*flood'"
	check "  ... counted in the policies' share (1 of 122880)" bash -c \
		"'$FG_A' status fgA | grep -q 'policies hold 1 of their 122880'"
	count_sources 10.9.9.9 10.0.0.7
	flood --dst 10.200.0.1 --src 10.9.9.9 --count 10 >/dev/null
	flood --dst 10.200.0.1 --src 10.0.0.7 --count 10 >/dev/null
	check "  ... and both still drop on real traffic" \
		test "$(($(received 0) + $(received 1)))" -eq 0
	expect_exit 0 "unload" "$FG_A" unload fgA
else
	echo "    (FG_PRE_MAXBANS empty: the upgrade from before max_bans is not run)"
fi
finish
