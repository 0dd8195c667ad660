// SPDX-License-Identifier: GPL-2.0-only
/*
 * What Redis says is checked before it is obeyed (README, "What the fleet
 * may ban"): a fleet ban must be at least min_ban_prefix (min_ban_prefix6)
 * long, lasts max_ban at most, and may not cover an [allow] prefix or one
 * of the host's own addresses; a hold lasts MAX_HOLD_NS at most. What is
 * refused is counted in fleet_state and logged, a few lines at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/log.h"
#include "maps/batch.h"
#include "service/fleet_internal.h"

#define PROTECTED_TTL_NS (1ULL * FG_NS_PER_S) /* how long a read of the lists is used */
#define LOG_WINDOW_NS	 (10ULL * FG_NS_PER_S)
#define LOG_PER_WINDOW	 16

static int cmp_prefix(const void *a, const void *b)
{
	const struct fleet_prefix *x = a, *y = b;
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

static int add_protected(struct fg_fleet *f, __u8 family, __u8 len, const __u8 *addr, bool own)
{
	struct fleet_bans *b = &f->bans;
	struct fleet_prefix *grown = realloc(b->protected, (b->n_protected + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	b->protected = grown;
	grown[b->n_protected] = (struct fleet_prefix){.family = family, .len = len, .own = own};
	memcpy(grown[b->n_protected].addr, addr, 16);
	b->n_protected++;
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
	struct fg_fleet *f = ctx;

	if (*(const __u32 *)value != FG_ACCESS_ALLOW || lpm->slot != f->pinned.rt.active_slot)
		return 0;
	return add_protected(f, lpm->family, (__u8)(lpm->prefixlen - FG_SRC_LPM_HEADER_BITS),
			     lpm->addr, false);
}

/* Reads the [allow] prefixes of the policy in force and the own
 * addresses, at most once a PROTECTED_TTL_NS. */
static void read_protected(struct fg_fleet *f)
{
	struct fleet_bans *b = &f->bans;
	__u64 now = fg_monotonic_ns();
	int err;

	if (b->protected_ns && now - b->protected_ns < PROTECTED_TTL_NS)
		return;
	b->protected_ns = now;
	b->n_protected = 0;
	err = fg_map_for_each_entry(f->pinned.own_addrs, sizeof(struct fg_own_addr_key),
				    sizeof(__u8), add_own, f);
	if (!err)
		err = fg_map_for_each_entry(f->pinned.maps.access_lists,
					    sizeof(struct fg_src_lpm_key), sizeof(__u32),
					    add_allowed, f);
	if (err)
		pr_warn("fleet: cannot read the [allow] list and own addresses: %s\n",
			strerror(-err));
	qsort(b->protected, b->n_protected, sizeof(*b->protected), cmp_prefix);
}

/* The protected prefix that `cidr` covers or lies in, or NULL: its
 * shorter prefixes are looked up one by one, and the first protected
 * prefix at or after its address is the only one it can contain. */
static const struct fleet_prefix *overlap(const struct fleet_bans *b, const struct fg_cidr *cidr)
{
	struct fleet_prefix want = {.family = cidr->family};
	const struct fleet_prefix *hit;
	size_t lo = 0, hi = b->n_protected, mid;
	unsigned int len;

	for (len = 0; len <= cidr->prefix_len; len++) {
		memset(want.addr, 0, sizeof(want.addr));
		memcpy(want.addr, cidr->addr, (len + 7) / 8);
		if (len % 8)
			want.addr[len / 8] &= (__u8)(0xff00 >> (len % 8));
		want.len = (__u8)len;
		hit = bsearch(&want, b->protected, b->n_protected, sizeof(want), cmp_prefix);
		if (hit)
			return hit;
	}
	memcpy(want.addr, cidr->addr, sizeof(want.addr));
	want.len = 0;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cmp_prefix(&b->protected[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	hit = lo < b->n_protected ? &b->protected[lo] : NULL;
	if (hit && hit->family == cidr->family &&
	    same_bits(hit->addr, cidr->addr, cidr->prefix_len))
		return hit;
	return NULL;
}

const char *fg_fleet_ban_refusal(struct fg_fleet *f, const struct fg_cidr *cidr)
{
	const struct fleet_prefix *hit;

	if (cidr->family == FG_FAMILY_IPV4 && cidr->prefix_len < f->conf.min_ban_prefix)
		return "shorter than min_ban_prefix";
	if (cidr->family == FG_FAMILY_IPV6 && cidr->prefix_len < f->conf.min_ban_prefix6)
		return "shorter than min_ban_prefix6";
	read_protected(f);
	hit = overlap(&f->bans, cidr);
	if (hit)
		return hit->own ? "it covers one of this host's own addresses"
				: "it covers an [allow] prefix";
	return NULL;
}

__u64 fg_fleet_ban_left_ns(const struct fg_fleet *f, long long left_us)
{
	if (left_us < 0 || (__u64)left_us > f->conf.max_ban_ns / FG_NS_PER_US)
		return f->conf.max_ban_ns;
	return (__u64)left_us * FG_NS_PER_US;
}

__u64 fg_fleet_hold_ns(struct fg_fleet *f, long long hold_us)
{
	if (hold_us <= 0)
		return 0;
	if ((__u64)hold_us > MAX_HOLD_NS / FG_NS_PER_US) {
		f->state.holds_capped++;
		return MAX_HOLD_NS;
	}
	return (__u64)hold_us * FG_NS_PER_US;
}

void fg_fleet_refuse(struct fg_fleet *f, const char *member, const char *why)
{
	struct fleet_bans *b = &f->bans;
	__u64 now = fg_monotonic_ns();

	f->state.bans_refused++;
	if (now - b->log_window_ns >= LOG_WINDOW_NS) {
		if (b->unlogged)
			pr_warn("fleet: %u more bans from Redis refused (not logged)\n",
				b->unlogged);
		b->log_window_ns = now;
		b->logged = b->unlogged = 0;
	}
	if (b->logged++ < LOG_PER_WINDOW)
		pr_warn("fleet: refused a ban from Redis: %.60s (%s)\n", member, why);
	else
		b->unlogged++;
}

void fg_fleet_free_protected(struct fg_fleet *f)
{
	free(f->bans.protected);
	f->bans.protected = NULL;
	f->bans.n_protected = 0;
}
