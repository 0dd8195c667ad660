#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scripts/install-deps.sh is quiet: one line naming what it installs, apt's
# output only when apt fails (with apt's exit code), nothing when every
# package is present, and it still asks for every package it always did;
# it strips the online client of a CrowdSec it made offline, never of an
# operator's.
# apt-get and dpkg-query are stubs on PATH: nothing is installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
	echo "test_install_deps.sh: needs root (the script refuses otherwise); skipped"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() {
	local what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $what"
	fi
}

# Stubs: dpkg-query reports installed the packages listed in $work/present;
# apt-get logs its arguments, prints progress like apt's, and exits
# $APT_EXIT (after "install" only).
mkdir "$work/bin"
cat >"$work/bin/dpkg-query" <<'STUB'
#!/bin/sh
pkg=$(eval echo "\${$#}")
grep -qx "$pkg" "$STUB_DIR/present" && printf 'install ok installed' && exit 0
exit 1
STUB
cat >"$work/bin/apt-get" <<'STUB'
#!/bin/sh
echo "$*" >>"$STUB_DIR/apt-calls"
for i in 1 2 3 4 5 6 7 8 9 10; do echo "Selecting previously unselected package stub$i."; done
echo "E: stub apt progress line to stderr" >&2
case "$*" in *install*) exit "${APT_EXIT:-0}" ;; esac
exit 0
STUB
chmod +x "$work/bin/"*
export STUB_DIR=$work PATH="$work/bin:$PATH"
# CrowdSec's offline set-up edits files in this directory, not the host's /etc/crowdsec.
export FG_CROWDSEC_ETC=$work/crowdsec

# Every package the script asked for before it was made quiet (scripts/install-deps.sh
# at issue 26); none may be dropped. Plus mandoc
# (mandoc -T lint on the man pages), and debhelper, lintian and mmdebstrap
# for the .deb and its test (docs/service.md, "Debian package"), and
# libnftables-dev for the SYN proxy's nftables table (user/attach/synproxy_nft.c).
expected="build-essential clang llvm pkg-config make libbpf-dev bpftool libxdp-dev xdp-tools
libelf-dev zlib1g-dev libcmocka-dev iproute2 ethtool util-linux nftables iptables gnuplot-nox
python3 libpcap-dev tcpdump libsystemd-dev libmicrohttpd-dev prometheus iperf3 iputils-ping
libhiredis-dev redis-server socat openssl libjansson-dev libmnl-dev libnftables-dev fail2ban
libcurl4-openssl-dev crowdsec mandoc debhelper lintian mmdebstrap"

# 1. Everything missing, apt succeeds: exactly one line, naming the packages.
: >"$work/present"
out=$(scripts/install-deps.sh 2>&1) && rc=0 || rc=$?
check "installs with exit 0 (got $rc)" test "$rc" -eq 0
check "one line of output when apt succeeds, got $(wc -l <<<"$out"): $out" \
	test "$(wc -l <<<"$out")" -eq 1
check "the line names what it installs" grep -q '^install-deps.sh: installing .*clang' <<<"$out"
check "apt's progress is not shown" bash -c "! grep -q 'stub' <<<\"\$1\"" _ "$out"
asked=$(grep '^install' "$work/apt-calls" | tr ' ' '\n')
for pkg in $expected; do
	check "asks apt for $pkg" grep -qx "$pkg" <<<"$asked"
done

# 2. apt fails: its output is shown, and the script fails with its exit code.
: >"$work/apt-calls"
out=$(APT_EXIT=100 scripts/install-deps.sh 2>&1) && rc=0 || rc=$?
check "apt's failure is the script's (exit $rc)" test "$rc" -eq 100
check "apt's output is shown when it fails" grep -q 'Selecting previously unselected package stub3' <<<"$out"
check "  ... with apt's stderr too" grep -q 'E: stub apt progress line' <<<"$out"

# 3. Everything present: silent, apt never called.
: >"$work/apt-calls"
tr ' ' '\n' <<<"$expected" | tr -s '\n' >"$work/present"
printf '%s\n' qemu-system-x86 busybox-static kmod cpio >>"$work/present"
out=$(scripts/install-deps.sh 2>&1) || true
check "silent when everything is present: '$out'" test -z "$out"
check "apt not called when everything is present" test ! -s "$work/apt-calls"

# 4. CrowdSec's config: its online_client block goes only when this script
# made CrowdSec offline (its marker in the credentials file); an operator's
# CrowdSec, registered with the Central API, is left alone.
mkdir -p "$FG_CROWDSEC_ETC"
crowdsec_config='api:
  server:
    online_client:
      credentials_path: /etc/crowdsec/online_api_credentials.yaml
    listen_uri: 127.0.0.1:8080'
printf '%s\n' "$crowdsec_config" >"$FG_CROWDSEC_ETC/config.yaml"
printf 'url: https://example.invalid/\nlogin: stub-machine\n' >"$FG_CROWDSEC_ETC/online_api_credentials.yaml"
scripts/install-deps.sh >/dev/null 2>&1 || true
check "an operator's registered CrowdSec keeps its online_client" \
	grep -q 'online_client:' "$FG_CROWDSEC_ETC/config.yaml"
echo "# offline: no Central API (floodgate's install-deps.sh)" >"$FG_CROWDSEC_ETC/online_api_credentials.yaml"
scripts/install-deps.sh >/dev/null 2>&1 || true
check "a CrowdSec made offline by install-deps.sh loses its online_client" \
	bash -c "! grep -q 'online_client:' '$FG_CROWDSEC_ETC/config.yaml' && grep -q 'listen_uri:' '$FG_CROWDSEC_ETC/config.yaml'"

echo "test_install_deps.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
