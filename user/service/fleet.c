// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fleet-wide limits through Redis (README, "Fleet-wide limits through
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
#include "service/fleet.h"
#include "base/log.h"
#include "maps/pinned.h"
#include "config/values.h"

/* KEYS[1]: the key's fleet state (its GCRA TAT, microseconds of the server's
 * clock). ARGV: T and tau in microseconds, and the admissions to add. The
 * hosts have admitted them already, so they are always added; the answer is
 * how long (µs) the key must be held until one more unit conforms, or 0. */
const char fg_fleet_rate_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local T, tau, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])\n"
	"local tat = tonumber(redis.call('GET', KEYS[1])) or 0\n"
	"if tat < now then tat = now end\n"
	"tat = tat + cost * T\n"
	"redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX',\n"
	"           math.floor((tat - now) / 1000) + 1000)\n"
	"local hold = tat - tau + T - now\n"
	"if hold > 0 then return math.ceil(hold) end\n"
	"return 0\n";

/* KEYS[1]: the sorted set of fleet bans, member "ADDR/LEN", score its end
 * (µs of the server's clock, inf = until unbanned). ARGV: pairs of member
 * and time left in µs (-1: until unbanned, 0: unbanned here). Returns
 * every ban in force as pairs of member and time left (-1: until
 * unbanned). */
const char fg_fleet_bans_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"for i = 1, #ARGV, 2 do\n"
	"  local left = tonumber(ARGV[i + 1])\n"
	"  if left == 0 then redis.call('ZREM', KEYS[1], ARGV[i])\n"
	"  elseif left < 0 then redis.call('ZADD', KEYS[1], 'GT', '+inf', ARGV[i])\n"
	"  else redis.call('ZADD', KEYS[1], 'GT', string.format('%.0f', now + left), ARGV[i]) end\n"
	"end\n"
	"local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
	"local out = {}\n"
	"for i = 1, #all, 2 do\n"
	"  local score = tonumber(all[i + 1])\n"
	"  out[#out + 1] = all[i]\n"
	"  if score == math.huge then out[#out + 1] = '-1'\n"
	"  else out[#out + 1] = string.format('%.0f', score - now) end\n"
	"end\n"
	"return out\n";

#define NS_PER_US      1000ULL
#define MAX_BACKOFF_NS (5ULL * FG_NS_PER_S)
#define MAX_TIMEOUT_NS FG_NS_PER_S
#define REDIS_KEY_LEN  (FG_FLEET_PREFIX_LEN + FG_POLICY_NAME_LEN + 80)
#define MEMBER_LEN     (INET6_ADDRSTRLEN + 8)
#define PERMANENT      (~0ULL)
/* New local bans are looked for this often between syncs, in tables of up
 * to BAN_POLL_MAX entries. */
#define BAN_POLL_NS    (50ULL * 1000 * 1000)
#define BAN_POLL_MAX   4096

/* One fleet-scoped key's admissions in the epoch just closed. */
struct fleet_item {
	struct fg_source_key key;
	__u64 cost; /* packets, or bytes for a byte rate */
	const struct fg_policy *policy;
	long long hold_us; /* the rate script's answer; -1: none */
};

/* A local ban sent to the fleet, to withdraw it if it is lifted here. */
struct published_ban {
	char member[MEMBER_LEN];
	__u64 expires_ns;
};

struct fg_fleet {
	char ifname[IF_NAMESIZE];
	struct fg_fleet_conf conf;
	char where[FG_FLEET_HOST_LEN + FG_FLEET_UNIX_PATH_LEN + 8]; /* for messages */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct fg_pinned pinned;
	struct fg_policy_set *set;
	redisContext *redis;
	char rate_sha[41], bans_sha[41];
	bool down; /* an outage is in progress (logged once) */
	__u64 next_connect_ns, backoff_ns;
	struct fg_fleet_state state; /* what fleet_state holds */
	struct fleet_item *items;
	size_t n_items, cap_items;
	struct published_ban *published;
	size_t n_published;
};

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * FG_NS_PER_S + ts.tv_nsec;
}

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
	char why[128];

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
	f->next_connect_ns = clock_ns(CLOCK_MONOTONIC) + f->backoff_ns;
}

static bool load_script(struct fg_fleet *f, const char *script, char *sha)
{
	redisReply *reply = redisCommand(f->redis, "SCRIPT LOAD %s", script);
	bool ok = reply && reply->type == REDIS_REPLY_STRING && reply->len == 40;

	if (ok)
		memcpy(sha, reply->str, 41);
	else if (reply)
		pr_warn("fleet: SCRIPT LOAD refused: %s\n",
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
	if (clock_ns(CLOCK_MONOTONIC) < f->next_connect_ns)
		return false;
	f->redis = f->conf.unix_path[0] ? redisConnectUnixWithTimeout(f->conf.unix_path, tv)
					: redisConnectWithTimeout(f->conf.host, f->conf.port, tv);
	if (!f->redis || f->redis->err) {
		disconnect(f, f->redis ? f->redis->errstr : "out of memory");
		return false;
	}
	redisSetTimeout(f->redis, tv);
	if (!load_scripts(f)) {
		disconnect(f, f->redis->err ? f->redis->errstr : "the scripts were refused");
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

/* Reads and deletes one epoch's counts into f->items. */
static int drain_epoch(struct fg_fleet *f, __u32 epoch)
{
	int fd = f->pinned.fleet_counts, ncpus = libbpf_num_possible_cpus(), cpu;
	struct fg_fleet_count *values = calloc(ncpus, sizeof(*values));
	struct fg_fleet_key key, *prev = NULL;
	size_t first = f->n_items, i;

	if (!values)
		return -ENOMEM;
	/* Keys first, then values and deletes: a walk that deletes as it
	 * goes restarts from the first key. */
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		struct fleet_item *item;

		prev = &key;
		if (key.epoch != epoch)
			continue;
		item = add_item(f);
		if (!item)
			break;
		memset(item, 0, sizeof(*item));
		item->key = key.key;
	}
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
		*t_us = (double)gcra->interval_fp / (1 << FG_GCRA_FRAC_BITS) / NS_PER_US;
		*tau_us = (double)gcra->tolerance_ns / NS_PER_US;
		return;
	}
	*t_us = (double)period_ns / count / NS_PER_US;
	*tau_us = (double)period_ns / NS_PER_US;
}

static void format_addr(const struct fg_source_key *key, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	inet_ntop(key->family == FG_FAMILY_IPV6 ? AF_INET6 : AF_INET, key->addr, addr,
		  sizeof(addr));
	snprintf(buf, size, "%s/%u", addr, key->prefix_len);
}

/* PREFIX rate:POLICY:SOURCE[:DPORT], SOURCE being ADDR/LEN, global or
 * overflow (the shared key of sources past the new-source budget). */
static void rate_key(const struct fg_fleet *f, const struct fleet_item *item, char *buf,
		     size_t size)
{
	char source[MEMBER_LEN];

	if (item->key.family == FG_FAMILY_IPV4 || item->key.family == FG_FAMILY_IPV6)
		format_addr(&item->key, source, sizeof(source));
	else
		snprintf(source, sizeof(source), "%s",
			 item->key.family == FG_FAMILY_OVERFLOW ? "overflow" : "global");
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
	struct fg_fleet_hold value = {.until_ns = now_mono + (__u64)item->hold_us * NS_PER_US};

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

/* --- bans -------------------------------------------------------------------------- */

static void ban_member(const struct fg_ban *ban, const struct fg_src_lpm_key *key, char *buf,
		       size_t size)
{
	struct fg_source_key k = {.family = ban->family, .prefix_len = ban->prefix_len};

	memcpy(k.addr, key->addr, sizeof(k.addr));
	format_addr(&k, buf, size);
}

static bool is_published(const struct published_ban *list, size_t n, const char *member)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i].member, member))
			return true;
	return false;
}

/* A command's arguments, for redisAppendCommandArgv. */
struct fleet_argv {
	char **v;
	size_t n, cap;
};

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

static void free_argv(struct fleet_argv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* The script's argv (after EVALSHA SHA 1 KEY): this host's bans in force
 * that it made itself (not copies of the fleet's), and those it published
 * before and has lifted since (time left 0). Updates f->published. */
static int local_bans_args(struct fg_fleet *f, struct fleet_argv *args)
{
	struct published_ban *now_published = NULL;
	struct fg_src_lpm_key key, *prev = NULL;
	__u64 now = clock_ns(CLOCK_MONOTONIC);
	size_t n = 0, fresh = 0, i;
	struct fg_ban ban;
	int err = 0;

	while (!err && !bpf_map_get_next_key(f->pinned.bans, prev, &key)) {
		struct published_ban *grown;

		prev = &key;
		if (bpf_map_lookup_elem(f->pinned.bans, &key, &ban) || ban.expires_ns <= now ||
		    ban.policy_id == FG_FLEET_BAN_POLICY_ID)
			continue;
		grown = realloc(now_published, (n + 1) * sizeof(*grown));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		now_published = grown;
		ban_member(&ban, &key, grown[n].member, sizeof(grown[n].member));
		grown[n].expires_ns = ban.expires_ns;
		fresh += !is_published(f->published, f->n_published, grown[n].member);
		err = push_ban(args, grown[n].member,
			       ban.expires_ns == PERMANENT
				       ? -1
				       : (long long)((ban.expires_ns - now) / NS_PER_US) + 1);
		n++;
	}
	for (i = 0; !err && i < f->n_published; i++)
		if (f->published[i].expires_ns > now &&
		    !is_published(now_published, n, f->published[i].member))
			err = push_ban(args, f->published[i].member, 0);
	if (err) {
		free(now_published);
		return err;
	}
	f->state.bans_published += fresh;
	free(f->published);
	f->published = now_published;
	f->n_published = n;
	return 0;
}

/* Copies one fleet ban into `bans`, unless this host has its own, or the
 * same copy already. */
static void apply_ban(struct fg_fleet *f, const char *member, long long left_us, __u64 now)
{
	struct fg_ban old, ban = {.strikes = 1, .policy_id = FG_FLEET_BAN_POLICY_ID};
	struct fg_src_lpm_key key = {0};
	struct fg_cidr cidr;
	bool have;

	if (fg_parse_cidr(member, &cidr))
		return;
	key.prefixlen = FG_SRC_LPM_HEADER_BITS + cidr.prefix_len;
	key.family = cidr.family;
	memcpy(key.addr, cidr.addr, sizeof(key.addr));
	ban.family = cidr.family;
	ban.prefix_len = cidr.prefix_len;
	ban.expires_ns = left_us < 0 ? PERMANENT : now + (__u64)left_us * NS_PER_US;
	ban.duration_ns = left_us < 0 ? 0 : (__u64)left_us * NS_PER_US;
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

/* Deletes the copies of fleet bans the fleet no longer has. */
static void drop_lifted_copies(struct fg_fleet *f, const redisReply *list, __u64 now)
{
	struct fg_src_lpm_key key, *prev = NULL, doomed[64];
	size_t n = 0, i;
	struct fg_ban ban;

	while (n < 64 && !bpf_map_get_next_key(f->pinned.bans, prev, &key)) {
		char member[MEMBER_LEN];
		bool listed = false;

		prev = &key;
		if (bpf_map_lookup_elem(f->pinned.bans, &key, &ban) ||
		    ban.policy_id != FG_FLEET_BAN_POLICY_ID || ban.expires_ns <= now)
			continue;
		ban_member(&ban, &key, member, sizeof(member));
		for (i = 0; i + 1 < list->elements && !listed; i += 2)
			listed = !strcmp(list->element[i]->str, member);
		if (!listed)
			doomed[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(f->pinned.bans, &doomed[i]);
}

/* EVALSHA SHA 1 PREFIXbans, then the local bans (local_bans_args). */
static int bans_command(struct fg_fleet *f, struct fleet_argv *args)
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
		free_argv(args);
	return err;
}

/* Applies the bans script's answer: the fleet's bans in force. */
static void apply_bans(struct fg_fleet *f, const redisReply *reply)
{
	__u64 now = clock_ns(CLOCK_MONOTONIC);
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

/* --- one sync ---------------------------------------------------------------------- */

static void hold_all(struct fg_fleet *f)
{
	__u64 now_mono = clock_ns(CLOCK_MONOTONIC);
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
	struct fleet_argv bans = {0};
	redisReply *bans_reply = NULL;
	size_t i;
	int ret;

	bans_command(f, &bans); /* out of memory: no bans this time */
	for (i = 0; i < f->n_items; i++)
		append_rate(f, &f->items[i]);
	if (bans.n)
		redisAppendCommandArgv(f->redis, (int)bans.n, (const char **)bans.v, NULL);
	ret = read_rate_replies(f);
	if (ret >= 0 && bans.n && redisGetReply(f->redis, (void **)&bans_reply) != REDIS_OK)
		ret = -1;
	free_argv(&bans);
	if (bans_reply) {
		if (bans_reply->type == REDIS_REPLY_ERROR &&
		    !strncmp(bans_reply->str, "NOSCRIPT", 8))
			ret = ret < 0 ? ret : 1; /* the bans go out next time */
		else
			apply_bans(f, bans_reply);
		freeReplyObject(bans_reply);
	}
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

/* Deletes the holds that have ended and counts those in force. */
static void purge_holds(struct fg_fleet *f)
{
	struct fg_source_key key, *prev = NULL, ended[256];
	struct fg_fleet_hold value;
	__u64 now = clock_ns(CLOCK_MONOTONIC), held = 0;
	size_t n = 0, i;

	while (!bpf_map_get_next_key(f->pinned.fleet_holds, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(f->pinned.fleet_holds, &key, &value))
			continue;
		if (value.until_ns > now)
			held++;
		else if (n < sizeof(ended) / sizeof(ended[0]))
			ended[n++] = key; /* the rest go next time, or to the LRU */
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(f->pinned.fleet_holds, &ended[i]);
	f->state.keys_held = held;
}

static void sync_tick(struct fg_fleet *f)
{
	__u64 start = clock_ns(CLOCK_MONOTONIC);
	int err = collect_counts(f);

	if (err)
		pr_warn("fleet: cannot read the fleet counts: %s\n", strerror(-err));
	if (ensure_connected(f)) {
		if (sync_once(f) == 0) {
			f->state.syncs++;
			f->state.last_sync_ns = clock_ns(CLOCK_REALTIME);
			f->state.sync_latency_ns = clock_ns(CLOCK_MONOTONIC) - start;
		} else {
			disconnect(f, f->redis->err ? f->redis->errstr : "no reply");
		}
	}
	/* Down: the counts just read are dropped; the local limits hold. */
	purge_holds(f);
	write_state(f);
}

/* Has this host a ban in force that it has not published yet? Looks at
 * BAN_POLL_MAX entries at most: a larger table waits for the next sync. */
static bool unpublished_ban(struct fg_fleet *f)
{
	struct fg_src_lpm_key key, *prev = NULL;
	__u64 now = clock_ns(CLOCK_MONOTONIC);
	struct fg_ban ban;
	int seen = 0;

	while (seen++ < BAN_POLL_MAX && !bpf_map_get_next_key(f->pinned.bans, prev, &key)) {
		char member[MEMBER_LEN];

		prev = &key;
		if (bpf_map_lookup_elem(f->pinned.bans, &key, &ban) || ban.expires_ns <= now ||
		    ban.policy_id == FG_FLEET_BAN_POLICY_ID)
			continue;
		ban_member(&ban, &key, member, sizeof(member));
		if (!is_published(f->published, f->n_published, member))
			return true;
	}
	return false;
}

/* A new local ban goes out at once, so that every host applies it within
 * one sync interval (at its own next sync). */
static void publish_bans_now(struct fg_fleet *f)
{
	struct fleet_argv bans = {0};
	redisReply *reply;

	if (bans_command(f, &bans))
		return;
	reply = redisCommandArgv(f->redis, (int)bans.n, (const char **)bans.v, NULL);
	free_argv(&bans);
	if (!reply) {
		disconnect(f, f->redis->errstr);
		write_state(f);
		return;
	}
	apply_bans(f, reply);
	freeReplyObject(reply);
	write_state(f);
}

static void *fleet_main(void *arg)
{
	struct fg_fleet *f = arg;
	__u64 poll = f->conf.sync_ns / 5 < BAN_POLL_NS ? f->conf.sync_ns / 5 : BAN_POLL_NS;
	__u64 next = clock_ns(CLOCK_MONOTONIC), now, wake;
	struct timespec deadline;

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		pthread_mutex_unlock(&f->lock);
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= next) {
			sync_tick(f);
			next += f->conf.sync_ns;
			if (next < now)
				next = now; /* late: no catching up */
		} else if (f->redis && unpublished_ban(f)) {
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
	free(f->published);
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
