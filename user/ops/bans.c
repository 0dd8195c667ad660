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

#include "maps/loaded.h"
#include "config/config.h"
#include "ops/loader.h"
#include "base/log.h"
#include "maps/pinned.h"
#include "config/values.h"

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
	struct fg_err err = {0};

	return fg_open_loaded(ifname, pinned, &err) ? fg_exit_report(&err) : FG_EXIT_OK;
}

/* An IPv4-mapped IPv6 prefix (::ffff:a.b.c.d, /96 or longer) is the IPv4
 * prefix it maps: the datapath keys IPv4 sources as IPv4, so a ban of the
 * mapped form would never match. */
static void unmap_ipv4(struct fg_cidr *cidr)
{
	static const __u8 mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (cidr->family != FG_FAMILY_IPV6 || cidr->prefix_len < 96 ||
	    memcmp(cidr->addr, mapped_prefix, sizeof(mapped_prefix)))
		return;
	cidr->family = FG_FAMILY_IPV4;
	cidr->prefix_len -= 96;
	memmove(cidr->addr, cidr->addr + 12, 4);
	memset(cidr->addr + 4, 0, 12);
}

/* ADDR/LEN as `bans` prints it. */
static void cidr_text(const struct fg_cidr *cidr, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(cidr->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, cidr->addr, addr,
		  sizeof(addr));
	snprintf(buf, size, "%s/%u", addr, cidr->prefix_len);
}

/* Parses ADDR[/LEN] into `cidr` and its canonical text `shown`, which
 * names the IPv4 prefix an IPv4-mapped address stands for. */
static int parse_target(const char *text, struct fg_cidr *cidr, char *shown, size_t size)
{
	struct fg_value_error err;

	if (!fg_parse_cidr_len(text, strlen(text), cidr, &err)) {
		__u8 family = cidr->family;

		unmap_ipv4(cidr);
		if (family == cidr->family)
			snprintf(shown, size, "%s", text);
		else
			cidr_text(cidr, shown, size);
		return FG_EXIT_OK;
	}
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

/* Bans never apply to an [allow]ed source (the datapath checks the lists
 * first): say so rather than let a ban look effective. */
static void warn_if_allowed(const struct fg_pinned *pinned, const struct fg_cidr *cidr,
			    const char *target)
{
	struct fg_src_lpm_key key = ban_key(cidr);
	__u32 access;

	key.slot = (__u8)pinned->rt.active_slot;
	if (!bpf_map_lookup_elem(pinned->maps.access_lists, &key, &access) &&
	    access == FG_ACCESS_ALLOW)
		pr_warn("Warning: %s is in the [allow] list of the running policy; allowed "
			"sources bypass every ban, so this ban does not drop them (remove the "
			"[allow] entry and reload to ban them)\n",
			target);
}

static int add_ban(const struct fg_pinned *pinned, const struct fg_src_lpm_key *key,
		   const struct fg_ban *ban)
{
	if (!bpf_map_update_elem(pinned->bans, key, ban, BPF_ANY))
		return FG_EXIT_OK;
	if (errno == E2BIG || errno == ENOSPC || errno == ENOMEM)
		pr_warn("Error: cannot add the ban: the bans table is full (%d bans and strike "
			"records); list them with 'floodgate bans' and lift some with 'floodgate "
			"unban'\n",
			FG_MAX_BANS);
	else
		pr_warn("Error: cannot add the ban to the bans map: %s\n", strerror(errno));
	return FG_EXIT_FAILURE;
}

int fg_cmd_ban(const char *ifname, const char *target, const char *duration, bool force)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_src_lpm_key key;
	struct fg_ban ban = {.strikes = 1};
	char shown[INET6_ADDRSTRLEN + 8];
	struct fg_cidr cidr;
	__u64 ns = 0;
	int ret;

	ret = parse_target(target, &cidr, shown, sizeof(shown));
	if (ret)
		return ret;
	if (duration && fg_parse_duration(duration, &ns)) {
		pr_warn("Error: bad duration '%s' (expected 1ms..30d such as 90s, 10m, 24h)\n",
			duration);
		return FG_EXIT_USAGE;
	}
	if (cidr.prefix_len == 0 && !force) {
		pr_warn("Error: %s bans every %s source (pass --force to ban them all)\n", shown,
			cidr.family == FG_FAMILY_IPV4 ? "IPv4" : "IPv6");
		return FG_EXIT_USAGE;
	}
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		return ret;
	warn_if_allowed(&pinned, &cidr, shown);
	key = ban_key(&cidr);
	ban.family = cidr.family;
	ban.prefix_len = cidr.prefix_len;
	ban.duration_ns = ns;
	ban.expires_ns = duration ? monotonic_ns() + ns : ~0ULL;
	ret = add_ban(&pinned, &key, &ban);
	if (!ret)
		printf("banned %s on %s %s%s\n", shown, ifname,
		       duration ? "for " : "until unbanned", duration ? duration : "");
	fg_pinned_close(&pinned);
	return ret;
}

int fg_cmd_unban(const char *ifname, const char *target)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	char shown[INET6_ADDRSTRLEN + 8];
	struct fg_src_lpm_key key;
	struct fg_cidr cidr;
	int ret;

	ret = parse_target(target, &cidr, shown, sizeof(shown));
	if (ret)
		return ret;
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		return ret;
	key = ban_key(&cidr);
	if (bpf_map_delete_elem(pinned.bans, &key)) {
		if (errno == ENOENT) {
			pr_warn("Error: %s is not banned on %s\n", shown, ifname);
			ret = FG_EXIT_STATE;
		} else {
			pr_warn("Error: cannot remove the ban: %s\n", strerror(errno));
			ret = FG_EXIT_FAILURE;
		}
	} else {
		printf("unbanned %s on %s\n", shown, ifname);
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

/* One row of `bans`: text columns, or one JSON object (README: bans --json). */
static void print_ban(const struct fg_src_lpm_key *key, const struct fg_ban *ban,
		      const struct fg_policy_set *set, __u64 now, bool json, bool first)
{
	char addr[INET6_ADDRSTRLEN], prefix[INET6_ADDRSTRLEN + 8], left[32];
	const char *by = banned_by(set, ban->policy_id);
	bool forever = ban->expires_ns == ~0ULL, expired = !forever && ban->expires_ns <= now;

	inet_ntop(key->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, key->addr, addr,
		  sizeof(addr));
	snprintf(prefix, sizeof(prefix), "%s/%u", addr, key->prefixlen - FG_SRC_LPM_HEADER_BITS);
	if (json) {
		printf("%s\n    {\"prefix\": \"%s\", \"family\": %u, \"state\": \"%s\", ",
		       first ? "" : ",", prefix, key->family,
		       forever	 ? "until_unbanned"
		       : expired ? "expired"
				 : "active");
		if (forever || expired)
			printf("\"remaining_s\": null, ");
		else
			printf("\"remaining_s\": %.3f, ", (ban->expires_ns - now) / 1e9);
		printf("\"duration_s\": %.3f, \"strikes\": %u, \"by_hand\": %s, \"policy\": ",
		       ban->duration_ns / 1e9, ban->strikes, ban->policy_id ? "false" : "true");
		if (ban->policy_id && by[0] != '(')
			printf("\"%s\"}", by);
		else
			printf("null}");
		return;
	}
	if (forever)
		snprintf(left, sizeof(left), "until unbanned");
	else if (expired)
		snprintf(left, sizeof(left), "expired");
	else
		snprintf(left, sizeof(left), "%.1fs", (ban->expires_ns - now) / 1e9);
	printf("%-44s %-14s %-8u %s\n", prefix, left, ban->strikes, by);
}

int fg_cmd_bans(const char *ifname, bool json)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_src_lpm_key key, next;
	void *prev = NULL;
	__u64 now;
	__u32 slot;
	int ret, shown = 0;

	if (!set) {
		pr_warn("Error: out of memory (the policy set needs %zu bytes)\n", sizeof(*set));
		return FG_EXIT_FAILURE;
	}
	ret = open_for_bans(ifname, &pinned);
	if (ret)
		goto out;
	slot = pinned.rt.active_slot;
	if (bpf_map_lookup_elem(pinned.maps.policy_sets, &slot, set))
		memset(set, 0, sizeof(*set));
	now = monotonic_ns();
	if (json)
		printf("{\"interface\": \"%s\", \"bans\": [", ifname);
	else
		printf("%-44s %-14s %-8s %s\n", "BANNED", "REMAINING", "STRIKES", "BY");
	while (!bpf_map_get_next_key(pinned.bans, prev, &next)) {
		struct fg_ban ban;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(pinned.bans, &key, &ban))
			continue;
		print_ban(&key, &ban, set, now, json, shown == 0);
		shown++;
	}
	if (json)
		printf("%s]}\n", shown ? "\n  " : "");
	else if (!shown)
		printf("(no bans)\n");
out:
	fg_pinned_close(&pinned);
	free(set);
	return ret;
}
