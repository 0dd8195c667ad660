#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# /metrics under stress: no counter ever decreases while `floodgate run`
# lives, not even across a reload that copies the counters while packets
# still meet the old slot; slow clients cannot hold the endpoint, and a
# scrape over a full table answers.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
RUN_PID=
trap 'kill $RUN_PID 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
CONF=$WORK/fgA.conf
LOG=$WORK/run.log
METRICS=127.0.0.1:9311

write_conf() { # RATE
	cat >"$CONF" <<-CONF
		new_sources = off
		[policy flood]
		match = udp dport 9
		rate  = $1/s
		burst = 100

		[policy rest]
		match = any
		rate  = 100000/s
	CONF
}

scrape() {
	curl -sS --max-time 5 "http://$METRICS/metrics"
}

# monotonic BEFORE AFTER...: every counter sample of each scrape file is >=
# its value in the scrape before; prints the first decrease.
monotonic() {
	python3 - "$@" <<'PY'
import sys
def counters(path):
    kinds, values = {}, {}
    for line in open(path):
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            kinds[name] = kind
        elif line.strip() and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            if kinds.get(series.split("{")[0]) == "counter":
                values[series] = float(value)
    return values
last, series = {}, 0
for path in sys.argv[1:]:
    now = counters(path)
    if not now:
        sys.exit(f"{path}: no counters")
    for k, v in now.items():
        if k in last and v < last[k]:
            sys.exit(f"{path}: {k} went from {last[k]:.0f} down to {v:.0f}")
    last.update(now)
    series = len(last)
print(f"    {len(sys.argv) - 1} scrapes, {series} counter series, none decreased")
PY
}

lab_up
write_conf 1000
"$FLOODGATE" run fgA -c "$CONF" --metrics "$METRICS" >>"$LOG" 2>&1 &
RUN_PID=$!
check "run serves /metrics" wait_until 10 bash -c "curl -sf 'http://$METRICS/metrics' >/dev/null"

# --- a reload stopped between the copy of the counters and the flip ----------
# (FG_TEST_STOP_AT): what the old slot counts there must not be lost.
flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --count 2000 >/dev/null
write_conf 2000
FG_TEST_STOP_AT=reload-carried "$FLOODGATE" reload fgA -c "$CONF" >/dev/null 2>&1 &
reload_pid=$!
check "the reload stops after the copy" wait_until 10 process_stopped "$reload_pid"
flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --count 5000 >/dev/null
scrape >"$WORK/before-flip.txt"
kill -CONT "$reload_pid"
check "  ... then completes" wait "$reload_pid"
sleep 1.1 # past the 1 s the endpoint serves one text for
scrape >"$WORK/after-flip.txt"
check "no counter decreased across the flip" monotonic "$WORK/before-flip.txt" "$WORK/after-flip.txt"

# --- reloads in a loop under a flood ----------------------------------------
flood --dst 10.200.0.1 --src 10.0.1.1+64 --dport 9 --rate 50000 --duration 4 >/dev/null &
flood_pid=$!
(
	rate=1000
	while kill -0 "$flood_pid" 2>/dev/null; do
		rate=$((rate == 1000 ? 2000 : 1000))
		write_conf "$rate"
		"$FLOODGATE" reload fgA -c "$CONF" >/dev/null 2>&1 || echo failed >>"$WORK/reloads"
		echo ok >>"$WORK/reloads"
	done
) &
reloader=$!
n=0
while kill -0 "$flood_pid" 2>/dev/null; do
	scrape >"$WORK/scrape.$((n += 1))" 2>/dev/null || rm -f "$WORK/scrape.$n"
done
wait "$flood_pid" "$reloader"
reloads=$(grep -c ok "$WORK/reloads")
check "reloads ran under the flood ($reloads, none failed)" \
	test "$reloads" -gt 5 -a ! "$(grep -c failed "$WORK/reloads")" -gt 0
# shellcheck disable=SC2046
check "no counter decreased over $n scrapes" \
	monotonic "$WORK/after-flip.txt" $(ls -v "$WORK"/scrape.*)

# --- slow clients cannot hold the endpoint ----------------------------------
# 24 clients from 127.0.0.1 each send half a request, then one byte every
# 2 s (under the 5 s idle timeout) for 12 s; meanwhile a scrape from
# 127.0.0.2 must answer within the timeout, as must one from 127.0.0.1
# once they are gone. The endpoint keeps at most 4 connections per client.
python3 - "$METRICS" >"$WORK/slow.out" <<'PY' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = []
for _ in range(24):
    try:
        s = socket.create_connection((host, int(port)), timeout=1)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        s.setblocking(False)
        socks.append(s)
    except OSError:
        pass
time.sleep(1)
def is_open(s):
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
print(sum(is_open(s) for s in socks), flush=True)
end = time.monotonic() + 11
while time.monotonic() < end:
    for s in socks:
        try:
            s.send(b"X")
        except OSError: # closed by the endpoint, or its buffer full
            pass
    time.sleep(2)
PY
slow_pid=$!
wait_until 30 test -s "$WORK/slow.out"
open=$(cat "$WORK/slow.out")
check "24 slow clients from one address: at most 4 kept ($open)" test "${open:-99}" -le 4
sleep 2
start=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 --max-time 5 \
	"http://$METRICS/metrics")
ms=$((($(date +%s%N) - start) / 1000000))
check "a scrape from another address meanwhile answers 200 within the 5 s timeout ($code, $ms ms)" \
	test "$code" = 200
wait "$slow_pid"
answers() { curl -sf -o /dev/null --max-time 1 "http://$METRICS/metrics"; }
check "a scrape from their address answers within 5 s once they are gone" wait_until 5 answers

# A client that sends half a request and then nothing is closed after the
# 5 s idle timeout (within a second more).
idle=$(python3 - "$METRICS" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=30)
s.sendall(b"GET /metrics HTTP/1.1\r\n")
start = time.monotonic()
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print(f"{time.monotonic() - start:.2f}")
PY
)
check "a silent client is closed within 5 s + 1 ($idle s)" \
	python3 -c "import sys; sys.exit(not float('$idle') <= 6)"

# --- a scrape over a big table ----------------------------------------------
# Eight scrapers at once, each from an address of its own (one address may
# hold only 4 connections).
flood --dst 10.200.0.1 --src 10.64.0.0+100000 --dport 9 --count 100000 >/dev/null
scrapers=()
for i in $(seq 8); do
	curl -s --max-time 5 --interface "127.0.1.$i" -o "$WORK/big.$i" -w '%{http_code}\n' \
		"http://$METRICS/metrics" >"$WORK/big.$i.code" &
	scrapers+=($!)
done
wait "${scrapers[@]}"
codes=$(cat "$WORK"/big.*.code | sort | uniq -c | xargs)
check "8 scrapes at once over the table answer 200 within 5 s ($codes)" test "$codes" = "8 200"
entries=$(grep -F 'floodgate_table_entries{interface="fgA",table="sources4"}' "$WORK/big.1" |
	awk '{ print $2 }')
check "  ... with the table full ($entries entries in sources4)" test "${entries:-0}" -ge 50000

finish
