#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Bans by hand survive `unload` and a reboot: `floodgate ban` writes them,
# with their expiry as wall-clock time, to a state file under
# FLOODGATE_STATE_DIR (default /var/lib/floodgate, which the lab keeps on a
# tmpfs of its own); `unban` removes them; `load` and `run` restore the
# unexpired ones. A reboot is simulated by a file written by hand: its
# wall-clock expiry restores whatever the monotonic clock says. A hostile or
# malformed file is refused and changes nothing.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
RUN_PID=
trap 'kill $RUN_PID 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
export FLOODGATE_STATE_DIR=$WORK/state
STATE=$FLOODGATE_STATE_DIR/fgA.bans
PIN=/sys/fs/bpf/floodgate/fgA
# Generous for a slow machine: the time a few floodgate commands take.
SLACK_S=30

# ban_field PREFIX FIELD: FIELD of PREFIX's entry in `bans --json`, or
# "absent".
ban_field() {
	"$FLOODGATE" bans fgA --json | python3 -c '
import json, sys
for b in json.load(sys.stdin)["bans"]:
    if b["prefix"] == sys.argv[1]:
        print(b[sys.argv[2]])
        break
else:
    print("absent")' "$1" "$2"
}

# left_near PREFIX SECONDS: PREFIX is banned with between SECONDS - SLACK_S
# and SECONDS left.
left_near() {
	local left
	left=$(ban_field "$1" remaining_s)
	echo "    ($1: $left s left, expected about $2)"
	python3 -c "import sys; l = sys.argv[1]; sys.exit(0 if l not in ('None', 'absent') and $2 - $SLACK_S < float(l) <= $2 else 1)" "$left"
}

unix_ns() { python3 -c 'import time; print(time.time_ns())'; }

reload_fresh() { # unload, then load: a new `bans` map, as after a reboot
	expect_exit 0 "  unload" "$FLOODGATE" unload fgA
	expect_exit 0 "  load" "$FLOODGATE" load fgA
}

lab_up
expect_exit 0 "load" "$FLOODGATE" load fgA

# --- ban, unload, load ------------------------------------------------------
expect_exit 0 "ban 10.0.5.0/24 for 1h" "$FLOODGATE" ban fgA 10.0.5.0/24 --for 1h
expect_exit 0 "ban 2001:db8:5::/48 until unbanned" "$FLOODGATE" ban fgA 2001:db8:5::/48
expect_exit 0 "ban 10.0.6.1 for 1h, then unban it" "$FLOODGATE" ban fgA 10.0.6.1 --for 1h
expect_exit 0 "  unban 10.0.6.1" "$FLOODGATE" unban fgA 10.0.6.1
check "the state file exists" test -f "$STATE"
check "  ... mode 0600" test "$(stat -c %a "$STATE")" = 600
check "  ... and no temporary file is left" test "$(ls -A "$FLOODGATE_STATE_DIR")" = fgA.bans
sed 's/^/    state: /' "$STATE"
reload_fresh
check "the /24 ban is restored after unload and load" left_near 10.0.5.0/24 3600
check "the ban until unbanned is restored" test "$(ban_field 2001:db8:5::/48 state)" = until_unbanned
check "the unbanned address stays unbanned" test "$(ban_field 10.0.6.1/32 state)" = absent
# The restored ban drops: nothing from 10.0.5.1 passes.
count_sources 10.0.5.1
out=$(flood --dst 10.200.0.1 --src 10.0.5.1 --count 100)
check "  (100 frames sent)" test "$(json_get "$out" 'd["sent"] - abs(d["tx_dropped"])')" -eq 100
check "the restored ban drops the banned source" test "$(received 0)" -eq 0

# --- unban, unload, load -----------------------------------------------------
expect_exit 0 "unban 10.0.5.0/24" "$FLOODGATE" unban fgA 10.0.5.0/24
expect_exit 0 "unban 2001:db8:5::/48" "$FLOODGATE" unban fgA 2001:db8:5::/48
reload_fresh
check "an unbanned /24 is not restored" test "$(ban_field 10.0.5.0/24 state)" = absent
check "an unbanned /48 is not restored" test "$(ban_field 2001:db8:5::/48 state)" = absent

# --- a reboot: only the wall clock counts ------------------------------------
# Written by hand, as a file written before a reboot reads: one ban expiring
# in an hour, one that expired an hour ago, one until unbanned.
expect_exit 0 "unload" "$FLOODGATE" unload fgA
now=$(unix_ns)
cat >"$STATE" <<STATE
# floodgate: bans by hand
10.0.7.0/24 expires_unix_ns=$((now + 3600 * 10 ** 9)) duration_ns=$((7200 * 10 ** 9)) strikes=1
10.0.8.0/24 expires_unix_ns=$((now - 3600 * 10 ** 9)) duration_ns=$((3600 * 10 ** 9)) strikes=1
2001:db8:7::/48 expires_unix_ns=never duration_ns=0 strikes=1
STATE
chmod 600 "$STATE"
expect_exit 0 "load after the 'reboot'" "$FLOODGATE" load fgA
check "a ban expiring in 1 h restores with ~1 h left" left_near 10.0.7.0/24 3600
check "a ban whose expiry is past is not restored" test "$(ban_field 10.0.8.0/24 state)" = absent
check "a ban until unbanned is restored" test "$(ban_field 2001:db8:7::/48 state)" = until_unbanned

# --- run restores too ----------------------------------------------------------
expect_exit 0 "unload" "$FLOODGATE" unload fgA
"$FLOODGATE" run fgA >"$WORK/run.log" 2>&1 &
RUN_PID=$!
check "run loads" wait_until 10 test -e "$PIN/runtime"
check "run restores the bans" wait_until 10 left_near 10.0.7.0/24 3600
kill -TERM "$RUN_PID"
wait "$RUN_PID"
RUN_PID=

# --- a hostile or malformed file changes nothing -------------------------------
# expect_refused DESCRIPTION PATTERN: `load` fails with PATTERN in its
# message and leaves nothing loaded.
expect_refused() {
	expect_exit 3 "$1: load refuses it" "$FLOODGATE" load fgA
	check "  ... saying $2" grep -qE -- "$2" <<<"$LAST_ERR"
	echo "    ($LAST_ERR)"
	check "  ... and loads nothing" test ! -e "$PIN"
}
cp "$STATE" "$WORK/good.bans"
chmod 666 "$STATE"
expect_refused "a world-writable state file" "fgA\.bans: refused: it is writable by others"
chmod 600 "$STATE"
printf '10.0.7.0/24 expires_unix_ns=1 duration_ns=0 strikes=1 colour=red\n' >"$STATE"
expect_refused "an unknown key" "fgA\.bans:1: "
printf '# ok\n10.0.7.1/24 expires_unix_ns=never duration_ns=0 strikes=1\n' >"$STATE"
expect_refused "a prefix with host bits" "fgA\.bans:2: "
printf '10.0.7.0/24 expires_unix_ns=12x duration_ns=0 strikes=1\n' >"$STATE"
expect_refused "a bad number" "fgA\.bans:1: "
ln -sf "$WORK/good.bans" "$STATE"
expect_refused "a symbolic link" "fgA\.bans"
rm -f "$STATE"
cp "$WORK/good.bans" "$STATE"
expect_exit 0 "the good file loads again" "$FLOODGATE" load fgA
printf 'garbage\n' >>"$STATE"
expect_exit 3 "ban with a malformed state file is refused" "$FLOODGATE" ban fgA 10.0.9.0/24
check "  ... saying where" grep -qE "fgA\.bans:5: " <<<"$LAST_ERR"
check "  ... and bans nothing" test "$(ban_field 10.0.9.0/24 state)" = absent
check "  ... and leaves the file as it was" test "$(tail -n1 "$STATE")" = garbage

# --- the default folder ---------------------------------------------------------
cp "$WORK/good.bans" "$STATE"
expect_exit 0 "unload" "$FLOODGATE" unload fgA
unset FLOODGATE_STATE_DIR
expect_exit 0 "load with the default state folder" "$FLOODGATE" load fgA
expect_exit 0 "ban 10.0.10.0/24" "$FLOODGATE" ban fgA 10.0.10.0/24 --for 10m
check "the state file is /var/lib/floodgate/fgA.bans" grep -q '^10\.0\.10\.0/24 ' /var/lib/floodgate/fgA.bans
expect_exit 0 "unban 10.0.10.0/24" "$FLOODGATE" unban fgA 10.0.10.0/24
check "  ... and unban removes it there" bash -c "! grep -q '^10\.0\.10\.0/24 ' /var/lib/floodgate/fgA.bans"
finish
