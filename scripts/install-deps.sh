#!/usr/bin/env bash
# Install every Debian 12 package that floodgate's build, tests, demo and
# benchmark need. Idempotent: packages already present are left alone, and
# apt is not touched at all when nothing is missing.
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
	libjansson-dev libmnl-dev
	fail2ban
	libcurl4-openssl-dev crowdsec
	mandoc
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
# online client either (README, "CrowdSec").
crowdsec_offline_before() {
	local creds=/etc/crowdsec/online_api_credentials.yaml
	mkdir -p /etc/crowdsec
	[ -s "$creds" ] || echo "# offline: no Central API (floodgate's install-deps.sh)" >"$creds"
}
crowdsec_offline_after() {
	local conf=/etc/crowdsec/config.yaml
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
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
crowdsec_offline_after
