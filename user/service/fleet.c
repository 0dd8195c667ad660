// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fleet-wide limits through Redis (docs/fleet.md, "Fleet-wide limits through
 * Redis"). Every sync interval this thread:
 *   1. flips fleet_state.epoch, then reads and deletes the previous
 *      epoch's fleet_counts (the datapath has moved on, so nothing is
 *      counted twice or lost to a reset);
 *   2. sends one pipelined batch: an EVALSHA of the rate script per active
 *      key (the key's admissions added to its fleet-wide GCRA on the Redis
 *      server's clock; the answer is how long the key is over its limit)
 *      and one of the bans script (local bans published, the fleet's list
 *      returned);
 *   3. writes fleet_holds for the keys over their limit, copies the fleet's
 *      bans into `bans`, and records its state in fleet_state.
 * Redis down: logged once, counted, the counts are dropped (the local
 * limits hold), fleet_state.refuse_all follows on_redis_down, and the
 * connection is retried with a doubling backoff.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <hiredis/hiredis.h>

#include "policy/readback.h"
#include "maps/loaded.h"
#include "base/clock.h"
#include "base/util.h"
#include "maps/batch.h"
#include "service/fleet.h"
#include "service/fleet_internal.h"
#include "base/log.h"
#include "maps/pinned.h"
#include "config/values.h"

static struct timeval timeval_of(__u64 ns)
{
	struct timeval tv = {.tv_sec = ns / FG_NS_PER_S, .tv_usec = ns % FG_NS_PER_S / 1000};

	return tv;
}

static void write_state(struct fg_fleet *f)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(f->pinned.fleet_state, &zero, &f->state, BPF_ANY))
		pr_warn("fleet: cannot write fleet_state: %s\n", strerror(errno));
}

/* --- the connection ------------------------------------------------------------ */

static void disconnect(struct fg_fleet *f, const char *reason)
{
	char why[sizeof(f->failure)];

	snprintf(why, sizeof(why), "%s", reason); /* it may live in f->redis */
	if (f->redis)
		redisFree(f->redis);
	f->redis = NULL;
	f->state.connected = 0;
	if (!f->down) {
		f->down = true;
		f->state.outages++;
		pr_warn("fleet: Redis at %s unreachable (%s): %s, retrying\n", f->where, why,
			f->conf.on_redis_down == FG_REDIS_DOWN_CLOSED
				? "refusing fleet-scoped keys (on_redis_down = closed)"
				: "each host enforces the fleet rate locally (on_redis_down = "
				  "local)");
	}
	f->state.refuse_all = f->conf.on_redis_down == FG_REDIS_DOWN_CLOSED;
	f->backoff_ns = f->backoff_ns ? f->backoff_ns * 2 : f->conf.sync_ns;
	if (f->backoff_ns > MAX_BACKOFF_NS)
		f->backoff_ns = MAX_BACKOFF_NS;
	f->next_connect_ns = fg_monotonic_ns() + f->backoff_ns;
}

static bool load_script(struct fg_fleet *f, const char *script, char *sha)
{
	redisReply *reply = redisCommand(f->redis, "SCRIPT LOAD %s", script);
	bool ok = reply && reply->type == REDIS_REPLY_STRING && reply->len == 40;

	if (ok)
		memcpy(sha, reply->str, 41);
	else if (reply) /* logged once, with the outage (a NOAUTH would repeat) */
		snprintf(f->failure, sizeof(f->failure), "SCRIPT LOAD refused: %s",
			 reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
	freeReplyObject(reply);
	return ok;
}

static bool load_scripts(struct fg_fleet *f)
{
	return load_script(f, fg_fleet_rate_script, f->rate_sha) &&
	       load_script(f, fg_fleet_bans_script, f->bans_sha);
}

/* Connects when due; true when connected. */
static bool ensure_connected(struct fg_fleet *f)
{
	__u64 timeout = f->conf.sync_ns < MAX_TIMEOUT_NS ? f->conf.sync_ns : MAX_TIMEOUT_NS;
	struct timeval tv = timeval_of(timeout);

	if (f->redis)
		return true;
	if (fg_monotonic_ns() < f->next_connect_ns)
		return false;
	f->redis = f->conf.unix_path[0] ? redisConnectUnixWithTimeout(f->conf.unix_path, tv)
					: redisConnectWithTimeout(f->conf.host, f->conf.port, tv);
	if (!f->redis || f->redis->err) {
		disconnect(f, f->redis ? f->redis->errstr : "out of memory");
		return false;
	}
	redisSetTimeout(f->redis, tv);
	f->failure[0] = '\0';
	if (!fg_fleet_auth(f) || !load_scripts(f)) {
		disconnect(f, f->redis->err ? f->redis->errstr : f->failure);
		return false;
	}
	if (f->down)
		pr_warn("fleet: Redis at %s reachable again: fleet sync resumed\n", f->where);
	else
		pr_warn("fleet: syncing with Redis at %s every %llu ms\n", f->where,
			(unsigned long long)(f->conf.sync_ns / 1000000));
	f->down = false;
	f->backoff_ns = 0;
	f->state.connected = 1;
	f->state.refuse_all = 0;
	return true;
}

/* --- counts ------------------------------------------------------------------------ */

static struct fleet_item *add_item(struct fg_fleet *f)
{
	if (f->n_items == f->cap_items) {
		size_t cap = f->cap_items ? f->cap_items * 2 : 256;
		struct fleet_item *bigger = realloc(f->items, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		f->items = bigger;
		f->cap_items = cap;
	}
	return &f->items[f->n_items++];
}

struct epoch_walk {
	struct fg_fleet *f;
	__u32 epoch;
};

static int add_epoch_key(const void *key, void *ctx)
{
	const struct fg_fleet_key *k = key;
	struct epoch_walk *w = ctx;
	struct fleet_item *item;

	if (k->epoch != w->epoch)
		return 0;
	item = add_item(w->f);
	if (!item)
		return -ENOMEM;
	memset(item, 0, sizeof(*item));
	item->key = k->key;
	return 0;
}

/* Reads and deletes one epoch's counts into f->items. */
static int drain_epoch(struct fg_fleet *f, __u32 epoch)
{
	int fd = f->pinned.fleet_counts, ncpus = libbpf_num_possible_cpus(), cpu;
	struct fg_fleet_count *values = calloc(ncpus, sizeof(*values));
	struct epoch_walk w = {.f = f, .epoch = epoch};
	size_t first = f->n_items, i;

	if (!values)
		return -ENOMEM;
	/* Keys first, then values and deletes: a walk that deletes as it
	 * goes restarts from the first key. */
	fg_map_for_each_key(fd, sizeof(struct fg_fleet_key), add_epoch_key, &w);
	for (i = first; i < f->n_items; i++) {
		struct fg_fleet_key k = {.key = f->items[i].key, .epoch = epoch};
		__u64 packets = 0, bytes = 0;

		if (bpf_map_lookup_elem(fd, &k, values) == 0) {
			for (cpu = 0; cpu < ncpus; cpu++) {
				packets += values[cpu].packets;
				bytes += values[cpu].bytes;
			}
		}
		bpf_map_delete_elem(fd, &k);
		f->items[i].cost = packets; /* bytes chosen once the policy is known */
		f->items[i].hold_us = bytes;
	}
	free(values);
	return 0;
}

/* Closes the epoch and collects its counts of the policies in force. */
static int collect_counts(struct fg_fleet *f)
{
	__u32 closed = f->state.epoch;
	size_t i, kept = 0;
	int err;

	f->state.epoch ^= 1;
	write_state(f);
	f->n_items = 0;
	err = drain_epoch(f, closed);
	if (err)
		return err;
	if (bpf_map_lookup_elem(f->pinned.maps.runtime, &(__u32){0}, &f->pinned.rt) ||
	    fg_read_active_set(&f->pinned, f->set))
		return -errno;
	for (i = 0; i < f->n_items; i++) {
		struct fleet_item item = f->items[i];

		item.policy = fg_policy_by_id(f->set, item.key.policy_id);
		if (!item.policy || !(item.policy->flags & FG_POLICY_FLEET))
			continue; /* removed or made local by a reload */
		if (item.policy->flags & FG_POLICY_BYTES)
			item.cost = (__u64)item.hold_us;
		item.hold_us = -1;
		f->items[kept++] = item;
	}
	f->n_items = kept;
	return 0;
}

/* --- rates ------------------------------------------------------------------------- */

/* The fleet-wide GCRA of a policy's rate and burst, in microseconds: T per
 * unit and tau. The window algorithms' COUNT/PERIOD is the same rate with
 * a burst of COUNT. */
static void fleet_gcra(const struct fg_policy *p, double *t_us, double *tau_us)
{
	const union fg_rate_params *params = &p->params;
	const struct fg_gcra_params *gcra = &params->token_bucket;
	__u64 count, period_ns;

	switch (p->algorithm) {
	case FG_ALG_FIXED_WINDOW:
		count = params->fixed_window.count;
		period_ns = params->fixed_window.period_ns;
		break;
	case FG_ALG_SLIDING_WINDOW:
		count = params->sliding_window.count;
		period_ns = params->sliding_window.period_ns;
		break;
	case FG_ALG_SLIDING_LOG:
		count = params->sliding_log.count;
		period_ns = params->sliding_log.period_ns;
		break;
	case FG_ALG_LEAKY_BUCKET:
		gcra = &params->leaky_bucket.gcra;
		/* fallthrough */
	default:
		*t_us = (double)gcra->interval_fp / (1 << FG_GCRA_FRAC_BITS) / FG_NS_PER_US;
		*tau_us = (double)gcra->tolerance_ns / FG_NS_PER_US;
		return;
	}
	*t_us = (double)period_ns / count / FG_NS_PER_US;
	*tau_us = (double)period_ns / FG_NS_PER_US;
}

/* PREFIX rate:POLICY:SOURCE[:DPORT], SOURCE being ADDR/LEN, global or
 * overflow (the shared key of sources past the new-source budget). */
static void rate_key(const struct fg_fleet *f, const struct fleet_item *item, char *buf,
		     size_t size)
{
	char source[MEMBER_LEN];

	fg_format_key(&item->key, source, sizeof(source));
	if (item->policy->flags & FG_POLICY_KEY_DPORT)
		snprintf(buf, size, "%srate:%s:%s:%u", f->conf.key_prefix, item->policy->name,
			 source, item->key.dport);
	else
		snprintf(buf, size, "%srate:%s:%s", f->conf.key_prefix, item->policy->name, source);
}

static void append_rate(struct fg_fleet *f, const struct fleet_item *item)
{
	char key[REDIS_KEY_LEN], t[32], tau[32], cost[32];
	double t_us, tau_us;

	fleet_gcra(item->policy, &t_us, &tau_us);
	rate_key(f, item, key, sizeof(key));
	snprintf(t, sizeof(t), "%.6f", t_us);
	snprintf(tau, sizeof(tau), "%.3f", tau_us);
	snprintf(cost, sizeof(cost), "%llu", (unsigned long long)item->cost);
	redisAppendCommand(f->redis, "EVALSHA %s 1 %s %s %s %s", f->rate_sha, key, t, tau, cost);
}

/* Holds a key the fleet says is over its limit, on the datapath's clock. */
static void hold(struct fg_fleet *f, const struct fleet_item *item, __u64 now_mono)
{
	struct fg_fleet_hold value = {.until_ns = now_mono + fg_fleet_hold_ns(f, item->hold_us)};

	if (bpf_map_update_elem(f->pinned.fleet_holds, &item->key, &value, BPF_ANY))
		pr_warn("fleet: cannot hold a key of %s: %s\n", item->policy->name,
			strerror(errno));
}

/* Reads one reply per item. Returns 1 if some script was missing from the
 * cache (NOSCRIPT: those items keep hold_us -1), 0, or -1 on a dead link. */
static int read_rate_replies(struct fg_fleet *f)
{
	bool noscript = false;
	size_t i;

	for (i = 0; i < f->n_items; i++) {
		redisReply *reply = NULL;

		if (f->items[i].hold_us >= 0)
			continue; /* answered by an earlier attempt */
		if (redisGetReply(f->redis, (void **)&reply) != REDIS_OK)
			return -1;
		if (reply->type == REDIS_REPLY_INTEGER)
			f->items[i].hold_us = reply->integer;
		else if (reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOSCRIPT", 8))
			noscript = true;
		else
			pr_warn("fleet: the rate script failed: %s\n",
				reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
		if (f->items[i].hold_us < 0 && !noscript)
			f->items[i].hold_us = 0; /* an error is not retried */
		freeReplyObject(reply);
	}
	return noscript;
}

/* --- one sync ---------------------------------------------------------------------- */

static void hold_all(struct fg_fleet *f)
{
	__u64 now_mono = fg_monotonic_ns();
	size_t i;

	for (i = 0; i < f->n_items; i++)
		if (f->items[i].hold_us > 0)
			hold(f, &f->items[i], now_mono);
}

/* One pipeline: an EVALSHA of the rate script per item, then one of the
 * bans script. A flushed script cache (NOSCRIPT) is loaded again and the
 * items it refused are sent once more. Returns 0, or -1 on a dead link. */
static int sync_once(struct fg_fleet *f)
{
	size_t i;
	int ret, bans;

	for (i = 0; i < f->n_items; i++)
		append_rate(f, &f->items[i]);
	fg_fleet_bans_append(f);
	ret = read_rate_replies(f);
	bans = ret < 0 ? -1 : fg_fleet_bans_read(f); /* NOSCRIPT: the bans go next time */
	if (ret >= 0 && bans)
		ret = bans;
	if (ret == 1) {
		if (!load_scripts(f))
			return -1;
		for (i = 0; i < f->n_items; i++)
			if (f->items[i].hold_us < 0)
				append_rate(f, &f->items[i]);
		ret = read_rate_replies(f);
	}
	if (ret < 0)
		return -1;
	hold_all(f);
	return 0;
}

struct holds_walk {
	__u64 now, held;
	struct fg_source_key ended[256];
	size_t n;
};

static int visit_hold(const void *key, const void *value, void *ctx)
{
	const struct fg_fleet_hold *hold = value;
	struct holds_walk *w = ctx;

	if (hold->until_ns > w->now)
		w->held++;
	else if (w->n < ARRAY_SIZE(w->ended))
		w->ended[w->n++] = *(const struct fg_source_key *)key; /* the rest: next time */
	return 0;
}

/* Deletes the holds that have ended and counts those in force. */
static void purge_holds(struct fg_fleet *f)
{
	struct holds_walk w = {.now = fg_monotonic_ns()};
	size_t i;

	fg_map_for_each_entry(f->pinned.fleet_holds, sizeof(struct fg_source_key),
			      sizeof(struct fg_fleet_hold), visit_hold, &w);
	for (i = 0; i < w.n; i++)
		bpf_map_delete_elem(f->pinned.fleet_holds, &w.ended[i]);
	f->state.keys_held = w.held;
}

static void sync_tick(struct fg_fleet *f)
{
	__u64 start = fg_monotonic_ns();
	int err = collect_counts(f);

	if (err)
		pr_warn("fleet: cannot read the fleet counts: %s\n", strerror(-err));
	if (ensure_connected(f)) {
		f->failure[0] = '\0';
		if (sync_once(f) == 0) {
			f->state.syncs++;
			f->state.last_sync_ns = fg_clock_ns(CLOCK_REALTIME);
			f->state.sync_latency_ns = fg_monotonic_ns() - start;
		} else {
			disconnect(f, f->redis->err   ? f->redis->errstr
				      : f->failure[0] ? f->failure
						      : "no reply");
		}
	}
	/* Down: the counts just read are dropped; the local limits hold. */
	purge_holds(f);
	write_state(f);
}

/* A new local ban goes out at once, so that every host applies it within
 * one sync interval (at its own next sync). */
static void publish_bans_now(struct fg_fleet *f)
{
	fg_fleet_bans_append(f);
	if (fg_fleet_bans_read(f) < 0)
		disconnect(f, f->redis->err ? f->redis->errstr : "no reply");
	write_state(f);
}

static void *fleet_main(void *arg)
{
	struct fg_fleet *f = arg;
	__u64 poll = f->conf.sync_ns / 5 < BAN_POLL_NS ? f->conf.sync_ns / 5 : BAN_POLL_NS;
	__u64 next = fg_monotonic_ns(), now, wake;
	struct timespec deadline;

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		pthread_mutex_unlock(&f->lock);
		now = fg_monotonic_ns();
		if (now >= next) {
			sync_tick(f);
			next += f->conf.sync_ns;
			if (next < now)
				next = now; /* late: no catching up */
		} else if (f->redis && fg_fleet_unpublished_ban(f)) {
			publish_bans_now(f);
		}
		wake = now + poll < next ? now + poll : next;
		deadline.tv_sec = wake / FG_NS_PER_S;
		deadline.tv_nsec = wake % FG_NS_PER_S;
		pthread_mutex_lock(&f->lock);
		while (!f->stop &&
		       pthread_cond_timedwait(&f->wake, &f->lock, &deadline) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* --- start and stop ---------------------------------------------------------------- */

static void fleet_free(struct fg_fleet *f)
{
	if (f->redis)
		redisFree(f->redis);
	fg_pinned_close(&f->pinned);
	free(f->set);
	free(f->items);
	fg_fleet_bans_free(f);
	free(f);
}

int fg_fleet_start(const char *ifname, const struct fg_fleet_conf *conf, struct fg_fleet **out)
{
	struct fg_fleet *f = calloc(1, sizeof(*f));
	char pin_dir[PATH_MAX];
	struct fg_err e = {0};
	pthread_condattr_t attr;
	__u32 zero = 0;
	int err;

	*out = NULL;
	if (!f || !(f->set = malloc(sizeof(*f->set)))) {
		free(f);
		return -ENOMEM;
	}
	snprintf(f->ifname, sizeof(f->ifname), "%s", ifname);
	f->conf = *conf;
	if (conf->unix_path[0])
		snprintf(f->where, sizeof(f->where), "unix:%s", conf->unix_path);
	else
		snprintf(f->where, sizeof(f->where), strchr(conf->host, ':') ? "[%s]:%u" : "%s:%u",
			 conf->host, conf->port);
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = fg_pinned_open(pin_dir, &f->pinned, &e);
	if (err) {
		pr_warn("Error: %s\n", e.msg);
		fg_pinned_close(&f->pinned);
		free(f->set);
		free(f);
		return err;
	}
	/* Counters survive a restart of `run` (or a SIGHUP that restarts the
	 * thread); the epoch and the connection start afresh. */
	bpf_map_lookup_elem(f->pinned.fleet_state, &zero, &f->state);
	fg_fleet_bans_init(f);
	/* Counts left by a `load` without a `run`, or by an earlier `run`,
	 * are stale: they are not sent. */
	drain_epoch(f, 0);
	drain_epoch(f, 1);
	f->n_items = 0;
	f->state.syncing = 1;
	f->state.connected = 0;
	f->state.refuse_all = 0;
	write_state(f);
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&f->wake, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&f->thread, NULL, fleet_main, f);
	if (err) {
		fleet_free(f);
		return -err;
	}
	*out = f;
	return 0;
}

void fg_fleet_stop(struct fg_fleet *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	f->state.syncing = 0;
	f->state.connected = 0;
	f->state.refuse_all = 0;
	write_state(f);
	fleet_free(f);
}

void fg_fleet_disown(const char *ifname)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_fleet_state st;
	char pin_dir[PATH_MAX];
	struct fg_err e = {0};
	__u32 zero = 0;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!fg_pinned_open(pin_dir, &pinned, &e) &&
	    !bpf_map_lookup_elem(pinned.fleet_state, &zero, &st) && st.syncing) {
		st.syncing = 0;
		st.connected = 0;
		st.refuse_all = 0;
		if (bpf_map_update_elem(pinned.fleet_state, &zero, &st, BPF_ANY))
			pr_warn("fleet: cannot write fleet_state: %s\n", strerror(errno));
	}
	fg_pinned_close(&pinned);
}
