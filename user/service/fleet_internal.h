/* SPDX-License-Identifier: GPL-2.0-only */
/* The fleet sync's own state, shared by its rate half (user/service/fleet.c)
 * and its bans half (user/service/fleet_bans.c). Not for other modules. */
#ifndef FG_FLEET_INTERNAL_H
#define FG_FLEET_INTERNAL_H

#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "config/config.h"
#include "config/values.h"
#include "maps/pinned.h"
#include "ops/banguard.h"

#define MAX_BACKOFF_NS (5ULL * FG_NS_PER_S)
#define MAX_TIMEOUT_NS FG_NS_PER_S
#define REDIS_KEY_LEN  (FG_FLEET_PREFIX_LEN + FG_POLICY_NAME_LEN + 80)
#define MEMBER_LEN     (INET6_ADDRSTRLEN + 8)
#define PERMANENT      (~0ULL)
/* New local bans are looked for this often between syncs, in tables of up
 * to BAN_POLL_MAX entries. */
#define BAN_POLL_NS    (50ULL * 1000 * 1000)
#define BAN_POLL_MAX   4096
/* Bounds on the fleet's bans (docs/fleet.md, "What the fleet may ban"): pairs
 * of member and time left per push command, changes per pull, members
 * per page of a full pull (every FULL_SYNC_NS, and after a reconnection),
 * and pairs one reply may carry at most (the rest are refused). */
#define PUSH_BATCH     1000
#define PULL_BATCH     4096
#define SCAN_BATCH     4096
#define MAX_REPLY_BANS (2 * PULL_BATCH)
#define FULL_SYNC_NS   (300ULL * FG_NS_PER_S)
/* The longest hold the fleet may ask: a longer one is cut (the key goes
 * back to Redis when it ends, and is held again if still over). */
#define MAX_HOLD_NS    (60ULL * FG_NS_PER_S)
/* The change log (a stream) keeps about this many entries. */
#define LOG_KEEP       200000

/* One fleet-scoped key's admissions in the epoch just closed. */
struct fleet_item {
	struct fg_source_key key;
	__u64 cost; /* packets, or bytes for a byte rate */
	const struct fg_policy *policy;
	long long hold_us; /* the rate script's answer; -1: none */
};

/* One prefix of the fleet's bans (fleet_table.c), keyed as `bans` keys
 * it. `published`: this host's own bans sent to Redis, with the end it
 * sent. `copies`: the fleet's bans this host knows of, in one of the
 * states below, with the end they have here. */
struct fleet_entry {
	struct fg_src_lpm_key key;
	__u64 expires_ns; /* monotonic; PERMANENT: until unbanned */
	__u32 walked;	  /* the walk of `bans` that last saw it */
	__u32 scanned;	  /* the full pull that last saw it */
	__u8 state;	  /* enum copy_state (copies only) */
	__u8 slot;	  /* SLOT_FREE, SLOT_USED or SLOT_GONE */
};

enum copy_state {
	COPY_APPLIED = 1, /* in `bans` with FG_FLEET_BAN_POLICY_ID */
	COPY_REFUSED,	  /* refused (counted and logged once) */
	COPY_LIFTED_HERE, /* lifted here by hand: not applied again before it ends */
};

enum { SLOT_FREE, SLOT_USED, SLOT_GONE };

/* An open-addressing hash table of fleet entries. Pointers into it last
 * until the next insert. */
struct fleet_table {
	struct fleet_entry *slots;
	size_t cap, used, gone;
};

/* The used entry after `e` (the first with NULL), or NULL. */
struct fleet_entry *fg_fleet_table_next(const struct fleet_table *t, struct fleet_entry *e);

struct fleet_entry *fg_fleet_table_find(const struct fleet_table *t,
					const struct fg_src_lpm_key *key);
/* Finds `key`, or adds it zeroed but for the key. NULL: out of memory. */
struct fleet_entry *fg_fleet_table_add(struct fleet_table *t, const struct fg_src_lpm_key *key);
void fg_fleet_table_remove(struct fleet_table *t, struct fleet_entry *e);
void fg_fleet_table_free(struct fleet_table *t);

/* What the fleet's bans half keeps between syncs. */
struct fleet_bans {
	struct fleet_table published, copies;
	__u32 walk, scan;     /* generations of the walks and full pulls */
	bool started;	      /* has synced once */
	bool push_all;	      /* send every published ban at the next sync */
	__u64 outages_seen;   /* state.outages then: a change means a reconnection */
	__u64 next_full_ns;   /* the next full push and pull */
	char log_id[48];      /* the change log's last entry read; "" = none */
	char cursor[32];      /* the full pull's ZSCAN cursor; "" = none running */
	unsigned int pending; /* replies the bans commands await: pushes */
	bool pull_pending, scan_pending;
	struct fg_ban_guard guard; /* what a ban from Redis may not be (fleet_checks.c) */
	__u64 log_window_ns;	   /* refusals logged in the current window */
	unsigned int logged, unlogged;
	bool warned_full; /* `bans` was full this sync (logged) */
	bool dirty;	  /* the state file is out of date */
	bool save_failed; /* logged */
	char state_path[256];
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
	bool down;		      /* an outage is in progress (logged once) */
	char failure[FG_ERR_MSG_LEN]; /* why the last AUTH or SCRIPT LOAD failed */
	__u64 next_connect_ns, backoff_ns;
	struct fg_fleet_state state; /* what fleet_state holds */
	struct fleet_item *items;
	size_t n_items, cap_items;
	struct fleet_bans bans;
};

/* A command's arguments, for redisAppendCommandArgv. */
struct fleet_argv {
	char **v;
	size_t n, cap;
};

/* Appends the bans commands to the pipeline (after the rate scripts):
 * this host's new and lifted bans in batches, the fleet's changes since
 * the last sync, and a page of the full pull when one runs. */
void fg_fleet_bans_append(struct fg_fleet *f);

/* Reads the bans commands' replies and applies the fleet's bans. Returns
 * 0, 1 if a script was missing (NOSCRIPT), or -1 on a dead link. */
int fg_fleet_bans_read(struct fg_fleet *f);

/* Has this host a ban in force that it has not published yet? */
bool fg_fleet_unpublished_ban(struct fg_fleet *f);

/* Loads and frees what the bans half keeps (the state file, docs/fleet.md "What
 * the fleet may ban"). */
void fg_fleet_bans_init(struct fg_fleet *f);
void fg_fleet_bans_free(struct fg_fleet *f);

/* fleet_state.c: the state file of the published bans and of the fleet
 * bans lifted here, kept across restarts of `run`. */
void fg_fleet_state_load(struct fg_fleet *f);
void fg_fleet_state_save(struct fg_fleet *f);

/* fleet_apply.c: one fleet ban from Redis (MEMBER and its time left in
 * µs as text; 0: lifted), applied to `bans` if it passes the checks; from
 * a full pull (scan) or the change log. */
void fg_fleet_apply_change(struct fg_fleet *f, const char *member, const char *left, bool scan,
			   __u64 now);
/* The full pull ended: the copies it did not see are dropped. */
void fg_fleet_end_scan(struct fg_fleet *f);

/* fleet_checks.c: what Redis says, checked. */
/* Why a fleet ban of `cidr` may not be applied, or NULL. */
const char *fg_fleet_ban_refusal(struct fg_fleet *f, const struct fg_cidr *cidr);
/* The time left of a fleet ban, cut to max_ban (left_us < 0: until unbanned). */
__u64 fg_fleet_ban_left_ns(const struct fg_fleet *f, long long left_us);
/* How long to hold a key the rate script says to hold for hold_us, capped. */
__u64 fg_fleet_hold_ns(struct fg_fleet *f, long long hold_us);
/* Counts a refused ban and logs it, a few lines every 10 s at most. */
void fg_fleet_refuse(struct fg_fleet *f, const char *member, const char *why);
void fg_fleet_free_protected(struct fg_fleet *f);

void fg_fleet_free_argv(struct fleet_argv *a);

/* AUTH [user] password on a new connection, when password_file is set.
 * Returns true, or false with f->failure (never the password). */
bool fg_fleet_auth(struct fg_fleet *f);

#endif /* FG_FLEET_INTERNAL_H */
