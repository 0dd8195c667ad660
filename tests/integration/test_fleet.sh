#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fleet-wide limits through a real redis-server on the sandbox's loopback:
# two `floodgate run` hosts (fgA and fgC, two veth labs) sync to it. One
# source floods both: with scope = fleet the total admitted stays within
# burst + rate x elapsed + one sync interval of each host's admissions;
# with scope = local the same flood gets about twice the limit. A ban on
# host A drops the source on host B within one sync. Redis stopped
# mid-flood: both hosts keep their local limits, log and count the outage,
# and sync again when Redis returns. With on_redis_down = closed, an
# unreachable Redis refuses the fleet policy's packets.
source "$(dirname "$0")/lib.sh"

require_redis

WORK=$(mktemp -d)
REDIS_PID=
RUN_A=
RUN_B=
cleanup() {
	stop_children $RUN_A $RUN_B $REDIS_PID
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT
REDIS_PORT=6391
RATE=1000
BURST=100
SYNC_MS=250

start_redis() {
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
		--appendonly no >>"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	wait_until 10 redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1
}

stop_redis() {
	kill "$REDIS_PID"
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=
}

write_conf() { # FILE SCOPE
	cat >"$1" <<CONF
[policy flood]
match = udp dport 9
rate  = $RATE/s
burst = $BURST
scope = $2

[fleet]
redis = 127.0.0.1:$REDIS_PORT
sync = ${SYNC_MS}ms
key_prefix = fgtest:
CONF
}

start_hosts() { # SCOPE
	write_conf "$WORK/a.conf" "$1"
	write_conf "$WORK/b.conf" "$1"
	"$FLOODGATE" run fgA -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
	RUN_A=$!
	"$FLOODGATE" run fgC -c "$WORK/b.conf" >>"$WORK/b.log" 2>&1 &
	RUN_B=$!
	wait_until 10 bash -c "'$FLOODGATE' status fgA 2>/dev/null | grep -q 'fleet:    connected' &&
		'$FLOODGATE' status fgC 2>/dev/null | grep -q 'fleet:    connected'"
}

stop_hosts() {
	kill $RUN_A $RUN_B
	wait $RUN_A $RUN_B
	RUN_A=
	RUN_B=
}

passed() { # IFACE: packets the flood policy passed
	"$FLOODGATE" stats "$1" --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["policies"][0]["passed_packets"])'
}

fleet_state() { # IFACE FIELD: from fleet_state, through bpftool
	bpftool -j map lookup pinned "/sys/fs/bpf/floodgate/$1/fleet_state" key 0 0 0 0 |
		python3 -c "import json,sys; print(json.load(sys.stdin)['formatted']['value']['$2'])"
}

# bound KIND ADMITTED: checks a two-host total against the GCRA's math.
# fleet: burst + rate x elapsed + one sync interval (plus the slowest sync's
# latency) of each host's local admissions, each host admitting at most
# burst + rate x that interval; at least rate x (elapsed - one sync
# interval and its latency): a host's counts are charged to the fleet GCRA
# when they arrive, up to one interval after the packets.
# local: each host admits burst + rate x elapsed on its own (give or take
# a generator batch).
bound() {
	python3 - "$1" "$2" "$FLOOD_A" "$FLOOD_SECOND" "$RATE" "$BURST" "$SYNC_MS" "${3:-0}" <<'PY'
import json, sys
kind, n = sys.argv[1], int(sys.argv[2])
a, b = json.loads(sys.argv[3]), json.loads(sys.argv[4])
rate, burst, sync, latency = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]) / 1e3, float(sys.argv[8])
elapsed = (max(a["end_ns"], b["end_ns"]) - min(a["start_ns"], b["start_ns"])) / 1e9
gap = max(f["max_batch_ns"] / 1e9 + 64 / f["rate"] for f in (a, b))
if kind == "fleet":
    slop = 2 * (burst + rate * (sync + latency + gap))
    lo = rate * (elapsed - sync - latency - 2 * gap)
    hi = burst + rate * elapsed + slop
else:
    each = [(f["end_ns"] - f["start_ns"]) / 1e9 for f in (a, b)]
    # local-max: the fleet held them for part of the time, so no floor
    lo = 0 if kind == "local-max" else sum(burst + rate * (e - 2 * gap) - 1 for e in each)
    hi = sum(burst + rate * (e + gap) + 1 for e in each)
print(f"    {kind}: admitted {n} by both hosts, expected {lo:.0f}..{hi:.0f} "
      f"(burst {burst} + {rate}/s x {elapsed:.3f} s)")
sys.exit(0 if lo <= n <= hi else 1)
PY
}

lab_up
lab_up_second
check "redis-server starts on 127.0.0.1:$REDIS_PORT" start_redis

# --- scope = fleet: one limit over both hosts --------------------------------
check "two hosts connect to Redis" start_hosts fleet
check "  ... and say so" grep -q "fleet: syncing with Redis at 127.0.0.1:$REDIS_PORT" "$WORK/a.log"
flood_both 3 10.9.0.1
check "  ... the fleet key is in Redis" \
	bash -c "redis-cli -p $REDIS_PORT --scan --pattern 'fgtest:rate:*' | grep -qx 'fgtest:rate:flood:10.9.0.1/32'"
sleep_sync=$(python3 -c "print(2 * $SYNC_MS / 1000)")
sleep "$sleep_sync" # let the last counts reach Redis (they are not admitted ones)
total=$(($(passed fgA) + $(passed fgC)))
latency=$(python3 -c "print(max($(fleet_state fgA sync_latency_ns), $(fleet_state fgC sync_latency_ns)) / 1e9)")
check "scope = fleet: both hosts together held to one limit" bound fleet "$total" "$latency"
check "  ... each host did admit some ($(passed fgA), $(passed fgC))" \
	bash -c "[ $(passed fgA) -gt $BURST ] && [ $(passed fgC) -gt $BURST ]"
check "  ... refusals counted as fleet_held" \
	bash -c "'$FLOODGATE' stats fgA --json | grep -q '\"fleet_held\":[1-9]'"
check "status shows the fleet" bash -c "'$FLOODGATE' status fgA | grep -qE 'fleet:    connected to Redis, last sync [0-9.]+ s ago'"

# --- a ban on host A drops the source on host B within one sync ------------------
"$FLOODGATE" ban fgA 10.9.9.9 --for 60s >/dev/null
t0=$(date +%s.%N)
wait_until 5 bash -c "'$FLOODGATE' bans fgC | grep -q 10.9.9.9"
t1=$(date +%s.%N)
# One sync of host B, after host A's thread saw the ban (it looks every
# 50 ms), plus this loop's own polling (50 ms and one `floodgate bans`).
check "a ban on host A reaches host B within one sync ($(python3 -c "print(f'{$t1 - $t0:.3f}')") s)" \
	python3 -c "import sys; sys.exit(0 if $t1 - $t0 <= $SYNC_MS / 1000 + 0.05 + 0.15 else 1)"
out=$(flood_second --dst 10.201.0.1 --src 10.9.9.9 --dport 9 --count 50)
check "  ... and host B drops it" bash -c "'$FLOODGATE' stats fgC --json | grep -q '\"banned\":50'"
"$FLOODGATE" unban fgA 10.9.9.9 >/dev/null
check "an unban on host A lifts it on host B" \
	wait_until 3 bash -c "! '$FLOODGATE' bans fgC | grep -q 10.9.9.9"

# --- Redis stopped mid-flood -------------------------------------------------------
before_a=$(passed fgA)
before_b=$(passed fgC)
( sleep 1; kill "$REDIS_PID" ) &
flood_both 3 10.9.0.2
check "Redis down: host A logs the outage once" \
	test "$(grep -c 'fleet: Redis at 127.0.0.1:6391 unreachable' "$WORK/a.log")" -eq 1
check "  ... and counts it" test "$(fleet_state fgA outages)" -ge 1
check "  ... status says so" bash -c "'$FLOODGATE' status fgA | grep -q 'Redis unreachable, enforcing local limits'"
check "  ... both hosts kept their local limit" \
	bound local-max "$(($(passed fgA) - before_a + $(passed fgC) - before_b))"
check "  ... both daemons live on" kill -0 "$RUN_A" "$RUN_B"
wait "$REDIS_PID" 2>/dev/null
start_redis
check "Redis back: sync resumes" wait_until 10 bash -c "'$FLOODGATE' status fgA | grep -q 'fleet:    connected' && '$FLOODGATE' status fgC | grep -q 'fleet:    connected'"
check "  ... and says so" grep -q "reachable again: fleet sync resumed" "$WORK/a.log"
check "  ... fleet_counts stayed drained (no unbounded memory)" \
	test "$(bpftool map dump pinned /sys/fs/bpf/floodgate/fgA/fleet_counts | grep -c '"key"' || true)" -le 2
stop_hosts

# --- scope = local: the same flood gets twice the limit ------------------------------
redis-cli -p "$REDIS_PORT" flushall >/dev/null
check "two hosts with scope = local" start_hosts local
flood_both 3 10.9.0.3
total=$(($(passed fgA) + $(passed fgC)))
check "scope = local: each host admits the whole limit" bound local "$total"
stop_hosts

# --- on_redis_down = closed: while Redis is unreachable, fleet keys are refused --
stop_redis
write_conf "$WORK/a.conf" fleet
echo "on_redis_down = closed" >>"$WORK/a.conf"
"$FLOODGATE" run fgA -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
RUN_A=$!
check "on_redis_down = closed, Redis unreachable: status says refusing" \
	wait_until 10 bash -c "'$FLOODGATE' status fgA 2>/dev/null | grep -q 'refusing fleet-scoped keys'"
flood --dst 10.200.0.1 --src 10.9.0.4 --dport 9 --count 200 >/dev/null
check "  ... and every packet of the fleet policy is refused" test "$(passed fgA)" -eq 0
check "  ... counted as fleet_held" \
	bash -c "'$FLOODGATE' stats fgA --json | grep -q '\"fleet_held\":200'"
kill "$RUN_A"
wait "$RUN_A"
RUN_A=

echo "--- host A log"
sed 's/^/    /' "$WORK/a.log"
finish
