// SPDX-License-Identifier: GPL-2.0-only
/*
 * The check on bans from outside (ops/banguard.h): the protected prefixes
 * (the [allow] list in force and the own addresses), sorted, are searched
 * for one the ban covers or lies in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "ops/banguard.h"

#define PROTECTED_TTL_NS (1ULL * FG_NS_PER_S) /* how long a read of the lists is used */

static int cmp_prefix(const void *a, const void *b)
{
	const struct fg_guarded_prefix *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, sizeof(x->addr));

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Do the first `bits` bits of a and b agree? */
static bool same_bits(const __u8 *a, const __u8 *b, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	return !rest || !((a[whole] ^ b[whole]) & (0xff00 >> rest));
}

struct guard_read {
	struct fg_ban_guard *guard;
	size_t cap;
	__u8 active_slot;
};

static int add_protected(struct guard_read *r, __u8 family, __u8 len, const __u8 *addr, bool own)
{
	struct fg_ban_guard *g = r->guard;

	if (g->n_prefixes == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct fg_guarded_prefix *grown = realloc(g->prefixes, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		g->prefixes = grown;
		r->cap = cap;
	}
	g->prefixes[g->n_prefixes] =
		(struct fg_guarded_prefix){.family = family, .len = len, .own = own};
	memcpy(g->prefixes[g->n_prefixes].addr, addr, 16);
	g->n_prefixes++;
	return 0;
}

static int add_own(const void *key, const void *value, void *ctx)
{
	const struct fg_own_addr_key *own = key;

	(void)value;
	return add_protected(ctx, (__u8)own->family, own->family == FG_FAMILY_IPV4 ? 32 : 128,
			     own->addr, true);
}

static int add_allowed(const void *key, const void *value, void *ctx)
{
	const struct fg_src_lpm_key *lpm = key;
	struct guard_read *r = ctx;

	if (*(const __u32 *)value != FG_ACCESS_ALLOW || lpm->slot != r->active_slot)
		return 0;
	return add_protected(r, lpm->family, (__u8)(lpm->prefixlen - FG_SRC_LPM_HEADER_BITS),
			     lpm->addr, false);
}

/* Does the policy in force have [allow] prefixes? With none (the usual
 * case) the walk of `access_lists`, which may hold a million [deny] feed
 * prefixes, is skipped: it would cost two system calls a prefix once a
 * PROTECTED_TTL_NS. */
static bool has_allow_list(const struct fg_pinned *pinned)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	bool has = !set || fg_read_active_set(pinned, set) || set->allow_prefixes;

	free(set);
	return has;
}

/* Reads the [allow] prefixes of the policy in force and the own
 * addresses, at most once a PROTECTED_TTL_NS. */
static void read_protected(struct fg_ban_guard *g, const struct fg_pinned *pinned)
{
	struct guard_read r = {
		.guard = g, .cap = g->n_prefixes, .active_slot = pinned->rt.active_slot};
	__u64 now = fg_monotonic_ns();
	int err;

	if (g->read_ns && now - g->read_ns < PROTECTED_TTL_NS)
		return;
	g->read_ns = now;
	free(g->prefixes);
	g->prefixes = NULL;
	g->n_prefixes = r.cap = 0;
	err = fg_map_for_each_entry(pinned->own_addrs, sizeof(struct fg_own_addr_key), sizeof(__u8),
				    add_own, &r);
	if (!err && has_allow_list(pinned))
		err = fg_map_for_each_entry(pinned->maps.access_lists,
					    sizeof(struct fg_src_lpm_key), sizeof(__u32),
					    add_allowed, &r);
	if (err)
		pr_warn("%s: cannot read the [allow] list and own addresses: %s\n", g->who,
			strerror(-err));
	qsort(g->prefixes, g->n_prefixes, sizeof(*g->prefixes), cmp_prefix);
}

/* The protected prefix that `cidr` covers or lies in, or NULL: its
 * shorter prefixes are looked up one by one, and the first protected
 * prefix at or after its address is the only one it can contain. */
static const struct fg_guarded_prefix *overlap(const struct fg_ban_guard *b,
					       const struct fg_cidr *cidr)
{
	struct fg_guarded_prefix want = {.family = cidr->family};
	const struct fg_guarded_prefix *hit;
	size_t lo = 0, hi = b->n_prefixes, mid;
	unsigned int len;

	for (len = 0; len <= cidr->prefix_len; len++) {
		memset(want.addr, 0, sizeof(want.addr));
		memcpy(want.addr, cidr->addr, (len + 7) / 8);
		if (len % 8)
			want.addr[len / 8] &= (__u8)(0xff00 >> (len % 8));
		want.len = (__u8)len;
		hit = bsearch(&want, b->prefixes, b->n_prefixes, sizeof(want), cmp_prefix);
		if (hit)
			return hit;
	}
	memcpy(want.addr, cidr->addr, sizeof(want.addr));
	want.len = 0;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cmp_prefix(&b->prefixes[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	hit = lo < b->n_prefixes ? &b->prefixes[lo] : NULL;
	if (hit && hit->family == cidr->family &&
	    same_bits(hit->addr, cidr->addr, cidr->prefix_len))
		return hit;
	return NULL;
}

const char *fg_ban_guard_refusal(struct fg_ban_guard *guard, const struct fg_pinned *pinned,
				 const struct fg_cidr *cidr)
{
	const struct fg_guarded_prefix *hit;

	if (cidr->family == FG_FAMILY_IPV4 && cidr->prefix_len < guard->min_prefix4)
		return "shorter than min_ban_prefix";
	if (cidr->family == FG_FAMILY_IPV6 && cidr->prefix_len < guard->min_prefix6)
		return "shorter than min_ban_prefix6";
	read_protected(guard, pinned);
	hit = overlap(guard, cidr);
	if (hit)
		return hit->own ? "it covers one of this host's own addresses"
				: "it covers an [allow] prefix";
	return NULL;
}

void fg_ban_guard_free(struct fg_ban_guard *guard)
{
	free(guard->prefixes);
	guard->prefixes = NULL;
	guard->n_prefixes = 0;
	guard->read_ns = 0;
}
