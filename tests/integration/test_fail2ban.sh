#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# fail2ban's floodgate action (fail2ban/floodgate.conf) under a real
# fail2ban-server: jails read test log files, and their bans reach the
# datapath through `floodgate ban`/`unban`, IPv4 and IPv6, with fail2ban's
# ban time (-1, and more than `ban --for` allows, included) and subnet
# prefixes, checked on real veth traffic. The server runs in the foreground
# with its own config dir, socket, pid file and database under $WORK, never
# the host's /etc/fail2ban or /var/run/fail2ban.
source "$(dirname "$0")/lib.sh"

if ! command -v fail2ban-server >/dev/null; then
	echo "$TEST_NAME: fail2ban is not installed (scripts/install-deps.sh); skipped"
	exit 77
fi

WORK=$(mktemp -d)
F2B=$WORK/f2b
F2B_PID=
# stop_fail2ban: stops the server (its jails lift their bans first) and
# reaps it; kills it when it does not stop.
stop_fail2ban() {
	[ -n "$F2B_PID" ] || return 0
	f2b stop >/dev/null 2>&1 || true
	wait_until 10 bash -c "! kill -0 $F2B_PID 2>/dev/null"
	stop_children "$F2B_PID"
	F2B_PID=
}
trap 'stop_fail2ban; lab_down; rm -rf "$WORK"' EXIT

f2b() {
	fail2ban-client -c "$F2B" -s "$WORK/f2b.sock" -p "$WORK/f2b.pid" "$@"
}
f2b_answers() { f2b ping >/dev/null 2>&1; }

# --- fail2ban's config, written here --------------------------------------
mkdir -p "$F2B/filter.d" "$F2B/action.d"
# The action as `make install` puts it, for /etc/fail2ban/action.d.
expect_exit 0 "make install DESTDIR=..." make -s -C "$REPO" install DESTDIR="$WORK/root"
check "make install puts the action in /etc/fail2ban/action.d" \
	cp "$WORK/root/etc/fail2ban/action.d/floodgate.conf" "$F2B/action.d/floodgate.conf"
check "  ... and beside the sample config" \
	cmp -s "$WORK/root/usr/local/share/doc/floodgate/fail2ban/floodgate.conf" \
	"$F2B/action.d/floodgate.conf"
cat >"$F2B/fail2ban.conf" <<CONF
[Definition]
loglevel = INFO
logtarget = $WORK/f2b.log
syslogsocket = auto
socket = $WORK/f2b.sock
pidfile = $WORK/f2b.pid
dbfile = $WORK/f2b.sqlite3
dbpurgeage = 1d
allowipv6 = auto
CONF
cat >"$F2B/filter.d/fgtest.conf" <<'CONF'
[Definition]
failregex = ^fgtest: login failed from <HOST>$
datepattern = {NONE}
CONF
# One jail per case, each with a log file of its own. `nowhere` names an
# interface floodgate is not loaded on; `noiface` names none.
FG_ACTION="floodgate[iface=fgA, floodgate=\"$FLOODGATE\"]"
cat >"$F2B/jail.conf" <<CONF
[DEFAULT]
usedns   = no
backend  = polling
filter   = fgtest
maxretry = 3
findtime = 10m
bantime  = 10m
action   = $FG_ACTION

[plain]
enabled = true
logpath = $WORK/plain.log

[forever]
enabled = true
logpath = $WORK/forever.log
bantime = -1

[long]
enabled = true
logpath = $WORK/long.log
bantime = 60d

[subnet]
enabled = true
logpath = $WORK/subnet.log
action  = floodgate[iface=fgA, floodgate="$FLOODGATE", prefix4=24, prefix6=64]

[short]
enabled = true
logpath = $WORK/short.log
bantime = 3

[nowhere]
enabled = true
logpath = $WORK/nowhere.log
action  = floodgate[iface=fgZ, floodgate="$FLOODGATE"]

[noiface]
enabled = true
logpath = $WORK/noiface.log
action  = floodgate[floodgate="$FLOODGATE"]
CONF
touch "$WORK"/{plain,forever,long,subnet,short,nowhere,noiface}.log

# fail_logins JAIL ADDR: appends maxretry failed logins from ADDR to JAIL's log.
fail_logins() {
	local i
	for i in 1 2 3; do echo "fgtest: login failed from $2" >>"$WORK/$1.log"; done
}

# ban_field PREFIX FIELD: FIELD of PREFIX's entry in `floodgate bans --json`
# ("none" when PREFIX has no entry).
ban_field() {
	"$FLOODGATE" bans fgA --json | python3 -c '
import json, sys
bans = [b for b in json.load(sys.stdin)["bans"] if b["prefix"] == sys.argv[1]]
print(bans[0][sys.argv[2]] if bans else "none")' "$1" "$2"
}

# banned PREFIX / unbanned PREFIX: PREFIX's ban is in force / gone.
banned() {
	case $(ban_field "$1" state) in active | until_unbanned) return 0 ;; esac
	return 1
}
unbanned() { [ "$(ban_field "$1" state)" = none ]; }

# flood_100 SRC DST: sends 100 frames from SRC, all of which leave the generator.
flood_100() {
	local out
	out=$(flood --dst "$2" --src "$1" --count 100)
	check "  (100 frames sent from $1)" \
		test "$(json_get "$out" 'd["sent"] - abs(d["tx_dropped"])')" -eq 100
}

# traffic WANT SRC...: floods 100 frames from each SRC to fgA and checks that
# WANT of them (100 or 0) reach the stack.
traffic() {
	local want=$1 i=0 src dst
	shift
	count_sources "$@"
	for src in "$@"; do
		if [[ $src == *:* ]]; then dst=fd00:200::1; else dst=10.200.0.1; fi
		flood_100 "$src" "$dst"
	done
	for src in "$@"; do
		check "  $src: $want of 100 frames pass" test "$(received $i)" -eq "$want"
		i=$((i + 1))
	done
}

# ban_is PREFIX STATE DURATION: PREFIX's ban is in STATE with DURATION
# seconds in all, read at once (a short ban may end between two reads).
ban_is() {
	"$FLOODGATE" bans fgA --json | python3 -c '
import json, sys
bans = [b for b in json.load(sys.stdin)["bans"] if b["prefix"] == sys.argv[1]]
sys.exit(0 if bans and [bans[0]["state"], bans[0]["duration_s"]] == [sys.argv[2], float(sys.argv[3])] else 1)' "$@"
}

# ban_latency JAIL ADDR PREFIX: appends ADDR's failures to JAIL's log and
# waits (10 s at most) for PREFIX's ban; prints the seconds from the last
# log line to the ban's start in floodgate (its duration less the time
# left, read off the bans list: the test's own polling is not counted).
ban_latency() {
	local logged json read_at
	fail_logins "$1" "$2"
	logged=$(date +%s.%N)
	wait_until 10 banned "$3" || return 1
	json=$("$FLOODGATE" bans fgA --json)
	read_at=$(date +%s.%N)
	python3 -c '
import json, sys
b = [b for b in json.loads(sys.argv[1])["bans"] if b["prefix"] == sys.argv[2]][0]
started = float(sys.argv[4]) - (b["duration_s"] - b["remaining_s"])
print(f"{started - float(sys.argv[3]):.2f}")' \
		"$json" "$3" "$logged" "$read_at"
}

# --- the lab --------------------------------------------------------------
# A policy for TCP port 22 only: the UDP test traffic passes unless banned.
cat >"$WORK/floodgate.conf" <<'CONF'
[policy ssh]
match = tcp dport 22
per   = src/32 src/64
rate  = 10/s
burst = 20
CONF
lab_up
expect_exit 0 "load floodgate on fgA" "$FLOODGATE" load fgA -c "$WORK/floodgate.conf"
echo "before any ban:"
traffic 100 10.0.5.1 2001:db8:5::1

fail2ban-server -f -x -c "$F2B" -s "$WORK/f2b.sock" -p "$WORK/f2b.pid" \
	>"$WORK/f2b.out" 2>&1 &
F2B_PID=$!
check "fail2ban-server answers" wait_until 20 f2b_answers
check "  ... with its 7 jails" bash -c \
	"fail2ban-client -c '$F2B' -s '$WORK/f2b.sock' status | grep -q 'Number of jail:[[:space:]]*7'"

# --- no floodgate on the interface: the action says so --------------------
check "a jail on an interface without floodgate logs why it cannot start" \
	wait_until 10 grep -qs "floodgate is not loaded on fgZ" "$WORK/f2b.log"
check "a jail without iface logs why it cannot start" \
	wait_until 10 grep -qs "floodgate action: no interface" "$WORK/f2b.log"

# --- a ban from the log, IPv4 and IPv6, lifted by fail2ban-client ---------
if secs=$(ban_latency plain 10.0.5.1 10.0.5.1/32); then
	ok "IPv4: maxretry failures ban 10.0.5.1 through floodgate (${secs}s after the log line)"
else
	not_ok "IPv4: maxretry failures ban 10.0.5.1 through floodgate within 10 s"
fi
if secs=$(ban_latency plain 2001:db8:5::1 2001:db8:5::1/128); then
	ok "IPv6: maxretry failures ban 2001:db8:5::1 (${secs}s after the log line)"
else
	not_ok "IPv6: maxretry failures ban 2001:db8:5::1 within 10 s"
fi
check "  ... for fail2ban's bantime (10m)" test "$(ban_field 10.0.5.1/32 duration_s)" = 600.0
check "  ... the IPv6 one too" test "$(ban_field 2001:db8:5::1/128 duration_s)" = 600.0
echo "banned by the plain jail:"
traffic 0 10.0.5.1 2001:db8:5::1
expect_exit 0 "fail2ban-client unban 10.0.5.1" f2b unban 10.0.5.1
expect_exit 0 "fail2ban-client set plain unbanip 2001:db8:5::1" \
	f2b set plain unbanip 2001:db8:5::1
check "  ... lifts the IPv4 ban" wait_until 10 unbanned 10.0.5.1/32
check "  ... and the IPv6 one" wait_until 10 unbanned 2001:db8:5::1/128
echo "after fail2ban lifted them:"
traffic 100 10.0.5.1 2001:db8:5::1

# --- bantime = -1: until unbanned ------------------------------------------
fail_logins forever 10.0.6.1
fail_logins forever 2001:db8:6::1
check "bantime = -1 bans 10.0.6.1" wait_until 10 banned 10.0.6.1/32
check "  ... and 2001:db8:6::1" wait_until 10 banned 2001:db8:6::1/128
check "  ... until unbanned" test "$(ban_field 10.0.6.1/32 state)" = until_unbanned
check "  ... both" test "$(ban_field 2001:db8:6::1/128 state)" = until_unbanned
traffic 0 10.0.6.1 2001:db8:6::1
expect_exit 0 "fail2ban-client unban of the forever bans" f2b unban 10.0.6.1 2001:db8:6::1
check "  ... lifts them" wait_until 10 bash -c \
	"[ \"\$('$FLOODGATE' bans fgA --json | grep -c 'db8:6::1\|10.0.6.1')\" -eq 0 ]"

# --- bantime longer than `ban --for` allows (30d) ---------------------------
fail_logins long 10.0.7.1
check "bantime = 60d bans 10.0.7.1" wait_until 10 banned 10.0.7.1/32
check "  ... until fail2ban unbans it (past ban --for's 30d)" \
	test "$(ban_field 10.0.7.1/32 state)" = until_unbanned
traffic 0 10.0.7.1
expect_exit 0 "fail2ban-client unban 10.0.7.1" f2b unban 10.0.7.1
check "  ... lifts it" wait_until 10 unbanned 10.0.7.1/32

# --- subnet bans: prefix4 = 24, prefix6 = 64 --------------------------------
fail_logins subnet 10.0.8.7
fail_logins subnet 2001:db8:8::7
check "prefix4 = 24 bans 10.0.8.7's /24" wait_until 10 banned 10.0.8.0/24
check "prefix6 = 64 bans 2001:db8:8::7's /64" wait_until 10 banned 2001:db8:8::/64
check "  ... and not the addresses alone" bash -c \
	"[ \"\$('$FLOODGATE' bans fgA --json | grep -c '10.0.8.7\|db8:8::7')\" -eq 0 ]"
echo "the offenders and their neighbours in the prefix:"
traffic 0 10.0.8.7 10.0.8.200 2001:db8:8::7 2001:db8:8::ffff
fail_logins subnet 10.0.8.9
check "a second offender in the /24 is banned by fail2ban" wait_until 10 bash -c \
	"fail2ban-client -c '$F2B' -s '$WORK/f2b.sock' status subnet 2>/dev/null | grep -q 10.0.8.9"
expect_exit 0 "fail2ban-client unban of the three offenders" \
	f2b unban 10.0.8.7 2001:db8:8::7 10.0.8.9
check "  ... lifts the /24" wait_until 10 unbanned 10.0.8.0/24
check "  ... and the /64" wait_until 10 unbanned 2001:db8:8::/64
traffic 100 10.0.8.200 2001:db8:8::ffff
# The second unban of the /24 finds it gone: the action takes that as done.
check "  ... and no unban failed" bash -c \
	"[ -s '$WORK/f2b.log' ] && ! grep -q 'Failed to execute unban' '$WORK/f2b.log'"

# --- a short bantime: floodgate's timer, then fail2ban's unban ---------------
fail_logins short 10.0.4.1
check "bantime = 3 bans 10.0.4.1 for 3s in floodgate too" wait_until 10 ban_is 10.0.4.1/32 active 3
check "fail2ban lifts it when its bantime ends" wait_until 10 unbanned 10.0.4.1/32

# --- stopping fail2ban lifts the bans it holds ------------------------------
fail_logins plain 10.0.5.1
check "10.0.5.1 banned again" wait_until 10 banned 10.0.5.1/32
stop_fail2ban
check "stopping fail2ban lifts its ban" wait_until 5 unbanned 10.0.5.1/32
# other_errors: fail2ban's errors but those of the starts of the jails
# `nowhere` and `noiface` (a command's error lines share its id, which only
# its exec line ties to the jail: fgZ, or no interface).
other_errors() {
	local ids
	ids=$(sed -n 's/.*ERROR *\([0-9a-f]*\) -- exec: \[ -n "\(fgZ\)\?" \].*/-e \1/p' "$WORK/f2b.log")
	grep 'ERROR' "$WORK/f2b.log" | grep -v $ids -e "jail 'nowhere'" -e "jail 'noiface'"
}
check "fail2ban logged the start failures of nowhere and noiface" bash -c \
	"grep -q \"jail 'nowhere'\" '$WORK/f2b.log' && grep -q \"jail 'noiface'\" '$WORK/f2b.log'"
check "  ... and no other error" test -z "$(other_errors)"
if [ "$FAILED" -ne 0 ]; then
	echo "fail2ban's log and output:"
	tail -n 60 "$WORK/f2b.log" "$WORK/f2b.out" 2>&1 | sed 's/^/    /'
fi

expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
