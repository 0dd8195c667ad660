#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate run` as a service on a veth with real traffic: readiness and
# watchdog through a real sd_notify socket; /metrics valid for promtool and
# equal to what an independent nft counter saw; SIGHUP changes a rate and the
# new rate holds; a bad file on SIGHUP is logged with FILE:LINE: and changes
# nothing; kill -9 leaves enforcement running and a new run adopts it;
# SIGTERM leaves nothing attached or pinned; --keep leaves it loaded.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
NOTIFY_PID=
RUN_PID=
trap 'kill $RUN_PID $NOTIFY_PID 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
CONF=$WORK/fgA.conf
LOG=$WORK/run.log
NOTIFY_LOG=$WORK/notify.log
METRICS=127.0.0.1:9310

write_conf() { # RATE BURST
	cat >"$CONF" <<CONF
[policy flood]
match = udp dport 9
rate  = $1/s
burst = $2

[policy rest]
match = any
rate  = 100000/s
CONF
}

# A stand-in for systemd's notify socket: one line per datagram.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ") + "\n")
' "$WORK/notify" "$NOTIFY_LOG" &
NOTIFY_PID=$!
wait_until 5 test -S "$WORK/notify" || echo "the notify socket did not appear"

start_run() {
	: >"$NOTIFY_LOG"
	NOTIFY_SOCKET=$WORK/notify WATCHDOG_USEC=300000 \
		"$FLOODGATE" run fgA -c "$CONF" --metrics "$METRICS" "$@" >>"$LOG" 2>&1 &
	RUN_PID=$!
}

# stop_run SIGNAL: signals the daemon and returns its exit code.
stop_run() {
	kill -"$1" "$RUN_PID"
	wait "$RUN_PID"
}

scrape() {
	python3 -c 'import urllib.request, sys
sys.stdout.write(urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode())' "$METRICS"
}

# sample METRICS NAME LABELS: the value of one sample, e.g.
# sample "$m" floodgate_policy_packets_total 'policy="flood",verdict="passed"'
sample() {
	grep -F "$2{interface=\"fgA\",$3}" <<<"$1" | awk '{print $2}'
}

# within_rate FLOOD_JSON ADMITTED RATE BURST: a GCRA-limited source admits
# burst + rate x elapsed, give or take one pacing gap of the generator.
within_rate() {
	python3 - "$1" "$2" "$3" "$4" <<'PY'
import json, sys
flood, n, rate, burst = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
elapsed = (flood["end_ns"] - flood["start_ns"]) / 1e9
gap = flood["max_batch_ns"] / 1e9 + 64 / flood["rate"]
lo, hi = burst + rate * (elapsed - 2 * gap) - 1, burst + rate * (elapsed + gap) + 1
print(f"    admitted {n}, expected {lo:.1f}..{hi:.1f} (burst {burst} + {rate}/s x {elapsed:.4f} s)")
sys.exit(0 if lo <= n <= hi else 1)
PY
}

pinned_state() {
	bpftool map dump pinned "$PIN/policy_sets" | md5sum
	bpftool net show dev fgA
}

prog_id() {
	"$FLOODGATE" status fgA | sed -n 's/.*program id \([0-9]*\),.*/\1/p'
}

lab_up
write_conf 1000 200

# --- bad command lines change nothing -------------------------------------
expect_exit 2 "run --metrics with a bad address" "$FLOODGATE" run fgA --metrics 127.0.0.1
check "  ... loads nothing" test ! -e "$PIN"
expect_exit 2 "run without an interface" "$FLOODGATE" run

# --- start, ready, metrics --------------------------------------------------
start_run
check "run: READY=1 through sd_notify" wait_until 10 grep -q READY=1 "$NOTIFY_LOG"
check "run: the watchdog is fed (WATCHDOG=1)" wait_until 5 grep -q WATCHDOG=1 "$NOTIFY_LOG"
check "run: attached" bash -c "'$FLOODGATE' status fgA | grep -q ', attached'"
check "run: logs what it does" grep -q "enforcing on fgA, metrics on $METRICS" "$LOG"

count_sources 10.0.1.1 10.0.1.2
out=$(flood --dst 10.200.0.1 --src 10.0.1.1+2 --dport 9 --rate 100000 --duration 1)
sent=$(json_get "$out" 'd["sent"]')
seen=$(($(received 0) + $(received 1)))
m=$(scrape)
printf '%s\n' "$m" >"$WORK/metrics.txt"
check "metrics pass promtool check metrics" bash -c "promtool check metrics <'$WORK/metrics.txt'"
check "metrics: matched = what was sent ($sent)" \
	test "$(sample "$m" floodgate_policy_matched_packets_total 'policy="flood"')" = "$sent"
check "metrics: passed = what the nft counter saw ($seen)" \
	test "$(sample "$m" floodgate_policy_packets_total 'policy="flood",verdict="passed"')" = "$seen"
check "metrics: dropped = sent - seen" \
	test "$(sample "$m" floodgate_policy_packets_total 'policy="flood",verdict="dropped"')" = \
	"$((sent - seen))"
check "metrics: two sources tracked for flood (plus rest's), in the IPv4 table" \
	bash -c "[ $(sample "$m" floodgate_table_entries 'table="sources4"') -ge 4 ]"
check "metrics: table capacity: max_sources for IPv4, a quarter of it for the rest" \
	bash -c "[ $(sample "$m" floodgate_table_capacity 'table="sources4"') = 262144 ] &&
		[ $(sample "$m" floodgate_table_capacity 'table="sources"') = 65536 ]"
check "metrics: build info" grep -q '^floodgate_build_info{version="' <<<"$m"
check "metrics: 404 elsewhere" bash -c "! python3 -c 'import urllib.request; urllib.request.urlopen(\"http://$METRICS/\")' 2>/dev/null"

# --- SIGHUP: a new rate, and it holds ----------------------------------------
write_conf 100 20
kill -HUP "$RUN_PID"
check "SIGHUP: reload logged with what changed" \
	wait_until 5 grep -q "policy flood changed: rate 100/s burst 20" "$LOG"
count_sources 10.0.2.1
out=$(flood --dst 10.200.0.1 --src 10.0.2.1 --dport 9 --rate 20000 --duration 1)
check "SIGHUP: the new rate holds (100/s, burst 20)" within_rate "$out" "$(received 0)" 100 20

# --- SIGHUP with a broken file: logged, nothing changes ------------------------
before=$(pinned_state)
printf '[policy a]\nmatch = udp\nrate = 0/s\n' >"$CONF"
kill -HUP "$RUN_PID"
check "bad SIGHUP: FILE:LINE: logged" wait_until 5 grep -q "^$CONF:3: " "$LOG"
check "  ... and that the running policy stays" \
	wait_until 5 grep -q "the running policy stays" "$LOG"
check "  ... the daemon lives on" kill -0 "$RUN_PID"
check "  ... the pinned policy is unchanged" test "$before" = "$(pinned_state)"
write_conf 100 20

# --- kill -9: enforcement goes on, a new run adopts ---------------------------
id=$(prog_id)
kill -9 "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
check "kill -9: the program stays attached ($id)" test "$(prog_id)" = "$id"
count_sources 10.0.3.1
out=$(flood --dst 10.200.0.1 --src 10.0.3.1 --dport 9 --rate 20000 --duration 1)
check "kill -9: the last policy is still enforced" within_rate "$out" "$(received 0)" 100 20
start_run
check "a new run is ready" wait_until 10 grep -q READY=1 "$NOTIFY_LOG"
check "  ... adopted the running program" grep -q "adopting floodgate already loaded on fgA (program id $id" "$LOG"
check "  ... and kept it" test "$(prog_id)" = "$id"

# --- SIGTERM: nothing left --------------------------------------------------
stop_run TERM
rc=$?
check "SIGTERM: exit 0 ($rc)" test "$rc" -eq 0
check "  ... no pins left" test ! -e "$PIN"
check "  ... XDP detached" bash -c "! ip link show fgA | grep -q xdp"
check "  ... program $id freed" wait_until 5 bash -c "! bpftool prog show id $id 2>/dev/null"

# --- --keep: SIGINT leaves it loaded; unload removes it ---------------------
start_run --keep
check "run --keep is ready" wait_until 10 grep -q READY=1 "$NOTIFY_LOG"
stop_run INT
rc=$?
check "SIGINT with --keep: exit 0 ($rc)" test "$rc" -eq 0
check "  ... still attached and pinned" bash -c "'$FLOODGATE' status fgA | grep -q ', attached'"
expect_exit 0 "floodgate unload removes it" "$FLOODGATE" unload fgA
check "  ... no pins left" test ! -e "$PIN"

# --- an unload behind the daemon's back ends it cleanly ----------------------
start_run
check "run is ready" wait_until 10 grep -q READY=1 "$NOTIFY_LOG"
"$FLOODGATE" unload fgA >/dev/null
check "floodgate unload while run serves: run exits" wait_until 5 bash -c "! kill -0 $RUN_PID 2>/dev/null"
wait "$RUN_PID"
rc=$?
check "  ... with 0 ($rc), and says why" \
	bash -c "[ $rc -eq 0 ] && grep -q 'unloaded from fgA by someone else' '$LOG'"

# --- pins of another layout (an older build): upgraded in place --------------
# (tests/integration/test_upgrade.sh tests the upgrade itself, with two builds)
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$CONF"
id=$(prog_id)
rm "$PIN/global_stats"
bpftool map create "$PIN/global_stats" type percpu_array key 4 value 8 entries 1 name global_stats
start_run
check "run over pins of another layout upgrades them" \
	wait_until 10 grep -q "upgraded from map layout" "$LOG"
check "  ... replacing the program ($id)" bash -c "[ -n '$(prog_id)' ] && [ '$(prog_id)' != '$id' ]"
stop_run TERM
rc=$?
check "  ... and SIGTERM unloads it: exit 0 ($rc)" bash -c "[ $rc -eq 0 ] && [ ! -e '$PIN' ]"

echo "--- run log"
sed 's/^/    /' "$LOG"
finish
