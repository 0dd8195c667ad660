#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The CLI tells the truth, through the real binary (issue 8): `status` shows
# `ban` policies as ban and the +dport of `per`, exits 5 when floodgate's own
# program is not attached (another XDP program on the interface is not
# floodgate), `ban` refuses a /0 without --force, maps ::ffff:a.b.c.d to the
# IPv4 address (and the ban then drops that IPv4 source), warns for an
# allowed address, says when the bans table is full, and `bans --json` is
# JSON; a config with a UTF-8 byte-order mark is accepted; unload says when
# bpffs cannot be mounted, load when the MTU is too large for native XDP. Each check fails on the behaviour before the fix.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
PASS_ALL=${PASS_ALL:-$REPO/build/pass_all.bpf.o}

cat >"$WORK/cli.conf" <<'CONF'
[allow]
src = 10.0.9.0/24

[policy per-port]
match  = udp
per    = src/32+dport src/64+dport
rate   = 1000/s

[policy banner]
match  = tcp syn
rate   = 10/s
action = ban 10m
CONF
chmod 600 "$WORK/cli.conf"

# A config saved with a UTF-8 byte-order mark (Windows editors) is accepted.
printf '\xEF\xBB\xBF' | cat - "$WORK/cli.conf" >"$WORK/bom.conf"
chmod 600 "$WORK/bom.conf"
expect_exit 0 "check accepts a config that starts with a UTF-8 BOM" "$FLOODGATE" check -c "$WORK/bom.conf"

lab_up
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/cli.conf"

# --- status and stats -------------------------------------------------------
status=$("$FLOODGATE" status fgA)
echo "$status" | sed 's/^/# /'
check "status shows the ban policy's action as ban" \
	grep -Eq '^  banner +token_bucket .* ban$' <<<"$status"
check "status shows per = src/32+dport src/64+dport" \
	grep -q 'src/32+dport src/64+dport' <<<"$status"
check "stats --json shows the ban policy's action as ban" \
	python3 -c 'import json,sys; p=json.load(sys.stdin)["policies"]; sys.exit(p[1]["action"] != "ban")' \
	< <("$FLOODGATE" stats fgA --json)
expect_exit 0 "status exits 0 while attached" "$FLOODGATE" status fgA
check "status --json describes the interface and its policies" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
(i,) = d["interfaces"]
assert i["interface"] == "fgA" and i["hook"] == "xdp" and i["xdp_mode"] == "native"
assert i["attached"] is True and i["program_id"] > 0 and i["generation"] == 1
assert i["pinned"] == "/sys/fs/bpf/floodgate/fgA" and i["malformed"] == "drop"
assert {t["name"]: t["capacity"] for t in i["tables"]}["bans"] == 65536
p = {p["name"]: p for p in i["policies"]}
assert p["per-port"]["per"] == "src/32+dport src/64+dport" and p["per-port"]["rate"] == "1000/s"
assert p["per-port"]["burst"] == 1000 and p["per-port"]["algorithm"] == "token_bucket"
assert p["banner"]["action"] == "ban" and p["banner"]["per"] == "src/32 src/64"
' "$("$FLOODGATE" status fgA --json)"
check "status --json without IFACE lists every interface" python3 -c '
import json, sys; sys.exit(len(json.loads(sys.argv[1])["interfaces"]) != 1)' "$("$FLOODGATE" status --json)"

# Detached behind floodgate's back, then another XDP program in its place.
ip link set dev fgA xdpdrv off
expect_exit 5 "status exits 5 when floodgate's program is gone" "$FLOODGATE" status fgA
check "... and says NOT ATTACHED and what to do" \
	bash -c "'$FLOODGATE' status fgA | grep -q 'NOT ATTACHED' &&
		'$FLOODGATE' status fgA | grep -q \"run 'floodgate unload fgA'\""
ip link set dev fgA xdpdrv obj "$PASS_ALL" sec xdp
expect_exit 5 "another XDP program on the interface is not floodgate's" "$FLOODGATE" status fgA
expect_exit 5 "status without IFACE exits 5 too" "$FLOODGATE" status
check "status --json says attached: false" python3 -c '
import json, sys; sys.exit(json.loads(sys.argv[1])["interfaces"][0]["attached"] is not False)' \
	"$("$FLOODGATE" status fgA --json)"
ip link set dev fgA xdpdrv off
"$FLOODGATE" unload fgA >/dev/null 2>&1
expect_exit 0 "load again" "$FLOODGATE" load fgA -c "$WORK/cli.conf"

# --- ban ----------------------------------------------------------------------
expect_exit 2 "ban 0.0.0.0/0 without --force is refused" "$FLOODGATE" ban fgA 0.0.0.0/0
check "... saying why and how" grep -q "bans every IPv4 source (pass --force" <<<"$LAST_ERR"
expect_exit 2 "ban ::/0 without --force is refused" "$FLOODGATE" ban fgA ::/0
check "nothing was banned" bash -c "'$FLOODGATE' bans fgA | grep -q '(no bans)'"
expect_exit 0 "ban ::/0 --force" "$FLOODGATE" ban fgA ::/0 --force --for 1s
"$FLOODGATE" unban fgA ::/0 >/dev/null

out=$("$FLOODGATE" ban fgA ::ffff:10.0.6.1 2>&1)
check "ban ::ffff:10.0.6.1 bans the IPv4 address ($out)" grep -q '^banned 10.0.6.1/32 on fgA' <<<"$out"
check "bans lists it as 10.0.6.1/32" bash -c "'$FLOODGATE' bans fgA | grep -q '^10.0.6.1/32 '"
count_sources 10.0.6.1
flood --dst 10.200.0.1 --src 10.0.6.1 --count 50 >/dev/null
check "the mapped ban drops the IPv4 source" test "$(received 0)" -eq 0
expect_exit 0 "unban ::ffff:10.0.6.1 lifts the IPv4 ban" "$FLOODGATE" unban fgA ::ffff:10.0.6.1

expect_exit 0 "ban an allowed address" "$FLOODGATE" ban fgA 10.0.9.7 --for 1m
check "... warns that [allow] bypasses the ban" grep -q "Warning: 10.0.9.7 is in the \[allow\] list" \
	<<<"$LAST_ERR"
expect_exit 0 "ban an address that is not allowed" "$FLOODGATE" ban fgA 10.0.5.0/24
check "... without a warning" test -z "$LAST_ERR"

# --- bans --json --------------------------------------------------------------
json=$("$FLOODGATE" bans fgA --json)
check "bans --json is JSON with each ban" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
bans = {b["prefix"]: b for b in d["bans"]}
a, b = bans["10.0.9.7/32"], bans["10.0.5.0/24"]
assert d["interface"] == "fgA" and len(bans) == 2
assert a["state"] == "active" and 0 < a["remaining_s"] <= 60 and a["by_hand"] and a["policy"] is None
assert b["state"] == "until_unbanned" and b["remaining_s"] is None and b["strikes"] == 1
assert b["family"] == 4
' "$json"
"$FLOODGATE" unban fgA 10.0.9.7 >/dev/null
"$FLOODGATE" unban fgA 10.0.5.0/24 >/dev/null
check "bans --json with no bans" python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["bans"] != [])' \
	"$("$FLOODGATE" bans fgA --json)"

# --- a full bans table ----------------------------------------------------------
# Fill the 65,536-entry trie in one bpftool batch: key = prefixlen 64 (32
# header bits + /32), slot 0, family 4, 10.1.x.y; value = a ban until unbanned.
python3 - "$WORK/fill" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(65536):
        key = "40 00 00 00 00 04 00 00 0a 01 %02x %02x" % (i >> 8, i & 255) + " 00" * 12
        value = "ff " * 8 + "00 " * 8 + "01 00 00 00 00 00 00 00 04 20" + " 00" * 6
        f.write("map update pinned /sys/fs/bpf/floodgate/fgA/bans key hex %s value hex %s\n" % (key, value))
PY
bpftool batch file "$WORK/fill" >/dev/null 2>&1
expect_exit 5 "ban with the bans table full fails" "$FLOODGATE" ban fgA 10.2.0.1
check "... saying the table is full and what to do ($LAST_ERR)" \
	grep -q "the bans table is full (max_bans = 65536, 4096 of them kept for bans by hand, the fleet and CrowdSec); list them with 'floodgate bans', lift some with 'floodgate unban', or raise max_bans and reload" \
	<<<"$LAST_ERR"

# --- unload without a bpffs it can mount -------------------------------------
# In a mount namespace of its own, /sys/fs is a read-only tmpfs: bpffs is
# not there, and one mounted here would vanish with the namespace, so
# floodgate refuses and says how to run it instead.
expect_exit 4 "unload says why when bpffs cannot be mounted" \
	unshare -m bash -c "umount /sys/fs/bpf && mount -t tmpfs -o ro tmpfs /sys/fs &&
		exec '$FLOODGATE' unload fgA"
check "... naming bpffs and how to mount it ($LAST_ERR)" \
	grep -q "/sys/fs/bpf is no bpffs.*not the initial mount namespace.*nsenter --net=.*mount bpffs at /sys/fs/bpf yourself" <<<"$LAST_ERR"
"$FLOODGATE" unload fgA >/dev/null

# --- native XDP on a veth whose peer's MTU is too large -----------------------
ip -n "$SENDER_NS" link set dev fgB mtu 9000
expect_exit 1 "load with the veth peer's MTU at 9000 fails" "$FLOODGATE" load fgA
check "... saying the MTU is too large and what to do ($LAST_ERR)" \
	grep -q "the MTU is too large for XDP.*Lower the MTU" <<<"$LAST_ERR"
check "... and nothing stays loaded" test ! -e /sys/fs/bpf/floodgate/fgA
ip -n "$SENDER_NS" link set dev fgB mtu 1500
finish
