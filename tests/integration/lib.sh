# SPDX-License-Identifier: GPL-2.0-only
# Shared by the integration tests: the lab (scripts/lab.sh) and assertions.
# Each test ends with "NAME: N passed, M failed" and exits non-zero on any
# failure; 77 means skipped.

if [ "$(id -u)" -ne 0 ]; then
	echo "$(basename "$0"): needs root; skipped"
	exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lab.sh"
lab_enter "$0" "$@"
trap lab_down EXIT

source "$(dirname "${BASH_SOURCE[0]}")/assert.sh"

# spoof_lab_up RATE BURST NEW_SOURCES: the spoofed-flood lab of
# test_spoof.sh and test_new_sources.sh: floodgate on fgA limits udp dport 9
# per source to RATE/s with BURST, in a table of 65,536 entries, and nft
# counts what the two real sources 192.0.2.1 and 192.0.2.2 get through.
spoof_lab_up() {
	local conf
	conf=$(mktemp)
	cat >"$conf" <<-CONF
		max_sources = 65536
		new_sources = $3
		[policy per-ip]
		match = udp dport 9
		per   = src/32 src/64
		rate  = $1/s
		burst = $2
	CONF
	lab_up
	expect_exit 0 "load with a 65,536-entry table" "$FLOODGATE" load fgA -c "$conf"
	rm -f "$conf"
	count_sources 192.0.2.1 192.0.2.2
}

# The second lab, for two hosts or two interfaces of one host: fgC
# (10.201.0.1) and its peer fgD in the sender's netns. The test removes fgC.
lab_up_second() {
	ip link add fgC numtxqueues 2 numrxqueues 2 type veth peer name fgD \
		numtxqueues 2 numrxqueues 2
	ip link set fgD netns "$SENDER_NS"
	ip -n "$SENDER_NS" link set fgD up
	# As fgB's: no IPv6 of its own reaches fgC as traffic no test sent.
	ip netns exec "$SENDER_NS" sysctl -qw net.ipv6.conf.fgD.disable_ipv6=1
	ip addr add 10.201.0.1/24 dev fgC
	ip link set fgC up
	FGC_MAC=$(cat /sys/class/net/fgC/address)
	ethtool -K fgC gro on >/dev/null
}

# flood_second ARGS...: the generator on the second lab (fgD -> fgC).
flood_second() {
	ip netns exec "$SENDER_NS" "$FLOOD_GEN" --dev fgD --dst-mac "$FGC_MAC" --json "$@"
}

# flood_both SECONDS SRC: the same source floods fgA and fgC at once, at
# 20000/s each, to udp dport 9; sets FLOOD_A and FLOOD_SECOND (the
# generators' JSON). Needs $WORK.
flood_both() {
	flood_second --dst 10.201.0.1 --src "$2" --dport 9 --rate 20000 --duration "$1" \
		>"$WORK/flood_second.json" &
	local pid=$!
	FLOOD_A=$(flood --dst 10.200.0.1 --src "$2" --dport 9 --rate 20000 --duration "$1")
	wait $pid
	FLOOD_SECOND=$(cat "$WORK/flood_second.json")
}

# require_redis: skips the suite (exit 77) on a machine without redis-server.
require_redis() {
	if ! command -v redis-server >/dev/null; then
		echo "$TEST_NAME: redis-server is not installed (scripts/install-deps.sh); skipped"
		exit 77
	fi
}

# stop_children PID...: stops the suite's background processes and reaps
# them (empty arguments are skipped).
stop_children() {
	local pid
	for pid in "$@"; do
		[ -n "$pid" ] || continue
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	return 0
}

# process_stopped PID: whether the process is stopped (SIGSTOP, as
# FG_TEST_STOP_AT leaves a floodgate command at the step it names).
process_stopped() {
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]
}

# require_crowdsec: skips the suite (exit 77) on a machine without
# CrowdSec's Local API and cscli (Debian's crowdsec: scripts/install-deps.sh).
require_crowdsec() {
	if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null ||
		[ ! -r /etc/crowdsec/config.yaml ]; then
		echo "$TEST_NAME: crowdsec is not installed (scripts/install-deps.sh); skipped"
		exit 77
	fi
}

# crowdsec_setup DIR PORT: a Local API of the suite's own in DIR (its
# config, database and logs; nothing shared with /var/lib/crowdsec or
# another suite), listening on 127.0.0.1:PORT, with a machine for cscli.
# Start it with crowdsec_start; cscli with crowdsec_cscli.
crowdsec_setup() {
	local dir=$1 port=$2
	mkdir -p "$dir/data" "$dir/log"
	cat >"$dir/config.yaml" <<CONF
common:
  daemonize: false
  log_media: file
  log_level: warning
  log_dir: $dir/log/
  working_dir: .
config_paths:
  config_dir: /etc/crowdsec/
  data_dir: $dir/data/
  simulation_path: /etc/crowdsec/simulation.yaml
  hub_dir: /var/lib/crowdsec/hub/
  index_path: /var/lib/crowdsec/hub/.index.json
  notification_dir: /etc/crowdsec/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
crowdsec_service:
  acquisition_path: /etc/crowdsec/acquis.yaml
cscli:
  output: human
  color: no
db_config:
  log_level: warning
  type: sqlite
  db_path: $dir/data/crowdsec.db
  use_wal: true
  flush:
    max_items: 500000
    max_age: 7d
api:
  client:
    insecure_skip_verify: false
    credentials_path: $dir/local_api_credentials.yaml
  server:
    log_level: warning
    listen_uri: 127.0.0.1:$port
    profiles_path: /etc/crowdsec/profiles.yaml
    console_path: /etc/crowdsec/console.yaml
    trusted_ips:
      - 127.0.0.1
prometheus:
  enabled: false
CONF
	: >"$dir/config.yaml.local"
	cscli -c "$dir/config.yaml" machines add fgtest --auto --force \
		-f "$dir/local_api_credentials.yaml" --url "http://127.0.0.1:$port" >/dev/null 2>&1
}

# crowdsec_cscli DIR ARGS...: cscli against the Local API in DIR.
crowdsec_cscli() {
	local dir=$1
	shift
	cscli -c "$dir/config.yaml" "$@"
}

# crowdsec_start DIR: starts the Local API of DIR alone (-no-cs: no agent)
# and waits until it answers; its PID in CROWDSEC_PID. Stop it with
# stop_children "$CROWDSEC_PID".
crowdsec_start() {
	local dir=$1 url deadline
	url=$(sed -n 's/^    listen_uri: //p' "$dir/config.yaml")
	crowdsec -c "$dir/config.yaml" -no-cs >>"$dir/log/stdout.log" 2>&1 &
	CROWDSEC_PID=$!
	deadline=$((SECONDS + 30))
	until curl -s -o /dev/null "http://$url/health" 2>/dev/null ||
		curl -s -o /dev/null "http://$url/v1/decisions" 2>/dev/null; do
		if [ $SECONDS -ge $deadline ] || ! kill -0 "$CROWDSEC_PID" 2>/dev/null; then
			echo "$TEST_NAME: the Local API in $dir did not start:" >&2
			tail -5 "$dir/log/"* >&2
			return 1
		fi
		sleep 0.1
	done
}
