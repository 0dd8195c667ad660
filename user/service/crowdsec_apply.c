// SPDX-License-Identifier: GPL-2.0-only
/*
 * CrowdSec's decisions into `bans` (docs/crowdsec.md, "CrowdSec"). A ban from
 * CrowdSec carries the id of its decision's origin (FG_CROWDSEC_BAN_ID),
 * so that only such bans are lifted by deleted decisions, `floodgate bans`
 * names the origin, and the bans are kept out of the policies' count. A
 * ban already in force by hand, by a policy or from the fleet is left as
 * it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "maps/batch.h"
#include "maps/lpmkey.h"
#include "maps/runtime.h"
#include "service/crowdsec.h"

/* A ban in force whose end is this close to the decision's is the same
 * ban: not written again. */
#define SAME_END_NS  (2ULL * FG_NS_PER_S)
/* Refusals logged one by one in a reply; the rest are counted. */
#define LOG_REFUSALS 8
/* Entries a batch update carries. */
#define BATCH	     4096

struct pending {
	struct fg_src_lpm_key keys[BATCH];
	struct fg_ban values[BATCH];
	__u32 n;
};

static bool is_crowdsec_ban(const struct fg_ban *ban, const struct fg_src_lpm_key *key)
{
	return FG_IS_CROWDSEC_BAN_ID(ban->policy_id) &&
	       ban->prefix_len == key->prefixlen - FG_SRC_LPM_HEADER_BITS;
}

static void lift(struct fg_crowdsec_applier *a, const struct fg_crowdsec_decision *d,
		 struct fg_crowdsec_applied *done)
{
	struct fg_src_lpm_key key = fg_ban_key_of_cidr(&d->cidr);
	struct fg_ban old;

	if (!bpf_map_lookup_elem(a->pinned->bans, &key, &old) && is_crowdsec_ban(&old, &key) &&
	    !bpf_map_delete_elem(a->pinned->bans, &key))
		done->lifted++;
}

/* Writes the pending bans: a batch a system call, one by one where the
 * kernel has no batch update for tries or the table filled up. */
static void flush(struct fg_crowdsec_applier *a, struct pending *p,
		  struct fg_crowdsec_applied *done)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = p->n, i;
	int err;

	if (!p->n)
		return;
	/* bans_may_exist before the bans, and after (fg_runtime_mark_bans) */
	err = fg_runtime_mark_bans(a->pinned->maps.runtime);
	if (err) {
		pr_warn("crowdsec: cannot mark the runtime record for bans: %s\n", strerror(-err));
		done->refused += p->n;
		p->n = 0;
		return;
	}
	if (bpf_map_update_batch(a->pinned->bans, p->keys, p->values, &count, &opts))
		count = count <= p->n ? count : 0;
	for (i = count; i < p->n; i++) {
		if (!bpf_map_update_elem(a->pinned->bans, &p->keys[i], &p->values[i], BPF_ANY))
			continue;
		if (errno == E2BIG || errno == ENOSPC || errno == ENOMEM)
			done->table_full++;
		else
			done->refused++;
		p->values[i].strikes = 0; /* not applied */
	}
	for (i = 0; i < p->n; i++)
		done->applied += p->values[i].strikes != 0;
	p->n = 0;
	err = fg_runtime_mark_bans(a->pinned->maps.runtime);
	if (err)
		pr_warn("crowdsec: cannot mark the runtime record for bans: %s\n", strerror(-err));
}

static void ban(struct fg_crowdsec_applier *a, const struct fg_crowdsec_decision *d, __u64 now,
		struct pending *p, struct fg_crowdsec_applied *done)
{
	struct fg_src_lpm_key key = fg_ban_key_of_cidr(&d->cidr);
	__u32 id = FG_CROWDSEC_BAN_ID(d->origin);
	__u64 ends = now + d->left_ns < now ? ~0ULL - 1 : now + d->left_ns;
	const char *why = fg_ban_guard_refusal(&a->guard, a->pinned, &d->cidr);
	struct fg_ban old;

	if (why) {
		if (done->refused++ - done->malformed < LOG_REFUSALS) {
			char addr[INET6_ADDRSTRLEN] = "?";

			inet_ntop(d->cidr.family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6,
				  d->cidr.addr, addr, sizeof(addr));
			pr_warn("crowdsec: refused %s/%u: %s\n", addr, d->cidr.prefix_len, why);
		}
		return;
	}
	if (!bpf_map_lookup_elem(a->pinned->bans, &key, &old) &&
	    old.prefix_len == d->cidr.prefix_len && old.expires_ns > now &&
	    (!FG_IS_CROWDSEC_BAN_ID(old.policy_id) ||
	     (old.policy_id == id && old.expires_ns + SAME_END_NS > ends &&
	      ends + SAME_END_NS > old.expires_ns)))
		return; /* in force already: this ban, or one not CrowdSec's */
	p->keys[p->n] = key;
	p->values[p->n] = (struct fg_ban){.expires_ns = ends,
					  .duration_ns = d->left_ns,
					  .strikes = 1,
					  .policy_id = id,
					  .family = d->cidr.family,
					  .prefix_len = d->cidr.prefix_len};
	if (++p->n == BATCH)
		flush(a, p, done);
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fg_src_lpm_key));
}

struct stale_walk {
	const struct fg_src_lpm_key *wanted; /* sorted */
	size_t n_wanted;
	struct fg_src_lpm_key *stale;
	size_t n_stale, cap;
};

static int find_stale(const void *key, const void *value, void *ctx)
{
	struct stale_walk *w = ctx;

	if (!is_crowdsec_ban(value, key) ||
	    bsearch(key, w->wanted, w->n_wanted, sizeof(*w->wanted), cmp_key))
		return 0;
	if (w->n_stale == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct fg_src_lpm_key *grown = realloc(w->stale, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->stale = grown;
		w->cap = cap;
	}
	memcpy(&w->stale[w->n_stale++], key, sizeof(*w->stale));
	return 0;
}

/* After the whole set: the bans from CrowdSec it lacks were lifted while
 * no one listened (an outage, a restart of `run` or of the Local API). */
static void lift_stale(struct fg_crowdsec_applier *a, const struct fg_crowdsec_reply *reply,
		       struct fg_crowdsec_applied *done)
{
	struct stale_walk w = {.n_wanted = reply->n_bans};
	struct fg_src_lpm_key *wanted = calloc(reply->n_bans + 1, sizeof(*wanted));
	size_t i;
	int err;

	if (!wanted) {
		pr_warn("crowdsec: out of memory: the bans lifted meanwhile stay\n");
		return;
	}
	for (i = 0; i < reply->n_bans; i++)
		wanted[i] = fg_ban_key_of_cidr(&reply->bans[i].cidr);
	qsort(wanted, reply->n_bans, sizeof(*wanted), cmp_key);
	w.wanted = wanted;
	err = fg_map_for_each_entry(a->pinned->bans, sizeof(struct fg_src_lpm_key),
				    sizeof(struct fg_ban), find_stale, &w);
	if (err)
		pr_warn("crowdsec: cannot walk the bans: %s\n", strerror(-err));
	for (i = 0; i < w.n_stale; i++)
		done->lifted += !bpf_map_delete_elem(a->pinned->bans, &w.stale[i]);
	free(w.stale);
	free(wanted);
}

void fg_crowdsec_apply(struct fg_crowdsec_applier *a, const struct fg_crowdsec_reply *reply,
		       bool startup, struct fg_crowdsec_applied *done)
{
	struct pending *p = malloc(sizeof(*p));
	__u64 now = fg_monotonic_ns();
	size_t i;

	*done = (struct fg_crowdsec_applied){.refused = reply->refused,
					     .malformed = reply->refused};
	if (!p) {
		pr_warn("crowdsec: out of memory: a reply is not applied\n");
		return;
	}
	p->n = 0;
	for (i = 0; i < reply->n_lifts; i++)
		lift(a, &reply->lifts[i], done);
	for (i = 0; i < reply->n_bans; i++)
		ban(a, &reply->bans[i], now, p, done);
	flush(a, p, done);
	free(p);
	if (startup)
		lift_stale(a, reply, done);
	if (done->malformed)
		pr_warn("crowdsec: %zu malformed decisions refused; the first: %s\n",
			done->malformed, reply->first_refusal);
	if (done->refused - done->malformed > LOG_REFUSALS)
		pr_warn("crowdsec: %zu more decisions refused (not logged)\n",
			done->refused - done->malformed - LOG_REFUSALS);
	if (done->table_full)
		pr_warn("crowdsec: the bans table is full: %zu ban decisions not applied\n",
			done->table_full);
}
