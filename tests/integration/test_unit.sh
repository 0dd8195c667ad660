#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The systemd unit: `make install` into a scratch root puts the binary, the
# unit (with its paths filled in), a sample config, the Grafana dashboard
# and the Prometheus rules in place, the unit
# keeps the host's /sys/fs/bpf and its state folder /var/lib/floodgate
# writable, and `systemd-analyze verify` finds
# nothing to say about it.
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
trap 'lab_down; rm -rf "$WORK"' EXIT
ROOT=$WORK/root
UNIT=$ROOT/usr/local/lib/systemd/system/floodgate@.service

expect_exit 0 "make install DESTDIR=..." make -s -C "$REPO" install DESTDIR="$ROOT"
check "the binary is installed" test -x "$ROOT/usr/local/sbin/floodgate"
check "the unit is installed" test -f "$UNIT"
check "the Grafana dashboard is installed" \
	test -f "$ROOT/usr/local/share/floodgate/grafana/floodgate-dashboard.json"
check "the Prometheus rules are installed" \
	test -f "$ROOT/usr/local/share/floodgate/prometheus/floodgate-rules.yml"
check "a sample config is installed, 0600" \
	test "$(stat -c %a "$ROOT/etc/floodgate/example.conf.sample")" = 600
check "the unit runs the installed binary with --keep" \
	grep -qx 'ExecStart=/usr/local/sbin/floodgate run %i -c /etc/floodgate/%i.conf --keep' "$UNIT"
check "the unit reloads with SIGHUP" grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$UNIT"
check "the unit is Type=notify with a watchdog" \
	bash -c "grep -qx Type=notify '$UNIT' && grep -q '^WatchdogSec=' '$UNIT'"
check "the unit keeps the host's /sys/fs/bpf writable" grep -qx 'ReadWritePaths=/sys/fs/bpf' "$UNIT"
check "  ... and never hides it" bash -c \
	"! grep -E '^(TemporaryFileSystem|InaccessiblePaths|PrivateMounts|ProtectKernelTunables)=' '$UNIT'"
# ProtectSystem=strict makes /var read-only: run writes fleet-bans.IFACE
# in /var/lib/floodgate (service/fleet_state.c).
check "the unit lets run write its state in /var/lib/floodgate (StateDirectory=floodgate)" \
	grep -qx 'StateDirectory=floodgate' "$UNIT"
check "the unit is hardened" bash -c "grep -qx NoNewPrivileges=yes '$UNIT' &&
	grep -qx ProtectSystem=strict '$UNIT' && grep -q '^CapabilityBoundingSet=CAP_BPF' '$UNIT'"
check "no placeholder is left" bash -c "! grep -v '^#' '$UNIT' | grep -q '@[A-Z]*@'"
check "the sample config passes check" "$ROOT/usr/local/sbin/floodgate" check \
	-c "$ROOT/etc/floodgate/example.conf.sample"

# verify resolves ExecStart= on this machine: point a copy at the built binary.
sed "s|/usr/local/sbin/floodgate|$FLOODGATE|" "$UNIT" >"$WORK/floodgate@lo.service"
out=$(systemd-analyze verify "$WORK/floodgate@lo.service" 2>&1)
rc=$?
check "systemd-analyze verify: clean (exit $rc)${out:+: $out}" test "$rc" -eq 0 -a -z "$out"
finish
