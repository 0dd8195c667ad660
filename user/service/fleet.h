/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fleet sync for `floodgate run` (user/service/fleet.c): a thread that, every
 * [fleet] sync interval, sends the admissions of fleet-scoped keys to
 * Redis, where a Lua script keeps one fleet-wide GCRA per key on the
 * server's clock, and holds the keys that are over their fleet limit in
 * the datapath; it also publishes local bans and applies the fleet's.
 * The datapath never waits for it.
 */
#ifndef FG_FLEET_H
#define FG_FLEET_H

#include "config/config.h"

struct fg_fleet;

/* The two Lua scripts, for the docs and the tests. */
extern const char fg_fleet_rate_script[];
extern const char fg_fleet_bans_script[];

/* Starts syncing the floodgate loaded on `ifname` with `conf` (enabled).
 * Redis need not be reachable: the thread retries. Returns 0 or a
 * negative errno (the pins cannot be opened, no thread). */
int fg_fleet_start(const char *ifname, const struct fg_fleet_conf *conf, struct fg_fleet **out);

/* Stops the thread, lets go of Redis and marks the interface as no longer
 * syncing. NULL is a no-op. */
void fg_fleet_stop(struct fg_fleet *fleet);

/* Marks `ifname` as not syncing, for a `run` that starts without [fleet]:
 * a `run` killed while it synced left `syncing` (and maybe `refuse_all`)
 * set in the pinned state, and /metrics would go on reporting a fleet
 * connection nobody keeps. The counters stay. */
void fg_fleet_disown(const char *ifname);

#endif /* FG_FLEET_H */
