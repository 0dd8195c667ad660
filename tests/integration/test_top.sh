#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `floodgate top` on a veth with real traffic: the heaviest source comes
# first, in text and JSON, with its policy and state; -n and --policy.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT

cat >"$WORK/top.conf" <<CONF
[policy flood]
match = udp dport 9
rate  = 10/min
burst = 10

[policy rest]
match = any
algorithm = sliding_window
rate  = 100000/s
CONF

lab_up
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/top.conf"
expect_exit 5 "top on an interface without floodgate" "$FLOODGATE" top nosuch0
expect_exit 2 "top -n 0" "$FLOODGATE" top fgA -n 0
expect_exit 2 "top --policy with an unknown name" "$FLOODGATE" top fgA --policy nosuch
check "  ... says so" grep -q "no policy named 'nosuch'" <<<"$LAST_ERR"

# Four light sources, then one heavy one: 20x the packets of each.
flood --dst 10.200.0.1 --src 10.0.1.2+4 --dport 9 --rate 4000 --count 2000 >/dev/null
flood --dst 10.200.0.1 --src 10.0.1.1 --dport 9 --rate 20000 --count 10000 >/dev/null
flood --dst 10.200.0.1 --src 10.0.9.9 --dport 7 --rate 1000 --count 100 >/dev/null

json=$("$FLOODGATE" top fgA --json)
echo "    $json"
check "top --json: the heaviest source first" \
	test "$(json_get "$json" 'd["sources"][0]["source"]')" = "10.0.1.1/32"
check "  ... with its policy" test "$(json_get "$json" 'd["sources"][0]["policy"]')" = flood
check "  ... and a sampled drop count near its 9,990 refusals" \
	json_get "$json" 'exit(0 if 7000 <= d["sources"][0]["dropped"] <= 13000 else 1)'
check "  ... in non-increasing order of drops" \
	json_get "$json" 'exit(0 if all(a["dropped"] >= b["dropped"] for a, b in zip(d["sources"], d["sources"][1:])) else 1)'
check "  ... every source of both tables listed (5 flood, at least 6 rest)" \
	json_get "$json" 'exit(0 if [s["policy"] for s in d["sources"]].count("flood") == 5 and [s["policy"] for s in d["sources"]].count("rest") >= 6 else 1)'
check "  ... the sliding_window source has its whole allowance left" \
	json_get "$json" 'exit(0 if [s for s in d["sources"] if s["source"] == "10.0.9.9/32"][0]["allowance"] >= 99800 else 1)'
check "  ... the heavy source has no token left and waits at most 6 s for one" \
	json_get "$json" 'exit(0 if d["sources"][0]["allowance"] == 0 and 0 < d["sources"][0]["next_admission_ms"] <= 6000 and d["sources"][0]["ban"] is None else 1)'
check "top -n 1 lists one source" \
	test "$("$FLOODGATE" top fgA -n 1 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sources"]))')" = 1
check "top --policy flood lists only the five flood sources" \
	test "$("$FLOODGATE" top fgA --policy flood --json | python3 -c 'import json,sys; print(sorted(s["source"] for s in json.load(sys.stdin)["sources"]))')" = \
	"['10.0.1.1/32', '10.0.1.2/32', '10.0.1.3/32', '10.0.1.4/32', '10.0.1.5/32']"
text=$("$FLOODGATE" top fgA -n 3)
echo "$text" | sed 's/^/    /'
check "text: a header and the heavy source on the first row" \
	bash -c "sed -n 2p <<<'$text' | grep -q '^10.0.1.1/32 *flood'"
expect_exit 0 "ban the heavy source for 60 s" "$FLOODGATE" ban fgA 10.0.1.1 --for 60s
check "top shows the ban's expiry" bash -c "'$FLOODGATE' top fgA -n 1 --json |
	python3 -c 'import json,sys; b = json.load(sys.stdin)[\"sources\"][0][\"ban\"]; exit(0 if 58 <= b[\"expires_in_s\"] <= 60 and b[\"strikes\"] == 1 else 1)'"
expect_exit 0 "unload" "$FLOODGATE" unload fgA
finish
