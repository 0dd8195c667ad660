#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Bans through the real CLI with real traffic, IPv4 and IPv6: by hand with
# ban/unban/bans, and by a policy with action = ban. Escalation is tested
# with an injected clock in test_prog.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
cat >"$WORK/ban.conf" <<'CONF'
[allow]
src = 10.0.9.0/24, 2001:db8:9::/48
[deny]
src = 10.0.8.0/24, 2001:db8:8::/48

[policy flood]
match  = udp dport 9
per    = src/32 src/64
rate   = 1/s
burst  = 10
action = ban 1h
# UDP: no evidence the source can receive (test_ban_evidence.sh)
ban_unverified = yes
CONF

lab_up
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/ban.conf"

# flood_100 SRC DST: sends 100 frames, and checks that all 100 left the
# generator: a "nothing passed" check must not pass because nothing was sent.
flood_100() {
	local out
	out=$(flood --dst "$2" --src "$1" --count 100)
	check "  (100 frames sent from $1)" \
		test "$(json_get "$out" 'd["sent"] - abs(d["tx_dropped"])')" -eq 100
}

# time_left_near BANS PREFIX SECONDS: the time left that `bans` prints for
# PREFIX lies within 60 s below SECONDS (the test's own run time), not
# merely "some number followed by s" (0.0s would be a ban about to lapse).
time_left_near() {
	local left
	left=$(sed -n "s|^${2//./\\.} \+\([0-9.]*\)s .*|\1|p" <<<"$1")
	[ -n "$left" ] && python3 -c "import sys; sys.exit(0 if $3 - 60 < $left <= $3 else 1)"
}

# --- by hand --------------------------------------------------------------
count_sources 10.0.5.1 2001:db8:5::1 10.0.7.1 2001:db8:7::1
expect_exit 0 "ban an IPv4 /24 by hand" "$FLOODGATE" ban fgA 10.0.5.0/24 --for 1h
expect_exit 0 "ban an IPv6 /48 until unbanned" "$FLOODGATE" ban fgA 2001:db8:5::/48
flood_100 10.0.5.1 10.200.0.1
flood_100 2001:db8:5::1 fd00:200::1
check "banned IPv4 source: nothing passes" test "$(received 0)" -eq 0
check "banned IPv6 source: nothing passes" test "$(received 1)" -eq 0
bans=$("$FLOODGATE" bans fgA)
echo "$bans" | sed 's/^/    /'
check "bans lists the IPv4 ban with its time left" \
	grep -qE '^10\.0\.5\.0/24 +[0-9.]+s +1 +\(by hand\)' <<<"$bans"
check "  ... with about 1h left" time_left_near "$bans" 10.0.5.0/24 3600
check "bans lists the IPv6 ban" grep -qE '^2001:db8:5::/48 +until unbanned' <<<"$bans"
check "stats count the banned packets" test \
	"$("$FLOODGATE" stats fgA --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["global"]["banned"])')" -eq 200

expect_exit 0 "unban the IPv4 /24" "$FLOODGATE" unban fgA 10.0.5.0/24
expect_exit 0 "unban the IPv6 /48" "$FLOODGATE" unban fgA 2001:db8:5::/48
flood_100 10.0.5.1 10.200.0.1
flood_100 2001:db8:5::1 fd00:200::1
check "unbanned IPv4 source: the burst passes again" test "$(received 0)" -eq 10
check "unbanned IPv6 source: the burst passes again" test "$(received 1)" -eq 10

# --- an expired record under an active, shorter ban -----------------------
# The expired /32 is kept to escalate a repeat ban; it must not hide the /24.
count_sources 10.0.4.1 10.0.4.2
expect_exit 0 "ban 10.0.4.1 for 1s" "$FLOODGATE" ban fgA 10.0.4.1 --for 1s
check "the /32 ban expires" wait_until 5 bash -c \
	"'$FLOODGATE' bans fgA | grep -qE '^10\.0\.4\.1/32 +expired'"
expect_exit 0 "ban its /24 for 10m" "$FLOODGATE" ban fgA 10.0.4.0/24 --for 10m
flood_100 10.0.4.1 10.200.0.1
flood_100 10.0.4.2 10.200.0.1
check "the address with an expired record is dropped by the /24" test "$(received 0)" -eq 0
check "its neighbour in the /24 is dropped" test "$(received 1)" -eq 0
expect_exit 0 "unban the /24" "$FLOODGATE" unban fgA 10.0.4.0/24
count_sources 10.0.5.1 2001:db8:5::1 10.0.7.1 2001:db8:7::1

# policy_bans: what the datapath's count of policy bans (`ban_count`) says.
policy_bans() {
	bpftool -j map dump pinned /sys/fs/bpf/floodgate/fgA/ban_count |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["formatted"]["value"]["policy_bans"])'
}

# --- by the policy --------------------------------------------------------
flood_100 10.0.7.1 10.200.0.1
flood_100 2001:db8:7::1 fd00:200::1
bans=$("$FLOODGATE" bans fgA)
echo "$bans" | sed 's/^/    /'
check "action = ban bans the IPv4 offender" \
	grep -qE '^10\.0\.7\.1/32 +[0-9.]+s +1 +flood' <<<"$bans"
check "action = ban bans the IPv6 offender's /64" \
	grep -qE '^2001:db8:7::/64 +[0-9.]+s +1 +flood' <<<"$bans"
check "  ... for about the policy's 1h" time_left_near "$bans" 10.0.7.1/32 3600
check "  ... the /64 too" time_left_near "$bans" 2001:db8:7::/64 3600
check "the offenders kept only their burst" \
	test "$(received 2)" -eq 10 -a "$(received 3)" -eq 10
# 10.0.5.1/32 and 2001:db8:5::/64 (refused after their unban above), and
# the two offenders here.
check "the policies' share counts their 4 bans" test "$(policy_bans)" -eq 4
# A ban the policy made can be lifted by hand like any other.
expect_exit 0 "unban the policy-made IPv4 ban" "$FLOODGATE" unban fgA 10.0.7.1/32
expect_exit 0 "unban the policy-made IPv6 ban" "$FLOODGATE" unban fgA 2001:db8:7::/64
check "  ... and they leave the policies' share" test "$(policy_bans)" -eq 2
check "  ... bans no longer lists them as active" bash -c \
	"! '$FLOODGATE' bans fgA | grep -qE '^(10\.0\.7\.1/32|2001:db8:7::/64) +[0-9.]+s'"
expect_exit 5 "  ... and a second unban finds none" "$FLOODGATE" unban fgA 10.0.7.1/32

# --- [allow] and [deny] ---------------------------------------------------
count_sources 10.0.9.1 2001:db8:9::1 10.0.8.1 2001:db8:8::1
flood_100 10.0.9.1 10.200.0.1
flood_100 2001:db8:9::1 fd00:200::1
flood_100 10.0.8.1 10.200.0.1
flood_100 2001:db8:8::1 fd00:200::1
check "[allow] IPv4 source bypasses the limit" test "$(received 0)" -eq 100
check "[allow] IPv6 source bypasses the limit" test "$(received 1)" -eq 100
check "[deny] IPv4 source is dropped" test "$(received 2)" -eq 0
check "[deny] IPv6 source is dropped" test "$(received 3)" -eq 0
check "no ban for allowed or denied sources" bash -c \
	"! '$FLOODGATE' bans fgA | grep -q '10.0.9\|10.0.8\|db8:9\|db8:8'"

# --- bad input --------------------------------------------------------------
expect_exit 2 "ban with host bits set" "$FLOODGATE" ban fgA 10.0.0.1/24
expect_exit 2 "ban with a bad duration" "$FLOODGATE" ban fgA 10.0.0.1 --for 5y
expect_exit 5 "unban what is not banned" "$FLOODGATE" unban fgA 10.9.9.9
expect_exit 5 "bans where floodgate is not loaded" "$FLOODGATE" bans nosuch0
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
