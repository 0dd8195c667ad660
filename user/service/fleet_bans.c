// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fleet's bans (README, "Fleet-wide limits through Redis"): this host's
 * own bans are published to a sorted set on the Redis server, and the
 * fleet's bans are copied into `bans` (policy id FG_FLEET_BAN_POLICY_ID),
 * so that a ban made on one host holds on every host within a sync.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "maps/batch.h"
#include "maps/lpmkey.h"
#include "config/values.h"
#include "policy/readback.h"
#include "service/fleet_internal.h"

static void ban_member(const struct fg_ban *ban, const struct fg_src_lpm_key *key, char *buf,
		       size_t size)
{
	struct fg_source_key k = {.family = ban->family, .prefix_len = ban->prefix_len};

	memcpy(k.addr, key->addr, sizeof(k.addr));
	fg_format_key(&k, buf, size);
}

static bool is_published(const struct published_ban *list, size_t n, const char *member)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i].member, member))
			return true;
	return false;
}

static int push_str(struct fleet_argv *a, const char *s)
{
	if (a->n == a->cap) {
		size_t bigger = a->cap ? a->cap * 2 : 64;
		char **grown = realloc(a->v, bigger * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		a->v = grown;
		a->cap = bigger;
	}
	a->v[a->n] = strdup(s);
	return a->v[a->n++] ? 0 : -ENOMEM;
}

static int push_ban(struct fleet_argv *a, const char *member, long long left_us)
{
	char num[32];
	int err = push_str(a, member);

	snprintf(num, sizeof(num), "%lld", left_us);
	return err ? err : push_str(a, num);
}

void fg_fleet_free_argv(struct fleet_argv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* What local_bans_args gathers while it walks `bans`. */
struct local_walk {
	struct fg_fleet *f;
	struct fleet_argv *args;
	__u64 now;
	struct published_ban *published; /* this host's bans in force */
	size_t n, fresh;
};

static int add_local_ban(const void *key, const void *value, void *ctx)
{
	const struct fg_ban *ban = value;
	struct local_walk *w = ctx;
	struct published_ban *grown, *mine;

	if (ban->expires_ns <= w->now || ban->policy_id == FG_FLEET_BAN_POLICY_ID)
		return 0;
	grown = realloc(w->published, (w->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	w->published = grown;
	mine = &grown[w->n++];
	ban_member(ban, key, mine->member, sizeof(mine->member));
	mine->expires_ns = ban->expires_ns;
	w->fresh += !is_published(w->f->published, w->f->n_published, mine->member);
	return push_ban(w->args, mine->member,
			ban->expires_ns == PERMANENT
				? -1
				: (long long)((ban->expires_ns - w->now) / FG_NS_PER_US) + 1);
}

/* The script's argv (after EVALSHA SHA 1 KEY): this host's bans in force
 * that it made itself (not copies of the fleet's), and those it published
 * before and has lifted since (time left 0). Updates f->published. */
static int local_bans_args(struct fg_fleet *f, struct fleet_argv *args)
{
	struct local_walk w = {.f = f, .args = args, .now = fg_monotonic_ns()};
	size_t i;
	int err = fg_map_for_each_entry(f->pinned.bans, sizeof(struct fg_src_lpm_key),
					sizeof(struct fg_ban), add_local_ban, &w);

	for (i = 0; !err && i < f->n_published; i++)
		if (f->published[i].expires_ns > w.now &&
		    !is_published(w.published, w.n, f->published[i].member))
			err = push_ban(args, f->published[i].member, 0);
	if (err) {
		free(w.published);
		return err;
	}
	f->state.bans_published += w.fresh;
	free(f->published);
	f->published = w.published;
	f->n_published = w.n;
	return 0;
}

/* Copies one fleet ban into `bans`, unless this host has its own, or the
 * same copy already. */
static void apply_ban(struct fg_fleet *f, const char *member, long long left_us, __u64 now)
{
	struct fg_ban old, ban = {.strikes = 1, .policy_id = FG_FLEET_BAN_POLICY_ID};
	struct fg_src_lpm_key key;
	struct fg_cidr cidr;
	bool have;

	if (fg_parse_cidr(member, &cidr))
		return;
	key = fg_ban_key_of_cidr(&cidr);
	ban.family = cidr.family;
	ban.prefix_len = cidr.prefix_len;
	ban.expires_ns = left_us < 0 ? PERMANENT : now + (__u64)left_us * FG_NS_PER_US;
	ban.duration_ns = left_us < 0 ? 0 : (__u64)left_us * FG_NS_PER_US;
	have = !bpf_map_lookup_elem(f->pinned.bans, &key, &old) && old.prefix_len == ban.prefix_len;
	if (have && old.expires_ns > now) {
		if (old.policy_id != FG_FLEET_BAN_POLICY_ID)
			return; /* this host's own ban, published by it */
		if (old.expires_ns + f->conf.sync_ns > ban.expires_ns &&
		    ban.expires_ns + f->conf.sync_ns > old.expires_ns)
			return; /* the same copy, give or take the clocks */
	}
	if (have)
		ban.strikes = old.strikes + (old.expires_ns <= now);
	if (bpf_map_update_elem(f->pinned.bans, &key, &ban, BPF_ANY))
		pr_warn("fleet: cannot apply the fleet ban of %s: %s\n", member, strerror(errno));
	else if (!have || old.expires_ns <= now)
		f->state.bans_applied++;
}

/* The copies of fleet bans that the fleet's list no longer has. */
struct lifted_walk {
	const redisReply *list;
	__u64 now;
	struct fg_src_lpm_key doomed[64];
	size_t n;
};

static int find_lifted(const void *key, const void *value, void *ctx)
{
	const struct fg_ban *ban = value;
	struct lifted_walk *w = ctx;
	char member[MEMBER_LEN];
	bool listed = false;
	size_t i;

	if (ban->policy_id != FG_FLEET_BAN_POLICY_ID || ban->expires_ns <= w->now)
		return 0;
	ban_member(ban, key, member, sizeof(member));
	for (i = 0; i + 1 < w->list->elements && !listed; i += 2)
		listed = !strcmp(w->list->element[i]->str, member);
	if (!listed)
		w->doomed[w->n++] = *(const struct fg_src_lpm_key *)key;
	return w->n == ARRAY_SIZE(w->doomed); /* the rest go at the next sync */
}

/* Deletes the copies of fleet bans the fleet no longer has (deleting after
 * the walk: a walk that deletes as it goes restarts from the first key). */
static void drop_lifted_copies(struct fg_fleet *f, const redisReply *list, __u64 now)
{
	struct lifted_walk w = {.list = list, .now = now};
	size_t i;

	fg_map_for_each_entry(f->pinned.bans, sizeof(struct fg_src_lpm_key), sizeof(struct fg_ban),
			      find_lifted, &w);
	for (i = 0; i < w.n; i++)
		bpf_map_delete_elem(f->pinned.bans, &w.doomed[i]);
}

/* EVALSHA SHA 1 PREFIXbans, then the local bans (local_bans_args). */
int fg_fleet_bans_command(struct fg_fleet *f, struct fleet_argv *args)
{
	char key[REDIS_KEY_LEN];
	int err;

	snprintf(key, sizeof(key), "%sbans", f->conf.key_prefix);
	err = push_str(args, "EVALSHA");
	if (!err)
		err = push_str(args, f->bans_sha);
	if (!err)
		err = push_str(args, "1");
	if (!err)
		err = push_str(args, key);
	if (!err)
		err = local_bans_args(f, args);
	if (err)
		fg_fleet_free_argv(args);
	return err;
}

/* Applies the bans script's answer: the fleet's bans in force. */
void fg_fleet_apply_bans(struct fg_fleet *f, const redisReply *reply)
{
	__u64 now = fg_monotonic_ns();
	size_t i;

	if (reply->type != REDIS_REPLY_ARRAY) {
		pr_warn("fleet: the bans script failed: %s\n",
			reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
		return;
	}
	for (i = 0; i + 1 < reply->elements; i += 2) {
		if (reply->element[i]->type != REDIS_REPLY_STRING ||
		    reply->element[i + 1]->type != REDIS_REPLY_STRING)
			return;
		apply_ban(f, reply->element[i]->str, atoll(reply->element[i + 1]->str), now);
	}
	drop_lifted_copies(f, reply, now);
}

struct unpublished_walk {
	const struct fg_fleet *f;
	__u64 now;
	int seen;
	bool found;
};

static int find_unpublished(const void *key, const void *value, void *ctx)
{
	const struct fg_ban *ban = value;
	struct unpublished_walk *w = ctx;
	char member[MEMBER_LEN];

	if (++w->seen > BAN_POLL_MAX)
		return 1;
	if (ban->expires_ns <= w->now || ban->policy_id == FG_FLEET_BAN_POLICY_ID)
		return 0;
	ban_member(ban, key, member, sizeof(member));
	w->found = !is_published(w->f->published, w->f->n_published, member);
	return w->found;
}

/* Has this host a ban in force that it has not published yet? Looks at
 * BAN_POLL_MAX entries at most: a larger table waits for the next sync. */
bool fg_fleet_unpublished_ban(struct fg_fleet *f)
{
	struct unpublished_walk w = {.f = f, .now = fg_monotonic_ns()};

	fg_map_for_each_entry(f->pinned.bans, sizeof(struct fg_src_lpm_key), sizeof(struct fg_ban),
			      find_unpublished, &w);
	return w.found;
}
