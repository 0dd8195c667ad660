#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Integration test of the traffic generator, build/floodgate-flood.
#
# It re-executes itself in new network and mount namespaces, so nothing it
# creates is visible from (or sends anything into) the host's: a veth pair
# fgA (sender) / fgB (receiver) and a private bpffs. On fgB, a checking XDP
# program (tools/flood/flood_check.bpf.c, attached natively) verifies every
# frame it receives (IPv4 header checksum, UDP/TCP checksum over
# pseudo-header and segment, lengths, SYN fields, zero payload), counts
# frames per source and per flow (MACs, protocol, ports), and drops them. The
# test compares those counts with what was asked and with the generator's
# JSON report.
#
# Environment: FLOOD_GEN (default build/floodgate-flood), FLOOD_CHECK_OBJ
# (default build/flood_check.bpf.o). Exit status: 0 all passed, 1 a failure,
# 77 skipped (not root, no namespaces, no BPF). The last line is always
# "N passed, M failed".
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLOOD_GEN=${FLOOD_GEN:-$ROOT/build/floodgate-flood}
FLOOD_CHECK_OBJ=${FLOOD_CHECK_OBJ:-$ROOT/build/flood_check.bpf.o}
PASSED=0
FAILED=0

# skip REASON: exits 77 only before any check ran; part-way (a checker that
# stops loading after earlier cases) it is a failure, so that an exit 77
# never drops the failures already counted.
skip() {
	if [ $((PASSED + FAILED)) -gt 0 ]; then
		echo "not ok - cannot go on after $PASSED passed, $FAILED failed: $*"
		echo "$PASSED passed, $((FAILED + 1)) failed"
		exit 1
	fi
	echo "SKIP: $*"
	echo "0 passed, 0 failed"
	exit 77
}

if [ -z "${FG_FLOOD_LAB:-}" ]; then
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for tool in unshare ip bpftool python3 mount; do
		command -v "$tool" >/dev/null 2>&1 || skip "needs $tool"
	done
	unshare -n -m true 2>/dev/null || skip "cannot create network and mount namespaces"
	FG_FLOOD_LAB=1 exec unshare -n -m -- "$BASH" "${BASH_SOURCE[0]}" "$@"
fi

# ---- inside the private namespaces -----------------------------------------

WORK=$(mktemp -d /tmp/fg-flood-test.XXXXXX)
PIN=/sys/fs/bpf/fgcheck
PIN_MAPS=/sys/fs/bpf/fgcheck_maps
HELPER_PID=

cleanup() {
	[ -n "$HELPER_PID" ] && kill "$HELPER_PID" 2>/dev/null
	ip link del fgA 2>/dev/null
	ip link del fgC 2>/dev/null
	rm -rf "$PIN" "$PIN_MAPS" 2>/dev/null
	umount /sys/fs/bpf 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

mount --make-rprivate / 2>/dev/null || skip "cannot make mounts private"
mount -t bpf bpf /sys/fs/bpf 2>/dev/null || skip "cannot mount bpffs"
ip link set lo up

[ -x "$FLOOD_GEN" ] || {
	echo "FAIL: no generator binary at $FLOOD_GEN (make tests, or set FLOOD_GEN)"
	echo "0 passed, 1 failed"
	exit 1
}
[ -r "$FLOOD_CHECK_OBJ" ] || {
	echo "FAIL: no checker object at $FLOOD_CHECK_OBJ (run make)"
	echo "0 passed, 1 failed"
	exit 1
}

# No IPv6 autoconfiguration: no router/neighbour solicitations or MLD
# reports from the lab's own links, so the receiver sees only the flood.
sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
ip link add fgA type veth peer name fgB || skip "cannot create a veth pair"
# One receive queue per CPU on fgB, so that several sending threads do not
# overflow one queue's ring (those drops would show as tx_dropped).
NPROC=$(nproc)
if command -v ethtool >/dev/null 2>&1; then
	ethtool -L fgB rx "$NPROC" tx "$NPROC" 2>/dev/null
	ethtool -L fgA rx "$NPROC" tx "$NPROC" 2>/dev/null
fi
if ! ip link set fgA up || ! ip link set fgB up; then
	skip "cannot bring the veth pair up"
fi
MAC_A=$(ip -o link show fgA | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
MAC_B=$(ip -o link show fgB | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

pass() {
	PASSED=$((PASSED + 1))
	echo "ok - $*"
}

fail() {
	FAILED=$((FAILED + 1))
	echo "not ok - $*"
}

expect_eq() { # NAME ACTUAL EXPECTED
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}

expect_le() { # NAME ACTUAL MAX (integers)
	if [ -n "$2" ] && [ "$2" -le "$3" ] 2>/dev/null; then
		pass "$1"
	else
		fail "$1: got '$2', want <= $3"
	fi
}

expect_ge() { # NAME ACTUAL MIN (integers)
	if [ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null; then
		pass "$1"
	else
		fail "$1: got '$2', want >= $3"
	fi
}

checker_load() {
	rm -rf "$PIN" "$PIN_MAPS"
	if ! bpftool prog load "$FLOOD_CHECK_OBJ" "$PIN" type xdp pinmaps "$PIN_MAPS" \
		>"$WORK/load.log" 2>&1; then
		cat "$WORK/load.log"
		skip "cannot load the checker (no BPF?)"
	fi
	ip link set dev fgB xdpdrv pinned "$PIN" || skip "cannot attach native XDP to fgB"
}

checker_unload() {
	ip link set dev fgB xdpdrv off 2>/dev/null
	rm -rf "$PIN" "$PIN_MAPS"
}

# Prints KEY=VALUE lines about the last run: f_* from the generator's JSON,
# c_* from the checker's counters, s_* about the sources it saw (in address
# order; s_outside counts distinct sources outside PREFIX when given;
# s_adjacent those whose next address was seen too), fl_* about the flows.
summarize() { # [PREFIX]
	bpftool -j map dump pinned "$PIN_MAPS/fc_counters" >"$WORK/counters.json"
	bpftool -j map dump pinned "$PIN_MAPS/fc_sources" >"$WORK/sources.json"
	bpftool -j map dump pinned "$PIN_MAPS/fc_flows" >"$WORK/flows.json"
	python3 - "$WORK" "${1:-}" <<'EOF'
import hashlib, ipaddress, json, sys

work, prefix = sys.argv[1], sys.argv[2]
try:
    flood = json.load(open(work + "/flood.json"))
except Exception:
    flood = {}
for k, v in flood.items():
    if isinstance(v, list):
        v = " ".join(str(x) for x in v)
    print(f"f_{k}={v}")

names = ["frames", "ipv4", "ipv6", "udp", "tcp", "malformed", "bad_len", "bad_ip_csum",
         "bad_l4_csum", "bad_tcp", "bad_payload", "tcp_seq_sum", "first_ns", "last_ns",
         "sources_full"]
counters = {e["key"]: e["value"] for e in
            (x.get("formatted", x) for x in json.load(open(work + "/counters.json")))}
for i, n in enumerate(names):
    print(f"c_{n}={counters.get(i, 0)}")

sources = []
for e in json.load(open(work + "/sources.json")):
    f = e["formatted"]
    raw = bytes(f["key"]["addr"])
    addr = (ipaddress.IPv4Address(raw[:4]) if f["key"]["family"] == 4
            else ipaddress.IPv6Address(raw))
    sources.append((addr, f["value"]))
sources.sort(key=lambda s: (s[0].version, int(s[0])))
print(f"s_count={len(sources)}")
print(f"s_total={sum(c for _, c in sources)}")
if len(sources) <= 64:
    print("s_addrs=" + " ".join(str(a) for a, _ in sources))
if len(sources) <= 4096:
    print("s_counts=" + " ".join(str(c) for _, c in sources))
# How scattered: distinct sources whose next address is a source too.
seen = {int(a) for a, _ in sources}
print(f"s_adjacent={sum(1 for a in seen if a + 1 in seen)}")
print("s_set=" + hashlib.sha256(" ".join(str(a) for a, _ in sources).encode()).hexdigest())
if prefix:
    net = ipaddress.ip_network(prefix)
    print(f"s_outside={sum(1 for a, _ in sources if a.version != net.version or a not in net)}")

flows = [e["formatted"] for e in json.load(open(work + "/flows.json"))]
print(f"fl_count={len(flows)}")
for i, f in enumerate(flows[:4]):
    k = f["key"]
    mac = lambda m: ":".join(f"{b:02x}" for b in m)
    print(f"fl_{i}={mac(k['dmac'])} {mac(k['smac'])} {k['family']} {k['proto']} "
          f"{k['sport']} {k['dport']} {f['value']}")
EOF
}

declare -A R

# bounce_on: the checker sends every frame back changed (flood_check.bpf.c:
# BOUNCE=1 a payload byte written, BOUNCE=2 that and 2 bytes shorter),
# and a second, unpinned checker on fgA drops them there, so that their pages
# go back to the generator's pool as XDP frames, the way a SYN proxy's
# answers do behind a drop on the sender's side.
bounce_on() {
	bpftool map update pinned "$PIN_MAPS/fc_bounce" key 0 0 0 0 value "$BOUNCE" 0 0 0 &&
		ip link set dev fgA xdpdrv obj "$FLOOD_CHECK_OBJ" sec xdp
}

# flood NAME ARGS...: loads a fresh checker, runs the generator on fgA with
# --json, and fills R with the summary. Returns the generator's status.
flood() {
	local name=$1 rc
	shift
	checker_load
	if [ -n "${BOUNCE:-}" ]; then
		bounce_on || return 1
	fi
	timeout 120 "$FLOOD_GEN" --dev fgA --json "$@" >"$WORK/flood.json" 2>"$WORK/flood.err"
	rc=$?
	[ -n "${BOUNCE:-}" ] && ip link set dev fgA xdpdrv off
	R=()
	while IFS='=' read -r k v; do
		R[$k]=$v
	done < <(summarize "${PREFIX:-}")
	checker_unload
	if [ "$rc" -ne 0 ]; then
		fail "$name: generator exited $rc: $(cat "$WORK/flood.err")"
		return "$rc"
	fi
	pass "$name: generator ran"
	return 0
}

# Every frame the generator sent arrived, and arrived intact.
expect_clean() { # NAME
	local n=$1
	expect_eq "$n: nothing dropped on transmit" "${R[f_tx_dropped]}" 0
	expect_eq "$n: receiver got every frame sent" "${R[c_frames]}" "${R[f_sent]}"
	expect_eq "$n: no malformed frames" "${R[c_malformed]}" 0
	expect_eq "$n: no bad lengths" "${R[c_bad_len]}" 0
	expect_eq "$n: no bad IPv4 header checksums" "${R[c_bad_ip_csum]}" 0
	expect_eq "$n: no bad UDP/TCP checksums" "${R[c_bad_l4_csum]}" 0
	expect_eq "$n: no bad TCP SYN fields" "${R[c_bad_tcp]}" 0
	expect_eq "$n: payload all zeros" "${R[c_bad_payload]}" 0
	expect_eq "$n: every source fitted in the checker's table" "${R[c_sources_full]}" 0
	expect_ge "$n: first frame arrived after start_ns" "${R[c_first_ns]}" "${R[f_start_ns]}"
	# end_ns anchors every rate test's upper bound (burst + rate x
	# elapsed): a frame that arrives after it would make those bounds
	# too tight, and a generator that stamps end_ns early would pass.
	expect_le "$n: last frame arrived by end_ns" "${R[c_last_ns]}" "${R[f_end_ns]}"
}

expect_flow() { # NAME DMAC SMAC FAMILY PROTO SPORT DPORT COUNT
	expect_eq "$1: one flow" "${R[fl_count]}" 1
	expect_eq "$1: MACs, family, protocol, ports" "${R[fl_0]}" "$2 $3 $4 $5 $6 $7 $8"
}

echo "# generator: $FLOOD_GEN; checker: $FLOOD_CHECK_OBJ; $NPROC CPUs"

# ---- round-robin sources, exact per-source counts --------------------------

n="IPv4 UDP 10.1.0.0+4 x1000"
if flood "$n" --dst 10.0.0.2 --src 10.1.0.0+4 --count 1000 --sport 1111 --dport 2222; then
	expect_clean "$n"
	expect_eq "$n: sent" "${R[f_sent]}" 1000
	expect_eq "$n: generator per_source" "${R[f_per_source]}" "250 250 250 250"
	expect_eq "$n: sources seen" "${R[s_addrs]}" "10.1.0.0 10.1.0.1 10.1.0.2 10.1.0.3"
	expect_eq "$n: frames per source" "${R[s_counts]}" "250 250 250 250"
	expect_eq "$n: sources reported" "${R[f_sources]}" 4
	expect_eq "$n: IPv4 UDP frames" "${R[c_ipv4]} ${R[c_udp]}" "1000 1000"
	expect_flow "$n" "$MAC_B" "$MAC_A" 4 17 1111 2222 1000
	expect_eq "$n: the program is held on --dev" "${R[f_held_on]}" fgA
fi

n="IPv6 UDP fd00::1:fffe+4 x1000"
if flood "$n" --dst fd00::2 --src fd00::1:fffe+4 --count 1000; then
	expect_clean "$n"
	expect_eq "$n: generator per_source" "${R[f_per_source]}" "250 250 250 250"
	expect_eq "$n: sources seen" "${R[s_addrs]}" "fd00::1:fffe fd00::1:ffff fd00::2:0 fd00::2:1"
	expect_eq "$n: frames per source" "${R[s_counts]}" "250 250 250 250"
	expect_eq "$n: IPv6 UDP frames" "${R[c_ipv6]} ${R[c_udp]}" "1000 1000"
	expect_flow "$n" "$MAC_B" "$MAC_A" 6 17 1024 9 1000
fi

n="IPv4 TCP SYN 10.2.0.1 x1000"
if flood "$n" --proto tcp --dst 10.0.0.2 --src 10.2.0.1 --count 1000 --dport 80; then
	expect_clean "$n"
	expect_eq "$n: sources seen" "${R[s_addrs]} ${R[s_counts]}" "10.2.0.1 1000"
	expect_eq "$n: IPv4 TCP frames" "${R[c_ipv4]} ${R[c_tcp]}" "1000 1000"
	expect_eq "$n: sequence numbers are 0..999" "${R[c_tcp_seq_sum]}" $((999 * 1000 / 2))
	expect_flow "$n" "$MAC_B" "$MAC_A" 4 6 1024 80 1000
fi

n="IPv6 TCP SYN fd00::10+3 x999"
if flood "$n" --proto tcp --dst fd00::2 --src fd00::10+3 --count 999 --sport 40000 --dport 443; then
	expect_clean "$n"
	expect_eq "$n: frames per source" "${R[s_addrs]} / ${R[s_counts]}" \
		"fd00::10 fd00::11 fd00::12 / 333 333 333"
	expect_eq "$n: IPv6 TCP frames" "${R[c_ipv6]} ${R[c_tcp]}" "999 999"
	expect_eq "$n: sequence numbers are 0..998" "${R[c_tcp_seq_sum]}" $((998 * 999 / 2))
	expect_flow "$n" "$MAC_B" "$MAC_A" 6 6 40000 443 999
fi

n="IPv4 UDP 10.3.0.0+5:shuffle x1003"
if flood "$n" --dst 10.0.0.2 --src 10.3.0.0+5:shuffle --count 1003 --batch 7; then
	expect_clean "$n"
	expect_eq "$n: sources seen" "${R[s_addrs]}" "10.3.0.0 10.3.0.1 10.3.0.2 10.3.0.3 10.3.0.4"
	expect_eq "$n: receiver counts = generator per_source" "${R[s_counts]}" "${R[f_per_source]}"
	sorted=$(tr ' ' '\n' <<<"${R[s_counts]}" | sort -n | tr '\n' ' ')
	expect_eq "$n: each source floor or ceil of 1003/5" "$sorted" "200 200 201 201 201 "
fi

# ---- several threads: still exact in total ---------------------------------

for threads in 2 $((NPROC + 1)); do
	n="IPv4 UDP 10.4.0.0+4 x1000, $threads threads"
	if flood "$n" --dst 10.0.0.2 --src 10.4.0.0+4 --count 1000 --threads "$threads" --batch 16; then
		expect_clean "$n"
		expect_eq "$n: threads" "${R[f_threads]}" "$threads"
		expect_eq "$n: generator per_source" "${R[f_per_source]}" "250 250 250 250"
		expect_eq "$n: frames per source" "${R[s_counts]}" "250 250 250 250"
	fi
done

n="IPv6 UDP fd00::100+7 x10000, 2 threads"
if flood "$n" --dst fd00::2 --src fd00::100+7 --count 10000 --threads 2 --batch 64; then
	expect_clean "$n"
	sorted=$(tr ' ' '\n' <<<"${R[s_counts]}" | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
	expect_eq "$n: 10000/7 per source" "$sorted" "3x1428 4x1429 "
	expect_eq "$n: receiver counts = generator per_source" "${R[s_counts]}" "${R[f_per_source]}"
fi

# ---- random sources in a prefix --------------------------------------------

n="IPv4 UDP random in 10.128.0.0/16 x2000"
if PREFIX=10.128.0.0/16 flood "$n" --dst 10.0.0.2 --src 10.128.0.0/16 --count 2000 --sport 5353; then
	expect_clean "$n"
	expect_eq "$n: sources reported as random" "${R[f_sources]}" 0
	expect_eq "$n: no per_source for random sources" "${R[f_per_source]:-none}" none
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_ge "$n: > 1900 distinct sources" "${R[s_count]}" 1901
	expect_eq "$n: frames over all sources" "${R[s_total]}" 2000
	expect_flow "$n" "$MAC_B" "$MAC_A" 4 17 5353 9 2000
fi

n="IPv6 TCP random in fd00:1234:5678::/48 x2000"
if PREFIX=fd00:1234:5678::/48 flood "$n" --proto tcp --dst fd00::2 --src fd00:1234:5678::/48 --count 2000; then
	expect_clean "$n"
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_ge "$n: > 1990 distinct sources" "${R[s_count]}" 1991
fi

n="IPv4 UDP random in 10.200.0.0/30 x400"
if PREFIX=10.200.0.0/30 flood "$n" --dst 10.0.0.2 --src 10.200.0.5/30 --count 400; then
	expect_clean "$n"
	expect_eq "$n: the 4 sources of the prefix, and only them" \
		"${R[s_addrs]}" "10.200.0.4 10.200.0.5 10.200.0.6 10.200.0.7"
fi

# ---- scattered sources in a prefix -----------------------------------------

n="IPv4 UDP 1000 scattered in 10.64.0.0/10 x3001"
if PREFIX=10.64.0.0/10 flood "$n" --dst 10.0.0.2 --src 10.64.0.0/10+1000 --count 3001 --batch 61; then
	expect_clean "$n"
	expect_eq "$n: sources reported" "${R[f_sources]}" 1000
	expect_eq "$n: 1000 distinct sources seen" "${R[s_count]}" 1000
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_eq "$n: receiver counts = generator per_source" "${R[s_counts]}" "${R[f_per_source]}"
	sorted=$(tr ' ' '\n' <<<"${R[s_counts]}" | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
	expect_eq "$n: round-robin, 3001/1000 per source" "$sorted" "999x3 1x4 "
	# 1000 of 4M addresses drawn at random: ~0.24 adjacent pairs expected;
	# consecutive sources would give 999.
	expect_le "$n: scattered, not consecutive (adjacent pairs)" "${R[s_adjacent]}" 5
fi

first_set=${R[s_set]:-}
n="IPv4 UDP 1000 scattered in 10.64.0.0/10 x1000, --seed 2"
if PREFIX=10.64.0.0/10 flood "$n" --dst 10.0.0.2 --src 10.64.0.0/10+1000 --count 1000 --seed 2; then
	expect_eq "$n: 1000 distinct sources seen" "${R[s_count]}" 1000
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_eq "$n: one frame each" "$(tr ' ' '\n' <<<"${R[s_counts]}" | sort -u)" 1
	expect_eq "$n: another set than --seed 1's" "$([ "${R[s_set]}" != "$first_set" ] && echo other)" other
fi
n="IPv4 UDP 1000 scattered in 10.64.0.0/10 x1000, --seed 1 again"
if PREFIX=10.64.0.0/10 flood "$n" --dst 10.0.0.2 --src 10.64.0.0/10+1000 --count 1000 --seed 1; then
	expect_eq "$n: the same set as the first run's" "${R[s_set]}" "$first_set"
fi

n="IPv4 UDP all 4 of 10.200.0.0/30 scattered x10"
if PREFIX=10.200.0.0/30 flood "$n" --dst 10.0.0.2 --src 10.200.0.0/30+4 --count 10; then
	expect_clean "$n"
	expect_eq "$n: each address of the prefix once (distinct by construction)" \
		"${R[s_addrs]}" "10.200.0.0 10.200.0.1 10.200.0.2 10.200.0.3"
	expect_eq "$n: receiver counts = generator per_source" "${R[s_counts]}" "${R[f_per_source]}"
fi

n="IPv6 TCP 7 scattered in fd00:9::/112 x700"
if PREFIX=fd00:9::/112 flood "$n" --proto tcp --dst fd00::2 --src fd00:9::/112+7 --count 700; then
	expect_clean "$n"
	expect_eq "$n: 7 distinct sources seen" "${R[s_count]}" 7
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_eq "$n: 100 frames each" "${R[s_counts]}" "100 100 100 100 100 100 100"
	expect_eq "$n: receiver counts = generator per_source" "${R[s_counts]}" "${R[f_per_source]}"
fi

# ---- the socket sender: the same frames, built in userspace ----------------
# (--sender auto uses it where the kernel refuses live frames; these run it
# wherever the suite runs.)

n="socket: IPv4 UDP 10.5.0.0+4 x1000, 2 threads"
if flood "$n" --sender socket --dst 10.0.0.2 --src 10.5.0.0+4 --count 1000 --threads 2 --batch 16; then
	expect_clean "$n"
	expect_eq "$n: sender reported" "${R[f_sender]}" socket
	expect_eq "$n: generator per_source" "${R[f_per_source]}" "250 250 250 250"
	expect_eq "$n: frames per source" "${R[s_counts]}" "250 250 250 250"
fi

n="socket: IPv6 TCP fd00::10+3 x999"
if flood "$n" --sender socket --proto tcp --dst fd00::2 --src fd00::10+3 --count 999 --sport 40000 --dport 443; then
	expect_clean "$n"
	expect_eq "$n: frames per source" "${R[s_addrs]} / ${R[s_counts]}" \
		"fd00::10 fd00::11 fd00::12 / 333 333 333"
	expect_eq "$n: sequence numbers are 0..998" "${R[c_tcp_seq_sum]}" $((998 * 999 / 2))
fi

n="socket: IPv4 UDP 1000 scattered in 10.64.0.0/10 x2000, --repeat 2"
if PREFIX=10.64.0.0/10 flood "$n" --sender socket --dst 10.0.0.2 --src 10.64.0.0/10+1000 \
	--count 2000 --repeat 2 --size 1514; then
	expect_clean "$n"
	expect_eq "$n: the same set as the XDP sender's (--seed 1)" "${R[s_set]}" "$first_set"
	expect_eq "$n: two frames each" "$(tr ' ' '\n' <<<"${R[s_counts]}" | sort -u)" 2
fi

n="socket: IPv4 TCP random in 10.128.0.0/16 x2000"
if PREFIX=10.128.0.0/16 flood "$n" --sender socket --proto tcp --dst 10.0.0.2 --src 10.128.0.0/16 --count 2000; then
	expect_clean "$n"
	expect_eq "$n: every source inside the prefix" "${R[s_outside]}" 0
	expect_ge "$n: > 1900 distinct sources" "${R[s_count]}" 1901
fi

# ---- sizes and MACs --------------------------------------------------------

n="IPv4 UDP 1514-byte frames"
if flood "$n" --dst 10.0.0.2 --count 500 --size 1514; then
	expect_clean "$n"
	expect_eq "$n: size reported" "${R[f_size]}" 1514
fi

n="IPv4 UDP odd 61-byte frames"
if flood "$n" --dst 10.0.0.2 --count 500 --size 61; then
	expect_clean "$n"
fi

n="IPv6 TCP odd 1001-byte frames"
if flood "$n" --proto tcp --dst fd00::2 --count 500 --size 1001; then
	expect_clean "$n"
fi

n="IPv4 TCP smallest (54-byte) frames"
if flood "$n" --proto tcp --dst 10.0.0.2 --count 500 --size 54; then
	expect_clean "$n"
fi

n="explicit MACs"
if flood "$n" --dst 10.0.0.2 --count 100 --dst-mac 02:00:00:00:00:02 --src-mac 02:00:00:00:00:01; then
	expect_clean "$n"
	expect_flow "$n" 02:00:00:00:00:02 02:00:00:00:00:01 4 17 1024 9 100
fi

# ---- a receiver that answers in place -------------------------------------
# The kernel hands the generator its pages back with whatever the receiver
# left there: the frame's bytes and, in the xdp_frame at the page's start,
# its length. Every frame must still be the template (flood.bpf.c's top
# comment). While fgA has a native program the generator cannot hold its
# own there in generic mode; --hold lo puts it on loopback instead, and
# without it each batch waits for an RCU grace period (a warning, and
# slower batches: --count keeps it short).

n="IPv4 UDP frames, receiver writes them"
if BOUNCE=1 flood "$n" --dst 10.0.0.2 --count 20000 --hold lo; then
	expect_clean "$n"
	expect_eq "$n: --hold lo holds the program on loopback" "${R[f_held_on]}" lo
fi

n="IPv4 UDP frames, receiver shortens and writes them"
if BOUNCE=2 flood "$n" --dst 10.0.0.2 --count 20000; then
	expect_clean "$n"
	expect_eq "$n: held on no device" "${R[f_held_on]}" ""
	expect_eq "$n: the generator warns" \
		"$(grep -c "cannot attach the generator to 'fgA' in generic mode" "$WORK/flood.err")" 1
fi

n="IPv4 TCP SYNs, receiver shortens and writes them"
if BOUNCE=2 flood "$n" --proto tcp --dst 10.0.0.2 --count 20000; then
	expect_clean "$n"
fi

# ---- pacing and duration ---------------------------------------------------

n="--rate 20000 --count 2000"
if flood "$n" --dst 10.0.0.2 --src 10.5.0.0+10 --count 2000 --rate 20000; then
	expect_clean "$n"
	batch=${R[f_batch]}
	expect_eq "$n: batch follows the rate (1 ms of frames)" "$batch" 20
	expect_ge "$n: elapsed >= (count - batch) / rate" "${R[f_elapsed_ns]}" \
		$(((2000 - batch) * 1000000000 / 20000))
	expect_eq "$n: frames per source" "${R[s_counts]}" "200 200 200 200 200 200 200 200 200 200"
fi

n="--duration 0.3 --rate 10000"
if flood "$n" --dst 10.0.0.2 --duration 0.3 --rate 10000; then
	expect_clean "$n"
	expect_eq "$n: exactly the frames due within 0.3 s" "${R[f_sent]}" 3000
	expect_ge "$n: elapsed >= 0.299 s" "${R[f_elapsed_ns]}" 299000000
fi

n="--duration 0.2, unpaced"
if flood "$n" --dst 10.0.0.2 --src 10.6.0.0+3 --duration 0.2; then
	expect_eq "$n: receiver got every frame not dropped on transmit" \
		"${R[c_frames]}" $((R[f_sent] - R[f_tx_dropped]))
	expect_eq "$n: no bad checksums" "${R[c_bad_ip_csum]} ${R[c_bad_l4_csum]}" "0 0"
	expect_ge "$n: elapsed >= 0.2 s" "${R[f_elapsed_ns]}" 200000000
	expect_ge "$n: sent something" "${R[f_sent]}" 1
	read -r a b c <<<"${R[f_per_source]}"
	if [ $((a - c)) -le 1 ] && [ $((a - c)) -ge 0 ] && [ $((a + b + c)) -eq "${R[f_sent]}" ]; then
		pass "$n: per_source balanced ($a $b $c)"
	else
		fail "$n: per_source not balanced: ${R[f_per_source]} for ${R[f_sent]}"
	fi
	expect_ge "$n: max_batch_ns > 0" "${R[f_max_batch_ns]}" 1
	help_batch=$("$FLOOD_GEN" --help | sed -n 's/.*--batch N .* default \([0-9]*\);.*/\1/p')
	expect_eq "$n: --help states the default batch the run used" "$help_batch" "${R[f_batch]}"
fi

# ---- the kernel stack accepts the frames -----------------------------------
# fgB without XDP, with GRO on (so it accepts XDP_TX'd frames) and addresses:
# the frames go up the stack, which verifies every checksum itself. Its SNMP
# counters must show N frames received, none with a bad checksum.

snmp() { # NAME, as in /proc/net/snmp ("Udp:InDatagrams") or snmp6
	python3 - "$1" <<'EOF'
import sys
name = sys.argv[1]
if ":" in name:
    proto, field = name.split(":")
    lines = [l.split() for l in open("/proc/net/snmp") if l.startswith(proto + ":")]
    print(dict(zip(lines[0][1:], lines[1][1:]))[field])
else:
    print(dict(l.split() for l in open("/proc/net/snmp6"))[name])
EOF
}

stack_case() { # NAME RECEIVED-COUNTERS CSUM-ERROR-COUNTERS -- ARGS...
	local name="stack: $1" recv=$2 errs=$3 k total=0 bad=0 rc
	local -A before
	shift 4
	for k in $recv $errs; do
		before[$k]=$(snmp "$k")
	done
	timeout 60 "$FLOOD_GEN" --dev fgA --count 500 "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	# The stack may still be draining the backlog: poll (up to 5 s) until
	# the 500 frames are counted, then check that it is exactly 500.
	local deadline=$((SECONDS + 5))
	while :; do
		total=0
		for k in $recv; do
			total=$((total + $(snmp "$k") - before[$k]))
		done
		[ "$total" -ge 500 ] || [ "$SECONDS" -ge "$deadline" ] && break
		sleep 0.02
	done
	for k in $errs; do
		bad=$((bad + $(snmp "$k") - before[$k]))
	done
	expect_eq "$name: generator exit status" "$rc" 0
	expect_eq "$name: 500 frames reached $recv" "$total" 500
	expect_eq "$name: no checksum or header errors" "$bad" 0
}

ip link set dev fgB xdpdrv off 2>/dev/null
if command -v ethtool >/dev/null 2>&1 && ethtool -K fgB gro on 2>/dev/null; then
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.fgB.rp_filter=0 net.ipv6.conf.fgB.disable_ipv6=0
	ip addr add 10.0.0.2/24 dev fgB
	ip addr add fd00::2/64 dev fgB nodad
	stack_case "IPv4 UDP" "Udp:InDatagrams Udp:NoPorts" \
		"Udp:InCsumErrors Ip:InHdrErrors Ip:InAddrErrors" -- --dst 10.0.0.2 --src 10.0.0.10+4
	stack_case "IPv4 TCP" "Tcp:InSegs" "Tcp:InCsumErrors Ip:InHdrErrors" -- \
		--proto tcp --dst 10.0.0.2 --src 10.0.0.10+4 --dport 8080
	stack_case "IPv6 UDP" "Udp6InDatagrams Udp6NoPorts" \
		"Udp6InCsumErrors Ip6InHdrErrors Ip6InAddrErrors" -- --dst fd00::2 --src fd00::10+4 --size 100
	stack_case "IPv6 TCP" "Tcp:InSegs" "Tcp:InCsumErrors Ip6InHdrErrors" -- \
		--proto tcp --dst fd00::2 --src fd00::10+4 --size 99
	ip addr flush dev fgB
	sysctl -qw net.ipv6.conf.fgB.disable_ipv6=1
else
	# GRO is how a veth without XDP accepts XDP_TX'd frames; without it
	# these cases would vanish silently, so their absence is a failure.
	fail "stack: cannot turn GRO on for fgB, the kernel stack cases did not run"
fi

# ---- bad usage -------------------------------------------------------------

usage_case() { # NAME EXPECTED-MESSAGE-PART ARGS...
	local name=$1 want=$2 rc
	shift 2
	timeout 30 "$FLOOD_GEN" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "^Error: .*$want" "$WORK/err"; then
		pass "usage: $name"
	else
		fail "usage: $name: exit $rc, stderr: $(head -c 300 "$WORK/err")"
	fi
}

usage_case "no --dst" "--dst" --dev fgA --count 1
usage_case "no --count or --duration" "--count" --dev fgA --dst 10.0.0.2
usage_case "both --count and --duration" "--count" --dev fgA --dst 10.0.0.2 --count 1 --duration 1
usage_case "family mismatch" "famil" --dev fgA --dst fd00::2 --src 10.0.0.1 --count 1
usage_case "frame too small" "--size" --dev fgA --dst fd00::2 --size 61 --count 1
usage_case "frame too large" "--size" --dev fgA --dst 10.0.0.2 --size 1515 --count 1
usage_case "bad protocol" "--proto" --dev fgA --dst 10.0.0.2 --proto icmp --count 1
usage_case "+K past the end" "past the end" --dev fgA --dst 10.0.0.2 --src 255.255.255.250+7 --count 1
usage_case "more scattered sources than the prefix holds" "holds only 4 addresses" \
	--dev fgA --dst 10.0.0.2 --src 10.0.0.0/30+5 --count 1
usage_case "scattered IPv6 wider than the low word" "/96 or longer" \
	--dev fgA --dst fd00::2 --src fd00::/64+3 --count 1
usage_case "scattered K of 0" "K must be" --dev fgA --dst 10.0.0.2 --src 10.0.0.0/8+0 --count 1
usage_case "bad --sender" "--sender must be auto, xdp or socket" \
	--dev fgA --dst 10.0.0.2 --count 1 --sender pktgen
usage_case "unknown device" "no such device" --dev fgNope --dst 10.0.0.2 --count 1
usage_case "unknown --hold device" "--hold 'fgNope': no such device" --dev fgA --hold fgNope \
	--dst 10.0.0.2 --count 1
usage_case "bad MAC" "--dst-mac" --dev fgA --dst 10.0.0.2 --dst-mac 02:00:00:00:00 --count 1
usage_case "bad --threads" "--threads" --dev fgA --dst 10.0.0.2 --count 1 --threads 0
usage_case "unknown option" "unknown option '--bogus'" --dev fgA --dst 10.0.0.2 --count 1 --bogus
usage_case "option without its value" "--count needs a value" --dev fgA --dst 10.0.0.2 --count
usage_case "stray argument" "unexpected argument 'extra'" --dev fgA --dst 10.0.0.2 --count 1 extra
if "$FLOOD_GEN" --help >"$WORK/out" 2>"$WORK/err" && grep -q '^Usage: floodgate-flood ' "$WORK/out"; then
	pass "usage: --help prints the usage and exits 0"
else
	fail "usage: --help: $(head -c 300 "$WORK/out" "$WORK/err")"
fi

# A veth whose peer is in another namespace: no default destination MAC.
unshare -n sleep 60 &
HELPER_PID=$!
# Wait until unshare has made the helper's namespace (not a fixed sleep).
for _ in $(seq 100); do
	[ "$(readlink /proc/$HELPER_PID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
	sleep 0.02
done
if ip link add fgC type veth peer name fgD && ip link set fgD netns "$HELPER_PID"; then
	ip link set fgC up
	usage_case "peer elsewhere needs --dst-mac" "need --dst-mac" --dev fgC --dst 10.0.0.2 --count 1
	ip link del fgC
else
	fail "cannot set up a veth with its peer in another namespace"
fi
kill "$HELPER_PID" 2>/dev/null
wait "$HELPER_PID" 2>/dev/null
HELPER_PID=

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
