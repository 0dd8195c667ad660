// SPDX-License-Identifier: GPL-2.0-only
/* `ban` and `unban`: the `bans` trie by hand. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "config/values.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/lpmkey.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "ops/bans.h"
#include "ops/banstore.h"

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
static int parse_target(const char *text, struct fg_cidr *cidr, struct fg_ban_prefix *shown,
			struct fg_err *err)
{
	struct fg_value_error fault;

	if (!fg_parse_cidr_len(text, strlen(text), cidr, &fault)) {
		__u8 family = cidr->family;

		/* A ban's address comes from a log: the IPv4 host a dual-stack
		 * server wrote as ::ffff:a.b.c.d. */
		fg_cidr_unmap_ipv4(cidr);
		if (family == cidr->family)
			snprintf(shown->text, sizeof(shown->text), "%s", text);
		else
			cidr_text(cidr, shown->text, sizeof(shown->text));
		return 0;
	}
	if (fault.fault == FG_HOST_BITS)
		return fg_fail(err, FG_ERR_USAGE,
			       "'%s' has host bits set (expected a network address such as %s/%u)",
			       text, fault.network, cidr->prefix_len);
	return fg_fail(err, FG_ERR_USAGE,
		       "bad address '%s' (expected ADDR or ADDR/LEN with the host bits clear, such "
		       "as 192.0.2.7, 10.0.0.0/24 or 2001:db8::/64)",
		       text);
}

/* Bans never apply to an [allow]ed source (the datapath checks the lists
 * first): say so rather than let a ban look effective. */
static void warn_if_allowed(const struct fg_pinned *pinned, const struct fg_cidr *cidr,
			    const char *target)
{
	struct fg_src_lpm_key key = fg_lpm_key((__u8)pinned->rt.active_slot, cidr->family,
					       cidr->prefix_len, cidr->addr);
	__u32 access;

	if (!bpf_map_lookup_elem(pinned->maps.access_lists, &key, &access) &&
	    access == FG_ACCESS_ALLOW)
		pr_warn("Warning: %s is in the [allow] list of the running policy; allowed "
			"sources bypass every ban, so this ban does not drop them (remove the "
			"[allow] entry and reload to ban them)\n",
			target);
}

/* Adds `delta` to a field of the one `ban_count` entry. The entry is on
 * a mapped page, so that this and the datapath's atomic adds do not lose
 * one another's. */
static void ban_count_add(const struct fg_pinned *pinned, size_t field, __s64 delta)
{
	long page = sysconf(_SC_PAGESIZE);
	char *count;

	if (pinned->ban_count < 0)
		return;
	count = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, pinned->ban_count, 0);
	if (count == MAP_FAILED) {
		pr_warn("Warning: cannot update the count of bans: %s\n", strerror(errno));
		return;
	}
	__atomic_fetch_add((__s64 *)(count + field), delta, __ATOMIC_RELAXED);
	munmap(count, page);
}

/* A policy's ban leaves `bans` (lifted, or replaced by a ban from
 * outside): it leaves the policies' share too. */
static void policy_ban_gone(const struct fg_pinned *pinned, const struct fg_ban *was)
{
	if (fg_ban_by_policy(was->policy_id))
		ban_count_add(pinned, offsetof(struct fg_ban_count, policy_bans), -1);
}

/* The ban at exactly `cidr`, or a zeroed record: a lookup in the trie
 * answers with the longest prefix that holds it, maybe a shorter one. */
static struct fg_ban ban_at(const struct fg_pinned *pinned, const struct fg_cidr *cidr)
{
	const struct fg_src_lpm_key key = fg_ban_key_of_cidr(cidr);
	struct fg_ban ban = {0};

	if (bpf_map_lookup_elem(pinned->bans, &key, &ban) || ban.family != cidr->family ||
	    ban.prefix_len != cidr->prefix_len)
		memset(&ban, 0, sizeof(ban));
	return ban;
}

/* Writes the ban between two marks of bans_may_exist: before, so that the
 * datapath looks the ban up, and after, in case a reload rewrote the
 * runtime record from a read before the first (fg_runtime_mark_bans).
 * 0 or -errno. */
static int put_marked(const struct fg_pinned *pinned, const struct fg_src_lpm_key *key,
		      const struct fg_ban *ban)
{
	int err = fg_runtime_mark_bans(pinned->maps.runtime);

	if (err)
		return err;
	if (bpf_map_update_elem(pinned->bans, key, ban, BPF_ANY))
		return -errno;
	return fg_runtime_mark_bans(pinned->maps.runtime);
}

int fg_bans_put(const struct fg_pinned *pinned, const struct fg_cidr *cidr,
		const struct fg_ban *ban)
{
	const struct fg_src_lpm_key key = fg_ban_key_of_cidr(cidr);
	const struct fg_ban was = ban_at(pinned, cidr);
	int err = put_marked(pinned, &key, ban);

	if (!err) {
		policy_ban_gone(pinned, &was);
		return 0;
	}
	if (err != -ENOSPC && err != -E2BIG)
		return err;
	ban_count_add(pinned, offsetof(struct fg_ban_count, outside_refused), 1);
	return FG_BANS_FULL;
}

__u32 fg_bans_capacity(const struct fg_pinned *pinned)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(pinned->bans, &info, &len) ? 0 : info.max_entries;
}

static int add_ban(const struct fg_pinned *pinned, const struct fg_cidr *cidr,
		   const struct fg_ban *ban, struct fg_err *err)
{
	__u32 max_bans = fg_bans_capacity(pinned);
	int ret = fg_bans_put(pinned, cidr, ban);

	if (ret == FG_BANS_FULL)
		return fg_fail(err, FG_ERR_STATE,
			       "cannot add the ban: the bans table is full (max_bans = %u, %u of "
			       "them kept for bans by hand, the fleet and CrowdSec); list them "
			       "with 'floodgate bans', lift some with 'floodgate unban', or raise "
			       "max_bans and reload",
			       max_bans, fg_bans_reserved(max_bans));
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot add the ban to the bans map: %s",
			       strerror(-ret));
	return 0;
}

/* The ban a command line asks for: its prefix, and how long it lasts. */
static int parse_ban(const char *target, const char *duration, bool force, struct fg_cidr *cidr,
		     struct fg_ban *ban, struct fg_ban_prefix *shown, struct fg_err *err)
{
	__u64 ns = 0;

	if (parse_target(target, cidr, shown, err))
		return -1;
	if (duration && fg_parse_duration(duration, &ns))
		return fg_fail(err, FG_ERR_USAGE,
			       "bad duration '%s' (expected 1ms..30d such as 90s, 10m, 24h)",
			       duration);
	if (cidr->prefix_len == 0 && !force)
		return fg_fail(err, FG_ERR_USAGE,
			       "%s bans every %s source (pass --force to ban them all)",
			       shown->text, cidr->family == FG_FAMILY_IPV4 ? "IPv4" : "IPv6");
	*ban = (struct fg_ban){.strikes = 1,
			       .family = cidr->family,
			       .prefix_len = cidr->prefix_len,
			       .duration_ns = ns,
			       .expires_ns = duration ? fg_monotonic_ns() + ns : ~0ULL};
	return 0;
}

int fg_ban(const char *ifname, const char *target, const char *duration, bool force,
	   struct fg_ban_prefix *shown, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_cidr cidr;
	struct fg_ban ban;
	int ret;

	if (parse_ban(target, duration, force, &cidr, &ban, shown, err) ||
	    fg_open_loaded(ifname, &pinned, err))
		return -1;
	warn_if_allowed(&pinned, &cidr, shown->text);
	/* The state file first: a bad one refuses the ban, the map unchanged. */
	ret = fg_banstore_record(ifname, &cidr, &ban, err);
	if (!ret && add_ban(&pinned, &cidr, &ban, err)) {
		struct fg_err ignored = {0};

		fg_banstore_forget(ifname, &cidr, &ignored);
		ret = -1;
	}
	fg_pinned_close(&pinned);
	return ret;
}

int fg_unban(const char *ifname, const char *target, struct fg_ban_prefix *shown,
	     struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_src_lpm_key key;
	struct fg_ban was;
	struct fg_cidr cidr;
	int ret = 0;

	if (parse_target(target, &cidr, shown, err) || fg_open_loaded(ifname, &pinned, err))
		return -1;
	key = fg_ban_key_of_cidr(&cidr);
	was = ban_at(&pinned, &cidr);
	if (fg_banstore_forget(ifname, &cidr, err))
		ret = -1;
	else if (bpf_map_delete_elem(pinned.bans, &key))
		ret = errno == ENOENT ? fg_fail(err, FG_ERR_STATE, "%s is not banned on %s",
						shown->text, ifname)
				      : fg_fail(err, FG_ERR_SYSTEM, "cannot remove the ban: %s",
						strerror(errno));
	else
		policy_ban_gone(&pinned, &was);
	fg_pinned_close(&pinned);
	return ret;
}

struct ban_tally {
	int fd;
	__u64 now;
	__s64 by_policy;
	struct fg_src_lpm_key *ended; /* deleted after the walk, which they would restart */
	size_t n_ended, cap;
};

static int tally_ban(const void *key, void *ctx)
{
	struct ban_tally *t = ctx;
	struct fg_ban ban;

	if (bpf_map_lookup_elem(t->fd, key, &ban))
		return 0;
	if (ban.expires_ns > t->now) {
		t->by_policy += fg_ban_by_policy(ban.policy_id);
		return 0;
	}
	if (t->n_ended == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct fg_src_lpm_key *grown = realloc(t->ended, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->ended = grown;
		t->cap = cap;
	}
	memcpy(&t->ended[t->n_ended++], key, sizeof(*t->ended));
	return 0;
}

int fg_bans_recount(int bans_fd, int count_fd)
{
	struct ban_tally t = {.fd = bans_fd, .now = fg_monotonic_ns()};
	struct fg_ban_count count = {0};
	__u32 zero = 0;
	int err = fg_map_for_each_key(bans_fd, sizeof(struct fg_src_lpm_key), tally_ban, &t);

	while (t.n_ended)
		bpf_map_delete_elem(bans_fd, &t.ended[--t.n_ended]);
	free(t.ended);
	if (err)
		return err;
	bpf_map_lookup_elem(count_fd, &zero, &count); /* keeps outside_refused */
	count.policy_bans = t.by_policy;
	return bpf_map_update_elem(count_fd, &zero, &count, BPF_ANY) ? -errno : 0;
}
