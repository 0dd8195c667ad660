#!/usr/bin/env bash
# Install every Debian 12 package that floodgate's build, tests, demo,
# benchmark and Debian package need. Idempotent: packages already present
# are left alone, and apt is not touched at all when nothing is missing.
# Quiet: one line naming what it installs, and nothing when nothing is
# missing; apt's output is kept in a temporary log and shown only when apt
# fails (the script then exits with apt's code).
#   install-deps.sh           the build, tests, demo and benchmark
#   install-deps.sh kernels   also what `make test-kernels` needs (qemu, busybox)
set -euo pipefail

packages=(
	build-essential clang llvm pkg-config make
	libbpf-dev bpftool libxdp-dev xdp-tools
	libelf-dev zlib1g-dev libcmocka-dev
	iproute2 ethtool util-linux
	nftables iptables gnuplot-nox python3
	libpcap-dev tcpdump
	libsystemd-dev libmicrohttpd-dev prometheus
	iperf3 iputils-ping
	libhiredis-dev redis-server socat openssl
	libjansson-dev libmnl-dev libnftables-dev
	fail2ban
	libcurl4-openssl-dev crowdsec
	mandoc
	debhelper lintian mmdebstrap
)
case "${1:-}" in
'') ;;
kernels) packages+=(qemu-system-x86 busybox-static kmod cpio) ;;
*)
	echo "install-deps.sh: unknown package group '$1' (known: kernels)" >&2
	exit 2
	;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: must run as root to install packages" >&2
	exit 1
fi

missing=()
for pkg in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$pkg")
	fi
done

# CrowdSec's post-install step registers with CrowdSec's online service,
# which fails offline; it skips that when the credentials file is not
# empty. The tests run the Local API alone, so its config must not name an
# online client either (docs/crowdsec.md, "CrowdSec").
# FG_CROWDSEC_ETC: tests/scripts/test_install_deps.sh points it at a scratch
# directory.
# Only a CrowdSec made offline here is edited: one whose credentials file
# is this script's marker. An operator's CrowdSec, registered with the
# Central API, keeps its config whenever `make demo` or `make test` runs.
CROWDSEC_ETC=${FG_CROWDSEC_ETC:-/etc/crowdsec}
CROWDSEC_MARKER="# offline: no Central API (floodgate's install-deps.sh)"
crowdsec_offline_before() {
	local creds=$CROWDSEC_ETC/online_api_credentials.yaml
	mkdir -p "$CROWDSEC_ETC"
	[ -s "$creds" ] || echo "$CROWDSEC_MARKER" >"$creds"
}
crowdsec_offline_after() {
	local conf=$CROWDSEC_ETC/config.yaml
	grep -qxF "$CROWDSEC_MARKER" "$CROWDSEC_ETC/online_api_credentials.yaml" 2>/dev/null || return 0
	grep -q '^[[:space:]]*online_client:' "$conf" 2>/dev/null || return 0
	# Delete the block: its line and the deeper-indented lines below it.
	awk '
		match($0, /^[ \t]*online_client:/) { drop = RLENGTH - length("online_client:"); next }
		drop >= 0 && (match($0, /^[ \t]*/) && RLENGTH > drop || /^[ \t]*$/) { next }
		{ drop = -1; print }
	' drop=-1 "$conf" >"$conf.tmp"
	mv "$conf.tmp" "$conf"
}

if [ ${#missing[@]} -eq 0 ]; then
	crowdsec_offline_after
	exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
crowdsec_offline_before
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# quietly CMD...: runs CMD with its output in $log; on failure prints the
# log and exits with CMD's code.
quietly() {
	local rc=0
	"$@" >>"$log" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] && return 0
	echo "install-deps.sh: '$*' failed (exit $rc); its output:" >&2
	cat "$log" >&2
	exit "$rc"
}
quietly apt-get update -qq
quietly apt-get install -y -qq --no-install-recommends "${missing[@]}"
crowdsec_offline_after
