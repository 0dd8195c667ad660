// SPDX-License-Identifier: GPL-2.0-only
/* `ban`, `unban` and `bans`: the `bans` trie by hand. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "config.h"
#include "loader.h"
#include "log.h"
#include "pinned.h"
#include "values.h"

/* The clock of bpf_ktime_get_ns(). */
static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * FG_NS_PER_S + ts.tv_nsec;
}

static struct fg_src_lpm_key ban_key(const struct fg_cidr *cidr)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + cidr->prefix_len,
		.family = cidr->family,
	};

	memcpy(key.addr, cidr->addr, 16);
	return key;
}

/* Opens the maps of a loaded interface, as root. */
static int open_for_bans(const char *ifname, struct fg_pinned *pinned)
{
	if (geteuid() != 0) {
		pr_warn("Error: floodgate must run as root (it reads BPF maps)\n");
		return FG_EXIT_ENV;
	}
	return fg_open_loaded(ifname, pinned);
}

static int parse_target(const char *text, struct fg_cidr *cidr)
{
	struct fg_value_error err;

	if (!fg_parse_cidr_len(text, strlen(text), cidr, &err))
		return FG_EXIT_OK;
	if (err.fault == FG_HOST_BITS)
		pr_warn("Error: '%s' has host bits set (expected a network address such as "
			"%s/%u)\n",
			text, err.network, cidr->prefix_len);
	else
		pr_warn("Error: bad address '%s' (expected ADDR or ADDR/LEN with the host bits "
			"clear, such as 192.0.2.7, 10.0.0.0/24 or 2001:db8::/64)\n",
			text);
	return FG_EXIT_USAGE;
}

int fg_cmd_ban(const char *ifname, const char *target, const char *duration)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_src_lpm_key key;
	struct fg_ban ban = {.strikes = 1};
	struct fg_cidr cidr;
	__u64 ns = 0;
	int ret;

	ret = parse_target(target, &cidr);
	if (ret)
		return ret;
	if (duration && fg_parse_duration(duration, &ns)) {
		pr_warn("Error: bad duration '%s' (expected 1ms..30d such as 90s, 10m, 24h)\n",
			duration);
		return FG_EXIT_USAGE;
	}
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		return ret;
	key = ban_key(&cidr);
	ban.family = cidr.family;
	ban.prefix_len = cidr.prefix_len;
	ban.duration_ns = ns;
	ban.expires_ns = duration ? monotonic_ns() + ns : ~0ULL;
	if (bpf_map_update_elem(pinned.bans, &key, &ban, BPF_ANY)) {
		pr_warn("Error: cannot add the ban: %s\n", strerror(errno));
		ret = FG_EXIT_FAILURE;
	} else {
		printf("banned %s on %s %s%s\n", target, ifname,
		       duration ? "for " : "until unbanned", duration ? duration : "");
	}
	fg_pinned_close(&pinned);
	return ret;
}

int fg_cmd_unban(const char *ifname, const char *target)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_src_lpm_key key;
	struct fg_cidr cidr;
	int ret;

	ret = parse_target(target, &cidr);
	if (ret)
		return ret;
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		return ret;
	key = ban_key(&cidr);
	if (bpf_map_delete_elem(pinned.bans, &key)) {
		if (errno == ENOENT) {
			pr_warn("Error: %s is not banned on %s\n", target, ifname);
			ret = FG_EXIT_STATE;
		} else {
			pr_warn("Error: cannot remove the ban: %s\n", strerror(errno));
			ret = FG_EXIT_FAILURE;
		}
	} else {
		printf("unbanned %s on %s\n", target, ifname);
	}
	fg_pinned_close(&pinned);
	return ret;
}

static const char *banned_by(const struct fg_policy_set *set, __u32 policy_id)
{
	__u32 i;

	if (!policy_id)
		return "(by hand)";
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (set->policies[i].id == policy_id)
			return set->policies[i].name;
	return "(a removed policy)";
}

int fg_cmd_bans(const char *ifname)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_src_lpm_key key, next;
	char addr[INET6_ADDRSTRLEN], prefix[INET6_ADDRSTRLEN + 8], left[32];
	void *prev = NULL;
	__u64 now;
	__u32 slot;
	int ret, shown = 0;

	if (!set)
		return FG_EXIT_FAILURE;
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		goto out;
	slot = pinned.rt.active_slot;
	if (bpf_map_lookup_elem(pinned.maps.policy_sets, &slot, set))
		memset(set, 0, sizeof(*set));
	now = monotonic_ns();
	printf("%-44s %-14s %-8s %s\n", "BANNED", "REMAINING", "STRIKES", "BY");
	while (!bpf_map_get_next_key(pinned.bans, prev, &next)) {
		struct fg_ban ban;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(pinned.bans, &key, &ban))
			continue;
		inet_ntop(key.family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, key.addr, addr,
			  sizeof(addr));
		if (ban.expires_ns == ~0ULL)
			snprintf(left, sizeof(left), "until unbanned");
		else if (ban.expires_ns <= now)
			snprintf(left, sizeof(left), "expired");
		else
			snprintf(left, sizeof(left), "%.1fs", (ban.expires_ns - now) / 1e9);
		snprintf(prefix, sizeof(prefix), "%s/%u", addr,
			 key.prefixlen - FG_SRC_LPM_HEADER_BITS);
		printf("%-44s %-14s %-8u %s\n", prefix, left, ban.strikes,
		       banned_by(set, ban.policy_id));
		shown++;
	}
	if (!shown)
		printf("(no bans)\n");
out:
	fg_pinned_close(&pinned);
	free(set);
	return ret;
}
