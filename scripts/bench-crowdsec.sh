#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The time from a CrowdSec decision stream of FG_BENCH_DECISIONS (default
# 100,000) to as many bans in force (docs/crowdsec.md, "CrowdSec"): a Local API of
# its own (tests/integration/lib.sh crowdsec_setup) holds the imported
# decisions, `floodgate run` starts, and its first pull (the whole set)
# is timed: the Local API's reply, then parse and apply. The bans table
# is sized with max_bans when this build knows the key; otherwise it holds
# 65,536 and the rest is counted as table full. Called at the end of
# scripts/bench.sh; runs in namespaces of its own (lab_enter).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-crowdsec: run as root" >&2
	exit 1
fi
source "$(dirname "$0")/lab.sh"
lab_enter "$0" "$@"
TEST_NAME=bench-crowdsec
# lib.sh's CrowdSec helpers without its test harness: just the functions.
eval "$(sed -n '/^require_crowdsec()/,$p' "$REPO/tests/integration/lib.sh")"
require_crowdsec

N=${FG_BENCH_DECISIONS:-100000}
WORK=$(mktemp -d)
CROWDSEC_PID=
RUN=
cleanup() {
	[ -z "$RUN" ] || kill "$RUN" 2>/dev/null || true
	[ -z "$CROWDSEC_PID" ] || kill "$CROWDSEC_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

ip link add fgcs0 type veth peer name fgcs1
ip link set fgcs0 up
ip link set fgcs1 up
crowdsec_setup "$WORK/cs" 18081
crowdsec_start "$WORK/cs"
crowdsec_cscli "$WORK/cs" bouncers add floodgate -o raw >"$WORK/key" 2>/dev/null
chmod 600 "$WORK/key"
python3 -c "
print('duration,scope,value')
for i in range($N):
    print('4h,ip,10.%d.%d.%d' % (100 + (i >> 16), (i >> 8) & 255, i & 255))" >"$WORK/d.csv"
start=$EPOCHREALTIME
crowdsec_cscli "$WORK/cs" decisions import -i "$WORK/d.csv" >/dev/null 2>&1
echo "crowdsec: $N decisions imported into the Local API in $(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')") s (cscli)"

cat >"$WORK/fg.conf" <<CONF
[policy udp]
match = udp dport 9
rate = 1000/s

[crowdsec]
url = http://127.0.0.1:18081/
api_key_file = $WORK/key
interval = 10s
CONF
sed '1i max_bans = 131072' "$WORK/fg.conf" >"$WORK/max.conf"
if "$FLOODGATE" check -c "$WORK/max.conf" >/dev/null 2>&1; then
	cp "$WORK/max.conf" "$WORK/fg.conf"
	sized="max_bans = 131072"
else
	sized="65,536 entries (no max_bans key in this build)"
fi
"$FLOODGATE" load fgcs0 -c "$WORK/fg.conf" >/dev/null
start=$EPOCHREALTIME
"$FLOODGATE" run fgcs0 --keep -v -c "$WORK/fg.conf" >"$WORK/run.log" 2>&1 &
RUN=$!
deadline=$((SECONDS + 120))
until grep -q "crowdsec: .* new bans of" "$WORK/run.log"; do
	if [ $SECONDS -ge $deadline ]; then
		echo "crowdsec: no pull applied in 120 s:" >&2
		cat "$WORK/run.log" >&2
		exit 1
	fi
	sleep 0.05
done
total=$(python3 -c "print(f'{$EPOCHREALTIME - $start:.2f}')")
line=$(grep "crowdsec: .* new bans of" "$WORK/run.log" | head -1)
in_force=$("$FLOODGATE" bans fgcs0 | grep -c "crowdsec:" || true)
echo "crowdsec: table $sized; ${line#*crowdsec: }"
echo "crowdsec: $in_force bans in force, $total s from the start of run (load and first pull)"
grep "bans table is full" "$WORK/run.log" || true
kill "$RUN"
wait "$RUN" || true
RUN=
"$FLOODGATE" unload fgcs0 >/dev/null
