#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package (docs/service.md, "Debian package"): `make deb` builds it,
# lintian finds no error and only the warnings docs/service.md lists, and it
# installs with dpkg into a clean Debian 12 root, where floodgate runs,
# checks the sample config, and its unit is present (its Documentation=
# file too) but not enabled; `dpkg -r` leaves only the conffiles, and
# `dpkg -P` keeps the operator's own IFACE.conf, drops the floodgate@IFACE
# instances the operator enabled, and otherwise leaves the root as it was;
# an upgrade from an older version keeps an edited conffile and the state.
#
# The clean root: mmdebstrap --variant=apt from the mirror (apt, dpkg, the
# essential set), plus man-db and the package's own Depends, with no
# floodgate. Building it takes some 100 s and the network, so it is built
# once per machine and Depends line and kept as a tarball in
# $FG_DEB_ROOT_CACHE (/var/cache/floodgate-tests); each run unpacks a fresh
# copy (about 1 s). So is the buildd root (build-essential and the
# Build-Depends, some 130 s once) in which the package is built a second
# time, offline, to show that Build-Depends lists all the build needs (and
# that the two builds hold the same files, the same bytes but for the
# binary, and no build path). `dpkg -i` in it runs the real install: the dependency
# check, the maintainer scripts, the conffile handling.
#
# Not under the lab lock and not in a network namespace (lib.sh's lab):
# mmdebstrap needs the mirror. Mounts are made in a mount namespace of its
# own, so they go with the test however it ends.
if [ "$(id -u)" -ne 0 ]; then
	echo "$(basename "$0"): needs root (chroot, dpkg --root); skipped"
	exit 77
fi
if [ -z "${FG_DEB_UNSHARED:-}" ]; then
	FG_DEB_UNSHARED=1 exec unshare -m -- bash "$0" "$@"
fi
mount --make-rprivate /
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/tests/integration/assert.sh"

WORK=$(mktemp -d)
trap 'umount "$ROOT/proc" 2>/dev/null; rm -rf --one-file-system "$WORK"' EXIT
ROOT=$WORK/root
CACHE=${FG_DEB_ROOT_CACHE:-/var/cache/floodgate-tests}
MIRROR=${FG_DEB_MIRROR:-http://deb.debian.org/debian}

# unpack_clean_root VARIANT PACKAGES DIR: a fresh copy of the clean root
# `mmdebstrap --variant=VARIANT --include=PACKAGES bookworm`, into DIR,
# from the tarball cached for that pair (built first when missing).
unpack_clean_root() {
	local variant=$1 include=$2 dir=$3 tarball partial start
	tarball=$CACHE/bookworm-$variant-$(echo "$include" | sha256sum | cut -c1-16).tar
	if [ ! -s "$tarball" ]; then
		mkdir -p "$CACHE"
		start=$SECONDS
		# mmdebstrap picks the output's format from its name: keep .tar last.
		partial=${tarball%.tar}.partial.tar
		if ! mmdebstrap --variant="$variant" --include="$include" bookworm "$partial" \
			"$MIRROR" </dev/null >"$WORK/mmdebstrap.log" 2>&1; then
			tail -n 20 "$WORK/mmdebstrap.log"
			rm -f "$partial"
			not_ok "mmdebstrap from $MIRROR failed (its log's end is above)"
			return 1
		fi
		mv "$partial" "$tarball"
		ok "built the clean root $(basename "$tarball") in $((SECONDS - start)) s"
	fi
	if ! mkdir "$dir" || ! tar -xf "$tarball" -C "$dir"; then
		not_ok "cannot unpack $tarball"
		return 1
	fi
}

# 1. Build.
VERSION=$(cd "$REPO" && dpkg-parsechangelog -S Version)
DEB=$REPO/build/deb/floodgate_${VERSION}_$(dpkg --print-architecture).deb
start=$SECONDS
if ! make -s -C "$REPO" deb >"$WORK/build.log" 2>&1; then
	tail -n 30 "$WORK/build.log"
	not_ok "make deb failed (the log's end is above)"
	finish
fi
ok "make deb builds $(basename "$DEB") in $((SECONDS - start)) s"
check "the build ran no test (nocheck)" bash -c "! grep -q 'run-tests.sh' '$WORK/build.log'"
check "dpkg-buildpackage left nothing in ../" \
	bash -c "! ls '$REPO'/../floodgate*_${VERSION}_* 2>/dev/null | grep -q ."

# 1b. Build-Depends are enough: the same build in a clean buildd root
# (build-essential) with only the Build-Depends added, without network.
build_depends=$(sed -n '/^Build-Depends:/,/^$/p' "$REPO/debian/control" |
	sed -e 's/^Build-Depends://' -e 's/([^)]*)//g' | tr -d ' \n' | sed 's/,$//')
if unpack_clean_root buildd "$build_depends" "$WORK/buildd"; then
	mkdir "$WORK/buildd/src" "$WORK/buildd/src/floodgate"
	# The tree as it is, tracked and new files alike, without ./build.
	(cd "$REPO" && git ls-files -co --exclude-standard -z | tar -c --null -T - 2>/dev/null) |
		tar -x -C "$WORK/buildd/src/floodgate"
	start=$SECONDS
	if unshare -n -- chroot "$WORK/buildd" sh -c 'cd /src/floodgate &&
		DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b' >"$WORK/buildd.log" 2>&1; then
		ok "dpkg-buildpackage with only the Build-Depends, offline, in $((SECONDS - start)) s"
		dpkg -c "$DEB" | awk '{ print $1, $6 }' >"$WORK/host-contents"
		dpkg -c "$WORK/buildd/src/$(basename "$DEB")" | awk '{ print $1, $6 }' >"$WORK/buildd-contents"
		check "  ... gives the same files as make deb" cmp -s "$WORK/host-contents" "$WORK/buildd-contents"
		# Every file but the binary byte for byte; the binary embeds the
		# kernel headers of linux-libc-dev, whose version the buildd root
		# (the point release) and this host (security updates) may not
		# share, so of it only that no build path leaked in.
		dpkg-deb -I "$DEB" md5sums | grep -v ' usr/sbin/floodgate$' >"$WORK/host-md5"
		dpkg-deb -I "$WORK/buildd/src/$(basename "$DEB")" md5sums |
			grep -v ' usr/sbin/floodgate$' >"$WORK/buildd-md5"
		check "  ... and, but the binary, the same contents byte for byte (differing: $(diff "$WORK/host-md5" "$WORK/buildd-md5" | sed -n 's/^< [0-9a-f]* *//p' | tr '\n' ' '))" \
			cmp -s "$WORK/host-md5" "$WORK/buildd-md5"
		dpkg-deb --fsys-tarfile "$WORK/buildd/src/$(basename "$DEB")" |
			tar -xO ./usr/sbin/floodgate >"$WORK/buildd-floodgate"
		check "  ... its binary names no build path (/src/floodgate)" \
			bash -c "! strings -a '$WORK/buildd-floodgate' | grep -q /src/floodgate"
	else
		tail -n 20 "$WORK/buildd.log"
		not_ok "dpkg-buildpackage with only the Build-Depends failed (its log's end is above)"
	fi
	rm -rf --one-file-system "$WORK/buildd"
fi

# 2. lintian: no error, and each warning is one docs/service.md justifies.
lintian --fail-on error "$DEB" >"$WORK/lintian" 2>&1
rc=$?
check "lintian: no error (exit $rc): $(grep '^E:' "$WORK/lintian" | tr '\n' ' ')" test "$rc" -eq 0
for tag in $(sed -n 's/^W: floodgate[^:]*: \([a-z0-9-]*\).*/\1/p' "$WORK/lintian" | sort -u); do
	check "lintian warning $tag is listed in docs/service.md" grep -q "^| \`$tag\`" "$REPO/docs/service.md"
done

# 3. The clean root.
depends=$(dpkg-deb -f "$DEB" Depends | sed -e 's/([^)]*)//g' -e 's/[[:space:]]//g')
unpack_clean_root apt "man-db,$depends" "$ROOT" || finish
mount -t proc proc "$ROOT/proc"
in_root() { chroot "$ROOT" "$@"; }
check "the clean root has no floodgate" bash -c "! chroot '$ROOT' dpkg -s floodgate >/dev/null 2>&1"

# files: every path in the root but /proc, /dev, what dpkg itself keeps
# changing (its logs, status backups and lock files, not a package's files)
# and man-db's cache (its index, and the page `man floodgate.conf` below
# formats: man-db's, made by reading a page).
files() {
	(cd "$ROOT" && find . -xdev ! -path ./proc ! -path ./dev -print) |
		grep -Ev '^\./var/(log/dpkg\.log|log/apt/|lib/dpkg/(status|available|diversions|statoverride)-old$|lib/dpkg/(lock|lock-frontend|triggers/Lock)$|cache/debconf/|cache/man/)' |
		sort
}
files >"$WORK/before"

# 4. Install.
cp "$DEB" "$ROOT/tmp/floodgate.deb"
expect_exit 0 "dpkg -i in the clean root" in_root dpkg -i /tmp/floodgate.deb
rm -f "$ROOT/tmp/floodgate.deb"
out=$(in_root floodgate --version 2>&1)
check "floodgate --version runs and names $VERSION: $out" grep -qF "$VERSION" <<<"$out"
SAMPLE=/usr/share/doc/floodgate/examples/floodgate.conf.sample
expect_exit 0 "floodgate check on the installed sample" in_root floodgate check -c "$SAMPLE"
UNIT=/lib/systemd/system/floodgate@.service
check "the unit is installed" test -f "$ROOT$UNIT"
check "  ... and runs the installed binary" grep -q '^ExecStart=/usr/sbin/floodgate run ' "$ROOT$UNIT"
doc=$(sed -n 's|^Documentation=file:||p' "$ROOT$UNIT")
check "  ... and its Documentation= ($doc) is installed" test -n "$doc" -a -f "$ROOT$doc"
check "  ... and is neither enabled nor started (no symlink to it)" \
	bash -c "! find '$ROOT/etc/systemd' -lname '*floodgate*' 2>/dev/null | grep -q ."
dpkg -c "$DEB" | awk '{ print $6 }' | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^/\?$' | sort >"$WORK/in-deb"
in_root dpkg -L floodgate | grep -v '^/\.$' | sort >"$WORK/listed"
check "dpkg -L lists every file of the .deb" cmp -s "$WORK/in-deb" "$WORK/listed"
missing=$(while read -r f; do [ -e "$ROOT$f" ] || echo "$f"; done <"$WORK/listed")
check "every listed file is in the root${missing:+: missing $missing}" test -z "$missing"
conffiles=$(in_root dpkg-query -W -f='${Conffiles}\n' floodgate | awk 'NF { print $1 }' | sort)
check "the fail2ban action is a conffile" grep -qx /etc/fail2ban/action.d/floodgate.conf <<<"$conffiles"
expect_exit 0 "man -w floodgate" in_root man -w floodgate
expect_exit 0 "man -w 5 floodgate.conf" in_root man -w 5 floodgate.conf
out=$(in_root env MANPAGER=cat COLUMNS=80 man floodgate.conf 2>&1)
check "man floodgate.conf renders its [policy] section" grep -q 'policy' <<<"$out"
for f in /usr/share/bash-completion/completions/floodgate \
	/usr/share/floodgate/grafana/floodgate-dashboard.json \
	/usr/share/floodgate/prometheus/floodgate-rules.yml; do
	check "$f is installed" test -s "$ROOT$f"
done

# 5. Remove: only the conffiles (and their directories) and dpkg's record of
# them stay; nothing is unloaded, and it says so.
out=$(in_root dpkg -r floodgate 2>&1)
rc=$?
check "dpkg -r succeeds (exit $rc), the package in config-files state" \
	test "$rc" -eq 0 -a "$(in_root dpkg-query -W -f='${db:Status-Status}' floodgate)" = config-files
check "dpkg -r says a loaded floodgate keeps running: $(tail -n 1 <<<"$out")" grep -q 'keeps running' <<<"$out"
files >"$WORK/removed"
left=$(comm -13 "$WORK/before" "$WORK/removed")
expected_left=$(
	for f in $conffiles; do
		while [ "$f" != / ]; do
			echo ".$f"
			f=$(dirname "$f")
		done
	done | sort -u | comm -13 "$WORK/before" -
)
check "dpkg -r leaves only the conffiles: left [$(tr '\n' ' ' <<<"$left")], expected [$(tr '\n' ' ' <<<"$expected_left")]" \
	test "$(grep -v '^\./var/lib/dpkg/info/floodgate\.' <<<"$left")" = "$expected_left"
check "  ... and no binary" test ! -e "$ROOT/usr/sbin/floodgate"
for f in $conffiles; do
	check "  ... $f stays" test -f "$ROOT$f"
done

# 6. Purge: the conffiles and the state floodgate writes go; the root is as it was.
mkdir -m 0700 "$ROOT/var/lib/floodgate"
echo "# floodgate bans" >"$ROOT/var/lib/floodgate/eth0.bans"
echo "# fleet bans" >"$ROOT/var/lib/floodgate/fleet-bans.eth0"
# The operator's own config is not the package's: purge keeps it.
printf '[policy ssh]\nmatch = tcp dport 22 syn\nrate = 10/s\n' >"$ROOT/etc/floodgate/eth0.conf"
# An instance the operator enabled (what `systemctl enable floodgate@eth0` links).
WANTS=$ROOT/etc/systemd/system/multi-user.target.wants
made_dirs=$(mkdir -pv "$WANTS" | sed -n "s/^mkdir: created directory '\(.*\)'$/\1/p" | tac)
ln -s /lib/systemd/system/floodgate@.service "$WANTS/floodgate@eth0.service"
out=$(in_root dpkg -P floodgate 2>&1)
rc=$?
check "dpkg -P succeeds (exit $rc)" test "$rc" -eq 0
check "dpkg -P keeps the operator's /etc/floodgate/eth0.conf" test -s "$ROOT/etc/floodgate/eth0.conf"
rm -f "$ROOT/etc/floodgate/eth0.conf"
rmdir "$ROOT/etc/floodgate" 2>/dev/null
check "dpkg -P removes the enabled floodgate@eth0 instance's link" \
	test ! -L "$WANTS/floodgate@eth0.service"
for d in $made_dirs; do rmdir "$d"; done # the test's, not the package's
check "dpkg -P says a loaded floodgate keeps enforcing: $(tail -n 1 <<<"$out")" grep -q 'keeps enforcing' <<<"$out"
check "dpkg -P forgets the package" bash -c "! chroot '$ROOT' dpkg -s floodgate >/dev/null 2>&1"
files >"$WORK/purged"
diff=$(diff "$WORK/before" "$WORK/purged")
check "dpkg -P leaves the root as before the install${diff:+: $diff}" test -z "$diff"

# 7. Upgrade: the same package relabelled as an older version, installed
# and used (a conffile edited, state written), then upgraded by this one.
# The edit, the state and the operator's config survive, and nothing is
# enabled by the upgrade.
OLD_VERSION=0.0.1-1
mkdir "$WORK/old"
dpkg-deb -R "$DEB" "$WORK/old/tree"
sed -i "s/^Version: .*/Version: $OLD_VERSION/" "$WORK/old/tree/DEBIAN/control"
dpkg-deb -b "$WORK/old/tree" "$ROOT/tmp/old.deb" >/dev/null
cp "$DEB" "$ROOT/tmp/floodgate.deb"
expect_exit 0 "dpkg -i of an older version ($OLD_VERSION)" in_root dpkg -i /tmp/old.deb
ACTION=/etc/fail2ban/action.d/floodgate.conf
echo "# the operator's edit" >>"$ROOT$ACTION"
printf '[policy ssh]\nmatch = tcp dport 22 syn\nrate = 10/s\n' >"$ROOT/etc/floodgate/eth0.conf"
mkdir -p -m 0700 "$ROOT/var/lib/floodgate"
echo "# floodgate bans" >"$ROOT/var/lib/floodgate/eth0.bans"
expect_exit 0 "dpkg -i of $VERSION over it (an upgrade, no prompt)" \
	in_root dpkg -i --force-confnew /tmp/floodgate.deb
check "  ... $VERSION is installed" \
	test "$(in_root dpkg-query -W -f='${Version}' floodgate)" = "$VERSION"
check "  ... the edited conffile $ACTION keeps the edit (unchanged upstream)" \
	grep -q "the operator's edit" "$ROOT$ACTION"
check "  ... the operator's eth0.conf stays" test -s "$ROOT/etc/floodgate/eth0.conf"
check "  ... the bans by hand stay" test -s "$ROOT/var/lib/floodgate/eth0.bans"
check "  ... and nothing is enabled" \
	bash -c "! find '$ROOT/etc/systemd' -lname '*floodgate*' 2>/dev/null | grep -q ."
rm -f "$ROOT/tmp/old.deb" "$ROOT/tmp/floodgate.deb" "$ROOT/etc/floodgate/eth0.conf"
expect_exit 0 "dpkg -P after the upgrade" in_root dpkg -P floodgate
rmdir "$ROOT/etc/floodgate" 2>/dev/null
files >"$WORK/purged2"
diff=$(diff "$WORK/before" "$WORK/purged2")
check "  ... leaves the root as before${diff:+: $diff}" test -z "$diff"
finish
