#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Prometheus rules (prometheus/floodgate-rules.yml): `promtool check
# rules` passes, `promtool test rules` passes, and the unit tests can fail:
# each alert made never to fire, and each made to fire where it must not,
# fails them. Every metric the rules name is one floodgate exports
# (scripts/check-promql.py), and a planted unknown name is caught. The
# scrape example in docs/service.md scrapes at least twice within the
# shortest rate() window of the rules (with Prometheus' default 1 m
# interval a rate over [1m] has one sample and is never computed).
set -euo pipefail
cd "$(dirname "$0")/../.."
RULES=prometheus/floodgate-rules.yml
TESTS=prometheus/floodgate-rules.test.yml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

if ! command -v promtool >/dev/null; then
	echo "skip: promtool missing (Debian package prometheus; scripts/install-deps.sh)"
	exit 77
fi
[ -f "$RULES" ] || fail "$RULES is missing"
[ -f "$TESTS" ] || fail "$TESTS is missing"

promtool check rules "$RULES" || fail "promtool check rules"
promtool test rules "$TESTS" || fail "promtool test rules"
python3 scripts/check-promql.py --rules "$RULES" || fail "the rules name metrics floodgate does not export"

# scrape_fits_windows DOC: DOC's scrape_configs example sets a
# scrape_interval at most half the shortest rate()/increase() window.
scrape_fits_windows() {
	python3 - "$RULES" "$1" <<'PY'
import re, sys
unit = {"s": 1, "m": 60, "h": 3600}
rules, doc = (open(p).read() for p in sys.argv[1:])
windows = [int(n) * unit[u] for n, u in re.findall(r"(?:rate|increase)\([^)]*\[(\d+)([smh])\]", rules)]
intervals = [int(n) * unit[u] for n, u in re.findall(r"scrape_interval: *(\d+)([smh])", doc)]
if not windows or not intervals:
    sys.exit("no rate window in the rules or no scrape_interval in the doc")
if max(intervals) * 2 > min(windows):
    sys.exit("scrape_interval %d s is more than half the shortest window, %d s" % (max(intervals), min(windows)))
PY
}
scrape_fits_windows docs/service.md || fail "docs/service.md's scrape example is too slow for the rules"
sed 's/scrape_interval: 15s/scrape_interval: 1m/' docs/service.md >"$work/service.md"
! scrape_fits_windows "$work/service.md" 2>/dev/null || fail "a 1 m scrape_interval was not caught"

alerts=$(sed -n 's/^ *- alert: *//p' "$RULES")
[ "$(wc -l <<<"$alerts")" -ge 7 ] || fail "fewer alerts than expected: $alerts"
for want in FloodgateFloodInProgress FloodgateTableNearlyFull FloodgateFleetDown \
	FloodgateCrowdSecDown FloodgateNewSourceBudgetOverflowing FloodgateDown FloodgateAbsent; do
	grep -qx "$want" <<<"$alerts" || fail "no alert $want"
done

# mutant_fails NAME SED-SCRIPT: the unit tests fail on a copy of the rules
# edited by SED-SCRIPT (which must change it).
mutant_fails() {
	local name=$1 script=$2
	cp "$TESTS" "$work/"
	sed "$script" "$RULES" >"$work/floodgate-rules.yml"
	! cmp -s "$RULES" "$work/floodgate-rules.yml" || fail "mutant '$name' changed nothing"
	promtool check rules "$work/floodgate-rules.yml" >/dev/null || fail "mutant '$name' is not valid"
	if promtool test rules "$work/floodgate-rules.test.yml" >"$work/out" 2>&1; then
		fail "the unit tests pass with $name"
	fi
}

# Each alert never firing: its "fires" test fails.
never_firing() { # ALERT: the rules with ALERT's expression never true
	python3 - "$RULES" "$1" <<-'PY'
		import sys, yaml
		doc = yaml.safe_load(open(sys.argv[1]))
		for rule in doc["groups"][0]["rules"]:
		    if rule["alert"] == sys.argv[2]:
		        rule["expr"] = "vector(1) == 0"
		yaml.safe_dump(doc, sys.stdout, sort_keys=False)
	PY
}
for alert in $alerts; do
	cp "$TESTS" "$work/"
	never_firing "$alert" >"$work/floodgate-rules.yml"
	grep -q 'vector(1) == 0' "$work/floodgate-rules.yml" || fail "could not plant $alert never firing"
	if promtool test rules "$work/floodgate-rules.test.yml" >"$work/out" 2>&1; then
		fail "the unit tests pass with $alert never firing"
	fi
done
# Each alert firing where it must not: its "does not fire" test fails.
mutant_fails "the flood threshold at 100/s" 's/) > 1000$/) > 100/'
mutant_fails "tables nearly full at 40 %" '/floodgate_table_entries/s/> 0.9$/> 0.4/'
mutant_fails "an LRU table full without turnover (a quiet host after a busy day)" \
	's/increase(floodgate_sources_created_total\[5m\])/(increase(floodgate_sources_created_total[5m]) + 1e9)/'
mutant_fails "the ban share nearly full at 20 %" '/floodgate_policy_bans/s/> 0.9$/> 0.2/'
mutant_fails "the fleet down while connected" 's/floodgate_fleet_connected == 0/floodgate_fleet_connected >= 0/'
mutant_fails "the fleet down without a for" '/FloodgateFleetDown/,/for:/s/for: 1m/for: 0s/'
mutant_fails "CrowdSec down while up" 's/floodgate_crowdsec_up == 0/floodgate_crowdsec_up >= 0/'
mutant_fails "the budget overflowing at 0.1/s" '/budget_overflow/,/for:/s/) > 1$/) > 0.1/'
mutant_fails "floodgate down while up" 's/up{job="floodgate"} == 0/up{job="floodgate"} >= 0/'
mutant_fails "floodgate absent while present" 's/absent(up{job="floodgate"})/absent(up{job="nothing"})/'
echo "    $(wc -w <<<"$alerts") alerts never firing and 10 firing where they must not: the unit tests caught each"

# An unknown metric in the rules is named.
sed 's/floodgate_fleet_connected == 0/floodgate_fleet_connectd == 0/' "$RULES" >"$work/typo.yml"
if out=$(python3 scripts/check-promql.py --rules "$work/typo.yml"); then
	fail "a misspelt metric passed check-promql"
fi
grep -q 'FloodgateFleetDown: floodgate_fleet_connectd is not a metric' <<<"$out" ||
	fail "the misspelt metric was not named: $out"
echo "prometheus rules: promtool check and test pass, the tests catch every mutant, names known"
