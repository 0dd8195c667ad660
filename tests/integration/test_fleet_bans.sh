#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What `floodgate run` takes from Redis and gives to it as fleet bans and
# holds (docs/fleet.md, "What the fleet may ban"), against a real redis-server on
# loopback and one host (fgA):
# - a hostile ZADD of 0.0.0.0/0, ::/0, 10.0.0.0/8, a malformed member, a
#   prefix covering an [allow] entry or one of the host's own addresses
#   changes nothing in `bans`; each refusal is counted once and logged; a
#   valid /24 is applied, its +inf cut to max_ban;
# - a hold of 2^64 ns from Redis is capped, not wrapped to nothing;
# - a fleet ban lifted here by hand stays lifted, also across a restart;
# - a ban this host published and then lifted by hand while `run` was
#   stopped does not come back, and is lifted from Redis too.
source "$(dirname "$0")/lib.sh"

require_redis

WORK=$(mktemp -d)
REDIS_PID=
RUN_A=
cleanup() {
	stop_children $RUN_A $REDIS_PID
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT
REDIS_PORT=6393
SYNC_MS=100
export FLOODGATE_STATE_DIR=$WORK/state
RCLI=(redis-cli -p "$REDIS_PORT")

start_redis() {
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
		--appendonly no >>"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	wait_until 10 "${RCLI[@]}" ping >/dev/null 2>&1
}

cat >"$WORK/a.conf" <<CONF
[allow]
src = 10.77.0.128/25

[policy flood]
match = udp dport 9
rate  = 1000/s
burst = 100
scope = fleet

[fleet]
redis = 127.0.0.1:$REDIS_PORT
sync = ${SYNC_MS}ms
key_prefix = fgbans:
max_ban = 1h
CONF

syncs() { fleet_state syncs; }

fleet_state() { # FIELD: from fgA's fleet_state, through bpftool
	bpftool -j map lookup pinned /sys/fs/bpf/floodgate/fgA/fleet_state key 0 0 0 0 |
		python3 -c "import json,sys; print(json.load(sys.stdin)['formatted']['value'].get('$1', 'none'))"
}

# wait_syncs N: until fgA has synced N more times (10 s at most).
wait_syncs() {
	local want=$(($(syncs) + $1)) deadline=$((SECONDS + 10))
	while [ "$(syncs)" -lt "$want" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.05; done
}

start_run() {
	"$FLOODGATE" run fgA --keep -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
	RUN_A=$!
	wait_until 10 bash -c "'$FLOODGATE' status fgA 2>/dev/null | grep -q 'fleet:    connected'"
}

stop_run() {
	kill "$RUN_A"
	wait "$RUN_A"
	RUN_A=
}

banned() { "$FLOODGATE" bans fgA | grep -q "^$1 "; }
not_banned() { ! banned "$1"; }

lab_up
"$FLOODGATE" load fgA -c "$WORK/a.conf" >/dev/null
# The host's own addresses are the "ban state" work's to fill; this test
# writes one as that work will (10.200.0.1, fgA's address).
bpftool map update pinned /sys/fs/bpf/floodgate/fgA/own_addrs \
	key 4 0 0 0 10 200 0 1 0 0 0 0 0 0 0 0 0 0 0 0 value 1
check "redis-server starts on 127.0.0.1:$REDIS_PORT" start_redis

# --- item 4: what Redis says is checked ------------------------------------------
"${RCLI[@]}" zadd fgbans:bans +inf 0.0.0.0/0 +inf ::/0 +inf 10.0.0.0/8 +inf abc \
	+inf 1.2.3.4/99 +inf 10.77.0.0/24 +inf 10.200.0.0/24 1e300 2001:db8::/16 \
	+inf 10.66.1.0/24 >/dev/null
check "a host connects with Redis holding hostile bans" start_run
wait_syncs 3
check "the valid /24 is applied" banned 10.66.1.0/24
left=$("$FLOODGATE" bans fgA | awk '$1 == "10.66.1.0/24" { print $2 }')
check "  ... its +inf cut to max_ban, 1h ($left)" \
	python3 -c "import sys; sys.exit(0 if '$left'.endswith('s') and 3500 < float('$left'[:-1]) <= 3600 else 1)"
for p in 0.0.0.0/0 ::/0 10.0.0.0/8 10.77.0.0/24 10.200.0.0/24 2001:db8::/16; do
	check "$p from Redis is not applied" not_banned "$p"
done
check "  ... nothing but the /24 is in bans" test "$("$FLOODGATE" bans fgA | grep -c '/')" -eq 1
refused=$(fleet_state bans_refused)
check "  ... the 8 refusals are counted ($refused)" test "$refused" = 8
check "  ... and logged" grep -q "fleet: refused a ban from Redis: 0.0.0.0/0 (" "$WORK/a.log"
check "  ... with the reason" grep -q "10.200.0.0/24 (.*own address" "$WORK/a.log"
wait_syncs 3
check "  ... each counted once, not once a sync" test "$(fleet_state bans_refused)" = 8

# --- item 4: a hold from Redis is bounded -------------------------------------------
# A rate state so far ahead that the hold is 2^64/1000 µs and some: times
# 1000 it wraps to about 0.1 s, so the key would hardly be held at all.
now_us=$("${RCLI[@]}" eval "local t = redis.call('TIME') return t[1] * 1000000 + t[2]" 0)
"${RCLI[@]}" set fgbans:rate:flood:10.9.0.1/32 \
	"$(python3 -c "print(f'{$now_us + 18446744073709552 + 100000:.0f}')")" >/dev/null
flood --dst 10.200.0.1 --src 10.9.0.1 --dport 9 --count 5 >/dev/null
wait_syncs 2
hold_left() { # seconds fleet_holds holds 10.9.0.1 for, from now
	bpftool -j map dump pinned /sys/fs/bpf/floodgate/fgA/fleet_holds | python3 -c "
import json, sys, time
for e in json.load(sys.stdin):
    v = e['formatted']['value']
    print((v['until_ns'] - time.monotonic_ns()) / 1e9)
    break
else:
    print(-1)"
}
left=$(hold_left)
check "a hold of 2^64 ns from Redis holds the key ($left s left)" \
	python3 -c "import sys; sys.exit(0 if $left > 10 else 1)"
check "  ... capped at 60 s" python3 -c "import sys; sys.exit(0 if $left <= 60 else 1)"

# --- item 4: a fleet ban lifted here stays lifted ----------------------------------------
"$FLOODGATE" unban fgA 10.66.1.0/24 >/dev/null
wait_syncs 3
check "a fleet ban lifted here by hand is not applied again" not_banned 10.66.1.0/24
check "  ... though Redis still has it" bash -c "${RCLI[*]} zscore fgbans:bans 10.66.1.0/24 | grep -q ."
stop_run
start_run
wait_syncs 3
check "  ... nor after a restart of run" not_banned 10.66.1.0/24

# --- item 7: an unban made while run was stopped ---------------------------------------
"$FLOODGATE" ban fgA 10.55.0.0/24 --for 10m >/dev/null
wait_syncs 2
check "run publishes a ban by hand" bash -c "${RCLI[*]} zscore fgbans:bans 10.55.0.0/24 | grep -q ."
stop_run
"$FLOODGATE" unban fgA 10.55.0.0/24 >/dev/null
start_run
wait_syncs 3
check "an unban made while run was stopped holds" not_banned 10.55.0.0/24
check "  ... and lifts the ban from Redis" \
	bash -c "! ${RCLI[*]} zscore fgbans:bans 10.55.0.0/24 | grep -q ."
stop_run

echo "--- host A log"
sed 's/^/    /' "$WORK/a.log"
finish
