// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate events IFACE [--json]`: one line per event. The datapath writes
 * struct fg_event records into the `events` ring buffer, already capped by
 * its per-CPU event budget; a ban's end is no record (the datapath has no
 * timer), so the reader keeps the active bans it saw and scans `bans` once
 * a second to report the ones that ended.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "policy/readback.h"
#include "maps/loaded.h"
#include "views/events.h"
#include "cli/exit.h" /* until the read models return struct fg_err alone */
#include "base/log.h"
#include "maps/pinned.h"
#include "views/report.h"
#include "config/values.h"

#define POLL_MS		 200
#define BAN_SCAN_NS	 FG_NS_PER_S
#define FG_BAN_FOREVER	 (~0ULL)
#define TIME_TEXT_LENGTH 64 /* gmtime_r fields are ints to the compiler */

/* An active ban the reader saw, until it ends. */
struct tracked_ban {
	struct fg_src_lpm_key key;
	__u64 expires_ns;
	__u32 policy_id;
	bool seen; /* in the latest scan */
};

struct reader {
	struct fg_pinned pinned;
	struct fg_policy_set *set; /* the active policies, for names */
	__u64 generation;	   /* of `set`; a reload bumps it */
	bool json;
	struct tracked_ban *bans;
	size_t n_bans, cap_bans;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

const char *fg_event_name(__u32 type)
{
	switch (type) {
	case FG_EVENT_REFUSING:
		return "refusing";
	case FG_EVENT_BANNED:
		return "banned";
	case FG_EVENT_BUDGET_EXHAUSTED:
		return "budget_exhausted";
	case FG_EVENT_TABLE_FULL:
		return "table_full";
	case FG_EVENT_KIND_BAN_EXPIRED:
		return "ban_expired";
	case FG_EVENT_KIND_UNBANNED:
		return "unbanned";
	}
	return "unknown";
}

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * FG_NS_PER_S + ts.tv_nsec;
}

/* A datapath time (CLOCK_MONOTONIC, as bpf_ktime_get_ns) as UTC ISO 8601
 * with milliseconds. */
static void format_time(__u64 mono_ns, char *buf, size_t size)
{
	__u64 wall = clock_ns(CLOCK_REALTIME) - (clock_ns(CLOCK_MONOTONIC) - mono_ns);
	time_t secs = (time_t)(wall / FG_NS_PER_S);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned int)(wall % FG_NS_PER_S / 1000000));
}

/* Re-reads the policy names when a reload changed them. */
static void refresh_policies(struct reader *r)
{
	struct fg_runtime rt;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(r->pinned.maps.runtime, &zero, &rt) ||
	    rt.generation == r->generation)
		return;
	if (!fg_read_active_set(&r->pinned, r->set))
		r->generation = rt.generation;
}

static const char *policy_name(struct reader *r, __u32 policy_id)
{
	const struct fg_policy *p;

	if (!policy_id)
		return NULL; /* a ban by hand */
	refresh_policies(r);
	p = fg_policy_by_id(r->set, policy_id);
	return p ? p->name : "(a removed policy)";
}

/* One line. `expires_ns` is printed for bans only. */
static void print_event(struct reader *r, __u32 type, const struct fg_source_key *key,
			__u64 time_ns, __u64 expires_ns)
{
	const char *policy = policy_name(r, key->policy_id);
	char when[TIME_TEXT_LENGTH], until[TIME_TEXT_LENGTH], source[INET6_ADDRSTRLEN + 16];

	format_time(time_ns, when, sizeof(when));
	fg_format_key(key, source, sizeof(source));
	if (type == FG_EVENT_BANNED && expires_ns != FG_BAN_FOREVER)
		format_time(expires_ns, until, sizeof(until));
	else
		snprintf(until, sizeof(until), "never");
	if (r->json) {
		printf("{\"time\":\"%s\",\"type\":\"%s\",\"source\":\"%s\",", when,
		       fg_event_name(type), source);
		printf(key->dport ? "\"dport\":%u," : "\"dport\":null,", key->dport);
		printf(policy ? "\"policy\":\"%s\"" : "\"policy\":null", policy);
		if (type == FG_EVENT_BANNED)
			printf(expires_ns == FG_BAN_FOREVER ? ",\"expires\":null"
							    : ",\"expires\":\"%s\"",
			       until);
		printf("}\n");
	} else {
		printf("%s %-16s %s", when, fg_event_name(type), source);
		if (key->dport)
			printf(" dport %u", key->dport);
		printf(" policy %s", policy ? policy : "(by hand)");
		if (type == FG_EVENT_BANNED)
			printf(" until %s", until);
		printf("\n");
	}
	fflush(stdout);
}

static struct fg_src_lpm_key ban_key_of(const struct fg_source_key *key)
{
	struct fg_src_lpm_key lpm = {.prefixlen = FG_SRC_LPM_HEADER_BITS + key->prefix_len,
				     .family = key->family};

	memcpy(lpm.addr, key->addr, sizeof(lpm.addr));
	return lpm;
}

static struct fg_source_key source_key_of(const struct fg_src_lpm_key *lpm, __u32 policy_id)
{
	struct fg_source_key key = {.policy_id = policy_id,
				    .family = lpm->family,
				    .prefix_len = lpm->prefixlen - FG_SRC_LPM_HEADER_BITS};

	memcpy(key.addr, lpm->addr, sizeof(key.addr));
	return key;
}

/* Starts or updates the tracking of an active ban. */
static int track_ban(struct reader *r, const struct fg_src_lpm_key *key, const struct fg_ban *ban)
{
	struct tracked_ban *t;
	size_t i;

	for (i = 0; i < r->n_bans; i++) {
		t = &r->bans[i];
		if (!memcmp(&t->key, key, sizeof(*key)))
			goto update;
	}
	if (r->n_bans == r->cap_bans) {
		size_t cap = r->cap_bans ? 2 * r->cap_bans : 64;
		struct tracked_ban *grown = realloc(r->bans, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->bans = grown;
		r->cap_bans = cap;
	}
	t = &r->bans[r->n_bans++];
	t->key = *key;
update:
	t->expires_ns = ban->expires_ns;
	t->policy_id = ban->policy_id;
	t->seen = true;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct reader *r = ctx;
	struct fg_event event;
	struct fg_source_key key = {0};

	if (size < sizeof(event))
		return 0; /* not a record of this layout */
	memcpy(&event, data, sizeof(event));
	key.policy_id = event.policy_id;
	key.family = event.family;
	key.prefix_len = event.prefix_len;
	key.dport = event.dport;
	memcpy(key.addr, event.addr, sizeof(key.addr));
	print_event(r, event.type, &key, event.time_ns, event.expires_ns);
	if (event.type == FG_EVENT_BANNED) {
		struct fg_src_lpm_key lpm = ban_key_of(&key);
		struct fg_ban ban = {.expires_ns = event.expires_ns, .policy_id = event.policy_id};

		track_ban(r, &lpm, &ban);
	}
	return 0;
}

/* Tracks every active ban of the trie, then reports the tracked bans that
 * ended: at their expiry, or now for one removed while active. */
static void scan_bans(struct reader *r, __u64 now)
{
	struct fg_src_lpm_key key, next;
	void *prev = NULL;
	size_t i = 0;

	for (i = 0; i < r->n_bans; i++)
		r->bans[i].seen = false;
	while (!bpf_map_get_next_key(r->pinned.bans, prev, &next)) {
		struct fg_ban ban;

		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(r->pinned.bans, &key, &ban) && ban.expires_ns > now)
			track_ban(r, &key, &ban);
	}
	for (i = 0; i < r->n_bans;) {
		struct tracked_ban *t = &r->bans[i];
		struct fg_source_key source = source_key_of(&t->key, t->policy_id);

		if (t->expires_ns <= now)
			print_event(r, FG_EVENT_KIND_BAN_EXPIRED, &source, t->expires_ns, 0);
		else if (!t->seen)
			print_event(r, FG_EVENT_KIND_UNBANNED, &source, now, 0);
		else {
			i++;
			continue;
		}
		*t = r->bans[--r->n_bans];
	}
}

static void catch_stop_signals(void)
{
	struct sigaction sa = {.sa_handler = request_stop}; /* no SA_RESTART: poll returns */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Polls the ring until a stop signal, or until floodgate is unloaded. */
static int stream(struct reader *r, struct ring_buffer *rb, const char *pin_dir)
{
	__u64 next_scan = 0;

	while (!stop_requested) {
		int err = ring_buffer__poll(rb, POLL_MS);
		__u64 now = clock_ns(CLOCK_MONOTONIC);

		if (err < 0 && err != -EINTR) {
			pr_warn("Error: cannot read the events ring: %s\n", strerror(-err));
			return FG_EXIT_FAILURE;
		}
		if (now < next_scan)
			continue;
		next_scan = now + BAN_SCAN_NS;
		scan_bans(r, now);
		if (access(pin_dir, F_OK)) {
			pr_info("floodgate was unloaded; no more events\n");
			return FG_EXIT_OK;
		}
	}
	return FG_EXIT_OK;
}

int fg_cmd_events(const char *ifname, bool json)
{
	struct reader r = {.pinned = FG_PINNED_INIT, .json = json};
	struct ring_buffer *rb = NULL;
	char pin_dir[PATH_MAX];
	struct fg_err open_err = {0};
	int ret;

	r.set = calloc(1, sizeof(*r.set));
	if (!r.set)
		return FG_EXIT_FAILURE;
	if (fg_open_loaded(ifname, &r.pinned, &open_err)) {
		ret = fg_exit_report(&open_err);
		goto out;
	}
	r.generation = ~0ULL;
	refresh_policies(&r);
	rb = ring_buffer__new(r.pinned.events, on_record, &r, NULL);
	if (!rb) {
		pr_warn("Error: cannot read the events of %s: %s\n", ifname, strerror(errno));
		ret = FG_EXIT_FAILURE;
		goto out;
	}
	catch_stop_signals();
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	ret = stream(&r, rb, pin_dir);
out:
	ring_buffer__free(rb);
	fg_pinned_close(&r.pinned);
	free(r.bans);
	free(r.set);
	return ret;
}
