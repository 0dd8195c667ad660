#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# floodgate as a CrowdSec bouncer (docs/crowdsec.md, "CrowdSec"), against a real
# Local API of this suite's own (lib.sh crowdsec_setup: its database under
# $WORK) and real veth traffic on fgA:
# - api_key_file gets the config's trust check and must be readable by
#   its owner alone;
# - `cscli decisions add --ip` is enforced, and `delete` lifted, within
#   interval + 1 s (a deadline poll of `floodgate bans --json`), and the
#   traffic of that address is dropped, then passes; --range too;
# - decisions floodgate must refuse (an own address, a prefix covering an
#   [allow] entry, one shorter than min_ban_prefix) ban nothing and are
#   counted; other types are counted and ignored;
# - with the Local API stopped every ban stays until its own expiry, the
#   outage is logged once and shown in /metrics; restarted, it resumes
#   without duplicates; a decision deleted while `run` was stopped is
#   lifted when it starts again;
# - 50,000 imported decisions are all enforced, 100,000 with max_bans =
#   131072 when that key exists, and a full bans table is counted and
#   logged. How long a whole set takes to apply after the stream reply
#   (issue 23's goal: 5 s for 100,000) is a speed: printed with the
#   figures, never asserted (a loaded machine took 6.3 s, a quiet one 2.6);
#   scripts/bench-crowdsec.sh measures it.
source "$(dirname "$0")/lib.sh"

require_crowdsec

WORK=$(mktemp -d)
CROWDSEC_PID=
RUN_A=
cleanup() {
	stop_children $RUN_A $CROWDSEC_PID
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT
# The suite runs in a network namespace of its own: these ports are its.
CS=$WORK/crowdsec
CS_PORT=18080
METRICS=127.0.0.1:9467
INTERVAL=1

cat >"$WORK/a.conf" <<CONF
[allow]
src = 10.77.0.0/24

[policy udp]
match = udp dport 9
rate  = 100000/s
burst = 100000

[crowdsec]
url = http://127.0.0.1:$CS_PORT/
api_key_file = $WORK/crowdsec.key
interval = ${INTERVAL}s
CONF

cs() { crowdsec_cscli "$CS" "$@" >/dev/null 2>>"$WORK/cscli.log"; }

metric() { # NAME: its sample for fgA
	curl -sf --max-time 2 "http://$METRICS/metrics" |
		awk -v m="floodgate_$1{interface=\"fgA\"}" '$1 == m { print $2 }'
}

up_is() { [ "$(metric crowdsec_up)" = "$1" ]; }

# The sample as of now: /metrics serves a text up to 1 s old
# (METRICS_CACHE_NS in user/service/metrics.c), so a count read right after
# an apply the test saw in `bans` may predate it. Past that second the text
# is made anew, after the apply: a bound, not a hope.
metric_now() {
	sleep 1.1
	metric "$1"
}

bans_json() { "$FLOODGATE" bans fgA --json; }

# ban_field PREFIX FIELD: FIELD of the ban of PREFIX ("" when none).
ban_field() {
	bans_json | python3 -c "
import json, sys
for b in json.load(sys.stdin)['bans']:
    if b['prefix'] == '$1':
        print(b['$2'])"
}

# The polls below are cheap (no python): the time they measure is floodgate's.
has_ban() { "$FLOODGATE" bans fgA | grep -q "^$1 .* crowdsec:"; }
no_ban() { ! "$FLOODGATE" bans fgA | grep -q "^$1 "; }

now() { echo "$EPOCHREALTIME"; }
usec() { local s=${1%.*} f=${1#*.}; echo $((s * 1000000 + 10#${f:0:6})); }
elapsed() { # seconds since $1, two decimals
	local us=$(($(usec "$EPOCHREALTIME") - $(usec "$1")))
	printf '%d.%02d\n' $((us / 1000000)) $((us % 1000000 / 10000))
}
within() { python3 -c "import sys; sys.exit(0 if $1 <= $2 else 1)"; }

# deadline_poll SECONDS COMMAND...: polls COMMAND every 20 ms; prints the
# seconds it took; fails past SECONDS.
deadline_poll() {
	local limit_us=$(($1 * 1000000)) start=$EPOCHREALTIME
	shift
	until "$@"; do
		if [ $(($(usec "$EPOCHREALTIME") - $(usec "$start"))) -gt "$limit_us" ]; then
			echo "timeout"
			return 1
		fi
		sleep 0.02
	done
	elapsed "$start"
}

# passes SRC: what of 50 packets from SRC to udp dport 9 got through fgA
# (the nft counter of count_sources, index 0, after XDP).
passes() {
	count_sources "$1"
	flood --dst 10.200.0.1 --src "$1" --dport 9 --count 50 >/dev/null
	received 0
}

start_run() {
	"$FLOODGATE" run fgA --keep -v -c "$WORK/a.conf" --metrics "$METRICS" \
		>>"$WORK/a.log" 2>&1 &
	RUN_A=$!
	wait_until 30 up_is 1
}

stop_run() {
	kill "$RUN_A"
	wait "$RUN_A"
	RUN_A=
}

# --- the Local API, and the bouncer's key ---------------------------------------
crowdsec_setup "$CS" "$CS_PORT"
check "the Local API starts alone on 127.0.0.1:$CS_PORT" crowdsec_start "$CS"
crowdsec_cscli "$CS" bouncers add floodgate -o raw >"$WORK/crowdsec.key" 2>>"$WORK/cscli.log"
check "cscli bouncers add floodgate gives a key" test -s "$WORK/crowdsec.key"

chmod 640 "$WORK/crowdsec.key"
expect_exit 3 "check refuses an api_key_file its group may read" \
	"$FLOODGATE" check -c "$WORK/a.conf"
check "  ... saying why, at its line" grep -q "a.conf:11: api_key_file .*readable by its group" \
	<<<"$LAST_ERR"
chmod 600 "$WORK/crowdsec.key"
expect_exit 0 "check takes it readable by root alone" "$FLOODGATE" check -c "$WORK/a.conf"

lab_up
"$FLOODGATE" load fgA -c "$WORK/a.conf" >/dev/null
check "run starts and reaches the Local API" start_run

# --- add and delete, enforced within interval + 1 s ------------------------------
check "10.66.0.7 passes before any decision" test "$(passes 10.66.0.7)" -eq 50
cs decisions add --ip 10.66.0.7 --duration 1h
took=$(deadline_poll $((INTERVAL + 1)) has_ban 10.66.0.7/32)
check "cscli decisions add --ip is enforced within interval + 1 s ($took s)" \
	within "${took/timeout/99}" $((INTERVAL + 1))
ADD_IP=$took
check "  ... bans shows its origin, crowdsec:cscli" \
	test "$(ban_field 10.66.0.7/32 origin)" = crowdsec:cscli
left=$(ban_field 10.66.0.7/32 remaining_s)
check "  ... with the decision's time left ($left s of 1h)" within 3590 "$left"
check "  ... its traffic is dropped" test "$(passes 10.66.0.7)" -eq 0
check "  ... and only its" test "$(passes 10.66.0.8)" -eq 50
cs decisions delete --ip 10.66.0.7
took=$(deadline_poll $((INTERVAL + 1)) no_ban 10.66.0.7/32)
check "cscli decisions delete --ip is lifted within interval + 1 s ($took s)" \
	within "${took/timeout/99}" $((INTERVAL + 1))
DEL_IP=$took
check "  ... its traffic passes again" test "$(passes 10.66.0.7)" -eq 50

cs decisions add --range 10.67.0.0/24 --duration 1h
took=$(deadline_poll $((INTERVAL + 1)) has_ban 10.67.0.0/24)
check "cscli decisions add --range is enforced within interval + 1 s ($took s)" \
	within "${took/timeout/99}" $((INTERVAL + 1))
ADD_RANGE=$took
check "  ... 10.67.0.9 in it is dropped" test "$(passes 10.67.0.9)" -eq 0
cs decisions delete --range 10.67.0.0/24
took=$(deadline_poll $((INTERVAL + 1)) no_ban 10.67.0.0/24)
check "cscli decisions delete --range is lifted within interval + 1 s ($took s)" \
	within "${took/timeout/99}" $((INTERVAL + 1))
DEL_RANGE=$took
check "  ... 10.67.0.9 passes again" test "$(passes 10.67.0.9)" -eq 50

# --- what must not become a ban ----------------------------------------------------
refused=$(metric_now crowdsec_decisions_refused_total)
ignored=$(metric crowdsec_decisions_ignored_total)
cs decisions add --ip 10.200.0.1 --duration 1h          # fgA's own address
cs decisions add --range 10.77.0.0/16 --duration 1h     # covers an [allow] prefix
cs decisions add --range 10.0.0.0/8 --duration 1h       # shorter than min_ban_prefix
cs decisions add --ip 10.66.0.9 --duration 1h --type captcha
cs decisions add --ip 10.66.0.10 --duration 1h          # a good one, to know the pull came
deadline_poll $((INTERVAL + 1)) has_ban 10.66.0.10/32 >/dev/null
for p in 10.200.0.1/32 10.77.0.0/16 10.0.0.0/8 10.66.0.9/32; do
	check "$p from CrowdSec is not applied" no_ban "$p"
done
check "  ... the three refusals are counted" \
	test "$(metric_now crowdsec_decisions_refused_total)" = $((refused + 3))
check "  ... and logged, with the reasons" grep -q \
	"crowdsec: refused 10.200.0.1/32: it covers one of this host's own addresses" "$WORK/a.log"
check "  ... (an [allow] prefix)" grep -q \
	"crowdsec: refused 10.77.0.0/16: it covers an \[allow\] prefix" "$WORK/a.log"
check "  ... (min_ban_prefix)" grep -q \
	"crowdsec: refused 10.0.0.0/8: shorter than min_ban_prefix" "$WORK/a.log"
check "  ... the captcha is counted as ignored" \
	test "$(metric_now crowdsec_decisions_ignored_total)" = $((ignored + 1))
check "fgA's own address still passes" test "$(passes 10.200.0.1)" -eq 50

# --- an outage: bans keep to their expiry; a restart resumes ------------------------
cs decisions add --ip 10.68.0.1 --duration 30s
cs decisions add --ip 10.68.0.2 --duration 1h
deadline_poll $((INTERVAL + 1)) has_ban 10.68.0.1/32 >/dev/null
deadline_poll $((INTERVAL + 1)) has_ban 10.68.0.2/32 >/dev/null
applied=$(metric_now crowdsec_decisions_applied_total)
before=$(bans_json)
stop_children "$CROWDSEC_PID"
stopped=$(now)
CROWDSEC_PID=
check "the outage shows in /metrics (crowdsec_up 0)" \
	wait_until 5 up_is 0
check "  ... and crowdsec_outages_total" test "$(metric crowdsec_outages_total)" -ge 1
check "  ... logged" grep -q "crowdsec: the Local API at .* cannot be reached" "$WORK/a.log"
for p in 10.66.0.10/32 10.68.0.1/32 10.68.0.2/32; do
	was=$(json_get "$before" "[b['remaining_s'] for b in d['bans'] if b['prefix'] == '$p'][0]")
	is=$(ban_field "$p" remaining_s)
	check "  ... $p stays, its time left running down ($was s, then $is s)" \
		python3 -c "import sys; sys.exit(0 if 0 < $was - $is < $(elapsed "$stopped") + 1 else 1)"
done
check "  ... 10.68.0.2 is still dropped" test "$(passes 10.68.0.2)" -eq 0
left=$(ban_field 10.68.0.1/32 remaining_s)
sleep "$(python3 -c "print($left + 0.2)")"
check "  ... the 30 s ban ends at its expiry: 10.68.0.1 passes" \
	test "$(passes 10.68.0.1)" -eq 50
check "  ... while the 1h ban holds" test "$(passes 10.68.0.2)" -eq 0
sleep 2
check "  ... the outage is logged once" \
	test "$(grep -c 'crowdsec: the Local API at .* cannot be reached' "$WORK/a.log")" -eq 1

check "the Local API restarts" crowdsec_start "$CS"
check "  ... the bouncer reaches it again (crowdsec_up 1)" \
	wait_until 40 up_is 1
check "  ... its end logged" grep -q "crowdsec: the Local API at .* answers again" "$WORK/a.log"
sleep $((INTERVAL + 1))
check "  ... no decision is applied twice" \
	test "$(metric crowdsec_decisions_applied_total)" = "$applied"
check "  ... each ban listed once" \
	test "$(bans_json | python3 -c "import json,sys; p=[b['prefix'] for b in json.load(sys.stdin)['bans']]; print(len(p) - len(set(p)))")" = 0
check "  ... 10.68.0.2 still dropped" test "$(passes 10.68.0.2)" -eq 0

stop_run
cs decisions delete --ip 10.68.0.2
check "a decision deleted while run was stopped: its ban stays meanwhile (--keep)" \
	has_ban 10.68.0.2/32
check "  ... and is lifted when run starts again" start_run
check "  ... (gone)" no_ban 10.68.0.2/32

# --- many decisions -------------------------------------------------------------------
# import_csv N FIRST_OCTET FILE: N decisions of 4h for 10.FIRST.x.y upwards.
import_csv() {
	python3 -c "
print('duration,scope,value')
for i in range($1):
    print('4h,ip,10.%d.%d.%d' % ($2 + (i >> 16), (i >> 8) & 255, i & 255))" >"$3"
	crowdsec_cscli "$CS" decisions import -i "$3" >/dev/null 2>>"$WORK/cscli.log"
}
crowdsec_bans() {
	bans_json | python3 -c "import json,sys; print(sum(1 for b in json.load(sys.stdin)['bans'] if (b['origin'] or '').startswith('crowdsec:') and b['state'] == 'active'))"
}

# whole_set_applied N: the seconds the last reply of at least N ban
# decisions took to apply, from its last byte (run's log, with -v).
whole_set_applied() {
	grep -o "new bans of [0-9]* ban decisions, .* applied in [0-9.]* s" "$WORK/a.log" |
		awk -v n="$1" '$4 >= n { t = $(NF - 1) } END { print t }'
}

crowdsec_bans_reach() { [ "$(crowdsec_bans)" -ge "$1" ]; }

# Imported while `run` is stopped, the 50,000 come in one reply: the whole
# set its start asks for.
stop_run
base=$(crowdsec_bans)
import_csv 50000 100 "$WORK/50k.csv"
start=$(now)
check "run starts again" start_run
took=$(elapsed "$start")
count=$(crowdsec_bans)
check "cscli decisions import of 50,000: all in bans ($count, $base before)" \
	test "$count" -ge $((base + 50000))
apply=$(whole_set_applied 50000)
check "  ... and run logs the time it took ($apply s from the stream reply; $took s from the start of run)" \
	test -n "$apply"
APPLY_50K=$apply
check "  ... 10.100.195.79 (the last) is dropped" test "$(passes 10.100.195.79)" -eq 0

# A full table: 65,536 entries until max_bans; 20,000 more do not all fit.
sed '1i max_bans = 131072' "$WORK/a.conf" >"$WORK/max_bans.conf"
if "$FLOODGATE" check -c "$WORK/max_bans.conf" >/dev/null 2>&1; then
	MAX_BANS=1
else
	MAX_BANS=
	full=$(metric crowdsec_decisions_table_full_total)
	import_csv 20000 110 "$WORK/20k.csv"
	full_grew() { [ "$(metric crowdsec_decisions_table_full_total)" != "$full" ]; }
	deadline_poll 40 full_grew >/dev/null
	now_full=$(metric crowdsec_decisions_table_full_total)
	check "a full bans table is counted ($now_full decisions did not fit)" \
		test "$now_full" -gt "$full"
	check "  ... and logged" grep -q "crowdsec: the bans table is full" "$WORK/a.log"
fi
stop_run
"$FLOODGATE" unload fgA >/dev/null

# --- 100,000, with a bans table sized for them -------------------------------------------
if [ -z "$MAX_BANS" ]; then
	echo "skip - 100,000 decisions: max_bans is not a key of this build (floodgate check refuses it); 50,000 tested above"
else
	stop_children "$CROWDSEC_PID"
	CROWDSEC_PID=
	rm -rf "$CS"
	crowdsec_setup "$CS" "$CS_PORT"
	crowdsec_start "$CS"
	crowdsec_cscli "$CS" bouncers add floodgate -o raw >"$WORK/crowdsec.key" 2>>"$WORK/cscli.log"
	cp "$WORK/max_bans.conf" "$WORK/a.conf"
	"$FLOODGATE" load fgA -c "$WORK/a.conf" >/dev/null
	import_csv 100000 100 "$WORK/100k.csv"
	check "run starts with 100,000 decisions in the Local API" start_run
	check "100,000 imported decisions: all enforced" test "$(crowdsec_bans)" -eq 100000
	apply=$(whole_set_applied 100000)
	check "  ... and run logs the time it took ($apply s from the stream reply; goal 5 s)" \
		test -n "$apply"
	APPLY_100K=$apply
	check "  ... 10.101.134.159 (the last) is dropped" test "$(passes 10.101.134.159)" -eq 0
	stop_run
fi
echo "figures: add --ip ${ADD_IP}s, delete --ip ${DEL_IP}s, add --range ${ADD_RANGE}s," \
	"delete --range ${DEL_RANGE}s (interval ${INTERVAL}s); 50k applied in ${APPLY_50K}s" \
	"${APPLY_100K:+; 100k applied in ${APPLY_100K}s}"
finish
