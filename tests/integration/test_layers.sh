#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stacked limits through the real CLI on a real veth with real traffic (XDP):
# a per-address layer, a per-/24 layer and a global layer, all matching the
# same flood. Each phase loads a fresh floodgate and floods so that one layer
# binds in turn, then checks what reached the stack (nft counters on fgA)
# against burst + rate x elapsed for that layer, and that `stats --json`
# agrees layer by layer: a packet a layer refuses is never seen by the later
# ones, and the earlier ones have been charged for it. An AF_PACKET tap on
# fgA times the first frame that arrives, which the generator cannot report.
#
#   phase 1  10.0.1.250 alone                       per-IP binds
#   phase 2  10.0.1.250..255 and 10.0.2.0           per-/24 binds for 10.0.1/24
#   phase 3  10.0.1.252..255, 10.0.2.0,             global binds
#            10.0.3.252..255, 10.0.4.0..3,
#            10.0.5.252..255, 10.0.6.0..3
#
# The sources of a generator are consecutive addresses (the generator's
# ADDR+K), so 10.0.1.250+7 is six sources of 10.0.1.0/24 and one outside it.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
TAP=
trap '[ -n "$TAP" ] && kill "$TAP" 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
# The bursts are small next to rate x SECS (200, 600, 2000 packets).
RATE_IP=100
BURST_IP=20
RATE_24=300
BURST_24=60
RATE_G=1000
BURST_G=200
SECS=2
# A saturated layer behind per-ip refuses at least every SLACK (see bounds.py).
SLACK=$(awk "BEGIN { print 1 / $RATE_IP }")

cat >"$WORK/layers.conf" <<CONF
[policy per-ip]
match = udp dport 9
per   = src/32 src/64
rate  = $RATE_IP/s
burst = $BURST_IP

[policy per-24]
match = udp dport 9
per   = src/24 src/48
rate  = $RATE_24/s
burst = $BURST_24

[policy global]
match = udp dport 9
per   = global
rate  = $RATE_G/s
burst = $BURST_G
CONF

# bounds.py MODE VALUES SPEC...: checks each NAME=VALUE of VALUES against the
# admitted count of the buckets in the SPECs, summed. MODE is `within` (both
# bounds) or `atmost` (the upper bound only).
#
# A SPEC is N:RATE:BURST:SLACK:RUN[,RUN...]: N buckets of RATE/s and BURST,
# fed by the generator runs RUN (their JSON files), and saturated (offered
# more than RATE) while all of them send. A source sends a frame at least
# every gap = max_batch_ns + max(sources, batch) / rate (round-robin, paced
# per batch). A run's first_ns and last_ns (added by `arrivals`) are when its
# first and last admitted frame reached fgA. The generator's start_ns is taken
# before its thread wakes up, which under load can be tens of ms before its
# first frame, and nothing else in its JSON shows that delay. (A first frame
# that a layer refused is not seen: first_ns can only come later, which
# loosens the lower bound.)
# - Upper: a GCRA bucket starts full at its first packet, after the earliest
#   start_ns, and admits at most burst + rate x (last - first packet) + 1;
#   it admits its last packet by the latest end_ns (or last_ns).
# - Lower: at the latest first frame s, the tokens left plus what was
#   admitted before s are at least burst. From s to the bucket's last refusal
#   t it is charged for every token it earns, as long as it never fills up
#   (that takes burst / rate = 200 ms without a packet), so it admits at
#   least burst + rate x (t - s) - 1. A per-ip bucket sees every frame of its
#   source, so t is within gap of the source's last frame. A later layer sees
#   a frame from each source once every 1 / RATE_IP, and here it is always
#   offered at least RATE_IP more than its rate, so it refuses at least every
#   SLACK = 1 / RATE_IP.
# Hence, with 2 gap for the two ends as in test_cli.sh,
#   [burst + rate (min end_ns - max first_ns - 2 gap - SLACK) - 1,
#    burst + rate (max last_ns - min start_ns + gap) + 1].
cat >"$WORK/bounds.py" <<'PY'
import json, sys

mode, values, specs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
lo = hi = 0.0
why = []
for spec in specs:
    n, rate, burst, slack, runs = spec.split(":")
    n, rate, burst, slack = int(n), float(rate), float(burst), float(slack)
    floods = [json.load(open(f)) for f in runs.split(",")]
    gap = max(f["max_batch_ns"] / 1e9 + max(f["sources"], f["batch"]) / f["rate"] for f in floods)
    first = max(max(f["start_ns"], f.get("first_ns", 0)) for f in floods)
    last = max(max(f["end_ns"], f.get("last_ns", 0)) for f in floods)
    short = (min(f["end_ns"] for f in floods) - first) / 1e9
    full = (last - min(f["start_ns"] for f in floods)) / 1e9
    lo += n * (burst + rate * (short - 2 * gap - slack) - 1)
    hi += n * (burst + rate * (full + gap) + 1)
    why.append(f"{n} x (burst {burst:g} + {rate:g}/s x {short:.4f}..{full:.4f} s, gap {gap * 1e3:.2f} ms)")
ok = True
for item in values:
    name, value = item.split("=")
    value = int(value)
    good = value <= hi and (mode == "atmost" or value >= lo)
    ok &= good
    low = f"{lo:.1f}" if mode == "within" else "0"
    print(f"    {name}: {value}, expected {low}..{hi:.1f} {'ok' if good else 'OUT OF BOUNDS'}")
print("      from " + " + ".join(why))
sys.exit(0 if ok else 1)
PY
bounds() { python3 -S "$WORK/bounds.py" "$@"; }

# tap.py OUT: records when each source's first and last frame passed by
# floodgate reached fgA (an AF_PACKET tap sees them before nft's ingress
# hook), on CLOCK_MONOTONIC, until SIGTERM; then writes {source: [first,
# last]} to OUT. It creates OUT.ready once it listens.
cat >"$WORK/tap.py" <<'PY'
import json, os, signal, socket, struct, sys, time

SO_TIMESTAMPNS = 35
stop = False
def on_term(signum, frame):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
# ETH_P_ALL: a tap bound to ETH_P_IP would only see what passed nft.
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("fgA", 3))
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s.settimeout(0.05)
offset = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
seen = {}
parent = os.getppid()
open(sys.argv[1] + ".ready", "w").close()
while not stop and os.getppid() == parent:  # nor outlive the test
    try:
        data, anc, _, addr = s.recvmsg(64, socket.CMSG_SPACE(16))
    except (socket.timeout, InterruptedError):
        continue
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", cdata[:16])
            t = sec * 10**9 + nsec - offset
            if data[12:14] == b"\x08\x00" and addr[2] != socket.PACKET_OUTGOING:
                src = socket.inet_ntoa(data[26:30])
                seen[src] = [seen.get(src, [t])[0], t]
json.dump(seen, open(sys.argv[1], "w"))
PY

# tap_start / tap_stop: the tap around one phase's flood, into $WORK/tap.json.
tap_start() {
	rm -f "$WORK/tap.json" "$WORK/tap.json.ready"
	python3 -S "$WORK/tap.py" "$WORK/tap.json" &
	TAP=$!
	check "tap on fgA listening" wait_until 5 test -e "$WORK/tap.json.ready"
}
tap_stop() {
	kill -TERM "$TAP"
	wait "$TAP"
	TAP=
}

# arrivals FILE ADDR...: adds first_ns and last_ns to the run's JSON in
# FILE: the first and last arrival at fgA (tap.json) from its sources ADDR.
arrivals() {
	python3 -S - "$WORK/tap.json" "$@" <<'PY'
import json, os, sys
tap, path, addrs = sys.argv[1], sys.argv[2], sys.argv[3:]
seen = json.load(open(tap)) if os.path.exists(tap) else {}
run = json.load(open(path))
times = [seen[a] for a in addrs if a in seen]
if times:
    run["first_ns"] = min(t[0] for t in times)
    run["last_ns"] = max(t[1] for t in times)
    print(f"    first frame at fgA {(run['first_ns'] - run['start_ns']) / 1e6:.2f} ms after start_ns, "
          f"last {(run['last_ns'] - run['end_ns']) / 1e6:+.2f} ms from end_ns")
json.dump(run, open(path, "w"))
PY
}

# counts N: the first N nft counters of count_sources, in order, in one call.
counts() {
	nft -j list counters table netdev fgcount | python3 -S -c '
import json, sys
c = {o["counter"]["name"]: o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o}
print(" ".join(str(c[f"c{i}"]) for i in range(int(sys.argv[1]))))' "$1"
}

# named NAME... -- COUNT...: "name=count ..." for bounds.py, as many of each.
named() {
	local -a args=("$@")
	local n=$((($# - 1) / 2)) i out=""
	for ((i = 0; i < n; i++)); do out+="${args[i]}=${args[n + 1 + i]} "; done
	echo "$out"
}

sum() {
	local s=0 x
	for x; do s=$((s + x)); done
	echo $s
}

# sent FILE...: the frames the generator runs sent, from their JSON.
sent() {
	local f n=0
	for f; do
		[[ $(<"$f") =~ \"sent\":\ ([0-9]+) ]] && n=$((n + BASH_REMATCH[1]))
	done
	echo $n
}

# read_stats: reads `stats --json` once into STATS and the L_* variables.
read_stats() {
	STATS=$("$FLOODGATE" stats fgA --json)
	echo "    stats: $STATS"
	eval "$(python3 -S -c 'import json, sys
for p in json.loads(sys.argv[1])["policies"]:
    for k in ("matched", "passed", "dropped", "would_drop"):
        print("L_%s_%s=%d" % (p["name"].replace("-", "_"), k, p[k + "_packets"]))' "$STATS")"
}

# layer NAME FIELD: a per-layer counter of read_stats, e.g. layer per-ip passed.
layer() {
	local v="L_${1//-/_}_$2"
	echo "${!v}"
}

# layers_agree SENT RECEIVED: the walk, as the counters see it. Every frame
# meets per-ip first; a layer sees exactly what the layer before it passed;
# what global passed is what reached the stack; nothing is a would-drop.
layers_agree() {
	local sent=$1 received=$2 l
	read_stats
	check "  per-ip matched $(layer per-ip matched) = sent $sent" \
		test "$(layer per-ip matched)" -eq "$sent"
	check "  per-24 matched $(layer per-24 matched) = per-ip passed $(layer per-ip passed)" \
		test "$(layer per-24 matched)" -eq "$(layer per-ip passed)"
	check "  global matched $(layer global matched) = per-24 passed $(layer per-24 passed)" \
		test "$(layer global matched)" -eq "$(layer per-24 passed)"
	check "  global passed $(layer global passed) = received $received" \
		test "$(layer global passed)" -eq "$received"
	for l in per-ip per-24 global; do
		check "  $l: dropped = matched - passed, no would-drop" \
			test "$(layer $l dropped)" -eq $(($(layer $l matched) - $(layer $l passed))) \
			-a "$(layer $l would_drop)" -eq 0
	done
}

# gen FILE ARGS...: one generator run to 10.200.0.1 port 9, JSON into FILE.
gen() {
	local file=$1
	shift
	flood --dst 10.200.0.1 --dport 9 --duration $SECS "$@" >"$file"
	echo "    flood: $(cat "$file")"
}

lab_up
START=$SECONDS
expect_exit 0 "check the layered config" "$FLOODGATE" check -c "$WORK/layers.conf"

# --- phase 1: one source, the per-IP layer binds -------------------------
# 20000 pps from one address. per-24 (burst 60 >= 20, 300/s > 100/s) and
# global never refuse what per-ip passed.
echo "# phase 1: 10.0.1.250 alone at 20000 pps: per-ip binds"
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/layers.conf" --hook xdp
count_sources 10.0.1.250
tap_start
gen "$WORK/p1.json" --src 10.0.1.250 --rate 20000
tap_stop
arrivals "$WORK/p1.json" 10.0.1.250
read -ra c <<<"$(counts 1)"
check "10.0.1.250 admitted burst_ip + $RATE_IP/s x elapsed" \
	bounds within "10.0.1.250=${c[0]}" "1:$RATE_IP:$BURST_IP:0:$WORK/p1.json"
layers_agree "$(sent "$WORK/p1.json")" "$(sum "${c[@]}")"
check "  per-ip refused the rest ($(layer per-ip dropped))" test "$(layer per-ip dropped)" -gt 0
check "  per-24 and global refused nothing" \
	test "$(layer per-24 dropped)" -eq 0 -a "$(layer global dropped)" -eq 0
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- phase 2: six sources in one /24, the per-/24 layer binds ------------
# 4000 pps from each of 10.0.1.250..255 and 10.0.2.0. Per-ip passes 100/s
# of each, 600/s for 10.0.1.0/24, of which per-24 passes 300/s. 10.0.2.0 has
# its own /24 bucket and keeps its per-IP share. Global (400/s offered,
# burst 200 > 6 x 20 + 20) never refuses.
echo "# phase 2: 10.0.1.250..255 and 10.0.2.0 at 4000 pps each: per-24 binds"
SRCS=(10.0.1.250 10.0.1.251 10.0.1.252 10.0.1.253 10.0.1.254 10.0.1.255 10.0.2.0)
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/layers.conf" --hook xdp
count_sources "${SRCS[@]}"
tap_start
gen "$WORK/p2.json" --src 10.0.1.250+7 --rate 28000
tap_stop
arrivals "$WORK/p2.json" "${SRCS[@]}"
read -ra c <<<"$(counts 7)"
P2="$WORK/p2.json"
check "10.0.1.0/24 admitted burst_24 + $RATE_24/s x elapsed" \
	bounds within "10.0.1.0/24=$(sum "${c[@]:0:6}")" "1:$RATE_24:$BURST_24:$SLACK:$P2"
# Only upper bounds per source: the split of the /24's share among its
# sources is not fair. Every per-IP bucket is charged for what per-24 then
# refuses, and the sources' buckets, all full at the start, refill in step,
# so the same sources come first in each round and take per-24's tokens.
check "no source above its per-IP bound" \
	bounds atmost "$(named "${SRCS[@]}" -- "${c[@]}")" "1:$RATE_IP:$BURST_IP:0:$P2"
check "10.0.2.0, outside the /24, admitted its per-IP share" \
	bounds within "10.0.2.0=${c[6]}" "1:$RATE_IP:$BURST_IP:0:$P2"
layers_agree "$(sent "$P2")" "$(sum "${c[@]}")"
# Every source's per-ip bucket was charged, also for what per-24 refused.
check "  per-ip passed 7 per-IP shares" \
	bounds within "per-ip.passed=$(layer per-ip passed)" "7:$RATE_IP:$BURST_IP:0:$P2"
check "  per-24 passed one /24 share and 10.0.2.0's per-IP share" \
	bounds within "per-24.passed=$(layer per-24 passed)" \
	"1:$RATE_24:$BURST_24:$SLACK:$P2" "1:$RATE_IP:$BURST_IP:0:$P2"
check "  per-24 refused ($(layer per-24 dropped)), global refused nothing" \
	test "$(layer per-24 dropped)" -gt 0 -a "$(layer global dropped)" -eq 0
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- phase 3: five /24s and 10.0.2.0, the global layer binds -------------
# 1000 pps from each of 21 sources, from three generators at once (each
# sends one frame per test_run call, --batch 1, so that they share the
# device). Each /24 of four sources offers 400/s to per-24, which passes
# 300/s; with 10.0.2.0's 100/s, global is offered 1600/s and passes 1000/s.
echo "# phase 3: 10.0.1/24, 10.0.3/24 .. 10.0.6/24 (4 sources each) and 10.0.2.0: global binds"
A=(10.0.1.252 10.0.1.253 10.0.1.254 10.0.1.255 10.0.2.0)
B=(10.0.3.252 10.0.3.253 10.0.3.254 10.0.3.255 10.0.4.0 10.0.4.1 10.0.4.2 10.0.4.3)
C=(10.0.5.252 10.0.5.253 10.0.5.254 10.0.5.255 10.0.6.0 10.0.6.1 10.0.6.2 10.0.6.3)
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/layers.conf" --hook xdp
count_sources "${A[@]}" "${B[@]}" "${C[@]}"
tap_start
NCPU=$(nproc)
i=0
pids=()
for g in "10.0.1.252+5 5000 a" "10.0.3.252+8 8000 b" "10.0.5.252+8 8000 c"; do
	read -r src rate name <<<"$g"
	# Spread the generators over the CPUs; each pins its thread to the
	# first CPU it may use.
	(
		taskset -p -c $((i % NCPU)) $BASHPID >/dev/null
		flood --dst 10.200.0.1 --dport 9 --duration $SECS --src "$src" --rate "$rate" \
			--batch 1 >"$WORK/p3$name.json"
	) &
	pids+=($!)
	i=$((i + 1))
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
tap_stop
check "three generators at once" test $rc -eq 0
PA="$WORK/p3a.json" PB="$WORK/p3b.json" PC="$WORK/p3c.json"
echo "    flood a: $(cat "$PA")"
arrivals "$PA" "${A[@]}"
echo "    flood b: $(cat "$PB")"
arrivals "$PB" "${B[@]}"
echo "    flood c: $(cat "$PC")"
arrivals "$PC" "${C[@]}"
read -ra c <<<"$(counts 21)"
ca=("${c[@]:0:5}") cb=("${c[@]:5:8}") cc=("${c[@]:13:8}")
check "total admitted burst_g + $RATE_G/s x elapsed" \
	bounds within "all=$(sum "${c[@]}")" "1:$RATE_G:$BURST_G:$SLACK:$PA,$PB,$PC"
check "no /24 above its per-24 bound (a)" bounds atmost \
	"10.0.1.0/24=$(sum "${ca[@]:0:4}")" "1:$RATE_24:$BURST_24:0:$PA"
check "no /24 above its per-24 bound (b)" bounds atmost \
	"10.0.3.0/24=$(sum "${cb[@]:0:4}") 10.0.4.0/24=$(sum "${cb[@]:4:4}")" \
	"1:$RATE_24:$BURST_24:0:$PB"
check "no /24 above its per-24 bound (c)" bounds atmost \
	"10.0.5.0/24=$(sum "${cc[@]:0:4}") 10.0.6.0/24=$(sum "${cc[@]:4:4}")" \
	"1:$RATE_24:$BURST_24:0:$PC"
check "no source above its per-IP bound (a)" bounds atmost "$(named "${A[@]}" -- "${ca[@]}")" "1:$RATE_IP:$BURST_IP:0:$PA"
check "no source above its per-IP bound (b)" bounds atmost "$(named "${B[@]}" -- "${cb[@]}")" "1:$RATE_IP:$BURST_IP:0:$PB"
check "no source above its per-IP bound (c)" bounds atmost "$(named "${C[@]}" -- "${cc[@]}")" "1:$RATE_IP:$BURST_IP:0:$PC"
layers_agree "$(sent "$PA" "$PB" "$PC")" "$(sum "${c[@]}")"
check "  per-ip passed 21 per-IP shares" \
	bounds within "per-ip.passed=$(layer per-ip passed)" \
	"5:$RATE_IP:$BURST_IP:0:$PA" "8:$RATE_IP:$BURST_IP:0:$PB" "8:$RATE_IP:$BURST_IP:0:$PC"
check "  per-24 passed five /24 shares and 10.0.2.0's per-IP share" \
	bounds within "per-24.passed=$(layer per-24 passed)" "1:$RATE_24:$BURST_24:$SLACK:$PA" \
	"1:$RATE_IP:$BURST_IP:0:$PA" "2:$RATE_24:$BURST_24:$SLACK:$PB" "2:$RATE_24:$BURST_24:$SLACK:$PC"
check "  global refused ($(layer global dropped)), per-24 refused ($(layer per-24 dropped))" \
	test "$(layer global dropped)" -gt 0 -a "$(layer per-24 dropped)" -gt 0
expect_exit 0 "unload" "$FLOODGATE" unload fgA
echo "# $((SECONDS - START)) s"

finish
