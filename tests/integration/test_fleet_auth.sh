#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Redis AUTH for the fleet sync (issue 24, item 3), against real
# redis-servers in the sandbox:
#   - `check` refuses a password_file that is missing, readable by group or
#     others, owned by another user, a symbolic link or empty, at its
#     FILE:LINE;
#   - a Redis with requirepass: without password_file, or with a wrong
#     password, the daemon reports the fleet down once (not once a retry),
#     retries with its backoff and never logs the password; with the right
#     one it syncs;
#   - an ACL user (user = NAME): syncs as that user;
#   - TLS through a local tunnel (hiredis 0.14 has no TLS): redis-server
#     with tls-port only and a self-signed certificate made here, socat
#     from a unix socket to it, a fleet sync seen in Redis.
source "$(dirname "$0")/lib.sh"

for tool in redis-server redis-cli socat openssl; do
	if ! command -v "$tool" >/dev/null; then
		echo "$TEST_NAME: $tool is not installed (scripts/install-deps.sh); skipped"
		exit 77
	fi
done

WORK=$(mktemp -d)
PIDS=()
RUN_A=
cleanup() {
	stop_children $RUN_A "${PIDS[@]}"
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT
SOCK=$WORK/redis.sock
PASSWORD=s3cret-default-$$
USER_PASSWORD=s3cret-user-$$
WRONG_PASSWORD=not-the-password-$$
SYNC_MS=100
TLS_PORT=6393

CLI="redis-cli -s $SOCK --no-auth-warning -a $PASSWORD"
cli() { $CLI "$@"; }

write_conf() { # REDIS [EXTRA LINE]...: the config at $WORK/a.conf
	local redis=$1
	shift
	{
		printf '[policy flood]\nmatch = udp dport 9\nrate = 1000/s\nburst = 100\nscope = fleet\n\n'
		printf '[fleet]\nredis = %s\nsync = %sms\nkey_prefix = fgtest:\n' "$redis" "$SYNC_MS"
		printf '%s\n' "$@"
	} >"$WORK/a.conf"
}

secret() { # FILE PASSWORD: a password file as it should be
	(umask 077 && printf '%s\n' "$2" >"$1")
}

run_a() {
	: >"$WORK/a.log"
	"$FLOODGATE" run fgA -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
	RUN_A=$!
}

stop_a() {
	kill "$RUN_A" && wait "$RUN_A"
	RUN_A=
}

status_has() { "$FLOODGATE" status fgA 2>/dev/null | grep -q "$1"; }

# A fleet sync seen in Redis: a flood's source becomes a rate key. CLI...
synced() {
	local src=$1
	shift
	flood --dst 10.200.0.1 --src "$src" --dport 9 --count 20 >/dev/null
	wait_until 5 bash -c "$* --scan --pattern 'fgtest:rate:*' 2>/dev/null |
		grep -qx 'fgtest:rate:flood:$src/32'"
}

no_password_logged() {
	! grep -qe "$PASSWORD" -e "$USER_PASSWORD" -e "$WRONG_PASSWORD" "$WORK/a.log"
}

connections() { cli info stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p'; }

# down_once WHAT: Redis refuses the daemon for 3 s: status says so, the
# log has one line naming WHAT however many times it retried, and the
# retries follow the backoff that doubles from sync (at most 1 + log2(3 s /
# sync + 1) + 1 attempts; each `connections` adds one of its own).
down_once() {
	local before after attempts bound
	wait_until 10 status_has 'Redis unreachable' || return 1
	before=$(connections)
	sleep 3
	after=$(connections)
	attempts=$((after - before - 1))
	bound=$(python3 -c "import math; print(2 + int(math.log2(3000 / $SYNC_MS + 1)))")
	echo "    $attempts connection attempts in 3 s (at most $bound), $(grep -c "$1" "$WORK/a.log") log line(s)"
	[ "$(grep -c "$1" "$WORK/a.log")" -eq 1 ] && [ "$attempts" -ge 1 ] &&
		[ "$attempts" -le "$bound" ] && kill -0 "$RUN_A" && status_has 'Redis unreachable'
}

lab_up

# --- check: the password file is trusted like the config ----------------------
write_conf "unix:$SOCK" "password_file = $WORK/pass"
line=$(grep -n '^password_file' "$WORK/a.conf" | cut -d: -f1)
at="$WORK/a.conf:$line: password_file $WORK/pass"
expect_exit 3 "check: a missing password_file" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... named at its FILE:LINE" \
	test "$LAST_ERR" = "$at: cannot open it: No such file or directory"
secret "$WORK/pass" "$PASSWORD"
chmod 640 "$WORK/pass"
expect_exit 3 "check: a password_file readable by its group" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... says so" test "$LAST_ERR" = \
	"$at: refused: it holds a password and is readable by its group (chmod 600)"
chmod 604 "$WORK/pass"
expect_exit 3 "check: a password_file readable by others" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... says so" grep -q "readable by others (chmod 600)" <<<"$LAST_ERR"
chmod 600 "$WORK/pass"
chown nobody "$WORK/pass"
expect_exit 3 "check: a password_file owned by another user" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... says so" grep -q "^$at: refused: it is owned by uid $(id -u nobody)" <<<"$LAST_ERR"
chown root "$WORK/pass"
mv "$WORK/pass" "$WORK/real.pass"
ln -s "$WORK/real.pass" "$WORK/pass"
expect_exit 3 "check: a password_file that is a symbolic link" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... says so" test "$LAST_ERR" = "$at: cannot open it: it is a symbolic link"
rm "$WORK/pass"
secret "$WORK/pass" ""
expect_exit 3 "check: an empty password_file" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... says so" test "$LAST_ERR" = "$at: its first line is empty"
secret "$WORK/pass" "$PASSWORD"
expect_exit 0 "check: a password_file of root's, mode 600" "$FLOODGATE" check -c "$WORK/a.conf"
check "  ... and the password is in no message" \
	bash -c "! '$FLOODGATE' check -c '$WORK/a.conf' 2>&1 | grep -q '$PASSWORD'"

# --- requirepass ------------------------------------------------------------------
redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --dir "$WORK" --save '' \
	--appendonly no --requirepass "$PASSWORD" >>"$WORK/redis.log" 2>&1 &
PIDS+=($!)
check "redis-server with requirepass starts" \
	wait_until 10 bash -c "$CLI ping 2>/dev/null | grep -q PONG"

write_conf "unix:$SOCK"
run_a
check "no password_file: the fleet is down, logged once, no spinning" down_once 'NOAUTH'
check "  ... the log says why" grep -q "unreachable (SCRIPT LOAD refused: NOAUTH" "$WORK/a.log"
stop_a

secret "$WORK/wrong.pass" "$WRONG_PASSWORD"
write_conf "unix:$SOCK" "password_file = $WORK/wrong.pass"
run_a
check "a wrong password: the fleet is down, logged once, no spinning" down_once 'WRONGPASS'
check "  ... the log says why" grep -q "unreachable (AUTH refused: WRONGPASS" "$WORK/a.log"
check "  ... and not the password" no_password_logged
stop_a

write_conf "unix:$SOCK" "password_file = $WORK/pass"
run_a
check "the right password: the fleet syncs" wait_until 10 status_has 'fleet:    connected'
check "  ... a sync is seen in Redis" synced 10.9.2.1 "$CLI"
check "  ... and the password is not logged" no_password_logged
stop_a

# --- an ACL user --------------------------------------------------------------------
# The README's ACL: the keys of the prefix, the commands the sync sends and
# those its scripts call, nothing else.
cli acl setuser fgsync on ">$USER_PASSWORD" '~fgtest:*' +evalsha +script +time +get +set \
	+zadd +zrem +zrange +zremrangebyscore >/dev/null
secret "$WORK/user.pass" "$USER_PASSWORD"
write_conf "unix:$SOCK" "user = fgsync" "password_file = $WORK/user.pass"
run_a
check "ACL user fgsync: the fleet syncs" wait_until 10 status_has 'fleet:    connected'
check "  ... as that user" bash -c "$CLI client list | grep -q ' user=fgsync '"
check "  ... a sync is seen in Redis" synced 10.9.2.2 "$CLI"
stop_a
write_conf "unix:$SOCK" "user = fgsync" "password_file = $WORK/pass"
run_a
check "ACL user with the default user's password: refused, logged once" \
	down_once 'AUTH as user fgsync refused: WRONGPASS'
check "  ... and no password logged" no_password_logged
stop_a

# --- TLS through a local tunnel ---------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" \
	2>/dev/null
redis-server --port 0 --tls-port "$TLS_PORT" --bind 127.0.0.1 --tls-cert-file "$WORK/tls.crt" \
	--tls-key-file "$WORK/tls.key" --tls-ca-cert-file "$WORK/tls.crt" --tls-auth-clients no \
	--dir "$WORK" --save '' --appendonly no --requirepass "$PASSWORD" >>"$WORK/redis-tls.log" 2>&1 &
PIDS+=($!)
TLS_CLI="redis-cli --tls --cacert $WORK/tls.crt -p $TLS_PORT --no-auth-warning -a $PASSWORD"
check "redis-server with tls-port only (no plain port) starts" \
	wait_until 10 bash -c "$TLS_CLI ping 2>/dev/null | grep -q PONG"
# The README's tunnel: socat verifies the server's certificate (cafile).
socat "UNIX-LISTEN:$WORK/tls.sock,fork,mode=600" \
	"OPENSSL:127.0.0.1:$TLS_PORT,cafile=$WORK/tls.crt" </dev/null >>"$WORK/socat.log" 2>&1 &
PIDS+=($!)
write_conf "unix:$WORK/tls.sock" "password_file = $WORK/pass"
run_a
check "TLS tunnel: the fleet syncs through socat" wait_until 10 status_has 'fleet:    connected'
check "  ... a sync is seen in Redis over TLS" synced 10.9.2.3 "$TLS_CLI"
stop_a

echo "--- host A log (last run)"
sed 's/^/    /' "$WORK/a.log"
finish
