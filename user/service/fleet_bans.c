// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fleet's bans (docs/fleet.md, "Fleet-wide limits through Redis" and "What the
 * fleet may ban"): this host's own bans are published to a sorted set on
 * the Redis server, and the fleet's bans are copied into `bans` (policy id
 * FG_FLEET_BAN_POLICY_ID), so that a ban made on one host holds on every
 * host within a sync.
 *
 * Each sync sends only what changed: the bans set or lifted here since the
 * last sync (in commands of PUSH_BATCH), and reads the fleet's changes
 * since the last sync from a change log (a stream). Every FULL_SYNC_NS,
 * after a reconnection and when the log lost entries, every published ban
 * is sent again and the whole set is read, a page a sync (ZSCAN): the
 * copies it no longer has are dropped when the pass ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/log.h"
#include "base/util.h"
#include "maps/batch.h"
#include "maps/lpmkey.h"
#include "policy/readback.h"
#include "service/fleet_internal.h"

static void member_of_key(const struct fg_src_lpm_key *key, char *buf, size_t size)
{
	struct fg_source_key k = fg_source_of_lpm_key(key, 0);

	fg_format_key(&k, buf, size);
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

static int push_ban(struct fleet_argv *a, const struct fg_src_lpm_key *key, long long left_us)
{
	char member[MEMBER_LEN], num[32];
	int err;

	member_of_key(key, member, sizeof(member));
	snprintf(num, sizeof(num), "%lld", left_us);
	err = push_str(a, member);
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

/* --- this host's bans, to Redis ------------------------------------------------- */

/* What walk_bans gathers: the pairs of member and time left to send. */
struct bans_walk {
	struct fg_fleet *f;
	__u64 now;
	struct fleet_argv pairs;
	__u64 fresh;
};

static long long left_us_of(__u64 expires_ns, __u64 now)
{
	return expires_ns == PERMANENT ? -1 : (long long)((expires_ns - now) / FG_NS_PER_US) + 1;
}

/* A fleet copy seen in `bans`; one left by an earlier `run` is adopted. */
static int walk_copy(struct bans_walk *w, const struct fg_src_lpm_key *key,
		     const struct fg_ban *ban)
{
	struct fleet_bans *b = &w->f->bans;
	struct fleet_entry *e = fg_fleet_table_find(&b->copies, key);

	if (!e) {
		e = fg_fleet_table_add(&b->copies, key);
		if (!e)
			return -ENOMEM;
		e->state = COPY_APPLIED;
		e->expires_ns = ban->expires_ns;
	}
	e->walked = b->walk;
	return 0;
}

static int walk_ban(const void *key, const void *value, void *ctx)
{
	const struct fg_ban *ban = value;
	struct bans_walk *w = ctx;
	struct fleet_bans *b = &w->f->bans;
	struct fleet_entry *e;

	/* CrowdSec's bans are shared by its Local API, not published. */
	if (ban->expires_ns <= w->now || FG_IS_CROWDSEC_BAN_ID(ban->policy_id))
		return 0;
	if (ban->policy_id == FG_FLEET_BAN_POLICY_ID)
		return walk_copy(w, key, ban);
	e = fg_fleet_table_find(&b->copies, key);
	if (e) /* this host's own ban took the copy's place */
		fg_fleet_table_remove(&b->copies, e);
	e = fg_fleet_table_find(&b->published, key);
	if (!e || e->expires_ns != ban->expires_ns || b->push_all) {
		if (!e) {
			e = fg_fleet_table_add(&b->published, key);
			if (!e)
				return -ENOMEM;
			w->fresh++;
		}
		e->expires_ns = ban->expires_ns;
		b->dirty = true;
		if (push_ban(&w->pairs, key, left_us_of(ban->expires_ns, w->now)))
			return -ENOMEM;
	}
	e->walked = b->walk;
	return 0;
}

/* After a walk: what this host published and no longer bans is lifted
 * from Redis; a copy of a fleet ban gone from `bans` was lifted here by
 * hand, and is not applied again before it ends. */
static int after_walk(struct bans_walk *w)
{
	struct fleet_bans *b = &w->f->bans;
	char member[MEMBER_LEN];
	struct fleet_entry *e;
	int err = 0;

	for (e = NULL; (e = fg_fleet_table_next(&b->published, e));) {
		if (e->walked == b->walk)
			continue;
		if (e->expires_ns > w->now && !err)
			err = push_ban(&w->pairs, &e->key, 0);
		fg_fleet_table_remove(&b->published, e);
		b->dirty = true;
	}
	for (e = NULL; (e = fg_fleet_table_next(&b->copies, e));) {
		if (e->expires_ns <= w->now) {
			b->dirty |= e->state == COPY_LIFTED_HERE;
			fg_fleet_table_remove(&b->copies, e);
		} else if (e->state == COPY_APPLIED && e->walked != b->walk) {
			e->state = COPY_LIFTED_HERE;
			b->dirty = true;
			member_of_key(&e->key, member, sizeof(member));
			pr_info("fleet: the fleet ban of %s was lifted here: not applied again "
				"before it ends\n",
				member);
		}
	}
	return err;
}

/* EVALSHA SHA 2 PREFIXbans PREFIXbans:log MODE, for `args`. */
static int script_head(struct fg_fleet *f, struct fleet_argv *args, const char *mode)
{
	char key[REDIS_KEY_LEN];
	const char *head[] = {"EVALSHA", f->bans_sha, "2", key, NULL, mode};
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(head) && !err; i++) {
		if (i == 3)
			snprintf(key, sizeof(key), "%sbans", f->conf.key_prefix);
		if (i == 4)
			snprintf(key, sizeof(key), "%sbans:log", f->conf.key_prefix);
		err = push_str(args, i == 4 ? key : head[i]);
	}
	return err;
}

static void append_argv(struct fg_fleet *f, struct fleet_argv *args)
{
	redisAppendCommandArgv(f->redis, (int)args->n, (const char **)args->v, NULL);
	fg_fleet_free_argv(args);
}

/* Sends the pairs in commands of PUSH_BATCH pairs at most. */
static void append_pushes(struct fg_fleet *f, const struct fleet_argv *pairs)
{
	struct fleet_argv cmd = {0};
	size_t i, end;

	for (i = 0; i < pairs->n; i = end) {
		end = i + 2 * PUSH_BATCH < pairs->n ? i + 2 * PUSH_BATCH : pairs->n;
		if (script_head(f, &cmd, "push")) {
			fg_fleet_free_argv(&cmd);
			f->bans.push_all = true; /* out of memory: all of them next time */
			return;
		}
		for (; i < end; i++)
			if (push_str(&cmd, pairs->v[i])) {
				fg_fleet_free_argv(&cmd);
				f->bans.push_all = true;
				return;
			}
		append_argv(f, &cmd);
		f->bans.pending++;
	}
}

/* Walks `bans` and sends what changed (everything with push_all). */
static void push_changes(struct fg_fleet *f, __u64 now)
{
	struct bans_walk w = {.f = f, .now = now};
	int err;

	f->bans.walk++;
	err = fg_map_for_each_entry(f->pinned.bans, sizeof(struct fg_src_lpm_key),
				    sizeof(struct fg_ban), walk_ban, &w);
	if (!err)
		err = after_walk(&w);
	if (err) {
		pr_warn("fleet: cannot read the bans to publish: %s\n", strerror(-err));
		f->bans.push_all = true;
	} else {
		f->bans.push_all = false;
		f->state.bans_published += w.fresh;
		append_pushes(f, &w.pairs);
	}
	fg_fleet_free_argv(&w.pairs);
}

/* --- the fleet's bans, from Redis ------------------------------------------------- */

/* A full pull starts: every copy it does not see is dropped at its end. */
static void start_scan(struct fleet_bans *b)
{
	snprintf(b->cursor, sizeof(b->cursor), "0");
	b->scan++;
	b->push_all = true;
}

static void append_pull(struct fg_fleet *f, const char *mode, const char *from, int count)
{
	struct fleet_argv cmd = {0};
	char num[16];

	snprintf(num, sizeof(num), "%d", count);
	if (script_head(f, &cmd, mode) || push_str(&cmd, from) || push_str(&cmd, num)) {
		fg_fleet_free_argv(&cmd);
		return;
	}
	append_argv(f, &cmd);
	if (!strcmp(mode, "pull"))
		f->bans.pull_pending = true;
	else
		f->bans.scan_pending = true;
}

void fg_fleet_bans_append(struct fg_fleet *f)
{
	struct fleet_bans *b = &f->bans;
	__u64 now = fg_monotonic_ns();

	b->pending = 0;
	b->pull_pending = b->scan_pending = false;
	b->warned_full = false;
	if (!b->started || f->state.outages != b->outages_seen || now >= b->next_full_ns) {
		b->started = true;
		b->outages_seen = f->state.outages;
		b->next_full_ns = now + FULL_SYNC_NS;
		start_scan(b);
	}
	push_changes(f, now);
	append_pull(f, "pull", b->log_id, PULL_BATCH);
	if (b->cursor[0])
		append_pull(f, "scan", b->cursor, SCAN_BATCH);
}

/* Is `s` a stream entry id or a cursor (digits, one '-' at most)? */
static bool plain_id(const redisReply *r, size_t size)
{
	size_t i;

	if (r->type != REDIS_REPLY_STRING || !r->len || r->len >= size)
		return false;
	for (i = 0; i < r->len; i++)
		if (!(r->str[i] >= '0' && r->str[i] <= '9') && r->str[i] != '-')
			return false;
	return true;
}

/* Applies the pairs of a pull or scan reply from element `first` on;
 * past MAX_REPLY_BANS pairs, the rest are refused. */
static void apply_pairs(struct fg_fleet *f, const redisReply *r, size_t first, bool scan)
{
	__u64 now = fg_monotonic_ns();
	size_t i, pairs = 0;

	for (i = first; i + 1 < r->elements; i += 2) {
		const redisReply *m = r->element[i], *l = r->element[i + 1];

		if (++pairs > MAX_REPLY_BANS) {
			fg_fleet_refuse(f, "(the rest of a reply)", "past the cap of a reply");
			f->state.bans_refused += (r->elements - i) / 2 - 1;
			return;
		}
		if (m->type != REDIS_REPLY_STRING || l->type != REDIS_REPLY_STRING)
			fg_fleet_refuse(f, "(not a string)", "malformed");
		else
			fg_fleet_apply_change(f, m->str, l->str, scan, now);
	}
}

static void read_pull(struct fg_fleet *f, const redisReply *r)
{
	struct fleet_bans *b = &f->bans;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    !plain_id(r->element[1], sizeof(b->log_id))) {
		pr_warn("fleet: the bans script failed: %s\n",
			r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		return;
	}
	if (!strcmp(r->element[0]->str, "1") && b->log_id[0]) {
		pr_warn("fleet: the fleet's change log lost entries: reading every ban again\n");
		start_scan(b);
	}
	apply_pairs(f, r, 2, false);
	memcpy(b->log_id, r->element[1]->str, r->element[1]->len + 1);
}

static void read_scan(struct fg_fleet *f, const redisReply *r)
{
	struct fleet_bans *b = &f->bans;

	if (r->type != REDIS_REPLY_ARRAY || !r->elements ||
	    !plain_id(r->element[0], sizeof(b->cursor))) {
		pr_warn("fleet: the bans script failed: %s\n",
			r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		return;
	}
	apply_pairs(f, r, 1, true);
	if (!b->cursor[0])
		return; /* restarted by the pull */
	memcpy(b->cursor, r->element[0]->str, r->element[0]->len + 1);
	if (!strcmp(b->cursor, "0")) {
		b->cursor[0] = '\0';
		fg_fleet_end_scan(f);
	}
}

static bool is_noscript(const redisReply *r)
{
	return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

int fg_fleet_bans_read(struct fg_fleet *f)
{
	struct fleet_bans *b = &f->bans;
	redisReply *r;
	int ret = 0;
	unsigned int i;

	for (i = 0; i < b->pending + b->pull_pending + b->scan_pending; i++) {
		if (redisGetReply(f->redis, (void **)&r) != REDIS_OK)
			return -1;
		if (is_noscript(r)) {
			ret = 1;
			b->push_all |= i < b->pending;
		} else if (i < b->pending) {
			if (r->type == REDIS_REPLY_ERROR) {
				pr_warn("fleet: the bans script failed: %s\n", r->str);
				b->push_all = true;
			}
		} else if (i == b->pending && b->pull_pending) {
			read_pull(f, r);
		} else {
			read_scan(f, r);
		}
		freeReplyObject(r);
	}
	b->pending = 0;
	b->pull_pending = b->scan_pending = false;
	if (b->dirty)
		fg_fleet_state_save(f);
	return ret;
}

/* --- between syncs ------------------------------------------------------------------ */

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
	const struct fleet_entry *e;

	if (++w->seen > BAN_POLL_MAX)
		return 1;
	if (ban->expires_ns <= w->now || ban->policy_id == FG_FLEET_BAN_POLICY_ID ||
	    FG_IS_CROWDSEC_BAN_ID(ban->policy_id))
		return 0;
	e = fg_fleet_table_find(&w->f->bans.published, key);
	w->found = !e || e->expires_ns != ban->expires_ns;
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

void fg_fleet_bans_init(struct fg_fleet *f)
{
	fg_fleet_state_load(f);
}

void fg_fleet_bans_free(struct fg_fleet *f)
{
	fg_fleet_table_free(&f->bans.published);
	fg_fleet_table_free(&f->bans.copies);
	fg_fleet_free_protected(f);
}
