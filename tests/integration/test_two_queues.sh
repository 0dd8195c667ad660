#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Two receive queues (issue 25, scaling across CPUs): one hot source floods
# fgA from a generator thread on each CPU, so that each CPU's NAPI runs
# floodgate's XDP program on its own queue, and both refuse the source. The
# source still gets its exact allowance, burst + rate x elapsed, as on one
# CPU: the state both CPUs charge is one. Behaviour only, no speed: the
# speed of two queues is `make bench`'s (docs/benchmarks.md).
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
RATE=1000 # per second
BURST=200
SEND_RATE=100000 # frames a second over both threads: 100x the limit

lab_up
check "fgA has two receive queues" test "$(ls -d /sys/class/net/fgA/queues/rx-* | wc -l)" -eq 2
cat >"$WORK/floodgate.conf" <<CONF
[policy hot]
match = udp dport 9
rate = $RATE/s
burst = $BURST
CONF
expect_exit 0 "load floodgate XDP" "$FLOODGATE" load fgA -c "$WORK/floodgate.conf" --hook xdp

# queue_stat NAME: "q0 q1", ethtool's rx_queue_N_NAME of fgA.
queue_stat() {
	ethtool -S fgA | awk -v n="$1" '$1 ~ "^rx_queue_[0-9]+_" n ":$" { printf "%s ", $2 }'
}
packets0=$(queue_stat xdp_packets)
drops0=$(queue_stat xdp_drops)
rx0=$(cat /sys/class/net/fgA/statistics/rx_packets)
out=$(flood --dst 10.200.0.1 --src 10.0.0.1 --dport 9 --threads 2 --rate $SEND_RATE --duration 1.5)
# until fgA has received every frame the generator delivered
rx_reached() { [ "$(cat /sys/class/net/fgA/statistics/rx_packets)" -ge "$1" ]; }
delivered=$(json_get "$out" 'd["sent"] - max(d["tx_dropped"], 0)')
wait_until 2 rx_reached $((rx0 + delivered))
packets1=$(queue_stat xdp_packets)
drops1=$(queue_stat xdp_drops)
stats=$("$FLOODGATE" stats fgA --json)

# Each queue ran a quarter of the frames or more (the threads send half
# each) and refused some: both CPUs charged the one source.
check "both receive queues ran the program and refused the hot source" python3 - \
	"$out" "$packets0" "$packets1" "$drops0" "$drops1" <<'PY'
import json, sys
flood = json.loads(sys.argv[1])
p0, p1, d0, d1 = ([int(x) for x in a.split()] for a in sys.argv[2:])
packets = [b - a for a, b in zip(p0, p1)]
drops = [b - a for a, b in zip(d0, d1)]
delivered = flood["sent"] - max(flood["tx_dropped"], 0)
print(f"    per queue: ran {packets}, refused {drops} of {delivered} delivered")
sys.exit(0 if len(packets) == 2 and all(p >= delivered / 4 for p in packets)
         and all(d > 0 for d in drops) else 1)
PY

# The GCRA bound of test_algorithms.sh: a source idle at most one pacing
# interval (64 frames a batch, per thread) plus the longest batch (gap).
check "the hot source got burst + rate x elapsed over both CPUs" python3 - \
	"$out" "$stats" $RATE $BURST <<'PY'
import json, sys
flood, stats = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rate, burst = int(sys.argv[3]), int(sys.argv[4])
elapsed = (flood["end_ns"] - flood["start_ns"]) / 1e9
gap = flood["max_batch_ns"] / 1e9 + 64 * flood["threads"] / flood["rate"]
lo = burst + rate * (elapsed - 2 * gap) - 1
hi = burst + rate * (elapsed + gap) + 1
passed = sum(p["passed_packets"] for p in stats["policies"])
packets = stats["global"]["packets"]
delivered = flood["sent"] - max(flood["tx_dropped"], 0)
print(f"    admitted {passed}, expected {lo:.1f}..{hi:.1f} ({elapsed:.4f} s, gap {gap * 1e3:.2f} ms); "
      f"floodgate saw {packets} of {delivered} delivered")
sys.exit(0 if lo <= passed <= hi and packets == delivered else 1)
PY
finish
