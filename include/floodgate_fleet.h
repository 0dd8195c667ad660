/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * scope = fleet (include/floodgate.h's part): the maps `floodgate run`
 * shares with the datapath to hold keys over a fleet-wide limit.
 */
#ifndef FLOODGATE_FLEET_H
#define FLOODGATE_FLEET_H

#include <linux/types.h>

#include "floodgate_state.h"

/* fleet_counts and fleet_holds hold the fleet-scoped keys active in one
 * sync interval (new sources come at most at the new_sources budget), and
 * fleet_counts is per CPU: capped, whatever max_sources says. */
#define FG_MAX_FLEET_KEYS 65536

/*
 * scope = fleet. The datapath counts each fleet-scoped key's admissions in
 * the per-CPU `fleet_counts` hash under the current epoch; `floodgate run`
 * flips the epoch every sync interval, then reads and deletes the counts of
 * the previous one, so nothing is counted twice and the datapath never
 * waits. Redis answers which keys are over their fleet-wide limit, and the
 * daemon holds them in `fleet_holds` until their fleet state allows them
 * again. Local policies never touch these maps.
 */
struct fg_fleet_key {
	struct fg_source_key key;
	__u32 epoch; /* fg_fleet_state.epoch when the packet was admitted */
	__u32 pad;
};

/* Value of the per-CPU `fleet_counts` LRU hash. */
struct fg_fleet_count {
	__u64 packets;
	__u64 bytes;
};

/* Value of the `fleet_holds` LRU hash (key: struct fg_source_key). */
struct fg_fleet_hold {
	__u64 until_ns; /* bpf_ktime_get_ns() scale: refused until then */
};

/* Ban records the daemon copied from the fleet carry this policy_id; they
 * are not published again, and they follow the fleet's list. */
#define FG_FLEET_BAN_POLICY_ID 0xffffffffU

/* Value of the one-entry `fleet_state` array: written by `floodgate run`,
 * read by the datapath (epoch, refuse_all) and by status and metrics. */
struct fg_fleet_state {
	__u32 epoch;	       /* the fleet_counts epoch the datapath writes */
	__u32 refuse_all;      /* on_redis_down = closed while Redis is down */
	__u32 syncing;	       /* a `run` with a [fleet] section serves this interface */
	__u32 connected;       /* the last sync reached Redis */
	__u64 last_sync_ns;    /* wall clock (CLOCK_REALTIME) of the last good sync */
	__u64 sync_latency_ns; /* how long the last good sync took */
	__u64 syncs;	       /* good syncs */
	__u64 outages;	       /* times Redis became unreachable */
	__u64 keys_held;       /* fleet_holds entries in force after the last sync */
	__u64 bans_published;  /* local bans sent to the fleet */
	__u64 bans_applied;    /* fleet bans copied into `bans` */
	__u64 bans_refused;    /* fleet bans from Redis refused (docs/fleet.md) */
	__u64 holds_capped;    /* holds from Redis longer than the longest, cut to it */
};

_Static_assert(sizeof(struct fg_fleet_key) == 32, "fg_fleet_key");
_Static_assert(sizeof(struct fg_fleet_count) == 16, "fg_fleet_count");
_Static_assert(sizeof(struct fg_fleet_hold) == 8, "fg_fleet_hold");
_Static_assert(sizeof(struct fg_fleet_state) == 88, "fg_fleet_state");

#endif /* FLOODGATE_FLEET_H */
