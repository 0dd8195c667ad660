#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The feed-file benchmark (docs/config.md, "Feed files"): the time `floodgate load`
# and `floodgate reload` take to put 1,000,000 mixed IPv4/IPv6 prefixes
# (scripts/feedgen.py, seed FG_FEEDS_SEED) into the datapath, against
# `nft -f` loading the same prefixes into interval sets (`flags interval`,
# one ip and one ip6 set) in the same run, with the ratio beside the goal:
# at most a fifth of nft's time. Runs in private network and mount
# namespaces (lab_enter), on a veth pair of its own; as root, under the lab
# lock (flock /tmp/fg-lab.lock scripts/bench-feeds.sh).
#
#   FG_FEEDS_COUNT  prefixes (default 1000000)
#   FG_FEEDS_SEED   feedgen.py's seed (default 23)
set -u
source "$(dirname "$0")/lab.sh"
lab_enter "$0" "$@"

COUNT=${FG_FEEDS_COUNT:-1000000}
SEED=${FG_FEEDS_SEED:-23}
WORK=$(mktemp -d)
trap 'ip link del fgfeed0 2>/dev/null; rm -rf "$WORK"' EXIT

seconds() { # COMMAND...: runs it, prints its wall-clock seconds; fails with it
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null || return 1
	t1=$(date +%s%N)
	python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e9:.2f}')" "$t0" "$t1"
}

python3 "$REPO/scripts/feedgen.py" --seed "$SEED" --count "$COUNT" --out "$WORK/feed.netset" \
	--nft-sets "$WORK/sets.nft" || exit 1
printf '[policy rest]\nmatch = any\nrate = 100000/s\n[deny]\nfile = %s\n' "$WORK/feed.netset" \
	>"$WORK/feeds.conf"
ip link add fgfeed0 type veth peer name fgfeed1
ip link set fgfeed0 up
ip link set fgfeed1 up

load_s=$(seconds "$FLOODGATE" load fgfeed0 -c "$WORK/feeds.conf") || exit 1
# Two reloads: into slot 1 (slot 0 is reclaimed), then back into slot 0.
reload_s=$(seconds "$FLOODGATE" reload fgfeed0 -c "$WORK/feeds.conf") || exit 1
reload2_s=$(seconds "$FLOODGATE" reload fgfeed0 -c "$WORK/feeds.conf") || exit 1
memory=$("$FLOODGATE" status fgfeed0 | grep -E '^  (deny|lists):' | sed 's/^ *//' | tr '\n' ';')
"$FLOODGATE" unload fgfeed0 >/dev/null
nft_s=$(seconds nft -f "$WORK/sets.nft") || exit 1
nft delete table inet fgbench

python3 - "$COUNT" "$load_s" "$reload_s" "$reload2_s" "$nft_s" "$memory" <<'PY'
import sys
count, load, reload1, reload2, nft, memory = sys.argv[1], *map(float, sys.argv[2:6]), sys.argv[6]
goal = nft / 5
print(f"feeds: {int(count):,} prefixes; status: {memory}")
for what, t in (("floodgate load", load), ("floodgate reload", reload1),
                ("floodgate reload", reload2)):
    verdict = "meets" if t <= goal else "MISSES"
    print(f"feeds: {what:16} {t:7.2f} s = 1/{nft / t:.1f} of nft -f ({nft:.2f} s); "
          f"goal <= 1/5 ({goal:.2f} s): {verdict}")
PY
