// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate top`: the heaviest sources. The per-source tables are read
 * with bpf_map_lookup_batch (one system call per chunk of entries, not two
 * per entry), and only the `limit` best are kept, in a min-heap, so a full
 * 1,000,000-entry table is ranked in one pass without sorting it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "fg_algos.h"
#include "fg_gcra.h"
#include "base/clock.h"
#include "base/util.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/lpmkey.h"
#include "maps/pinned.h"
#include "policy/policy.h"
#include "policy/readback.h"
#include "views/top.h"

#define BATCH_CHUNK 65536 /* entries a system call; 2.5 MiB of sources */
#define LOG_CHUNK   1024  /* sliding_log entries are ~1 KiB each */

/* The `limit` best rows seen so far: a min-heap of indices into `pool`, the
 * worst kept row at the root. A row that cannot beat the root is never
 * copied. */
struct collector {
	struct fg_top_row *pool;
	unsigned int *heap;
	unsigned int size, limit;
	bool filter;
	__u32 policy_id;
	unsigned long long scanned;
	const struct fg_top_maps *maps;
};

static bool ranks_below(const struct fg_top_row *a, const struct fg_top_row *b)
{
	if (a->dropped != b->dropped)
		return a->dropped < b->dropped;
	return a->last_seen_ns < b->last_seen_ns;
}

static void sift_down(struct collector *c, unsigned int i)
{
	for (;;) {
		unsigned int low = i, l = 2 * i + 1, r = 2 * i + 2, tmp;

		if (l < c->size && ranks_below(&c->pool[c->heap[l]], &c->pool[c->heap[low]]))
			low = l;
		if (r < c->size && ranks_below(&c->pool[c->heap[r]], &c->pool[c->heap[low]]))
			low = r;
		if (low == i)
			return;
		tmp = c->heap[i];
		c->heap[i] = c->heap[low];
		c->heap[low] = tmp;
		i = low;
	}
}

static void sift_up(struct collector *c, unsigned int i)
{
	while (i > 0) {
		unsigned int parent = (i - 1) / 2, tmp;

		if (!ranks_below(&c->pool[c->heap[i]], &c->pool[c->heap[parent]]))
			return;
		tmp = c->heap[i];
		c->heap[i] = c->heap[parent];
		c->heap[parent] = tmp;
		i = parent;
	}
}

/* Offers one entry; copies it in only when it ranks among the best. */
static void offer(struct collector *c, const struct fg_source_key *key, __u8 table, __u64 dropped,
		  __u64 last_seen_ns, const void *state, size_t state_size)
{
	struct fg_top_row probe = {.dropped = dropped, .last_seen_ns = last_seen_ns};
	struct fg_top_row *row;
	bool append = c->size < c->limit;

	c->scanned++;
	if (c->filter && key->policy_id != c->policy_id)
		return;
	if (!append && !ranks_below(&c->pool[c->heap[0]], &probe))
		return;
	if (append)
		c->heap[c->size] = c->size;
	row = &c->pool[c->heap[append ? c->size : 0]];
	row->key = *key;
	row->table = table;
	row->dropped = dropped;
	row->last_seen_ns = last_seen_ns;
	memcpy(&row->state, state, state_size);
	if (append)
		sift_up(c, c->size++);
	else
		sift_down(c, 0);
}

static int offer_source(const void *key, const void *value, void *ctx)
{
	const struct fg_source_state *v = value;

	offer(ctx, key, FG_TOP_SOURCES, v->dropped & FG_DROPPED_COUNT,
	      (__u64)v->last_seen << FG_LAST_SEEN_SHIFT, &v->tat_ns, sizeof(v->tat_ns));
	return 0;
}

static int offer_source4(const void *key4, const void *value, void *ctx)
{
	struct fg_source_key key = fg_source_key_of4(key4);

	return offer_source(&key, value, ctx);
}

/* The host's table holds the keys of every interface's host-scoped
 * policies: only this interface's are its. */
static int offer_host_source(const void *key, const void *value, void *ctx)
{
	const struct fg_top_maps *maps = ((struct collector *)ctx)->maps;
	__u32 id = ((const struct fg_source_key *)key)->policy_id;
	unsigned int i;

	for (i = 0; i < maps->n_host_ids; i++)
		if (maps->host_ids[i] == id)
			return offer_source(key, value, ctx);
	return 0;
}

static int offer_window(const void *key, const void *value, void *ctx)
{
	const struct fg_window_entry *v = value;

	offer(ctx, key, FG_TOP_WINDOWS, v->dropped & FG_DROPPED_COUNT, v->last_seen_ns, &v->state,
	      sizeof(v->state));
	return 0;
}

static int offer_log(const void *key, const void *value, void *ctx)
{
	const struct fg_log_entry *v = value;

	offer(ctx, key, FG_TOP_LOGS, v->dropped & FG_DROPPED_COUNT, v->last_seen_ns, &v->state,
	      sizeof(v->state));
	return 0;
}

static int compare_rows_desc(const void *a, const void *b)
{
	const struct fg_top_row *x = a, *y = b;

	return ranks_below(x, y) ? 1 : ranks_below(y, x) ? -1 : 0;
}

int fg_top_collect(const struct fg_top_maps *maps, bool filter, __u32 policy_id, unsigned int limit,
		   struct fg_top *top)
{
	const __u32 key_size = sizeof(struct fg_source_key);
	const struct {
		int fd;
		__u32 key_size, value_size, chunk;
		int (*fn)(const void *, const void *, void *);
	} tables[] = {
		{maps->sources4 > 0 ? maps->sources4 : -1, sizeof(struct fg_source4_key),
		 sizeof(struct fg_source_state), BATCH_CHUNK, offer_source4},
		{maps->sources, key_size, sizeof(struct fg_source_state), BATCH_CHUNK,
		 offer_source},
		{maps->windows, key_size, sizeof(struct fg_window_entry), BATCH_CHUNK,
		 offer_window},
		{maps->logs, key_size, sizeof(struct fg_log_entry), LOG_CHUNK, offer_log},
		{maps->host_sources > 0 && maps->n_host_ids ? maps->host_sources : -1, key_size,
		 sizeof(struct fg_source_state), BATCH_CHUNK, offer_host_source},
		{maps->known4 > 0 ? maps->known4 : -1, sizeof(struct fg_source4_key),
		 sizeof(struct fg_source_state), BATCH_CHUNK, offer_source4},
	};
	struct collector c = {
		.limit = limit, .filter = filter, .policy_id = policy_id, .maps = maps};
	size_t i;
	int err = 0;

	*top = (struct fg_top){0};
	c.pool = calloc(limit ? limit : 1, sizeof(*c.pool));
	c.heap = calloc(limit ? limit : 1, sizeof(*c.heap));
	if (!c.pool || !c.heap) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(tables) && !err; i++)
		if (tables[i].fd >= 0 && limit)
			err = fg_map_for_each_batch(tables[i].fd, tables[i].key_size,
						    tables[i].value_size, tables[i].chunk,
						    tables[i].fn, &c);
	if (err)
		goto out;
	qsort(c.pool, c.size, sizeof(*c.pool), compare_rows_desc);
	top->rows = c.pool;
	top->count = c.size;
	top->scanned = c.scanned;
	c.pool = NULL;
out:
	free(c.pool);
	free(c.heap);
	return err;
}

void fg_top_free(struct fg_top *top)
{
	free(top->rows);
	*top = (struct fg_top){0};
}

/* --- what a row's state means ---------------------------------------- */

/* Would one unit of cost be admitted at time t? Every algorithm is a pure
 * function of (state, t), so this asks it, on a copy of the state. */
static const struct fg_gcra_params *gcra_of(const struct fg_policy *p)
{
	return p->algorithm == FG_ALG_LEAKY_BUCKET ? &p->params.leaky_bucket.gcra
						   : &p->params.token_bucket;
}

static bool admits_at(const struct fg_policy *p, const struct fg_top_row *row, __u64 t, __u64 cost)
{
	__u64 word;

	if (row->table == FG_TOP_WINDOWS) {
		struct fg_sliding_window_state out;

		return fg_sliding_window_admit(&p->params.sliding_window, &row->state.window, t,
					       cost, &out);
	}
	if (row->table == FG_TOP_LOGS) {
		struct fg_sliding_log_state copy = row->state.log;

		return fg_sliding_log_admit(&p->params.sliding_log, &copy, t, cost);
	}
	if (p->algorithm == FG_ALG_FIXED_WINDOW)
		return fg_fixed_window_admit(&p->params.fixed_window, row->state.word, t, cost,
					     &word);
	return fg_gcra_admit(gcra_of(p), row->state.word, t, cost, &word);
}

/* How many units (packets, or bytes in byte mode) would be admitted at
 * `now`: tokens left for the buckets, room left in the window otherwise. */
static __u64 allowance(const struct fg_policy *p, const struct fg_top_row *row, __u64 now)
{
	const struct fg_gcra_params *gcra = gcra_of(p);
	struct fg_readback_rate rate;
	__u64 lo = 0, hi;

	fg_policy_rate(p, &rate);
	hi = rate.burst > rate.count ? rate.burst : rate.count;
	if (row->table == FG_TOP_LOGS) { /* cost is always 1: count the free slots */
		struct fg_sliding_log_state copy = row->state.log;

		while (lo < hi && fg_sliding_log_admit(&p->params.sliding_log, &copy, now, 1))
			lo++;
		return lo;
	}
	if (hi > FG_MAX_COST && row->table == FG_TOP_SOURCES &&
	    p->algorithm != FG_ALG_FIXED_WINDOW) {
		/* GCRA: (tau - backlog) / T, without a cost large enough to
		 * overflow the fixed-point product. */
		__u64 backlog = row->state.word > now ? row->state.word - now : 0;

		if (backlog >= gcra->tolerance_ns || !gcra->interval_fp)
			return 0;
		return (__u64)((double)(gcra->tolerance_ns - backlog) * (1 << FG_GCRA_FRAC_BITS) /
			       gcra->interval_fp);
	}
	while (lo < hi) { /* the largest cost admitted now: admission is monotonic */
		__u64 mid = lo + (hi - lo + 1) / 2;

		if (admits_at(p, row, now, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ns from `now` until one unit would be admitted; 0 = now, ~0 = unknown.
 * Waiting never hurts, so the earliest time is found by bisection. */
static __u64 next_admission_ns(const struct fg_policy *p, const struct fg_top_row *row, __u64 now)
{
	struct fg_readback_rate rate;
	__u64 lo = 0, hi;

	/* A window frees a unit within two periods; a GCRA within tau + T. */
	fg_policy_rate(p, &rate);
	hi = 2 * rate.period_ns + 1;
	if (row->table == FG_TOP_SOURCES && p->algorithm != FG_ALG_FIXED_WINDOW)
		hi += gcra_of(p)->tolerance_ns + (gcra_of(p)->interval_fp >> FG_GCRA_FRAC_BITS);
	if (admits_at(p, row, now, 1))
		return 0;
	if (!admits_at(p, row, now + hi, 1))
		return ~0ULL;
	while (hi - lo > 1) {
		__u64 mid = lo + (hi - lo) / 2;

		if (admits_at(p, row, now + mid, 1))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* --- the read model --------------------------------------------------- */

/* The ban that covers the row's source, if any. */
static bool find_ban(int bans_fd, const struct fg_source_key *key, struct fg_ban *ban)
{
	struct fg_src_lpm_key lpm = fg_ban_key_of_source(key);

	if (key->family != FG_FAMILY_IPV4 && key->family != FG_FAMILY_IPV6)
		return false;
	return !bpf_map_lookup_elem(bans_fd, &lpm, ban);
}

static void view_row(const struct fg_top_row *row, const struct fg_policy *p, int bans_fd,
		     __u64 now, struct fg_top_entry *v)
{
	struct fg_ban ban;

	v->row = row;
	fg_format_key(&row->key, v->source, sizeof(v->source));
	v->policy = p ? p->name : "(removed)";
	v->unit = p && (p->flags & FG_POLICY_BYTES) ? "bytes" : "packets";
	v->last_seen_s =
		now > row->last_seen_ns ? (double)(now - row->last_seen_ns) / FG_NS_PER_S : 0;
	v->allowance = p ? allowance(p, row, now) : 0;
	v->next_ns = p ? next_admission_ns(p, row, now) : ~0ULL;
	v->banned = find_ban(bans_fd, &row->key, &ban) && ban.expires_ns > now;
	v->ban_forever = v->banned && ban.expires_ns == ~0ULL;
	v->ban_left_s = v->banned ? (double)(ban.expires_ns - now) / FG_NS_PER_S : 0;
	v->strikes = v->banned ? ban.strikes : 0;
}

/* The tables of the loaded interface, with its host-scoped policies' ids. */
static struct fg_top_maps top_maps_of(const struct fg_pinned *pinned,
				      const struct fg_policy_set *set, __u32 *host_ids)
{
	struct fg_top_maps maps = {.sources4 = pinned->sources4,
				   .sources = pinned->sources,
				   .windows = pinned->windows,
				   .logs = pinned->logs,
				   .host_sources = pinned->host_sources,
				   .known4 = pinned->known4,
				   .host_ids = host_ids};
	__u32 i;

	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (set->policies[i].flags & FG_POLICY_HOST)
			host_ids[maps.n_host_ids++] = set->policies[i].id;
	return maps;
}

static int collect(const char *ifname, const struct fg_pinned *pinned, unsigned int limit,
		   const char *policy, struct fg_top_view *view, struct fg_err *err)
{
	__u32 policy_id = 0, host_ids[FG_MAX_POLICIES], i;
	struct fg_top_maps maps;
	__u64 now;
	int rc;

	rc = fg_read_active_set(pinned, view->set);
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the tables of %s: %s", ifname,
			       strerror(-rc));
	if (policy) {
		const struct fg_policy *p = fg_find_policy(view->set, policy);

		if (!p)
			return fg_fail(err, FG_ERR_USAGE, "no policy named '%s' is loaded on %s",
				       policy, ifname);
		policy_id = p->id;
	}
	maps = top_maps_of(pinned, view->set, host_ids);
	rc = fg_top_collect(&maps, policy != NULL, policy_id, limit, &view->top);
	if (!rc && view->top.count) {
		view->entries = calloc(view->top.count, sizeof(*view->entries));
		rc = view->entries ? 0 : -ENOMEM;
	}
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the tables of %s: %s", ifname,
			       strerror(-rc));
	now = fg_monotonic_ns();
	for (i = 0; i < view->top.count; i++)
		view_row(&view->top.rows[i],
			 fg_policy_by_id(view->set, view->top.rows[i].key.policy_id), pinned->bans,
			 now, &view->entries[i]);
	return 0;
}

int fg_top_read(const char *ifname, unsigned int limit, const char *policy,
		struct fg_top_view *view, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	int rc;

	*view = (struct fg_top_view){0};
	view->set = malloc(sizeof(*view->set));
	if (!view->set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the tables of %s",
			       ifname);
	if (fg_open_loaded(ifname, &pinned, err))
		return -1;
	rc = collect(ifname, &pinned, limit, policy, view, err);
	fg_pinned_close(&pinned);
	return rc;
}

void fg_top_view_free(struct fg_top_view *view)
{
	fg_top_free(&view->top);
	free(view->entries);
	free(view->set);
	*view = (struct fg_top_view){0};
}
