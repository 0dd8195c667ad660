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
#include <time.h>
#include <bpf/bpf.h>

#include "fg_algos.h"
#include "fg_gcra.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "cli/exit.h" /* until the read models return struct fg_err alone */
#include "policy/readback.h"
#include "base/log.h"
#include "maps/pinned.h"
#include "policy/policy.h"
#include "views/report.h"
#include "views/top.h"

#define NS_PER_S    1000000000ULL
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
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]) && !err; i++)
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

/* --- the command ------------------------------------------------------- */

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The ban that covers the row's source, if any. */
static bool find_ban(int bans_fd, const struct fg_source_key *key, struct fg_ban *ban)
{
	struct fg_src_lpm_key lpm = {.prefixlen = FG_SRC_LPM_HEADER_BITS + key->prefix_len,
				     .family = key->family};

	if (key->family != FG_FAMILY_IPV4 && key->family != FG_FAMILY_IPV6)
		return false;
	memcpy(lpm.addr, key->addr, sizeof(lpm.addr));
	return !bpf_map_lookup_elem(bans_fd, &lpm, ban);
}

/* One row's derived figures, in the units printed. */
struct row_view {
	char source[INET6_ADDRSTRLEN + 16];
	const char *policy;
	const char *unit;
	double last_seen_s; /* seconds ago */
	__u64 allowance;
	__u64 next_ns; /* ~0: unknown (the policy changed) */
	bool banned, ban_forever;
	double ban_left_s;
	__u32 strikes;
};

static void view_row(const struct fg_top_row *row, const struct fg_policy *p, int bans_fd,
		     __u64 now, struct row_view *v)
{
	struct fg_ban ban;

	fg_format_key(&row->key, v->source, sizeof(v->source));
	v->policy = p ? p->name : "(removed)";
	v->unit = p && (p->flags & FG_POLICY_BYTES) ? "bytes" : "packets";
	v->last_seen_s = now > row->last_seen_ns ? (double)(now - row->last_seen_ns) / NS_PER_S : 0;
	v->allowance = p ? allowance(p, row, now) : 0;
	v->next_ns = p ? next_admission_ns(p, row, now) : ~0ULL;
	v->banned = find_ban(bans_fd, &row->key, &ban) && ban.expires_ns > now;
	v->ban_forever = v->banned && ban.expires_ns == ~0ULL;
	v->ban_left_s = v->banned ? (double)(ban.expires_ns - now) / NS_PER_S : 0;
	v->strikes = v->banned ? ban.strikes : 0;
}

static void print_row_json(const struct fg_top_row *row, const struct row_view *v, bool first)
{
	printf("%s{\"source\":\"%s\",\"dport\":", first ? "" : ",", v->source);
	if (row->key.dport)
		printf("%u", row->key.dport);
	else
		printf("null");
	printf(",\"policy\":\"%s\",\"dropped\":%" PRIu64 ",\"last_seen_s\":%.1f,"
	       "\"allowance\":%" PRIu64 ",\"unit\":\"%s\",\"next_admission_ms\":",
	       v->policy, (uint64_t)row->dropped, v->last_seen_s, (uint64_t)v->allowance, v->unit);
	if (v->next_ns == ~0ULL)
		printf("null");
	else
		printf("%.3f", v->next_ns / 1e6);
	printf(",\"ban\":");
	if (!v->banned)
		printf("null");
	else if (v->ban_forever)
		printf("{\"expires_in_s\":null,\"strikes\":%u}", v->strikes);
	else
		printf("{\"expires_in_s\":%.1f,\"strikes\":%u}", v->ban_left_s, v->strikes);
	printf("}");
}

static void print_row_text(const struct fg_top_row *row, const struct row_view *v)
{
	char source[sizeof(v->source) + 8], next[32], ban[48];

	snprintf(source, sizeof(source), row->key.dport ? "%s:%u" : "%s", v->source,
		 row->key.dport);
	if (v->next_ns == ~0ULL)
		snprintf(next, sizeof(next), "?");
	else if (!v->next_ns)
		snprintf(next, sizeof(next), "now");
	else
		snprintf(next, sizeof(next), "in %.3f s", v->next_ns / 1e9);
	if (!v->banned)
		snprintf(ban, sizeof(ban), "-");
	else if (v->ban_forever)
		snprintf(ban, sizeof(ban), "until unbanned");
	else
		snprintf(ban, sizeof(ban), "%.0f s left", v->ban_left_s);
	printf("%-30s %-16s %12" PRIu64 " %8.1fs %12" PRIu64 " %-7s %-12s %s\n", source, v->policy,
	       (uint64_t)row->dropped, v->last_seen_s, (uint64_t)v->allowance, v->unit, next, ban);
}

static void print_top(const struct fg_top *top, const struct fg_policy_set *set, int bans_fd,
		      bool json)
{
	__u64 now = monotonic_ns();
	struct row_view v;
	unsigned int i;

	if (json)
		printf("{\"sources\":[");
	else
		printf("%-30s %-16s %12s %9s %12s %-7s %-12s %s\n", "SOURCE", "POLICY", "DROPPED~",
		       "SEEN", "ALLOWANCE", "UNIT", "NEXT", "BAN");
	for (i = 0; i < top->count; i++) {
		const struct fg_top_row *row = &top->rows[i];

		view_row(row, fg_policy_by_id(set, row->key.policy_id), bans_fd, now, &v);
		if (json)
			print_row_json(row, &v, i == 0);
		else
			print_row_text(row, &v);
	}
	if (json)
		printf("]}\n");
}

int fg_cmd_top(const char *ifname, unsigned int limit, const char *policy, bool json)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_top top = {0};
	struct fg_top_maps maps;
	__u32 policy_id = 0, host_ids[FG_MAX_POLICIES], i;
	struct fg_err e = {0};
	int ret, err;

	if (!set)
		return FG_EXIT_FAILURE;
	if (fg_open_loaded(ifname, &pinned, &e)) {
		ret = fg_exit_report(&e);
		goto out;
	}
	ret = FG_EXIT_FAILURE;
	err = fg_read_active_set(&pinned, set);
	if (err)
		goto fail;
	if (policy) {
		const struct fg_policy *p = fg_find_policy(set, policy);

		if (!p) {
			pr_warn("Error: no policy named '%s' is loaded on %s\n", policy, ifname);
			ret = FG_EXIT_USAGE;
			goto out;
		}
		policy_id = p->id;
	}
	maps = (struct fg_top_maps){.sources4 = pinned.sources4,
				    .sources = pinned.sources,
				    .windows = pinned.windows,
				    .logs = pinned.logs,
				    .host_sources = pinned.host_sources,
				    .host_ids = host_ids};
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (set->policies[i].flags & FG_POLICY_HOST)
			host_ids[maps.n_host_ids++] = set->policies[i].id;
	err = fg_top_collect(&maps, policy != NULL, policy_id, limit, &top);
	if (err)
		goto fail;
	print_top(&top, set, pinned.bans, json);
	ret = FG_EXIT_OK;
	goto out;
fail:
	pr_warn("Error: cannot read the tables of %s: %s\n", ifname, strerror(-err));
out:
	fg_top_free(&top);
	fg_pinned_close(&pinned);
	free(set);
	return ret;
}
