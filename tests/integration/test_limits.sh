#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Limits on input and on the pin folder (issue 7, point 6): a config is read
# up to 1 MiB and no further (/dev/zero fails fast in bounded memory); on a
# bpffs of mode 1777, a pin folder that another user made, or that others may
# write, is refused at once even while that user holds a flock on it; the
# lock is never waited for beyond FG_LOCK_WAIT, and the holder is named.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
HOLDER=
# stop_holder: ends the flock holder and its sleep (an orphaned sleep would
# keep the suite's output pipe open until it ends: a minute of CI).
stop_holder() {
	[ -n "$HOLDER" ] || return 0
	pkill -P "$HOLDER" 2>/dev/null
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	HOLDER=
}
trap 'stop_holder; lab_down; rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"
BASE=/sys/fs/bpf/floodgate
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
MIB=$((1 << 20))

# --- the config cap ----------------------------------------------------------
# pad_to SIZE FILE: a valid config of exactly SIZE bytes (a policy, then
# comment lines).
pad_to() {
	python3 - "$1" "$2" <<'PY'
import sys
size, path = int(sys.argv[1]), sys.argv[2]
text = "[policy flood]\nmatch = udp dport 9\nrate = 100/s\n"
while len(text) + 64 <= size:
    text += "#" * 63 + "\n"
text += "#" * (size - len(text) - 1) + "\n"
assert len(text) == size
open(path, "w").write(text)
PY
	chmod 0644 "$2"
}
pad_to "$MIB" "$WORK/at-cap.conf"
pad_to $((MIB + 1)) "$WORK/over-cap.conf"
expect_exit 0 "a config of exactly 1 MiB is read" "$FLOODGATE" check -c "$WORK/at-cap.conf"
expect_exit 3 "a config of 1 MiB + 1 byte is refused" "$FLOODGATE" check -c "$WORK/over-cap.conf"
check "  ... as FILE: too large" grep -q "^$WORK/over-cap.conf: too large" <<<"$LAST_ERR"
# 256 MiB of address space is ample for floodgate and far from what reading
# /dev/zero to the end would take; the timeout bounds a read that never ends.
expect_exit 3 "check -c /dev/zero fails in bounded memory and time" \
	prlimit --as=$((256 * MIB)) timeout 10 "$FLOODGATE" check -c /dev/zero --insecure-config
check "  ... as /dev/zero: too large" grep -q "^/dev/zero: too large" <<<"$LAST_ERR"

lab_up

# nothing_attached: no program on fgA.
nothing_attached() {
	[ -z "$(bpftool -j net show dev fgA | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]
print("".join(str(p["id"]) for p in d.get("xdp", []) + d.get("tc", [])))')" ]
}
# refused DESCRIPTION REASON: load and unload refuse at once (exit 4).
refused() {
	local start=$SECONDS
	expect_exit 4 "$1: load refuses" timeout 20 "$FLOODGATE" load fgA
	check "  ... saying why ($2)" grep -q "$2.*mode 1777" <<<"$LAST_ERR"
	expect_exit 4 "$1: unload refuses" timeout 20 "$FLOODGATE" unload fgA
	check "  ... at once, without waiting for the lock ($((SECONDS - start)) s)" \
		test $((SECONDS - start)) -lt 5
	check "  ... nothing is attached" nothing_attached
}

# --- a pin folder someone else made ------------------------------------------
check "this bpffs lets anyone create entries (mode 1777)" \
	test "$(stat -c %a /sys/fs/bpf)" = 1777
rm -rf "$BASE"
"${NOBODY[@]}" mkdir "$BASE"
"${NOBODY[@]}" flock -o "$BASE" sleep 60 >/dev/null 2>&1 &
HOLDER=$!
refused "/sys/fs/bpf/floodgate made and locked by nobody" "$BASE is not owned by root"
stop_holder
rm -rf "$BASE"

mkdir -m 0777 "$BASE"
chmod 0777 "$BASE"
refused "/sys/fs/bpf/floodgate writable by others" "$BASE is writable by group or others"
rm -rf "$BASE"

mkdir -m 0700 "$BASE"
for dir in fgA fgA:loading; do
	mkdir "$BASE/$dir"
	chown 65534:65534 "$BASE/$dir"
	refused "$BASE/$dir owned by nobody" "$BASE/$dir is not owned by root"
	if [ "$dir" = fgA ]; then
		expect_exit 4 "  ... status fgA refuses it too" "$FLOODGATE" status fgA
	fi
	rm -rf "${BASE:?}/$dir"
done

# --- the lock ----------------------------------------------------------------
expect_exit 0 "load" "$FLOODGATE" load fgA
flock -o "$BASE" sleep 30 >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 100); do grep -q "FLOCK.* $HOLDER " /proc/locks && break; sleep 0.05; done
start=$(date +%s%N)
expect_exit 1 "unload gives up on a lock held too long (FG_LOCK_WAIT=1)" \
	env FG_LOCK_WAIT=1 timeout 20 "$FLOODGATE" unload fgA
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "  ... after waiting 1 s ($elapsed_ms ms)" test "$elapsed_ms" -ge 1000 -a "$elapsed_ms" -lt 5000
check "  ... naming the holder" grep -q "locked by process $HOLDER (flock)" <<<"$LAST_ERR"
check "  ... floodgate is still loaded" test -d "$BASE/fgA"
stop_holder
# A lock released within the wait is waited for.
flock -o "$BASE" sleep 1 >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 100); do grep -q "FLOCK.* $HOLDER " /proc/locks && break; sleep 0.05; done
expect_exit 0 "unload waits for a lock released within FG_LOCK_WAIT" "$FLOODGATE" unload fgA
check "  ... nothing is loaded" eval 'nothing_attached && [ ! -e "$BASE/fgA" ]'

finish
