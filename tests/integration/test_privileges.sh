#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Files and privileges: the pin folder is 0700 and every pin 0600; an
# unprivileged user can neither read nor change a map, and every command
# refuses it cleanly (message, exit 4, nothing changed); a config another
# user could have written is refused unless --insecure-config: the file
# opened (never a FIFO or a device, never one swapped in after the check)
# and every folder on its path, a link's own and its target's.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"
PIN=/sys/fs/bpf/floodgate/fgA
CONF=$WORK/fgA.conf
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

printf '[policy flood]\nmatch = udp dport 9\nrate = 100/s\n' >"$CONF"
chmod 0644 "$CONF"

lab_up
expect_exit 0 "load" "$FLOODGATE" load fgA -c "$CONF"

# --- modes ------------------------------------------------------------------
check "the pin base folder is 0700" test "$(stat -c %a /sys/fs/bpf/floodgate)" = 700
check "the interface's pin folder is 0700" test "$(stat -c %a "$PIN")" = 700
modes=$(stat -c '%a %n' "$PIN"/* | awk '$1 != "600"')
check "every pin is 0600 ($(ls "$PIN" | wc -l) pins)${modes:+: not $modes}" test -z "$modes"

# --- an unprivileged user cannot touch the maps ------------------------------
pinned_state() {
	bpftool map dump pinned "$PIN/runtime"
	bpftool map dump pinned "$PIN/policy_sets" | md5sum
	bpftool map dump pinned "$PIN/sources4" | md5sum
	bpftool map dump pinned "$PIN/sources" | md5sum
	bpftool net show dev fgA
}
before=$(pinned_state)
map_id=$(bpftool -j map show pinned "$PIN/runtime" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
denied() { # COMMAND...: fails, and for want of permission
	local err
	err=$("${NOBODY[@]}" "$@" 2>&1 >/dev/null) && return 1
	grep -qi "permission denied\|operation not permitted" <<<"$err"
}
# fails_for_nobody COMMAND...: root can, nobody cannot.
fails_for_nobody() {
	"$@" >/dev/null 2>&1 && ! "${NOBODY[@]}" "$@" >/dev/null 2>&1
}
check "nobody cannot even reach a pin" denied stat "$PIN/sources4"
check "nobody cannot read a map by its pin" fails_for_nobody bpftool map dump pinned "$PIN/sources4"
check "nobody cannot change a map by its pin" fails_for_nobody \
	bpftool map update pinned "$PIN/bans" key hex $(printf '%.0s00 ' $(seq 24)) \
	value hex $(printf '%.0s00 ' $(seq 32))
check "  ... (root could: remove that entry again)" \
	bpftool map delete pinned "$PIN/bans" key hex $(printf '%.0s00 ' $(seq 24))
check "nobody cannot read a map by its id ($map_id)" denied bpftool map dump id "$map_id"
check "nobody cannot list the pins" denied ls "$PIN"

for cmd in "load fgA" "load fgA -c $CONF" "reload fgA -c $CONF" "unload fgA" "status" \
	"status fgA" "stats fgA" "stats fgA --json" "top fgA" "ban fgA 10.0.0.1" \
	"unban fgA 10.0.0.1" "bans fgA" "run fgA -c $CONF"; do
	# shellcheck disable=SC2086
	expect_exit 4 "nobody: floodgate $cmd" timeout 10 "${NOBODY[@]}" "$FLOODGATE" $cmd
	check "  ... says it must run as root" grep -q "must run as root" <<<"$LAST_ERR"
done
check "nothing changed" test "$before" = "$(pinned_state)"
expect_exit 0 "nobody may still check a config" "${NOBODY[@]}" "$FLOODGATE" check -c "$CONF"
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- configs someone else could have written ---------------------------------
# refused DESCRIPTION REASON [not-a-config]: check, load and run refuse $CONF
# and load nothing; --insecure-config accepts it unless it is not-a-config.
refused() {
	# A FIFO would block a reader, a broken check would start the daemon:
	# bound every command.
	expect_exit 3 "$1: check refuses it" timeout -k 2 10 "$FLOODGATE" check -c "$CONF"
	check "  ... saying why ($2)" grep -q "^$CONF: refused: .*$2.*--insecure-config" <<<"$LAST_ERR"
	expect_exit 3 "$1: load refuses it" timeout -k 2 10 "$FLOODGATE" load fgA -c "$CONF"
	expect_exit 3 "$1: run refuses it" timeout -k 2 10 "$FLOODGATE" run fgA -c "$CONF"
	check "  ... nothing is loaded" test ! -e "$PIN"
	[ "${3:-}" = not-a-config ] ||
		expect_exit 0 "$1: --insecure-config accepts it" "$FLOODGATE" check -c "$CONF" --insecure-config
}
chmod 0664 "$CONF"
refused "group-writable" "writable by its group"
chmod 0646 "$CONF"
refused "world-writable" "writable by others"
chmod 0644 "$CONF"
chown 65534 "$CONF"
refused "owned by another user" "owned by uid 65534"
chown 0 "$CONF"
chmod 0777 "$WORK"
refused "in a folder anyone may write" "its folder is writable"
chmod 1777 "$WORK"
expect_exit 0 "a sticky folder (like /tmp) is fine" "$FLOODGATE" check -c "$CONF"
chmod 0755 "$WORK"
expect_exit 0 "a root-owned 0644 file is fine" "$FLOODGATE" check -c "$CONF"
expect_exit 0 "load --insecure-config with a group-writable file" bash -c \
	"chmod 0664 '$CONF' && '$FLOODGATE' load fgA -c '$CONF' --insecure-config"
expect_exit 0 "reload --insecure-config" "$FLOODGATE" reload fgA -c "$CONF" --insecure-config
expect_exit 3 "reload without it is refused" "$FLOODGATE" reload fgA -c "$CONF"
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- the file opened, and every folder on its path -----------------------------
GOOD=$WORK/fgA.conf
chmod 0644 "$GOOD"
mkdir -m 0777 "$WORK/anyone"
cp -p "$GOOD" "$WORK/anyone/fgA.conf"
ln -s "$WORK/anyone/fgA.conf" "$WORK/link.conf"
CONF=$WORK/link.conf
refused "a link to a file in a folder anyone may write" "its folder is writable by others"
mkdir -m 1777 "$WORK/sticky"
ln -s "$GOOD" "$WORK/anyone/link.conf"
CONF=$WORK/anyone/link.conf
refused "a link, in a folder anyone may write, to a good file" "the folder of its link"
mkdir -p "$WORK/theirs/sub"
cp -p "$GOOD" "$WORK/theirs/sub/fgA.conf"
chown 65534 "$WORK/theirs"
CONF=$WORK/theirs/sub/fgA.conf
refused "a root file under a folder another user owns" "folder $WORK/theirs on its path is owned by uid 65534"
mkdir -m 1777 "$WORK/theirs-sticky"
cp -p "$GOOD" "$WORK/theirs-sticky/fgA.conf"
chown 65534 "$WORK/theirs-sticky"
CONF=$WORK/theirs-sticky/fgA.conf
refused "a root file in a sticky folder another user owns" "its folder is owned by uid 65534"
mkfifo -m 0644 "$WORK/fifo.conf"
CONF=$WORK/fifo.conf
refused "a FIFO" "not a regular file" not-a-config
mknod -m 0644 "$WORK/null.conf" c 1 3
CONF=$WORK/null.conf
refused "a device" "not a regular file" not-a-config
ln -s "$WORK/sticky" "$WORK/sticky-link"
CONF=$WORK/sticky-link/fgA.conf
cp -p "$GOOD" "$CONF"
expect_exit 0 "a link to a good file in a sticky folder is fine" "$FLOODGATE" check -c "$CONF"

# swapped COMMAND...: runs `floodgate COMMAND -c $CONF` stopped between the
# check of $CONF and its open (FG_TEST_STOP_AT), replaces $CONF there with a
# valid config owned by nobody, resumes it; sets SWAPPED_RC and LAST_ERR.
swapped() {
	local pid state="" i
	FG_TEST_STOP_AT=config-checked "$FLOODGATE" "$@" -c "$CONF" \
		>/dev/null 2>"$WORK/swapped.err" &
	pid=$!
	for i in $(seq 200); do # up to 10 s, to stop or to end
		state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || break
		[ "$state" = T ] && break
		sleep 0.05
	done
	cp "$GOOD" "$WORK/sticky/evil.conf"
	chown 65534 "$WORK/sticky/evil.conf"
	mv "$WORK/sticky/evil.conf" "$CONF"
	kill -CONT "$pid" 2>/dev/null
	SWAPPED_RC=0
	timeout 10 tail --pid="$pid" -f /dev/null || kill -9 "$pid"
	wait "$pid" || SWAPPED_RC=$?
	LAST_ERR=$(cat "$WORK/swapped.err")
	cp -p "$GOOD" "$CONF.new" && mv "$CONF.new" "$CONF"
}
CONF=$WORK/sticky/fgA.conf
cp -p "$GOOD" "$CONF"
for cmd in check "load fgA" "run fgA"; do
	# shellcheck disable=SC2086
	swapped $cmd
	check "a file swapped after the check: $cmd refuses it (exit $SWAPPED_RC)" \
		test "$SWAPPED_RC" = 3
	check "  ... saying why" grep -q "^$CONF: refused: .*owned by uid 65534" <<<"$LAST_ERR"
	check "  ... nothing is loaded" test ! -e "$PIN"
	"$FLOODGATE" unload fgA >/dev/null 2>&1 || true
done
finish
