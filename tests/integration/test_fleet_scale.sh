#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fleet ban sync at scale (docs/design-costs.md, "What each sync sends"): one host (fgA)
# with FG_SCALE_LOCAL bans of its own (60,000 by default, written into
# `bans` through bpftool batch) and a Redis holding FG_SCALE_REMOTE more
# (40,000: 100,000 in all). Every local ban must reach Redis, and no sync
# may time out (an outage). Prints the median sync time of the rounds
# after the first full pass and the Redis SLOWLOG maximum; asserts
# correctness, not speed.
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
REDIS_PORT=6394
LOCAL=${FG_SCALE_LOCAL:-60000}
REMOTE=${FG_SCALE_REMOTE:-40000}
export FLOODGATE_STATE_DIR=$WORK/state
RCLI=(redis-cli -p "$REDIS_PORT")

cat >"$WORK/a.conf" <<CONF
[policy flood]
match = udp dport 9
rate  = 1000/s
scope = fleet

[fleet]
redis = 127.0.0.1:$REDIS_PORT
sync = 250ms
key_prefix = fgscale:
CONF

fleet_state() { # FIELD
	bpftool -j map lookup pinned /sys/fs/bpf/floodgate/fgA/fleet_state key 0 0 0 0 |
		python3 -c "import json,sys; print(json.load(sys.stdin)['formatted']['value']['$1'])"
}

lab_up
"$FLOODGATE" load fgA -c "$WORK/a.conf" >/dev/null
# LOCAL bans by hand of 10.128.0.0 + i, /32, for an hour.
python3 - "$LOCAL" >"$WORK/batch" <<'PY'
import struct, sys, time
pin = "/sys/fs/bpf/floodgate/fgA/bans"
ends = time.monotonic_ns() + 3600 * 10**9
for i in range(int(sys.argv[1])):
    addr = struct.pack(">I", (10 << 24) + (128 << 16) + i) + bytes(12)
    key = struct.pack("<IBBH", 64, 0, 4, 0) + addr
    value = struct.pack("<QQIIBB6x", ends, 3600 * 10**9, 1, 0, 4, 32)
    hexes = lambda b: " ".join(f"{x:02x}" for x in b)
    print(f"map update pinned {pin} key hex {hexes(key)} value hex {hexes(value)}")
PY
check "$LOCAL bans written into bans" bpftool batch file "$WORK/batch"

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
	--appendonly no >>"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
wait_until 10 "${RCLI[@]}" ping >/dev/null 2>&1
# REMOTE bans of other hosts, 172.16.0.0 + i.
python3 -c "
for i in range($REMOTE):
    a = (172 << 24) + (16 << 16) + i
    print(f'ZADD fgscale:bans +inf {a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}/32')
" | "${RCLI[@]}" --pipe >/dev/null
"${RCLI[@]}" config set slowlog-log-slower-than 1000 >/dev/null
"${RCLI[@]}" config set slowlog-max-len 4096 >/dev/null
"${RCLI[@]}" slowlog reset >/dev/null

outages0=$(fleet_state outages)
"$FLOODGATE" run fgA --keep -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
RUN_A=$!
want=$((LOCAL + REMOTE))
check "all $LOCAL local bans reach Redis ($want in all)" \
	wait_until 120 bash -c "[ \$(${RCLI[*]} zcard fgscale:bans) -ge $want ]"
echo "    Redis holds $("${RCLI[@]}" zcard fgscale:bans) bans"
# Sync times of 20 rounds once the first full pass is over.
samples=()
last=$(fleet_state syncs)
deadline=$((SECONDS + 60))
while [ "${#samples[@]}" -lt 20 ] && [ "$SECONDS" -lt "$deadline" ]; do
	now=$(fleet_state syncs)
	if [ "$now" -gt "$last" ]; then
		samples+=("$(fleet_state sync_latency_ns)")
		last=$now
	fi
	sleep 0.1
done
echo "    sync times (ms): $(printf '%s\n' "${samples[@]}" | awk '{ printf "%.1f ", $1 / 1e6 }')"
median=$(printf '%s\n' "${samples[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] / 1e6 }')
echo "    median sync: $median ms over ${#samples[@]} rounds; Redis SLOWLOG entries: $("${RCLI[@]}" slowlog len)"
"${RCLI[@]}" slowlog get 4096 >"$WORK/slowlog"
python3 - "$WORK/slowlog" <<'PY'
import sys
# redis-cli prints each SLOWLOG entry as: id, unix time, duration in µs,
# then the arguments, then client address and name.
lines = open(sys.argv[1]).read().split("\n")
durations, i = [], 0
while i + 2 < len(lines):
    if lines[i].isdigit() and lines[i + 1].isdigit() and lines[i + 2].isdigit() and \
       len(lines[i + 1]) == 10:
        durations.append(int(lines[i + 2]))
        i += 3
    else:
        i += 1
print(f"    Redis SLOWLOG (> 1 ms): {len(durations)} commands, max "
      f"{max(durations) / 1000 if durations else 0:.1f} ms")
PY
check "$((${#samples[@]})) syncs measured" test "${#samples[@]}" -ge 10
check "  ... no outage counted" test "$(fleet_state outages)" -eq "$outages0"
check "  ... the daemon lives on" kill -0 "$RUN_A"

kill "$RUN_A"
wait "$RUN_A"
RUN_A=
echo "--- host A log"
sed 's/^/    /' "$WORK/a.log" | head -40
finish
