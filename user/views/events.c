// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate events IFACE`: the event stream, as data. The datapath writes
 * struct fg_event records into the `events` ring buffer, already capped by
 * its per-CPU event budget; a ban's end is no record (the datapath has no
 * timer), so the reader keeps the active bans it saw and scans `bans` once
 * a second to report the ones that ended.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/lpmkey.h"
#include "maps/pinned.h"
#include "policy/readback.h"
#include "views/events.h"

#define POLL_MS	       200
#define BAN_SCAN_NS    FG_NS_PER_S
#define FG_BAN_FOREVER (~0ULL)

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
	int (*fn)(const struct fg_event_view *event, void *ctx);
	void *ctx;
	int stopped; /* fn's non-zero return */
	struct tracked_ban *bans;
	size_t n_bans, cap_bans;
};

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

/* A datapath time (CLOCK_MONOTONIC, as bpf_ktime_get_ns) on the wall clock. */
static __u64 wall_ns(__u64 mono_ns)
{
	return fg_clock_ns(CLOCK_REALTIME) - (fg_monotonic_ns() - mono_ns);
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

/* Hands one event to the reader's callback. `expires_ns` is a ban's. */
static void report(struct reader *r, __u32 type, const struct fg_source_key *key, __u64 time_ns,
		   __u64 expires_ns)
{
	struct fg_event_view event = {.type = type,
				      .dport = key->dport,
				      .policy = policy_name(r, key->policy_id),
				      .time_ns = wall_ns(time_ns),
				      .is_ban = type == FG_EVENT_BANNED};

	fg_format_key(key, event.source, sizeof(event.source));
	event.forever = event.is_ban && expires_ns == FG_BAN_FOREVER;
	if (event.is_ban && !event.forever)
		event.expires_ns = wall_ns(expires_ns);
	if (!r->stopped)
		r->stopped = r->fn(&event, r->ctx);
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
	report(r, event.type, &key, event.time_ns, event.expires_ns);
	if (event.type == FG_EVENT_BANNED) {
		struct fg_src_lpm_key lpm = fg_ban_key_of_source(&key);
		struct fg_ban ban = {.expires_ns = event.expires_ns, .policy_id = event.policy_id};

		track_ban(r, &lpm, &ban);
	}
	return 0;
}

struct ban_scan {
	struct reader *r;
	__u64 now;
};

static int track_if_active(const void *key, void *ctx)
{
	struct ban_scan *scan = ctx;
	struct fg_ban ban;

	if (!bpf_map_lookup_elem(scan->r->pinned.bans, key, &ban) && ban.expires_ns > scan->now)
		track_ban(scan->r, key, &ban);
	return 0;
}

/* Tracks every active ban of the trie, then reports the tracked bans that
 * ended: at their expiry, or now for one removed while active. */
static void scan_bans(struct reader *r, __u64 now)
{
	struct ban_scan scan = {.r = r, .now = now};
	size_t i;

	for (i = 0; i < r->n_bans; i++)
		r->bans[i].seen = false;
	fg_map_for_each_key(r->pinned.bans, sizeof(struct fg_src_lpm_key), track_if_active, &scan);
	for (i = 0; i < r->n_bans;) {
		struct tracked_ban *t = &r->bans[i];
		struct fg_source_key source = fg_source_of_lpm_key(&t->key, t->policy_id);

		if (t->expires_ns <= now)
			report(r, FG_EVENT_KIND_BAN_EXPIRED, &source, t->expires_ns, 0);
		else if (!t->seen)
			report(r, FG_EVENT_KIND_UNBANNED, &source, now, 0);
		else {
			i++;
			continue;
		}
		*t = r->bans[--r->n_bans];
	}
}

/* Polls the ring until a stop, or until floodgate is unloaded. */
static int stream(struct reader *r, struct ring_buffer *rb, const char *pin_dir,
		  const volatile sig_atomic_t *stop, struct fg_err *err)
{
	__u64 next_scan = 0;

	while (!*stop && !r->stopped) {
		int rc = ring_buffer__poll(rb, POLL_MS);
		__u64 now = fg_monotonic_ns();

		if (rc < 0 && rc != -EINTR)
			return fg_fail(err, FG_ERR_SYSTEM, "cannot read the events ring: %s",
				       strerror(-rc));
		if (now < next_scan)
			continue;
		next_scan = now + BAN_SCAN_NS;
		scan_bans(r, now);
		if (access(pin_dir, F_OK)) {
			pr_info("floodgate was unloaded; no more events\n");
			return 0;
		}
	}
	return 0;
}

int fg_events_stream(const char *ifname, const volatile sig_atomic_t *stop,
		     int (*fn)(const struct fg_event_view *event, void *ctx), void *ctx,
		     struct fg_err *err)
{
	struct reader r = {.pinned = FG_PINNED_INIT, .fn = fn, .ctx = ctx};
	struct ring_buffer *rb = NULL;
	char pin_dir[PATH_MAX];
	int rc = -1;

	r.set = calloc(1, sizeof(*r.set));
	if (!r.set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the events of %s",
			       ifname);
	if (fg_open_loaded(ifname, &r.pinned, err))
		goto out;
	r.generation = ~0ULL;
	refresh_policies(&r);
	rb = ring_buffer__new(r.pinned.events, on_record, &r, NULL);
	if (!rb) {
		fg_fail(err, FG_ERR_SYSTEM, "cannot read the events of %s: %s", ifname,
			strerror(errno));
		goto out;
	}
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	rc = stream(&r, rb, pin_dir, stop, err);
out:
	ring_buffer__free(rb);
	fg_pinned_close(&r.pinned);
	free(r.bans);
	free(r.set);
	return rc;
}
