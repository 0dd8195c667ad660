#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A Redis restart does not kill `floodgate run` (issue 24, item 5). hiredis
# 0.14 writes with plain write(): on a unix socket whose server has gone,
# that write raises SIGPIPE, which kills a process that does not ignore it.
# Under a flood (so that every sync writes), redis-server on a unix socket
# is killed and restarted several times, by SIGTERM and by SIGKILL, each
# time after the daemon has had syncs to write into the dead connection:
# the daemon lives on, logs and counts each outage, and syncs again.
# Then the fleet goes away on purpose, twice: a SIGHUP with a config
# without [fleet], and a `run` SIGKILLed while syncing whose successor has
# no [fleet]. Each time /metrics must stop exporting
# floodgate_fleet_connected (FloodgateFleetDown fires on its 0, forever
# otherwise) and say floodgate_fleet_syncing 0.
source "$(dirname "$0")/lib.sh"

require_redis

WORK=$(mktemp -d)
REDIS_PID=
RUN_A=
FLOOD_PID=
cleanup() {
	stop_children $FLOOD_PID $RUN_A $REDIS_PID
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT
SOCK=$WORK/redis.sock
METRICS=127.0.0.1:9471
SYNC_MS=100
RESTARTS=6

start_redis() {
	redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --dir "$WORK" \
		--save '' --appendonly no >>"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	wait_until 10 bash -c "redis-cli -s '$SOCK' ping >/dev/null 2>&1"
}

not_syncing() {
	"$FLOODGATE" status fgA 2>/dev/null | grep -q 'fleet:    not syncing'
}

connected() {
	"$FLOODGATE" status fgA 2>/dev/null | grep -q 'fleet:    connected'
}

serving() { # the daemon lives and is connected (a dead one leaves "connected")
	[ -n "$RUN_A" ] && kill -0 "$RUN_A" 2>/dev/null && connected
}

metric() { # NAME: its sample for fgA
	python3 -c 'import sys, urllib.request
body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
print([l.split()[-1] for l in body.splitlines() if l.startswith("floodgate_" + sys.argv[2] + "{")][0])' \
		"$METRICS" "$1"
}

cat >"$WORK/a.conf" <<CONF
[policy flood]
match = udp dport 9
rate  = 1000/s
burst = 100
scope = fleet

[fleet]
redis = unix:$SOCK
sync = ${SYNC_MS}ms
key_prefix = fgtest:
CONF

lab_up
check "redis-server starts on unix:$SOCK" start_redis
"$FLOODGATE" run fgA -c "$WORK/a.conf" --metrics "$METRICS" >>"$WORK/a.log" 2>&1 &
RUN_A=$!
check "floodgate run connects over the unix socket" wait_until 10 connected

# One source floods for the whole test: every sync has a count to write.
# (The generator itself, not a shell around it, so that $! stops it.)
ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" --dst 10.200.0.1 \
	--src 10.9.1.1 --dport 9 --rate 5000 --duration 60 >/dev/null &
FLOOD_PID=$!

alive=yes
for i in $(seq "$RESTARTS"); do
	wait_until 10 connected || { alive="no (never reconnected before restart $i)"; break; }
	sig=TERM
	[ $((i % 2)) -eq 0 ] && sig=KILL
	kill -"$sig" "$REDIS_PID"
	wait "$REDIS_PID" 2>/dev/null
	# Five syncs against the dead connection and the missing server.
	sleep "$(python3 -c "print(5 * $SYNC_MS / 1000)")"
	if ! kill -0 "$RUN_A" 2>/dev/null; then
		wait "$RUN_A"
		alive="no: floodgate run died (exit $?) after redis-server's SIG$sig, restart $i"
		RUN_A=
		break
	fi
	start_redis
done
check "floodgate run survives $RESTARTS Redis restarts under traffic (alive: $alive)" \
	test "$alive" = yes
check "  ... and syncs again" wait_until 10 serving
check "  ... logs each outage once" \
	test "$(grep -c "fleet: Redis at unix:$SOCK unreachable" "$WORK/a.log")" -eq "$RESTARTS"
check "  ... and each return" \
	test "$(grep -c 'reachable again: fleet sync resumed' "$WORK/a.log")" -eq "$RESTARTS"
check "  ... /metrics counts the outages" test "$(metric fleet_outages_total 2>/dev/null)" = "$RESTARTS"
check "  ... and shows the fleet connected" test "$(metric fleet_connected 2>/dev/null)" = 1
check "  ... the flood's key reaches the new Redis" wait_until 5 bash -c \
	"redis-cli -s '$SOCK' --scan 2>/dev/null --pattern 'fgtest:rate:*' | grep -qx 'fgtest:rate:flood:10.9.1.1/32'"

# /metrics serves one text a second (docs/service.md): a change shows within
# that second, so the checks below poll for up to 5.
metric_is() { # NAME VALUE: /metrics has VALUE for fgA
	test "$(metric "$1" 2>/dev/null)" = "$2"
}

lacks_metric() { # NAME: /metrics answers, without a sample of it for fgA
	python3 -c 'import sys, urllib.request
try:
    body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
except Exception as e:
    sys.exit("cannot read /metrics: %s" % e)
sys.exit(1 if any(l.startswith("floodgate_" + sys.argv[2] + "{") for l in body.splitlines()) else 0)' \
		"$METRICS" "$1"
}

grep -v '^scope' "$WORK/a.conf" | sed '/^\[fleet\]/,$d' >"$WORK/local.conf"
cp "$WORK/a.conf" "$WORK/fleet.conf"
check "  ... /metrics says the fleet syncs" wait_until 5 metric_is fleet_syncing 1
cp "$WORK/local.conf" "$WORK/a.conf"
kill -HUP "$RUN_A"
check "SIGHUP with [fleet] removed: the interface is not syncing" wait_until 10 not_syncing
check "  ... /metrics says floodgate_fleet_syncing 0" wait_until 5 metric_is fleet_syncing 0
check "  ... and no longer exports floodgate_fleet_connected" wait_until 5 lacks_metric fleet_connected
check "  ... but keeps the counters" test "$(metric fleet_outages_total 2>/dev/null)" = "$RESTARTS"

cp "$WORK/fleet.conf" "$WORK/a.conf"
kill -HUP "$RUN_A"
check "SIGHUP with [fleet] back: connected again" wait_until 10 connected
kill -KILL "$RUN_A"
wait "$RUN_A" 2>/dev/null
RUN_A=
kill -TERM "$REDIS_PID" # the next `run` must not find a fleet either way
wait "$REDIS_PID" 2>/dev/null
REDIS_PID=
"$FLOODGATE" run fgA -c "$WORK/local.conf" --metrics "$METRICS" >>"$WORK/a.log" 2>&1 &
RUN_A=$!
check "a run SIGKILLed while syncing, then one without [fleet]: not syncing" \
	wait_until 10 not_syncing
check "  ... /metrics says floodgate_fleet_syncing 0" wait_until 5 metric_is fleet_syncing 0
check "  ... and exports no floodgate_fleet_connected" wait_until 5 lacks_metric fleet_connected

echo "--- host A log"
sed 's/^/    /' "$WORK/a.log"
finish
