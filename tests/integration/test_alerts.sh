#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The alert rules against the real thing: a real prometheus (its own
# storage, a free port on loopback, scrape and evaluation every second)
# loads prometheus/floodgate-rules.yml as shipped and scrapes a real
# `floodgate run`; a flood sends FloodgateFloodInProgress firing while it
# lasts, and it resolves after the flood. Every rule evaluates without
# error on the real series, and every family the endpoint serves is one
# scripts/check-promql.py reads from the code.
source "$(dirname "$0")/lib.sh"

if ! command -v prometheus >/dev/null; then
	echo "$TEST_NAME: prometheus is not installed (scripts/install-deps.sh); skipped"
	exit 77
fi

WORK=$(mktemp -d)
RUN_PID='' PROM_PID='' FLOOD_PID=''
trap 'stop_children "$FLOOD_PID" "$PROM_PID" "$RUN_PID"; lab_down; rm -rf "$WORK"' EXIT
CONF=$WORK/fgA.conf
RULES=$REPO/prometheus/floodgate-rules.yml
ALERT=FloodgateFloodInProgress
# The flood: one source at FLOOD_PPS against 1,000/s drops some 19,000 a
# second, far over the alert's 1,000; FLOOD_SECS leaves time for the rate
# over 1 m to pass it and for the alert's `for` after that.
FLOOD_PPS=20000
FLOOD_SECS=${FG_ALERTS_FLOOD_SECS:-40}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
METRICS=127.0.0.1:$(free_port)
PROM=127.0.0.1:$(free_port)

cat >"$CONF" <<CONF
new_sources = off
[policy flood]
match = udp dport 9
rate  = 1000/s
burst = 100

[policy rest]
match = any
rate  = 100000/s
CONF
cat >"$WORK/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [$RULES]
scrape_configs:
  - job_name: floodgate
    static_configs: [{targets: ["$METRICS"]}]
CONF

# api PATH: a Prometheus API answer's data, as JSON; fails (silently: it
# is polled while prometheus starts) when there is none.
api() {
	curl -sf --max-time 2 "http://$PROM/api/v1/$1" |
		python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["data"]))' 2>/dev/null
}

# alert_state: the state of the flood alert for policy "flood" on fgA
# (pending, firing), or "inactive" when Prometheus lists none.
alert_state() {
	api alerts | python3 -c '
import json, sys
alerts = [a for a in json.load(sys.stdin)["alerts"] if a["labels"]["alertname"] == sys.argv[1]
          and a["labels"].get("policy") == "flood" and a["labels"].get("interface") == "fgA"]
print(alerts[0]["state"] if alerts else "inactive")' "$ALERT"
}
alert_is() { [ "$(alert_state 2>/dev/null)" = "$1" ]; }
flooding() { kill -0 "$FLOOD_PID" 2>/dev/null; }
# target_up: Prometheus scraped floodgate and found it up.
target_up() {
	api 'query?query=up%7Bjob%3D%22floodgate%22%7D' | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
sys.exit(0 if r and r[0]["value"][1] == "1" else 1)' 2>/dev/null
}

lab_up
"$FLOODGATE" run fgA -c "$CONF" --metrics "$METRICS" >>"$WORK/run.log" 2>&1 &
RUN_PID=$!
check "run serves /metrics on $METRICS" \
	wait_until 10 bash -c "curl -sf 'http://$METRICS/metrics' >/dev/null"
curl -sf "http://$METRICS/metrics" >"$WORK/scrape.txt"
check "every family served is one check-promql reads from the code" \
	python3 "$REPO/scripts/check-promql.py" "$REPO" --scrape "$WORK/scrape.txt"

prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="$PROM" >>"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
check "prometheus ($PROM) scrapes floodgate and finds it up" wait_until 30 target_up
check "  ... with the flood alert inactive before the flood" alert_is inactive

flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --rate "$FLOOD_PPS" --duration "$FLOOD_SECS" \
	>"$WORK/flood.json" &
FLOOD_PID=$!
start=$SECONDS
until alert_is firing || ! flooding; do
	sleep 0.2
done
fired=$((SECONDS - start))
check "$ALERT fires during the flood (after $fired s of $FLOOD_SECS)" \
	bash -c "[ '$(alert_state)' = firing ] && kill -0 $FLOOD_PID"
rules_health=$(api rules | python3 -c '
import json, sys
rules = [r for g in json.load(sys.stdin)["groups"] for r in g["rules"]]
bad = ["%s: %s" % (r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
print(f"{len(rules)} rules, " + ("; ".join(bad) if bad else "all ok"))')
check "every rule evaluates on the real series ($rules_health)" \
	grep -q ', all ok$' <<<"$rules_health"
others=$(api alerts | python3 -c '
import json, sys
print(" ".join(sorted({a["labels"]["alertname"] for a in json.load(sys.stdin)["alerts"]} - {sys.argv[1]})))' "$ALERT")
check "no other alert is active (${others:-none})" test -z "$others"

wait "$FLOOD_PID"
FLOOD_PID=
sent=$(json_get "$(cat "$WORK/flood.json")" 'd["sent"]')
dropped=$(curl -sf "http://$METRICS/metrics" |
	sed -n 's/^floodgate_policy_packets_total{interface="fgA",policy="flood",verdict="dropped"} //p')
check "the flood sent $sent packets, floodgate dropped ${dropped:-?} of them" \
	test "${dropped:-0}" -gt $((sent / 2))
# The rate over 1 m falls under 1,000/s once less than 1,000 x 60 drops
# remain in the window: under a minute after the flood.
start=$SECONDS
wait_until 90 alert_is inactive
check "$ALERT resolves after the flood (in $((SECONDS - start)) s)" alert_is inactive
finish
