#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Crash-safe load and pins that match their attachment (issue 7, points 3
# and 4): a load killed at any step (FG_TEST_DIE_AT makes it _exit(137)
# there, as kill -9 would) is recovered by the next load or unload without
# manual steps; unload finds floodgate's program by the maps it uses, not by
# the recorded id, and never reports success while it stays attached; pins
# of another network namespace are refused; under `ip netns exec` (no bpffs
# that outlives the command) load refuses and says how to run it.
source "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/floodgate/fgA
STAGE=/sys/fs/bpf/floodgate/fgA:loading
OTHER_NS=fgother$$
WORK=$(mktemp -d)
trap 'ip netns del "$OTHER_NS" 2>/dev/null; lab_down; rm -rf "$WORK"' EXIT
CONF=$WORK/lo.conf
printf '[policy flood]\nmatch = udp dport 9\nrate = 100/s\n' >"$CONF"

# attached_names [NS]: the names of the programs attached to fgA (or to lo
# of NS), XDP and tc, one a line.
attached_names() {
	local dev=fgA run=()
	if [ -n "${1:-}" ]; then
		dev=lo
		run=(ip netns exec "$1")
	fi
	"${run[@]}" bpftool -j net show dev "$dev" | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]
for p in d.get("xdp", []) + d.get("tc", []):
    print(p["id"])' | while read -r id; do
		if [ "$(prog_name "$id")" = xdp_dispatcher ]; then
			# libxdp's dispatcher (6.1): its programs are pinned in
			# /sys/fs/bpf/xdp/dispatch-IFINDEX-DISPATCHER_ID/.
			for pin in /sys/fs/bpf/xdp/dispatch-*-"$id"/prog*-prog; do
				[ -e "$pin" ] && bpftool -j prog show pinned "$pin" |
					python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])'
			done
		else
			prog_name "$id"
		fi
	done
}
prog_name() {
	bpftool -j prog show id "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])'
}
floodgate_attached() { attached_names "$@" | grep -qx 'fg_xdp\|fg_tc'; }
nothing_left() { ! floodgate_attached && [ ! -e "$PIN" ] && [ ! -e "$STAGE" ]; }
# one_attached HOOK: exactly one floodgate program is attached, at HOOK.
one_attached() {
	local names
	names=$(attached_names | grep -x 'fg_xdp\|fg_tc')
	[ "$names" = "fg_$1" ]
}

lab_up

# --- a load killed at every step ---------------------------------------------
STEPS="staged maps attached recorded renamed"
# FG_RECOVERY_HOOKS: the hooks whose killed loads are tried (the 6.1 guest
# of `make test-kernels` tries xdp only; see tests/kernels/guest.sh).
for hook in ${FG_RECOVERY_HOOKS:-xdp tc}; do
	for step in $STEPS; do
		expect_exit 137 "$hook: load killed at '$step'" \
			env FG_TEST_DIE_AT="$step" "$FLOODGATE" load fgA --hook "$hook"
		expect_exit 0 "  ... unload recovers" "$FLOODGATE" unload fgA
		check "  ... nothing floodgate is attached or pinned" nothing_left

		expect_exit 137 "$hook: load killed at '$step' again" \
			env FG_TEST_DIE_AT="$step" "$FLOODGATE" load fgA --hook "$hook"
		if [ "$step" = renamed ]; then
			# The folder was in place: that load was complete.
			expect_exit 5 "  ... load says it is already loaded" \
				"$FLOODGATE" load fgA --hook "$hook"
		else
			expect_exit 0 "  ... load recovers" "$FLOODGATE" load fgA --hook "$hook"
		fi
		check "  ... exactly one floodgate program is attached, at $hook" one_attached "$hook"
		expect_exit 0 "  ... status reads it" "$FLOODGATE" status fgA
		expect_exit 0 "  ... unload" "$FLOODGATE" unload fgA
		check "  ... nothing floodgate is left" nothing_left
	done
done

# An unload killed between detaching and removing the pins leaves stale pins.
expect_exit 0 "load" "$FLOODGATE" load fgA
expect_exit 137 "unload killed after detaching" \
	env FG_TEST_DIE_AT=unload-detached "$FLOODGATE" unload fgA
expect_exit 0 "  ... load removes the stale pins and loads" "$FLOODGATE" load fgA
check "  ... says the pins were stale" grep -q "stale pins" <<<"$LAST_ERR"
check "  ... one floodgate program is attached" one_attached xdp
expect_exit 137 "unload killed after detaching, again" \
	env FG_TEST_DIE_AT=unload-detached "$FLOODGATE" unload fgA
expect_exit 0 "  ... unload removes the stale pins" "$FLOODGATE" unload fgA
check "  ... nothing floodgate is left" nothing_left

# --- unload finds floodgate's program by what it is --------------------------
# set_recorded_prog_id ID: rewrites the program id in the runtime record
# (bytes 16..19 of struct fg_runtime, host order), as a crash between attach
# and record once left it.
set_recorded_prog_id() {
	local value
	value=$(bpftool -j map lookup pinned "$PIN/runtime" key 0 0 0 0 | python3 -c '
import json, struct, sys
v = bytearray(int(b, 16) for b in json.load(sys.stdin)["value"])
v[16:20] = struct.pack("<I", int(sys.argv[1]))
print(" ".join(str(b) for b in v))' "$1")
	# shellcheck disable=SC2086
	bpftool map update pinned "$PIN/runtime" key 0 0 0 0 value $value
}
for hook in xdp tc; do
	expect_exit 0 "$hook: load" "$FLOODGATE" load fgA --hook "$hook"
	set_recorded_prog_id 0
	expect_exit 0 "  ... unload with the program recorded as id 0" "$FLOODGATE" unload fgA
	check "  ... detached it all the same" nothing_left
done

# A program that is not floodgate's is left alone.
expect_exit 0 "load" "$FLOODGATE" load fgA
ip link set dev fgA xdp off
ip link set dev fgA xdp obj "$REPO/build/baseline.bpf.o" sec xdp
OUT=$("$FLOODGATE" unload fgA 2>&1)
check "unload when another XDP program replaced floodgate's: exit 0" test $? -eq 0
check "  ... says its program was no longer attached" grep -q "no longer attached" <<<"$OUT"
check "  ... the other program stays attached" test -n "$(attached_names | grep -v '^fg_')"
check "  ... and floodgate's pins are gone" nothing_left
ip link set dev fgA xdp off

# A complete folder whose program is gone (the interface lost it) is stale.
expect_exit 0 "load" "$FLOODGATE" load fgA
ip link set dev fgA xdp off
expect_exit 5 "reload refuses pins no program uses" "$FLOODGATE" reload fgA -c "$CONF"
check "  ... saying so" grep -q "nothing to reload" <<<"$LAST_ERR"
expect_exit 0 "load again after the program went away" "$FLOODGATE" load fgA
check "  ... one floodgate program is attached" one_attached xdp
expect_exit 5 "a third load says already loaded" "$FLOODGATE" load fgA
check "  ... says so" grep -q "already loaded" <<<"$LAST_ERR"
expect_exit 0 "unload" "$FLOODGATE" unload fgA

# --- another network namespace -----------------------------------------------
ip netns add "$OTHER_NS"
ip -n "$OTHER_NS" link set lo up
IN_OTHER=(nsenter --net=/run/netns/"$OTHER_NS")
expect_exit 0 "load on lo of another namespace (nsenter --net)" \
	"${IN_OTHER[@]}" "$FLOODGATE" load lo --mode generic
for cmd in "unload lo" "status lo" "stats lo" "load lo --mode generic" "reload lo -c $CONF"; do
	# shellcheck disable=SC2086
	expect_exit 5 "here: floodgate $cmd refuses the other namespace's pins" "$FLOODGATE" $cmd
	check "  ... saying so" grep -q "network namespace" <<<"$LAST_ERR"
done
expect_exit 5 "here: status of every interface flags it" "$FLOODGATE" status
check "  ... the program in the other namespace stays attached" floodgate_attached "$OTHER_NS"
expect_exit 0 "there: unload" "${IN_OTHER[@]}" "$FLOODGATE" unload lo
check "  ... nothing floodgate is attached there" eval "! floodgate_attached $OTHER_NS"

# An orphan: a floodgate program whose pins were removed by hand.
expect_exit 0 "there: load" "${IN_OTHER[@]}" "$FLOODGATE" load lo --mode generic
rm -r /sys/fs/bpf/floodgate/lo
expect_exit 0 "there: unload detaches the orphan by its name" \
	"${IN_OTHER[@]}" "$FLOODGATE" unload lo
check "  ... nothing floodgate is attached there" eval "! floodgate_attached $OTHER_NS"
expect_exit 5 "there: a second unload says not loaded" "${IN_OTHER[@]}" "$FLOODGATE" unload lo

# --- ip netns exec: a private /sys without bpffs ------------------------------
expect_exit 4 "load under ip netns exec refuses" \
	ip netns exec "$OTHER_NS" "$FLOODGATE" load lo --mode generic
check "  ... says why" grep -q "is no bpffs, and this is not the initial mount namespace" <<<"$LAST_ERR"
check "  ... and how to run it instead" grep -q "nsenter --net=" <<<"$LAST_ERR"
check "  ... nothing is attached there" eval "! floodgate_attached $OTHER_NS"
expect_exit 5 "status lo under ip netns exec: not loaded" \
	ip netns exec "$OTHER_NS" "$FLOODGATE" status lo
check "  ... and why it sees nothing" grep -q "no bpffs" <<<"$LAST_ERR"

finish
