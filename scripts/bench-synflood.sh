#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The SYN-flood scenario of issue 22 (docs/benchmarks.md, "SYN flood"): a
# spoofed random-source SYN flood against a listening port while a real
# client connects, under four protections, each in the same run:
#
#   none           the kernel's own SYN cookies (net.ipv4.tcp_syncookies=1),
#                  the listener's backlog as Python's socketserver sets it (5)
#   floodgate      `floodgate load fgA`, the built-in policy (no config)
#   nft-synproxy   nftables' synproxy alone, in a table written here like
#                  floodgate's own (SYNs to the port untracked, `synproxy` on
#                  ct state invalid,untracked, other invalid dropped), with
#                  nf_conntrack_tcp_loose=0 for the row
#   fg-synproxy    `floodgate load fgA` with `[synproxy] ports = PORT`
#
# Each row: an echo listener on fgA's PORT (10.200.0.1); the generator
# (build/floodgate-flood --proto tcp, FG_SYNFLOOD_THREADS threads, at its
# full rate unless FG_SYNFLOOD_RATE is set) sends SYNs from random sources
# in 10.0.0.0/9 for the whole measurement; once it runs, a client in the
# sender netns (10.200.0.2) makes CONNECTS sequential connects, each with a
# 1 s timeout on the connect and on each read, sending a line and reading
# its echo. fgA routes the spoofed range back through fgB, and fgB's native
# XDP program (tests/fixtures/drop_backscatter.bpf.c) drops the SYN-ACKs to
# it: they leave the host as they would on the internet, and are then thrown
# away cheaply instead of loading the sender's stack.
#
# Per row: connects that completed and echoed; p50 and p99 connect time
# (the connect alone, nearest rank over all attempts, a failed one counting
# as longer than any: p99 is "timeout" if more than 1% failed), and p99 of
# the connect and the echo together (through a proxy, the connect
# completes at the proxy, before the listener has the connection); flood
# frames sent (generator's `sent`), dropped at the sender's veth
# (`tx_dropped`: the receiver could not keep up) and received (fgA's
# rx_packets); the TcpExtSyncookiesSent and TcpExtListenDrops deltas of
# fgA's netns (the listener's stack answering or dropping the flood); and
# softirq CPU per million received frames.
#
# Softirq CPU: the `softirq` column of /proc/stat's `cpu` line (all CPUs),
# from just before the flood starts to after the last frame is processed,
# divided by the frames fgA received (rx_packets) in the same window. Why
# this and not per-netns or per-device figures: veth processes a frame in
# NET_RX softirq on the sending CPU, so the receiving host's work (XDP,
# the IP stack, conntrack, the SYN-ACK it builds and transmits) is softirq
# time, while the generator's own work is in its syscall (system time, not
# counted). /proc/softirqs only counts NET_RX runs, not their cost. Caveats,
# also printed: the figure is host-wide, so it includes fgB's XDP drop of
# the backscatter (one cheap XDP_DROP per SYN-ACK, present in every row
# that answers the SYNs), the client's few thousand frames and any other
# softirq on these CPUs; and on a kernel without CONFIG_IRQ_TIME_ACCOUNTING
# (Debian's) softirq time is sampled at each tick, so it is a statistical
# figure (CONFIG_HZ samples a second a CPU).
#
# The goals of issue 22 are printed beside the fg-synproxy row's figures
# (reported, never asserted): p99 <= max(2 x none's p99, 30 ms), softirq
# per frame <= 1/3 of none's, >= 99.5% of connects, and no stack SYN
# cookie or listen drop.
#
# Environment knobs:
#   FG_BENCH_ROUNDS         rounds of the four rows, round-robin (default 3);
#                           the table shows medians over rounds
#   FG_SYNFLOOD_CONNECTS    sequential connects per row (default 400)
#   FG_SYNFLOOD_THREADS     generator threads (default 1: see below)
#   FG_SYNFLOOD_RATE        frames/s for the generator (default: full rate)
#   FG_SYNFLOOD_MIN_SECONDS the flood lasts at least this long (default 3),
#                           however fast the client is done, so that the
#                           softirq figure rests on enough tick samples
#   FG_SYNFLOOD_ROWS        the rows to run (default all four, in order)
#   FG_SYNFLOOD_IPV6        1: also an IPv6 round of each row, flood at
#                           FG_SYNFLOOD_RATE6 (default 200000/s) from
#                           fd00:1::/64 (default 0)
#   FG_SYNFLOOD_CLIENT_MSS  the MSS the client offers (its route's advmss,
#                           536-1460 bytes; IPv6 20 less, for its longer
#                           header), default the device's (1460 and
#                           1440 on this lab's 1500-byte veth). The proxy's
#                           cookie codes one of four MSS values, and a lost
#                           handshake ACK is recovered differently for the
#                           largest (docs/config.md, [synproxy]): 1400 tries
#                           the other case
#   FG_BENCH_OUT            where synflood.csv (medians), synflood-runs.csv
#                           (every run) and synflood.txt go (default
#                           bench-results)
#
# One generator thread by default: on this 2-CPU lab a thread per CPU keeps
# both CPUs busy with the flood (each CPU's softirq receiving what its own
# thread sends), and the client's connect times then measure the scheduler
# rather than the protection. With one thread the flood fills one CPU and
# is still limited by what the receiver can process (the veth ring drops
# the rest, counted in tx_dropped). "Full rate" is also lower than on a
# bare veth pair: fgB's native XDP program keeps the generator from
# attaching there in generic mode (the kernel runs one mode at a time), so
# each of its batches waits for an RCU grace period, and the rate follows
# the load; synflood-runs.csv's `generator` column says which way each run
# went. Rows therefore face floods of different rates: compare the softirq
# figure per frame, and each row's connects under its own flood.
#
# Runs in private network and mount namespaces (lab_enter), as root, under
# the lab lock (flock /tmp/fg-lab.lock scripts/bench-synflood.sh); called
# at the end of scripts/bench.sh (FG_BENCH_SYNFLOOD=0 skips it there).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-synflood: run as root (it creates network namespaces and loads BPF)" >&2
	exit 1
fi
source "$(dirname "$0")/lab.sh"
lab_enter "$0" "$@"

ROUNDS=${FG_BENCH_ROUNDS:-3}
CONNECTS=${FG_SYNFLOOD_CONNECTS:-400}
THREADS=${FG_SYNFLOOD_THREADS:-1}
RATE=${FG_SYNFLOOD_RATE:-}
MIN_SECONDS=${FG_SYNFLOOD_MIN_SECONDS:-3}
RATE6=${FG_SYNFLOOD_RATE6:-200000}
IPV6=${FG_SYNFLOOD_IPV6:-0}
CLIENT_MSS=${FG_SYNFLOOD_CLIENT_MSS:-}
read -r -a ROWS <<<"${FG_SYNFLOOD_ROWS:-none floodgate nft-synproxy fg-synproxy}"
PORT=8080
SPOOFED=10.0.0.0/9 # outside the lab's 10.200.0.0/24; what drop_backscatter drops
SPOOFED6=fd00:1::/64
MAX_FLOOD=300 # seconds: a bound on one row's flood, should the client hang
OUT=${FG_BENCH_OUT:-$REPO/bench-results}
WORK=$(mktemp -d /tmp/fg-synflood.XXXXXX)
RUNS_CSV=$OUT/synflood-runs.csv
CSV=$OUT/synflood.csv
REPORT=$OUT/synflood.txt
LOOSE=/proc/sys/net/netfilter/nf_conntrack_tcp_loose
SYNCOOKIES=/proc/sys/net/ipv4/tcp_syncookies
HZ=$(getconf CLK_TCK)

for row in "${ROWS[@]}"; do
	case $row in none | floodgate | nft-synproxy | fg-synproxy) ;; *)
		echo "bench-synflood: unknown row '$row' in FG_SYNFLOOD_ROWS" >&2
		exit 2
		;;
	esac
done

case $CLIENT_MSS in
'') ;;
*[!0-9]* | 0*)
	echo "bench-synflood: FG_SYNFLOOD_CLIENT_MSS '$CLIENT_MSS' is not a number of bytes" >&2
	exit 2
	;;
*)
	if ((CLIENT_MSS < 536 || CLIENT_MSS > 1460)); then
		echo "bench-synflood: FG_SYNFLOOD_CLIENT_MSS $CLIENT_MSS is outside 536-1460" >&2
		exit 2
	fi
	;;
esac

# What a row changed, so that cleanup can give it back whichever step failed.
FLOOD_PID=
LISTENER=
SAVED_LOOSE=
SAVED_SYNCOOKIES=
reset_row() {
	[ -z "$FLOOD_PID" ] || kill -INT "$FLOOD_PID" 2>/dev/null || true
	[ -z "$FLOOD_PID" ] || wait "$FLOOD_PID" 2>/dev/null || true
	[ -z "$LISTENER" ] || kill "$LISTENER" 2>/dev/null || true
	[ -z "$LISTENER" ] || wait "$LISTENER" 2>/dev/null || true
	FLOOD_PID=""
	LISTENER=""
	"$FLOODGATE" unload fgA >/dev/null 2>&1 || true
	nft delete table inet fgbench_synproxy 2>/dev/null || true
	if [ -n "$SAVED_LOOSE" ]; then
		echo "$SAVED_LOOSE" >"$LOOSE"
		SAVED_LOOSE=
	fi
	if [ -n "$SAVED_SYNCOOKIES" ]; then
		echo "$SAVED_SYNCOOKIES" >"$SYNCOOKIES"
		SAVED_SYNCOOKIES=
	fi
}
cleanup() {
	reset_row
	rm -rf "$WORK"
	lab_down
}
trap cleanup EXIT

log() { echo "$@" | tee -a "$REPORT"; }

# --- the lab -----------------------------------------------------------------

lab_up
ip -n "$SENDER_NS" addr add 10.200.0.2/24 dev fgB
ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgB.disable_ipv6=0
ip -n "$SENDER_NS" addr add fd00:200::2/64 dev fgB nodad
if [ -n "$CLIENT_MSS" ]; then
	# The client's SYNs offer the MSS its route advertises.
	ip -n "$SENDER_NS" route replace 10.200.0.0/24 dev fgB proto kernel scope link \
		src 10.200.0.2 advmss "$CLIENT_MSS"
	ip -n "$SENDER_NS" -6 route replace fd00:200::/64 dev fgB proto kernel metric 256 \
		advmss "$((CLIENT_MSS - 20))"
fi
# Answers to the spoofed range leave fgA towards fgB, as towards an
# upstream router; without a route the stack would drop them unsent, a
# saving a host on the internet does not get.
ip route add default via 10.200.0.2 dev fgA
ip -6 route add default via fd00:200::2 dev fgA
# XDP_TX'd SYN-ACKs reach fgB only through a native XDP program there; this
# one drops those to the spoofed ranges.
lab_drop_backscatter
# The stack checks no reverse path (a new netns's default), so that every
# spoofed SYN reaches the listener's stack in the rows without a proxy.
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.fgA.rp_filter=0

cat >"$WORK/synproxy.conf" <<CONF
[synproxy]
ports = $PORT
CONF

# The echo listener and the client of test_synproxy.sh (scripts/tcp_lab.py):
# a client waits 1 s for its connect and for its echo.
TCP_LAB=$REPO/scripts/tcp_lab.py

# --- counters -----------------------------------------------------------------

softirq_ticks() { awk '$1 == "cpu" { print $8 }' /proc/stat; }
rx_packets() { cat /sys/class/net/fgA/statistics/rx_packets; }
backscatter() { ip netns exec "$SENDER_NS" cat /sys/class/net/fgB/statistics/rx_packets; }
# tcpext NAME: a TcpExt counter of fgA's netns, read without nstat's history.
tcpext() {
	awk -v k="$1" '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++) h[i] = $i; n = 1 }
		else for (i = 2; i <= NF; i++) if (h[i] == k) print $i }' /proc/net/netstat
}
counters() {
	echo "$(softirq_ticks) $(rx_packets) $(backscatter) $(tcpext SyncookiesSent) $(tcpext ListenDrops)"
}

# wait_quiet: until fgA's rx_packets stops moving (50 ms apart), so that the
# last frames queued when the generator stops are counted. Gives up after 2 s.
wait_quiet() {
	local prev now i
	prev=$(rx_packets)
	for ((i = 0; i < 40; i++)); do
		sleep 0.05
		now=$(rx_packets)
		[ "$now" = "$prev" ] && return 0
		prev=$now
	done
}

# flooding RX0: fgA has received 10,000 frames more than RX0.
flooding() { [ $(($(rx_packets) - $1)) -ge 10000 ]; }

# --- rows: setup_ROW (teardown is reset_row) -------------------------------------

# Every row runs with the host's SYN cookies on, the kernel's default.
syncookies_on() {
	SAVED_SYNCOOKIES=$(cat "$SYNCOOKIES")
	echo 1 >"$SYNCOOKIES"
}
setup_none() { syncookies_on; }
setup_floodgate() {
	syncookies_on
	"$FLOODGATE" load fgA >/dev/null
}
# The rules of nftables' synproxy documentation, as floodgate writes them
# (user/attach/synproxy_nft.c), by hand.
setup_nft_synproxy() {
	syncookies_on
	SAVED_LOOSE=$(cat "$LOOSE" 2>/dev/null || echo 1)
	nft -f - <<-EOF
		table inet fgbench_synproxy {
			chain prerouting {
				type filter hook prerouting priority raw; policy accept;
				iifname "fgA" tcp dport $PORT tcp flags syn notrack
			}
			chain input {
				type filter hook input priority filter; policy accept;
				iifname "fgA" meta nfproto ipv4 tcp dport $PORT ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm
				iifname "fgA" meta nfproto ipv6 tcp dport $PORT ct state invalid,untracked synproxy mss 1440 wscale 7 timestamp sack-perm
				iifname "fgA" tcp dport $PORT ct state invalid drop
			}
		}
	EOF
	# The table loaded conntrack: the sysctl exists from here on.
	[ -e "$LOOSE" ]
	echo 0 >"$LOOSE"
}
setup_fg_synproxy() {
	syncookies_on
	"$FLOODGATE" load fgA -c "$WORK/synproxy.conf" >/dev/null
}

# --- one run ---------------------------------------------------------------------

# run_one ROW ROUND FAMILY: sets the row up, floods while the client
# connects, tears down, and appends a line to RUNS_CSV. In a subshell with
# errexit: any failure fails the run, and reset_row cleans up after it.
run_one() {
	local row=$1 round=$2 family=$3 dst=10.200.0.1 src=$SPOOFED rate=$RATE before after start rx0 synacks
	local rate_args=()
	if [ "$family" = ipv6 ]; then
		dst=fd00:200::1 src=$SPOOFED6 rate=$RATE6
	fi
	[ -z "$rate" ] || rate_args=(--rate "$rate")
	trap reset_row EXIT
	"setup_${row//-/_}"
	rm -f "$WORK/listening"
	python3 "$TCP_LAB" serve "$PORT" "$WORK/listening" &
	LISTENER=$!
	wait_until 5 test -e "$WORK/listening"
	# One connect before the flood: neighbour entries on both sides, so
	# that the first measured connect pays no ARP.
	ip netns exec "$SENDER_NS" python3 "$TCP_LAB" connects "$dst" "$PORT" 1 1 >/dev/null

	before=$(counters)
	timeout -s INT -k 5 $MAX_FLOOD ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgB \
		--dst-mac "$FGA_MAC" --json --proto tcp --dst "$dst" --src "$src" --dport "$PORT" \
		--threads "$THREADS" "${rate_args[@]}" --duration $MAX_FLOOD >"$WORK/flood.json" \
		2>"$WORK/flood.err" &
	FLOOD_PID=$!
	start=$SECONDS
	# The client starts once the flood reaches fgA (the generator takes
	# SIGINT only from then on), and has been in full swing for a while.
	rx0=$(rx_packets)
	wait_until 10 flooding "$rx0"
	sleep 0.5
	ip netns exec "$SENDER_NS" python3 "$TCP_LAB" connects "$dst" "$PORT" "$CONNECTS" 1 \
		>"$WORK/client.json"
	while [ $((SECONDS - start)) -lt "$MIN_SECONDS" ]; do sleep 0.1; done
	kill -INT "$FLOOD_PID"
	wait "$FLOOD_PID"
	FLOOD_PID=
	wait_quiet
	after=$(counters)
	# The proxy's own count of SYN-ACKs (fgB's rx_packets sees only those
	# the veth delivered).
	synacks=
	if [ "$row" = fg-synproxy ]; then
		synacks=$("$FLOODGATE" stats fgA --json | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["global"]["synproxy_synacks"])')
	fi
	reset_row

	python3 - "$row" "$round" "$family" "$before" "$after" "$WORK/flood.json" \
		"$WORK/client.json" "$HZ" "$RUNS_CSV" "$WORK/flood.err" "$synacks" <<-'PY'
		import json, math, sys
		row, rnd, fam, before, after, flood, client, hz, runs, flood_err, synacks = sys.argv[1:]
		b = [int(x) for x in before.split()]
		a = [int(x) for x in after.split()]
		ticks, rx, back, cookies, drops = (y - x for x, y in zip(b, a))
		f = json.load(open(flood))
		c = json.load(open(client))
		n = len(c["connect_ms"])
		def pct(values, p):
		    ts = sorted(t if t is not None else math.inf for t in values)
		    return ts[max(math.ceil(p / 100 * n) - 1, 0)]
		p50, p99 = pct(c["connect_ms"], 50), pct(c["connect_ms"], 99)
		e50, e99 = pct(c["echo_ms"], 50), pct(c["echo_ms"], 99)
		# Without a generic-mode attach (fgB's native program holds the
		# device), each generator batch waits for an RCU grace period.
		slow = "RCU grace period" in open(flood_err).read()
		softirq_ms = ticks * 1000 / int(hz)
		per_m = softirq_ms / (rx / 1e6) if rx else math.inf
		secs = (f["end_ns"] - f["start_ns"]) / 1e9 if f.get("end_ns") else 0
		with open(runs, "a") as out:
		    out.write(f"{row},{fam},{rnd},{c['done']},{n},{p50:.2f},{p99:.2f},{per_m:.1f},"
		              f"{softirq_ms:.0f},{f['sent']},{f['tx_dropped']},{rx},{back},{cookies},"
		              f"{drops},{secs:.2f},{e50:.2f},{e99:.2f},{'rcu-wait' if slow else 'attached'},{synacks}\n")
		fmt = lambda v: "timeout" if v == math.inf else f"{v:.1f}"
		errs = ", ".join(f"{k} {v}" for k, v in sorted(c["errors"].items()))
		print(f"{c['done']}/{n} echoed, connect p50 {fmt(p50)} p99 {fmt(p99)} ms, "
		      f"with the echo p50 {fmt(e50)} p99 {fmt(e99)} ms; "
		      f"flood {f['sent']} sent ({f['sent'] / secs / 1e6 if secs else 0:.2f} Mpps), "
		      f"{f['tx_dropped']} tx_dropped, {rx} received; softirq {softirq_ms:.0f} ms = "
		      f"{per_m:.0f} ms/M frames; backscatter {back}"
		      + (f" (proxy SYN-ACKs {synacks})" if synacks else "")
		      + f"; SyncookiesSent +{cookies}, "
		      f"ListenDrops +{drops}" + (f"; errors: {errs}" if errs else ""))
	PY
}

# --- the scenario -----------------------------------------------------------------

mkdir -p "$OUT"
rm -f "$RUNS_CSV" "$CSV" "$REPORT"
echo "row,family,round,echoed,connects,p50_ms,p99_ms,softirq_ms_per_mframes,softirq_ms,sent,tx_dropped,received,backscatter,syncookies_sent,listen_drops,flood_seconds,echo_p50_ms,echo_p99_ms,generator,proxy_synacks" >"$RUNS_CSV"
log "synflood: $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
log "synflood: spoofed SYNs from $SPOOFED to 10.200.0.1:$PORT, $THREADS generator thread(s) at $([ -n "$RATE" ] && echo "$RATE frames/s" || echo "full rate"); $CONNECTS sequential connects per row (1 s timeout), client MSS ${CLIENT_MSS:-as the device sets it}, $ROUNDS round(s)"
families=(ipv4)
[ "$IPV6" = 1 ] && families+=(ipv6)
failed=()
for family in "${families[@]}"; do
	rounds=$ROUNDS
	# IPv6 is the smaller variant: one round, at RATE6.
	[ "$family" = ipv6 ] && rounds=1
	for ((round = 1; round <= rounds; round++)); do
		for row in "${ROWS[@]}"; do
			# A failed run is tried once more (a lab shared with other
			# work has its hiccups); both outcomes are in the report.
			for try in 1 2; do
				printf 'synflood: %-4s round %d %-13s ' "$family" "$round" "$row" | tee -a "$REPORT"
				set +e
				(
					set -e
					run_one "$row" "$round" "$family"
				) 2>"$WORK/err" | tee -a "$REPORT"
				rc=${PIPESTATUS[0]}
				set -e
				# The kernel frees the row's conntrack and BPF state lazily.
				sleep 0.5
				[ "$rc" -ne 0 ] || break
				log "FAILED (exit $rc, try $try): $(tr '\n' ' ' <"$WORK/err")"
				if [ $try = 2 ]; then
					failed+=("$family/$row/round $round")
					echo "$row,$family,$round,,,,,,,,,,,,,failed,,,," >>"$RUNS_CSV"
				fi
			done
		done
	done
done

python3 - "$RUNS_CSV" "$CSV" "${ROWS[*]}" <<-'PY' 2>&1 | tee -a "$REPORT"
	import csv, math, statistics, sys
	runs_csv, out_csv, rows = sys.argv[1], sys.argv[2], sys.argv[3].split()
	runs = {}
	for r in csv.DictReader(open(runs_csv)):
	    if r["flood_seconds"] == "failed":
	        continue
	    runs.setdefault((r["family"], r["row"]), []).append(r)
	# A column with no value in a row (proxy_synacks but in fg-synproxy) is nan.
	med = lambda rs, k: statistics.median([float(r[k]) for r in rs if r[k]] or [math.nan])
	fields = ["echoed", "connects", "p50_ms", "p99_ms", "echo_p99_ms", "softirq_ms_per_mframes", "sent",
	          "tx_dropped", "received", "backscatter", "syncookies_sent", "listen_drops", "proxy_synacks"]
	cell = {}
	with open(out_csv, "w") as f:
	    f.write("row,family,rounds," + ",".join(fields) + "\n")
	    for fam in ("ipv4", "ipv6"):
	        for row in rows:
	            rs = runs.get((fam, row))
	            if not rs:
	                continue
	            cell[fam, row] = {k: med(rs, k) for k in fields}
	            cell[fam, row]["rounds"] = len(rs)
	            f.write(f"{row},{fam},{len(rs)}," + ",".join(
	                "" if math.isnan(cell[fam, row][k])
	                else f"{cell[fam, row][k]:.2f}" if k.endswith("_ms") or "per" in k
	                else f"{cell[fam, row][k]:.0f}" for k in fields) + "\n")
	ms = lambda v: "timeout" if math.isinf(v) else f"{v:.1f}"
	print()
	print("medians over rounds; connect times in ms; softirq in ms per million frames received at fgA")
	print(f"{'family':<6} {'protection':<13} {'echoed':>9} {'p50':>7} {'p99':>8} {'echo p99':>8} {'softirq/Mfr':>12}"
	      f" {'sent':>10} {'tx_drop':>10} {'received':>10} {'SynCookies':>10} {'ListenDrops':>11}")
	for (fam, row), c in cell.items():
	    print(f"{fam:<6} {row:<13} {c['echoed']:>5.0f}/{c['connects']:<3.0f} {ms(c['p50_ms']):>7}"
	          f" {ms(c['p99_ms']):>8} {ms(c['echo_p99_ms']):>8} {c['softirq_ms_per_mframes']:>12.0f} {c['sent']:>10.0f}"
	          f" {c['tx_dropped']:>10.0f} {c['received']:>10.0f} {c['syncookies_sent']:>10.0f}"
	          f" {c['listen_drops']:>11.0f}")
	for fam in ("ipv4", "ipv6"):
	    base, fg = cell.get((fam, "none")), cell.get((fam, "fg-synproxy"))
	    if not (base and fg):
	        continue
	    print()
	    print(f"issue 22's goals, {fam} (fg-synproxy against none, same run; reported, not asserted)")
	    limit = max(2 * base["p99_ms"], 30)
	    verdict = lambda ok: "met" if ok else "MISSED"
	    p99 = fg["p99_ms"]
	    ratio = "n/a" if math.isinf(p99) or math.isinf(base["p99_ms"]) else f"{p99 / base['p99_ms']:.2f}x"
	    print(f"  p99 connect: {ms(p99)} ms vs {ms(base['p99_ms'])} ms = {ratio}; "
	          f"goal <= {ms(limit)} ms (2x or 30 ms): {verdict(p99 <= limit)}")
	    s = fg["softirq_ms_per_mframes"] / base["softirq_ms_per_mframes"]
	    print(f"  softirq per frame: {fg['softirq_ms_per_mframes']:.0f} vs "
	          f"{base['softirq_ms_per_mframes']:.0f} ms/M = {s:.2f} (1/{1 / s:.1f}); "
	          f"goal <= 1/3: {verdict(s <= 1 / 3)}")
	    share = 100 * fg["echoed"] / fg["connects"]
	    print(f"  connects: {fg['echoed']:.0f}/{fg['connects']:.0f} = {share:.2f}%; "
	          f"goal >= 99.5%: {verdict(share >= 99.5)}")
	    print(f"  SYN-ACKs from the proxy: {fg['proxy_synacks']:.0f} for {fg['received']:.0f} frames received "
	          f"({100 * fg['proxy_synacks'] / fg['received']:.1f}%; medians of each)")
	    print(f"  the listener's stack: SyncookiesSent +{fg['syncookies_sent']:.0f}, ListenDrops "
	          f"+{fg['listen_drops']:.0f}; goal 0 and 0: "
	          f"{verdict(fg['syncookies_sent'] == 0 and fg['listen_drops'] == 0)}")
	    per_round = []
	    for a, b in zip(runs[fam, "fg-synproxy"], runs[fam, "none"]):
	        if a["round"] == b["round"]:
	            per_round.append(float(a["softirq_ms_per_mframes"]) / float(b["softirq_ms_per_mframes"]))
	    if len(per_round) > 1:
	        print("  softirq ratio by round: " + ", ".join(f"{r:.2f}" for r in per_round))
PY
log "synflood: softirq is /proc/stat's (host-wide, $(grep -q 'CONFIG_IRQ_TIME_ACCOUNTING=y' "/boot/config-$(uname -r)" 2>/dev/null && echo "IRQ time accounting" || echo "sampled at each tick: no CONFIG_IRQ_TIME_ACCOUNTING")), including fgB's XDP drop of the backscatter"
log "synflood: results in $CSV (medians), $RUNS_CSV (every run), $REPORT"
if [ ${#failed[@]} -gt 0 ]; then
	log "synflood: FAILED runs: ${failed[*]}"
	exit 1
fi
