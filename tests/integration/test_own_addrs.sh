#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The host's own addresses in `own_addrs` (never banned): `load` and
# `reload` write every address of the namespace's interfaces, IPv4 and IPv6,
# link-local included, and remove stale ones; `floodgate run` follows
# `ip addr add` and `ip addr del` through netlink within a bounded wait.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
RUN_PID=
trap 'kill $RUN_PID 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
PIN=/sys/fs/bpf/floodgate/fgA
# The daemon's loop wakes at least once a second (service/daemon.c,
# POLL_NS); netlink wakes it at once. Two intervals bound the wait.
POLL_S=1
DEADLINE_S=$((2 * POLL_S))

# own_addrs: the map's addresses, one per line, sorted ("4 10.200.0.1").
own_addrs() {
	bpftool -j map dump pinned "$PIN/own_addrs" | python3 -c '
import ipaddress, json, sys
out = []
for e in json.load(sys.stdin):
    key = bytes(int(b, 16) for b in e["key"])
    family = int.from_bytes(key[:4], "little")
    addr = key[4:8] if family == 4 else key[4:20]
    out.append("%d %s" % (family, ipaddress.ip_address(addr)))
print("\n".join(sorted(out)))'
}

# ns_addrs: the namespace's addresses as `ip` lists them, in the same form.
ns_addrs() {
	ip -j addr show | python3 -c '
import ipaddress, json, sys
out = set()
for link in json.load(sys.stdin):
    for a in link.get("addr_info", []):
        ip = ipaddress.ip_address(a["local"])
        out.add("%d %s" % (ip.version, ip))
print("\n".join(sorted(out)))'
}

has_addr() { grep -qxF "$1" <<<"$(own_addrs)"; }
addrs_match() { [ "$(own_addrs)" = "$(ns_addrs)" ]; }
lacks_addr() { ! has_addr "$1"; }

# waited_until DEADLINE COMMAND...: wait_until that also prints the time it took.
waited_until() {
	local start end
	start=$(date +%s.%N)
	wait_until "$@" || return 1
	end=$(date +%s.%N)
	echo "    (after $(python3 -c "print('%.3f' % ($end - $start))") s)"
}

cat >"$WORK/fgA.conf" <<'CONF'
[policy flood]
match  = udp dport 9
rate   = 10/s
CONF

lab_up
# An extra address and a link-local one, so that the test sees more than
# fgA's two.
ip addr add 198.51.100.7/32 dev lo
wait_until 5 bash -c "ip -6 addr show dev fgA | grep -q 'fe80::'" ||
	echo "fgA has no link-local address yet"
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$WORK/fgA.conf"

got=$(own_addrs)
want=$(ns_addrs)
echo "$got" | sed 's/^/    /'
check "own_addrs holds every address of the namespace after load" test "$got" = "$want"
check "  ... IPv4 (10.200.0.1)" has_addr "4 10.200.0.1"
check "  ... IPv6 (fd00:200::1)" has_addr "6 fd00:200::1"
check "  ... loopback IPv4 (127.0.0.1)" grep -qx '4 127.0.0.1' <<<"$got"
check "  ... loopback IPv6 (::1)" grep -qx '6 ::1' <<<"$got"
check "  ... link-local IPv6" grep -q '^6 fe80::' <<<"$got"

# reload: an address removed meanwhile goes, one added comes.
ip addr del 198.51.100.7/32 dev lo
ip addr add 203.0.113.9/32 dev lo
expect_exit 0 "reload" "$FLOODGATE" reload fgA -c "$WORK/fgA.conf"
check "reload removes a stale address" lacks_addr "4 198.51.100.7"
check "reload adds a new address" has_addr "4 203.0.113.9"
check "own_addrs equals the namespace's addresses after reload" addrs_match
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# run: follows the addresses through netlink.
"$FLOODGATE" run fgA -c "$WORK/fgA.conf" >"$WORK/run.log" 2>&1 &
RUN_PID=$!
check "run loads" wait_until 10 test -e "$PIN/own_addrs"
check "run: own_addrs holds the namespace's addresses" \
	wait_until "$DEADLINE_S" addrs_match
ip addr add 192.0.2.77/24 dev fgA
check "run: an added IPv4 address appears within ${DEADLINE_S}s" \
	waited_until "$DEADLINE_S" has_addr "4 192.0.2.77"
ip addr add 2001:db8:77::1/64 dev fgA nodad
check "run: an added IPv6 address appears within ${DEADLINE_S}s" \
	waited_until "$DEADLINE_S" has_addr "6 2001:db8:77::1"
ip addr del 192.0.2.77/24 dev fgA
check "run: a deleted IPv4 address goes within ${DEADLINE_S}s" \
	waited_until "$DEADLINE_S" lacks_addr "4 192.0.2.77"
ip addr del 2001:db8:77::1/64 dev fgA
check "run: a deleted IPv6 address goes within ${DEADLINE_S}s" \
	waited_until "$DEADLINE_S" lacks_addr "6 2001:db8:77::1"
# The same address on two interfaces: deleting one copy keeps it.
ip addr add 192.0.2.78/32 dev fgA
ip addr add 192.0.2.78/32 dev lo
check "run: an address on two interfaces appears" waited_until "$DEADLINE_S" has_addr "4 192.0.2.78"
ip addr del 192.0.2.78/32 dev fgA
# Wait for the daemon to have handled the deletion: an address deleted
# after it is gone within the deadline, so the kept one must still be there.
ip addr add 192.0.2.79/32 dev fgA
ip addr del 192.0.2.79/32 dev fgA
wait_until "$DEADLINE_S" lacks_addr "4 192.0.2.79"
check "run: an address still on another interface stays" has_addr "4 192.0.2.78"
check "run: own_addrs still equals the namespace's addresses" addrs_match
kill -TERM "$RUN_PID"
wait "$RUN_PID"
check "run stops cleanly" test $? -eq 0
RUN_PID=
sed 's/^/    log: /' "$WORK/run.log"
finish
