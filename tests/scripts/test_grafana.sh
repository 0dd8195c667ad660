#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Grafana dashboard (grafana/floodgate-dashboard.json): valid JSON
# (python3 and jq), importable (schemaVersion 38, every query through the
# ${DS_PROMETHEUS} input), showing what it must (drops and passes per
# policy, table occupancy, fleet and CrowdSec health, event and ban rates),
# and naming only metrics and labels floodgate exports (scripts/check-promql.py,
# which reads them from the code: no per-source label exists, so none can be
# grouped by). A planted unknown metric, a per-source label and broken JSON
# each fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
DASH=grafana/floodgate-dashboard.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

[ -f "$DASH" ] || fail "$DASH is missing"
python3 -m json.tool "$DASH" >/dev/null || fail "python3 -m json.tool: $DASH is not JSON"
if command -v jq >/dev/null; then
	jq empty "$DASH" || fail "jq: $DASH is not JSON"
fi

# shape DASHBOARD: what an import needs and what the dashboard must show.
shape() {
	python3 - "$1" <<-'PY'
		import json, sys
		d = json.load(open(sys.argv[1]))
		def panels(ps):
		    for p in ps:
		        yield p
		        yield from panels(p.get("panels", []))
		ps = [p for p in panels(d["panels"]) if p["type"] != "row"]
		problems = []
		if not 36 <= d.get("schemaVersion", 0) <= 39:
		    problems.append(f"schemaVersion {d.get('schemaVersion')}, not about 38")
		if [i["name"] for i in d.get("__inputs", [])] != ["DS_PROMETHEUS"]:
		    problems.append("no ${DS_PROMETHEUS} datasource input")
		ids = [p["id"] for p in panels(d["panels"])]
		if len(ids) != len(set(ids)):
		    problems.append("panel ids repeat")
		for p in ps:
		    g = p["gridPos"]
		    if g["x"] + g["w"] > 24:
		        problems.append(f"{p['title']}: wider than the grid")
		    if not p.get("targets"):
		        problems.append(f"{p['title']}: no query")
		    for ds in [p.get("datasource")] + [t.get("datasource") for t in p.get("targets", [])]:
		        if not ds or ds.get("uid") != "${DS_PROMETHEUS}":
		            problems.append(f"{p['title']}: datasource {ds}, not ${{DS_PROMETHEUS}}")
		for v in d["templating"]["list"]:
		    if v.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
		        problems.append(f"variable {v['name']}: not through ${{DS_PROMETHEUS}}")
		exprs = " ".join(t["expr"] for p in ps for t in p["targets"])
		for what, needle in [
		        ("drops per policy", 'by (instance, interface, policy) (rate(floodgate_policy_packets_total{job=~"$job",instance=~"$instance",interface=~"$interface",policy=~"$policy",verdict="dropped"}'),
		        ("passes per policy", 'by (instance, interface, policy) (rate(floodgate_policy_packets_total{job=~"$job",instance=~"$instance",interface=~"$interface",policy=~"$policy",verdict="passed"}'),
		        ("table occupancy", "floodgate_table_entries{"),
		        ("fleet health", "floodgate_fleet_connected{"),
		        ("CrowdSec health", "floodgate_crowdsec_up{"),
		        ("ban rate", "rate(floodgate_bans_added_total{"),
		        ("event rate", "rate(floodgate_events_suppressed_total{")]:
		    if needle not in exprs:
		        problems.append(f"no panel shows {what} ({needle})")
		for p in problems:
		    print(p)
		print(f"    {len(ps)} panels, {len(exprs.split('floodgate_')) - 1} metric references")
		sys.exit(1 if problems else 0)
	PY
}
shape "$DASH" || fail "the dashboard's shape"
python3 scripts/check-promql.py --dashboard "$DASH" ||
	fail "the dashboard names metrics or labels floodgate does not export"

# planted DESCRIPTION SED-SCRIPT GREP: the copy edited by SED-SCRIPT fails
# check-promql, which names GREP.
planted() {
	sed "$2" "$DASH" >"$work/dash.json"
	! cmp -s "$DASH" "$work/dash.json" || fail "could not plant $1"
	if out=$(python3 scripts/check-promql.py --dashboard "$work/dash.json"); then
		fail "$1 passed check-promql"
	fi
	grep -q "$3" <<<"$out" || fail "$1 was not named: $out"
}
planted "an unknown metric" '0,/floodgate_crowdsec_up{/s//floodgate_crowdsec_upp{/' \
	'floodgate_crowdsec_upp is not a metric'
planted "a per-source series" '0,/sum by (instance, interface, policy)/s//sum by (instance, interface, src)/' \
	'label src is not one'
planted "a per-source legend" '0,/{{interface}} {{policy}}/s//{{interface}} {{saddr}}/' \
	'label saddr is not one'
sed '$d' "$DASH" >"$work/broken.json"
if python3 -m json.tool "$work/broken.json" >/dev/null 2>&1; then
	fail "a truncated dashboard parsed"
fi
sed 's/"schemaVersion": 38/"schemaVersion": 16/' "$DASH" >"$work/old.json"
if shape "$work/old.json" >/dev/null; then
	fail "schemaVersion 16 passed"
fi
echo "grafana dashboard: JSON, importable, shows what it must, names only floodgate's metrics and labels"
