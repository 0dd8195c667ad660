// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fleet's bans from Redis, into `bans` (docs/fleet.md, "What the fleet may
 * ban"). Each one is checked first (fleet_checks.c); a refused one is
 * remembered, so that it is counted and logged once; a copy lifted here
 * by hand is not applied again before it ends.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/log.h"
#include "maps/lpmkey.h"
#include "ops/bans.h"
#include "service/fleet_internal.h"

/* A key of its own for a member that is no prefix: a hash of its text,
 * in a slot no prefix uses. */
static struct fg_src_lpm_key key_of_text(const char *text)
{
	struct fg_src_lpm_key key = {.slot = 0xff};
	__u64 hash[2] = {14695981039346656037ULL, 1099511628211ULL};
	size_t i;

	for (i = 0; text[i]; i++) {
		hash[0] = (hash[0] ^ (unsigned char)text[i]) * 1099511628211ULL;
		hash[1] = (hash[1] ^ (unsigned char)text[i]) * 14695981039346656037ULL;
	}
	memcpy(key.addr, hash, sizeof(key.addr));
	return key;
}

/* Deletes a copy of a fleet ban from `bans`, if `bans` still holds it. */
static void delete_copy(struct fg_fleet *f, const struct fg_src_lpm_key *key)
{
	struct fg_ban old;

	if (!bpf_map_lookup_elem(f->pinned.bans, key, &old) &&
	    old.policy_id == FG_FLEET_BAN_POLICY_ID &&
	    old.prefix_len == key->prefixlen - FG_SRC_LPM_HEADER_BITS)
		bpf_map_delete_elem(f->pinned.bans, key);
}

/* The fleet lifted a ban (or a full pull did not see it). */
static void forget(struct fg_fleet *f, struct fleet_entry *e)
{
	if (!e)
		return;
	if (e->state == COPY_APPLIED)
		delete_copy(f, &e->key);
	f->bans.dirty |= e->state == COPY_LIFTED_HERE;
	fg_fleet_table_remove(&f->bans.copies, e);
}

static void refuse(struct fg_fleet *f, const struct fg_src_lpm_key *key, const char *member,
		   const char *why, __u64 expires_ns)
{
	struct fleet_entry *e = fg_fleet_table_add(&f->bans.copies, key);

	if (e && e->state == COPY_APPLIED)
		delete_copy(f, key); /* allowed, or the bounds changed, since */
	if (!e || e->state != COPY_REFUSED)
		fg_fleet_refuse(f, member, why);
	if (!e)
		return;
	e->state = COPY_REFUSED;
	e->expires_ns = expires_ns;
	e->scanned = f->bans.scan;
}

/* Is the copy in `bans` the same ban, give or take the clocks? A ban cut
 * to max_ban is renewed only when half of it has passed. */
static bool same_copy(const struct fg_fleet *f, __u64 old, __u64 now_ends, bool cut, __u64 now)
{
	__u64 slack = 2 * f->conf.sync_ns;

	if (cut)
		return old > now + f->conf.max_ban_ns / 2 && old != PERMANENT;
	return old + slack > now_ends && now_ends + slack > old;
}

static void apply_copy(struct fg_fleet *f, const struct fg_src_lpm_key *key,
		       const struct fg_cidr *cidr, __u64 left_ns, bool cut, __u64 now)
{
	struct fg_ban old, ban = {.strikes = 1,
				  .policy_id = FG_FLEET_BAN_POLICY_ID,
				  .family = cidr->family,
				  .prefix_len = cidr->prefix_len,
				  .duration_ns = left_ns,
				  .expires_ns = now + left_ns};
	bool have =
		!bpf_map_lookup_elem(f->pinned.bans, key, &old) && old.prefix_len == ban.prefix_len;
	struct fleet_entry *e = fg_fleet_table_find(&f->bans.copies, key);
	int err;

	if (have && old.expires_ns > now && old.policy_id != FG_FLEET_BAN_POLICY_ID) {
		if (e) /* this host's own ban, published by it */
			fg_fleet_table_remove(&f->bans.copies, e);
		return;
	}
	if (have && old.expires_ns > now && same_copy(f, old.expires_ns, ban.expires_ns, cut, now))
		ban.expires_ns = old.expires_ns;
	else if ((err = fg_bans_put(&f->pinned, cidr, &ban))) {
		if (!f->bans.warned_full)
			pr_warn("fleet: cannot apply a fleet ban: %s\n",
				err == FG_BANS_FULL ? "the bans table is full (max_bans)"
						    : strerror(-err));
		f->bans.warned_full = true; /* once a sync */
		return;
	} else {
		f->state.bans_applied += !have || old.expires_ns <= now;
	}
	e = fg_fleet_table_add(&f->bans.copies, key);
	if (!e)
		return;
	e->state = COPY_APPLIED;
	e->expires_ns = ban.expires_ns;
	e->scanned = f->bans.scan;
}

void fg_fleet_apply_change(struct fg_fleet *f, const char *member, const char *left, bool scan,
			   __u64 now)
{
	struct fg_src_lpm_key key;
	struct fleet_entry *e;
	struct fg_cidr cidr;
	const char *why;
	long long left_us;
	__u64 left_ns;
	char *end;

	errno = 0;
	left_us = strtoll(left, &end, 10);
	if (errno == ERANGE && left_us == LLONG_MAX)
		errno = 0; /* longer than max_ban anyway */
	if (fg_parse_cidr(member, &cidr) || end == left || *end || errno) {
		key = key_of_text(member);
		refuse(f, &key, member, "not ADDR/LEN and a time left", now + FULL_SYNC_NS);
		return;
	}
	key = fg_ban_key_of_cidr(&cidr);
	e = fg_fleet_table_find(&f->bans.copies, &key);
	if (left_us == 0) {
		if (!scan) /* lifted (a full pull skips the ended ones) */
			forget(f, e);
		return;
	}
	left_ns = fg_fleet_ban_left_ns(f, left_us);
	if (e && e->state == COPY_LIFTED_HERE) {
		e->scanned = f->bans.scan;
		return;
	}
	why = fg_fleet_ban_refusal(f, &cidr);
	if (why)
		refuse(f, &key, member, why, now + left_ns);
	else
		apply_copy(f, &key, &cidr, left_ns, left_ns == f->conf.max_ban_ns, now);
}

void fg_fleet_end_scan(struct fg_fleet *f)
{
	struct fleet_entry *e;

	for (e = NULL; (e = fg_fleet_table_next(&f->bans.copies, e));)
		if (e->scanned != f->bans.scan && e->state != COPY_LIFTED_HERE)
			forget(f, e);
}
