#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo: floodgate with its built-in policy on a veth lab, flooded by four
# abusive sources while four legitimate ones send under the limit. Prints what
# passed and what was dropped per source, then removes everything.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: run as root (it creates network namespaces and loads BPF)" >&2
	exit 1
fi
source "$(dirname "$0")/lab.sh"
lab_enter "$0" "$@"
trap lab_down EXIT

SECONDS_TO_FLOOD=3
# The frames are 60-byte UDP datagrams: the built-in policy's small-udp layer
# (50000/s, burst 50000 per source) is the one that binds.
LIMIT_RATE=50000
LIMIT_BURST=50000
ABUSER_PPS=800000 # 4 abusers, 200k packets/s each: 4x the built-in limit
LEGIT_PPS=8000    # 4 legitimate sources, 2k packets/s each
# Frames per generator call: a call's frames reach fgA's ring (256 frames)
# before fgA's NAPI can drain it, so a batch larger than the ring loses
# frames on transmit ("Warning: 'fgB' dropped N frames on transmit").
ABUSER_BATCH=64

lab_up
echo "== lab: fgA (protected host) <-veth-> fgB (netns $SENDER_NS, the internet)"
"$FLOODGATE" load fgA
"$FLOODGATE" status fgA
echo

abusers=(10.0.1.1 10.0.1.2 10.0.1.3 10.0.1.4)
legit=(10.0.2.1 10.0.2.2 10.0.2.3 10.0.2.4)
count_sources "${abusers[@]}" "${legit[@]}"

echo "== flooding for ${SECONDS_TO_FLOOD}s: 4 abusers at $((ABUSER_PPS / 4)) pps each, 4 legitimate sources at $((LEGIT_PPS / 4)) pps each"
# One frame per call: a second generator cannot pin its program to fgB, and
# single-frame test runs skip the kernel's per-call XDP dispatcher update.
flood --dst 10.200.0.1 --src 10.0.2.1+4 --rate $LEGIT_PPS --duration $SECONDS_TO_FLOOD \
	--batch 1 >/tmp/fg-demo-legit.$$ &
legit_pid=$!
abuse=$(flood --dst 10.200.0.1 --src 10.0.1.1+4 --rate $ABUSER_PPS --duration $SECONDS_TO_FLOOD \
	--batch $ABUSER_BATCH)
wait $legit_pid
legit_out=$(cat /tmp/fg-demo-legit.$$)
rm -f /tmp/fg-demo-legit.$$

echo
printf '%-12s %-10s %10s %10s %10s   %s\n' SOURCE KIND SENT PASSED DROPPED "LIMIT (burst + rate x time)"
i=0
for kind in abusive legitimate; do
	out=$abuse
	[ $kind = legitimate ] && out=$legit_out
	for j in 0 1 2 3; do
		addr=$([ $kind = abusive ] && echo "${abusers[$j]}" || echo "${legit[$j]}")
		sent=$(json_get "$out" "d['per_source'][$j]")
		passed=$(received $i)
		limit=$(json_get "$out" "int($LIMIT_BURST + $LIMIT_RATE * (d['end_ns'] - d['start_ns']) / 1e9)")
		printf '%-12s %-10s %10s %10s %10s   %s\n' "$addr" "$kind" "$sent" "$passed" \
			"$((sent - passed))" "$limit"
		i=$((i + 1))
	done
done
echo
"$FLOODGATE" stats fgA
echo
echo "== per-source state, as bpftool shows it (first entry)"
bpftool map dump pinned /sys/fs/bpf/floodgate/fgA/sources4 | sed -n '1,17p'
"$FLOODGATE" unload fgA
echo "== lab removed"
