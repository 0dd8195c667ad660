#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A spoofer cannot ban its victim: a spoofed UDP flood and a spoofed SYN
# flood in the name of 10.200.0.99 (which has no connection to this host)
# are refused but ban no one, under floodgate.conf.sample and the built-in
# policy with every policy turned to action = ban; the same SYN flood on the
# 4-tuple of a real, established TCP connection bans its source.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	"$FLOODGATE" unload fgA >/dev/null 2>&1
	lab_down
	rm -rf "$WORK"
}
trap cleanup EXIT

VICTIM=10.200.0.99
CLIENT=10.200.0.2
CLIENT_PORT=40001

# all_ban IN OUT: the config IN with every policy's action turned to
# `ban 10m` (but per = global, which cannot ban), and no interface key.
all_ban() {
	python3 - "$1" "$2" <<'PY'
import re, sys
out, section, is_global = [], [], False
def flush():
    if section and section[0].startswith("[policy"):
        section.append("" if is_global else "action = ban 10m")
    out.extend(section)
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith("["):
        flush(); section, is_global = [], False
    if re.match(r"\s*(interface|action)\s*=", line):
        continue
    is_global |= bool(re.match(r"\s*per\s*=\s*global", line))
    section.append(line)
flush()
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
}

# The built-in policy, from the C string it is compiled from.
python3 - "$REPO/user/config/builtin.c" >"$WORK/builtin.conf" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
body = src[src.index("fg_default_config[]"):]
body = body[:body.index('";') + 1]
print("".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body)).encode().decode("unicode_escape"), end="")
PY
all_ban "$REPO/floodgate.conf.sample" "$WORK/sample.conf"
all_ban "$WORK/builtin.conf" "$WORK/builtin-ban.conf"

lab_up
ip -n "$SENDER_NS" addr add "$CLIENT/24" dev fgB

stat_of() {
	"$FLOODGATE" stats fgA --json | python3 -c "import json,sys; print(json.load(sys.stdin)['global']['$1'])"
}

# connect PORT: a real TCP connection from $CLIENT:$CLIENT_PORT to
# 10.200.0.1:PORT, held open until the test ends.
connect() {
	python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('10.200.0.1', $1)); s.listen(1); c, _ = s.accept(); time.sleep(600)" &
	PIDS+=($!)
	wait_until 5 bash -c "ss -ltn | grep -q '10.200.0.1:$1 '"
	ip netns exec "$SENDER_NS" python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$CLIENT', $CLIENT_PORT)); s.connect(('10.200.0.1', $1)); time.sleep(600)" &
	PIDS+=($!)
	check "  a real client is connected to port $1" wait_until 5 bash -c \
		"ss -tn state established '( sport = :$1 )' | grep -q '$CLIENT:$CLIENT_PORT'"
}

# banned_prefixes: the prefixes `bans` lists, one a line.
banned_prefixes() {
	"$FLOODGATE" bans fgA --json |
		python3 -c 'import json,sys; [print(b["prefix"]) for b in json.load(sys.stdin)["bans"]]'
}

# spoofed_and_real NAME CONF UDP_PORT TCP_PORT FRAMES
spoofed_and_real() {
	local bans
	echo "--- $1"
	expect_exit 0 "load $1" "$FLOODGATE" load fgA -c "$2"
	flood --dst 10.200.0.1 --src "$VICTIM" --dport "$3" --count "$5" >/dev/null
	flood --dst 10.200.0.1 --src "$VICTIM" --proto tcp --dport "$4" --count "$5" >/dev/null
	bans=$(banned_prefixes)
	check "$1: the spoofed floods ban no one (bans: ${bans:-none})" test -z "$bans"
	check "$1: ... their refusals asked for a ban, which lacked evidence" \
		test "$(stat_of bans_unverified)" -gt 0
	check "$1: ... and no ban was added" test "$(stat_of bans_added)" -eq 0

	connect "$4"
	flood --dst 10.200.0.1 --src "$CLIENT" --sport "$CLIENT_PORT" --proto tcp --dport "$4" \
		--count "$5" >/dev/null
	bans=$(banned_prefixes)
	check "$1: the same flood on an established connection bans its source only" \
		test "$bans" = "$CLIENT/32"
	"$FLOODGATE" bans fgA | sed 's/^/    /'
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	PIDS=()
	expect_exit 0 "unload" "$FLOODGATE" unload fgA
}

# Enough frames to pass each config's largest burst on the flooded ports:
# the sample's ssh (20) and dns (200); the built-in's syn (2000) and
# small-udp (50000).
spoofed_and_real "floodgate.conf.sample, every policy a ban" "$WORK/sample.conf" 53 22 5000
spoofed_and_real "the built-in policy, every policy a ban" "$WORK/builtin-ban.conf" 9 8080 200000
finish
