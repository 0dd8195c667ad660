#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The fault-injection soak (`make soak`; issue 24): for SOAK_SECONDS (default
# 600) a veth lab carries a real source at a known rate and spoofed floods,
# while a seeded schedule (SOAK_SEED) reloads, bans and unbans by hand, kills
# `floodgate run` (SIGTERM with --keep, and kill -9) and starts it again,
# restarts redis-server under a fleet policy (`redis = unix:...`), upgrades in
# place (`run` of the other map layout, build/layout-b/floodgate) and fills
# the state tables. After every action it checks the invariants:
#
#   rate       the real source's admissions (an nft counter on fgA) stay
#              within burst + rate x elapsed + 1, and it is not starved;
#   bans       a ban by hand stays in force, with its expiry, until it ends or
#              is unbanned; an unbanned or ended ban never comes back;
#   leaks      the pins, the programs and maps held by no other process, and
#              the daemon's open descriptors return to their steady counts;
#   daemon     `run` lives until the soak stops it;
#   memory     (at the end) the daemon's RSS: the last third's median within
#              10% of the first third's.
#
# It prints a summary (each action's count, each invariant's checks, every
# breach with its time) and exits non-zero on any breach. Everything runs in
# the sandbox of scripts/lab.sh; the trap stops what it started, even on
# Ctrl-C. Run it under the lab lock: flock /tmp/fg-lab.lock make soak.
SOAK_SECONDS=${SOAK_SECONDS:-600}
SOAK_SEED=${SOAK_SEED:-24}
# Seconds between two actions of the schedule.
SOAK_STEP=${SOAK_STEP:-2}
source "$(dirname "$0")/../tests/integration/lib.sh"

if ! command -v redis-server >/dev/null; then
	echo "soak: redis-server is not installed (scripts/install-deps.sh); skipped"
	exit 77
fi

FG_A=$FLOODGATE
FG_B=$(dirname "$FLOODGATE")/layout-b/floodgate
for bin in "$FG_A" "$FG_B" "$FLOOD_GEN"; do
	[ -x "$bin" ] || { echo "soak: $bin is missing (make tests builds it)"; exit 1; }
done

WORK=$(mktemp -d)
CONF=$WORK/soak.conf
REDIS_SOCK=$WORK/redis.sock
METRICS=127.0.0.1:9309
RATE=100 # the real source's policy
BURST=50
REAL_SRC=192.0.2.1
REAL_PPS=1000
MAX_BANS=24 # bans by hand in force at once

CUR_FG=$FG_A   # the build whose layout is pinned
RUN_PID=       # the `floodgate run` serving fgA, when one should
RUN_N=0        # its instance number (run.N.log)
REDIS_PID=
GEN_PIDS=()
T0=$(date +%s.%N)
REAL_T0=
LAST_ACTION=setup
VARIANT=0
declare -A ACTION_COUNT CHECK_COUNT CHECK_SECONDS BAN_EXPIRY BREACH_SEEN REPEATS
BREACHES=()
RSS_SAMPLES=()
STEADY_PINS= STEADY_BPF= FD_BASE= BPF_BEFORE=
MAX_FILL4=0 MAX_FILL6=0

cleanup() {
	local pid
	trap - INT TERM
	for pid in "${GEN_PIDS[@]}" $RUN_PID $REDIS_PID; do
		kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	"$CUR_FG" unload fgA >/dev/null 2>&1
	lab_down
	if [ "${#BREACHES[@]}" -ne 0 ] || [ -n "${SOAK_KEEP_LOGS:-}" ]; then
		for f in "$WORK"/run.*.log; do
			[ -e "$f" ] && { echo "--- ${f##*/} (last 20 lines)"; tail -n 20 "$f" | sed 's/^/    /'; }
		done
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "soak: interrupted"; exit 130' INT TERM

now() { date +%s.%N; }
# calc EXPR: floating-point arithmetic (awk: the checks run often).
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
elapsed() { awk "BEGIN { printf \"%.1f\", $(now) - $T0 }"; }
say() { echo "[$(elapsed) s] $*"; }

# pick N: a number in [0, N) from the seeded schedule, in R. (Only in the
# main shell: a subshell would not advance $RANDOM.)
pick() { R=$((RANDOM % $1)); }

# breach INVARIANT MESSAGE [DETAIL]: records an invariant broken, with its
# time. The same breach again (the same DETAIL, digits aside: a resurrected
# ban stays resurrected) is counted, not listed again.
breach() {
	local msg="$(elapsed) s ($(date +%T)) $1, after '$LAST_ACTION': $2" key
	key="$1 $(tr -d '0-9' <<<"${3:-}")"
	echo "BREACH $msg"
	[ -n "${3:-}" ] && echo "$3"
	if [ -n "${BREACH_SEEN[$key]:-}" ]; then
		REPEATS[$1]=$((${REPEATS[$1]:-0} + 1))
		return
	fi
	BREACH_SEEN[$key]=1
	BREACHES+=("$msg")
	[ -n "${3:-}" ] && BREACHES+=("$3")
}

# invariant NAME DESCRIPTION COMMAND...: one check of an invariant.
invariant() {
	local name=$1 desc=$2 t=$EPOCHREALTIME out
	shift 2
	CHECK_COUNT[$name]=$((${CHECK_COUNT[$name]:-0} + 1))
	out=$("$@") || breach "$name" "$desc" "$out"
	CHECK_SECONDS[$name]=$(calc "${CHECK_SECONDS[$name]:-0} + $EPOCHREALTIME - $t")
}

# --- the config, its variants and the services ---------------------------------

# write_conf: the config of variant $VARIANT. Only what reload may change
# differs: the fleet policy's rate, on_redis_down, an extra policy. The real
# source's policy never changes, so its bound holds across every reload.
write_conf() {
	local fleet_rate=$((500 * (VARIANT % 2 + 1))) down=local
	[ $((VARIANT % 3)) -eq 2 ] && down=closed
	cat >"$CONF" <<-CONF
		max_sources = 65536
		max_sources_ipv6 = 1024
		new_sources = 200000/s

		[policy real]
		match = udp dport 9
		per   = src/32 src/64
		rate  = $RATE/s
		burst = $BURST

		[policy fleet]
		match = udp dport 53
		rate  = $fleet_rate/s
		burst = 100
		scope = fleet
	CONF
	if [ $((VARIANT % 2)) -eq 1 ]; then
		printf '\n[policy extra]\nmatch = tcp dport 80\nrate = 10/s\n' >>"$CONF"
	fi
	printf '\n[fleet]\nredis = unix:%s\nsync = 250ms\nkey_prefix = soak:\non_redis_down = %s\n' \
		"$REDIS_SOCK" "$down" >>"$CONF"
}

start_redis() {
	redis-server --port 0 --unixsocket "$REDIS_SOCK" --unixsocketperm 700 --dir "$WORK" \
		--save '' --appendonly no >>"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	wait_until 10 redis-cli -s "$REDIS_SOCK" ping >/dev/null 2>&1
}

# start_run: `floodgate run` of the pinned layout's build; waits until it
# enforces (its log says so).
start_run() {
	RUN_N=$((RUN_N + 1))
	"$CUR_FG" run fgA -c "$CONF" --keep --metrics "$METRICS" >"$WORK/run.$RUN_N.log" 2>&1 &
	RUN_PID=$!
	wait_until 20 grep -qs "^enforcing on fgA" "$WORK/run.$RUN_N.log"
}

# stop_run SIGNAL: stops the daemon; with SIGTERM (--keep) it must exit 0.
stop_run() {
	local rc
	kill "-$1" "$RUN_PID" 2>/dev/null
	wait "$RUN_PID" 2>/dev/null
	rc=$?
	RUN_PID=
	[ "$1" = KILL ] || [ "$rc" -eq 0 ]
}

# gen ARGS...: a generator in the background, stopped by cleanup (ip netns
# exec execs it: $! is the generator itself).
gen() {
	ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB --dst-mac "$FGA_MAC" "$@" \
		>/dev/null 2>>"$WORK/flood.log" &
	GEN_PIDS+=($!)
}

# --- the invariants -------------------------------------------------------------

# real_admitted: the real source's packets past floodgate (count_sources' c0).
real_admitted() {
	nft list counter netdev fgcount c0 | awk '/packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

# rate_bound: the real source got at most burst + rate x elapsed + 1 since its
# generator started (the counter is read before the clock: a looser bound,
# never a tighter one), and at least 80% of rate x (elapsed - 1 s). The
# headroom left under the bound goes to $WORK/headroom.
rate_bound() {
	local got end
	got=$(real_admitted)
	end=$(now)
	awk -v got="$got" -v t0="$REAL_T0" -v t1="$end" -v rate="$RATE" -v burst="$BURST" \
		-v out="$WORK/headroom" 'BEGIN {
		hi = burst + rate * (t1 - t0) + 1
		lo = 0.8 * rate * (t1 - t0 - 1)
		printf "%.1f\n", hi - got >> out
		if (got > hi) {
			printf "    the real source got %d packets in %.3f s, over burst + rate x t + 1 = %.1f\n", got, t1 - t0, hi
			exit 1
		}
		if (got < lo) {
			printf "    the real source got %d packets in %.3f s, under %.1f: starved\n", got, t1 - t0, lo
			exit 2
		}
	}'
}

# ban_state: every ban by hand the soak expects in force is, with its
# expiry (±2 s); every unbanned or ended one is not (1 s of grace around an
# expiry). BAN_EXPIRY[ADDR] is an epoch time, "inf", or "off" (unbanned).
ban_state() {
	local a expected=""
	for a in "${!BAN_EXPIRY[@]}"; do expected+="$a ${BAN_EXPIRY[$a]}"$'\n'; done
	"$CUR_FG" bans fgA --json 2>"$WORK/bans.err" >"$WORK/bans.json" || {
		echo "    floodgate bans failed: $(cat "$WORK/bans.err")"
		return 1
	}
	python3 - "$WORK/bans.json" "$(now)" "$expected" <<-'PY'
		import json, sys
		bans = json.load(open(sys.argv[1]))["bans"]
		now = float(sys.argv[2])
		live = {b["prefix"]: b for b in bans if b["state"] in ("active", "until_unbanned")}
		bad = []
		for line in sys.argv[3].splitlines():
		    addr, exp = line.split()
		    pfx = addr + "/32"
		    b = live.get(pfx)
		    if exp == "off":
		        if b:
		            bad.append(f"{pfx} was unbanned and is banned again ({b['state']}, {b['remaining_s']} s left)")
		    elif exp == "inf":
		        if not b:
		            bad.append(f"{pfx}, banned until unbanned, is gone")
		        elif b["state"] != "until_unbanned":
		            bad.append(f"{pfx}, banned until unbanned, now ends in {b['remaining_s']} s")
		    else:
		        left = float(exp) - now
		        if left > 1 and not b:
		            bad.append(f"{pfx} is gone {left:.1f} s before its end")
		        elif left < -1 and b:
		            bad.append(f"{pfx} ended {-left:.1f} s ago and is in force ({b['state']}, {b['remaining_s']} s left)")
		        elif b and b["state"] == "active" and abs(b["remaining_s"] - left) > 2:
		            bad.append(f"{pfx} ends in {b['remaining_s']} s, expected {left:.1f} s")
		        elif b and b["state"] != "active" and left > 1:
		            bad.append(f"{pfx} is {b['state']}, expected to end in {left:.1f} s")
		for m in bad:
		    print("    " + m)
		sys.exit(1 if bad else 0)
	PY
}

pin_count() { find /sys/fs/bpf -mindepth 1 | wc -l; }

# bpf_ours: the programs and maps no other process holds (tests/soak/bpf_ours.py),
# one a line: floodgate's, not the generators' nor other users' of this machine.
bpf_ours() { python3 "$REPO/tests/soak/bpf_ours.py" "${RUN_PID:-0}"; }
bpf_count() { bpf_ours | wc -l; }

# fga_pins: the pins of fgA (its folder, and a staging folder), and libxdp's.
fga_pins() { find /sys/fs/bpf/floodgate /sys/fs/bpf/xdp -mindepth 1 -path '*/fgA*' -o -path '*/xdp/*' 2>/dev/null; }
fga_pin_count() { fga_pins | wc -l; }

alive() { kill -0 "$RUN_PID" 2>/dev/null; }
fd_count() { ls "/proc/$RUN_PID/fd" 2>/dev/null | wc -l; }

# settled VAR FUNCTION: FUNCTION's count equals $VAR within 20 s (the kernel
# frees programs and maps after an RCU grace period, slowly on a busy machine).
settled() {
	local want=${!1} fn=$2
	wait_until 20 eval "[ \"\$($fn)\" -eq $want ]" || {
		echo "    $fn: $($fn), steady $want"
		case $fn in
		bpf_count) bpf_ours | sed 's/^/      /' ;;
		*pin_count) find /sys/fs/bpf -mindepth 1 | sed 's/^/      /' ;;
		esac
		return 1
	}
}

sample_rss() {
	local kb
	[ -n "$RUN_PID" ] || return 0
	kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$RUN_PID/status" 2>/dev/null)
	[ -n "$kb" ] && RSS_SAMPLES+=("$kb")
}

check_all() {
	invariant rate "the real source's admissions within burst + rate x t + 1" rate_bound
	invariant bans "bans by hand neither lost nor resurrected" ban_state
	invariant pins "the pins at their steady count ($STEADY_PINS)" settled STEADY_PINS pin_count
	invariant bpf-objects "programs and maps at their steady count ($STEADY_BPF)" \
		settled STEADY_BPF bpf_count
	if [ -n "$RUN_PID" ]; then
		invariant daemon "floodgate run (pid $RUN_PID) is alive" alive
		if ! kill -0 "$RUN_PID" 2>/dev/null; then
			wait "$RUN_PID"
			say "the daemon died (exit $?): starting another"
			RUN_PID=
			start_run
		fi
		invariant fds "the daemon's descriptors ($(fd_count)) within $FD_BASE + 8" \
			test "$(fd_count)" -le $((FD_BASE + 8))
		sample_rss
	fi
}

# --- the actions: each a small function, returning non-zero on failure ---------------

act_reload() {
	VARIANT=$((VARIANT + 1))
	write_conf
	if [ -n "$RUN_PID" ]; then
		local log=$WORK/run.$RUN_N.log n
		n=$(grep -c "reloaded: \|the running policy stays" "$log")
		kill -HUP "$RUN_PID"
		wait_until 10 eval "[ \$(grep -c 'reloaded: \|the running policy stays' '$log') -gt $n ]" &&
			! tail -n 3 "$log" | grep -q "the running policy stays"
	else
		"$CUR_FG" reload fgA -c "$CONF" >/dev/null 2>>"$WORK/cli.log"
	fi
}

act_ban() {
	local addr dur t
	[ "$(live_bans | wc -w)" -ge "$MAX_BANS" ] && return 0
	pick 250
	addr=198.51.100.$((R + 1))
	# Banning it again would change its expiry: this step bans no one.
	live_bans | grep -qx "$addr" && return 0
	pick 4
	dur=(15 40 90 forever)
	dur=${dur[$R]}
	t=$(now)
	if [ "$dur" = forever ]; then
		"$CUR_FG" ban fgA "$addr" >/dev/null 2>>"$WORK/cli.log" || return 1
		BAN_EXPIRY[$addr]=inf
	else
		"$CUR_FG" ban fgA "$addr" --for "${dur}s" >/dev/null 2>>"$WORK/cli.log" || return 1
		BAN_EXPIRY[$addr]=$(calc "$t + $dur")
	fi
}

# live_bans: the addresses the soak has banned and expects in force (for 2 s
# more at least).
live_bans() {
	local a
	for a in "${!BAN_EXPIRY[@]}"; do echo "$a ${BAN_EXPIRY[$a]}"; done |
		awk -v now="$(now)" '$2 == "inf" || ($2 != "off" && $2 > now + 2) { print $1 }' | sort
}

act_unban() {
	local bans
	mapfile -t bans < <(live_bans)
	[ "${#bans[@]}" -eq 0 ] && return 0
	pick "${#bans[@]}"
	"$CUR_FG" unban fgA "${bans[$R]}" >/dev/null 2>>"$WORK/cli.log" || return 1
	BAN_EXPIRY[${bans[$R]}]=off
}

act_kill9() { stop_run KILL; }
act_stop() { stop_run TERM; }
act_start() { start_run; }

# act_upgrade: the daemon stops (SIGTERM with --keep, or kill -9) and the other
# layout's build takes over with `run`, which upgrades the pins in place.
act_upgrade() {
	local sig=TERM
	pick 2
	[ "$R" -eq 1 ] && sig=KILL
	if [ -n "$RUN_PID" ]; then stop_run "$sig" || return 1; fi
	if [ "$CUR_FG" = "$FG_A" ]; then CUR_FG=$FG_B; else CUR_FG=$FG_A; fi
	start_run && grep -q "upgraded from map layout" "$WORK/run.$RUN_N.log"
}

act_redis_restart() {
	local sig=TERM
	pick 2
	[ "$R" -eq 1 ] && sig=KILL
	kill "-$sig" "$REDIS_PID"
	wait "$REDIS_PID" 2>/dev/null
	sleep 1 # the daemon meets a dead socket for a few syncs
	start_redis
}

# act_fill: spoofed floods past each source table's size (new sources only).
act_fill() {
	local s4 s6
	flood --dst 10.200.0.1 --src 10.0.0.0/8 --dport 9 --rate 200000 --duration 2 \
		>/dev/null 2>>"$WORK/flood.log" || return 1
	flood --dst fd00:200::1 --src fd00:99::/32 --dport 9 --rate 20000 --duration 1 \
		>/dev/null 2>>"$WORK/flood.log" || return 1
	read -r s4 s6 < <("$CUR_FG" status fgA --json | python3 -c '
import json, sys
t = {x["name"]: x for x in json.load(sys.stdin)["interfaces"][0]["tables"]}
print(t["sources4"]["entries"], t["sources"]["entries"])' 2>/dev/null)
	[ "${s4:-0}" -gt "$MAX_FILL4" ] && MAX_FILL4=$s4
	[ "${s6:-0}" -gt "$MAX_FILL6" ] && MAX_FILL6=$s6
	return 0
}

# next_action: the schedule. A stopped daemon is started within two steps.
DOWN_STEPS=0
next_action() {
	local weighted=(reload reload reload ban ban ban ban unban unban kill9 kill9 stop upgrade
		upgrade redis_restart fill fill)
	pick "${#weighted[@]}"
	ACTION=${weighted[$R]}
	if [ -z "$RUN_PID" ]; then
		DOWN_STEPS=$((DOWN_STEPS + 1))
		case $ACTION in kill9 | stop) ACTION=start ;; esac
		[ "$DOWN_STEPS" -ge 2 ] && ACTION=start
	fi
	[ "$ACTION" = start ] && DOWN_STEPS=0
}

# --- the soak -----------------------------------------------------------------------

lab_up
write_conf
start_redis || { echo "soak: redis-server did not start"; cat "$WORK/redis.log"; exit 1; }
BPF_BEFORE=$(bpf_count)
start_run || { echo "soak: floodgate run did not start"; cat "$WORK/run.1.log"; exit 1; }
count_sources "$REAL_SRC"
# Everything else that passes is dropped here too: the stack has no work.
nft add rule netdev fgcount in drop
REAL_T0=$(now)
gen --dst 10.200.0.1 --src "$REAL_SRC" --dport 9 --rate "$REAL_PPS" --batch 1 \
	--duration $((SOAK_SECONDS + 120))
gen --dst 10.200.0.1 --src 10.53.0.0/24 --dport 53 --rate 2000 --batch 1 \
	--duration $((SOAK_SECONDS + 120))
sleep 2
STEADY_PINS=$(pin_count)
STEADY_BPF=$(bpf_count)
FD_BASE=$(fd_count)
say "soak of $SOAK_SECONDS s, seed $SOAK_SEED: $STEADY_PINS pins, $STEADY_BPF programs and" \
	"maps (before the load: $BPF_BEFORE), the daemon holds $FD_BASE descriptors"
RANDOM=$SOAK_SEED
LAST_ACTION=start
check_all
END=$(awk "BEGIN { printf \"%d\", $T0 + $SOAK_SECONDS }")
while [ "$(date +%s)" -lt "$END" ]; do
	next_action
	LAST_ACTION=$ACTION
	ACTION_COUNT[$ACTION]=$((${ACTION_COUNT[$ACTION]:-0} + 1))
	if ! "act_$ACTION"; then
		ACTION_COUNT[$ACTION-failed]=$((${ACTION_COUNT[$ACTION-failed]:-0} + 1))
		breach action "$ACTION failed (see the logs below)"
	fi
	say "$ACTION ($(live_bans | wc -w) bans by hand in force, build ${CUR_FG#"$REPO"/})"
	check_all
	sleep "$SOAK_STEP"
done

# --- the end: memory, then nothing left behind ------------------------------------------
LAST_ACTION=end
memory_flat() {
	python3 - "${RSS_SAMPLES[@]}" <<-'PY'
		import statistics, sys
		s = [int(x) for x in sys.argv[1:]]
		n = len(s) // 3
		if n < 3:
		    print(f"    only {len(s)} RSS samples"); sys.exit(0)
		first, last = statistics.median(s[:n]), statistics.median(s[-n:])
		print(f"    daemon RSS: first third's median {first:.0f} kB, last third's {last:.0f} kB ({len(s)} samples)")
		sys.exit(0 if last <= first * 1.10 else 1)
	PY
}
invariant memory "the daemon's RSS flat (last third's median within +10% of the first's)" memory_flat
if [ -n "$RUN_PID" ]; then stop_run TERM; fi
for pid in "${GEN_PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
GEN_PIDS=()
ZERO=0
expect_exit 0 "unload at the end" "$CUR_FG" unload fgA
invariant pins "no pin of fgA left after the unload" settled ZERO fga_pin_count
invariant bpf-objects "programs and maps back to $BPF_BEFORE after the unload" settled BPF_BEFORE bpf_count

echo
echo "=== soak summary: $(elapsed) s, seed $SOAK_SEED"
echo "actions:"
for a in $(printf '%s\n' "${!ACTION_COUNT[@]}" | sort); do printf '  %-16s %d\n' "$a" "${ACTION_COUNT[$a]}"; done
echo "invariant checks:"
for c in $(printf '%s\n' "${!CHECK_COUNT[@]}" | sort); do
	printf '  %-16s %-6d (%.1f s in all)\n' "$c" "${CHECK_COUNT[$c]}" "${CHECK_SECONDS[$c]}"
done
echo "real source: $RATE/s, burst $BURST; the least headroom under burst + rate x t + 1:" \
	"$(sort -g "$WORK/headroom" | head -n 1) packets"
memory_flat
echo "tables filled up to: sources4 $MAX_FILL4, sources $MAX_FILL6 entries"
echo "daemon instances: $RUN_N; bans by hand made: $(printf '%s\n' "${!BAN_EXPIRY[@]}" | grep -c .)"
echo "breaches: $(grep -c '^[0-9]' < <(printf '%s\n' "${BREACHES[@]}")) distinct$(for r in "${!REPEATS[@]}"; do
	printf ', %s seen again %d times' "$r" "${REPEATS[$r]}"
done)"
for b in "${BREACHES[@]}"; do echo "  $b"; done
[ "${#BREACHES[@]}" -eq 0 ] && [ "$FAILED" -eq 0 ]
