/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scope = host: one limit over every interface floodgate protects on this
 * host, through one `host_sources` map that every interface's program uses.
 *
 * The map is pinned twice: in each interface's folder (FG_PIN_BASE/IFACE/,
 * like every map its program uses) and in FG_HOST_DIR, where the next load
 * finds it. The pins are its reference count: FG_HOST_DIR is removed, under
 * the pin folder lock, when no other folder (a complete one, a staging one
 * an interrupted load left, an upgrade's) pins the same map any more. So a
 * load killed at any step leaves at worst a shared pin that the next load
 * or unload of any interface collects, and a reload never touches it.
 *
 * A host-scoped policy's key carries the policy id, derived from its name
 * and algorithm: policies of one name share one state. Two interfaces that
 * define that name differently (rate, burst, per, bytes or algorithm) are
 * refused at load and reload with the policy's FILE:LINE.
 */
#ifndef FG_HOSTSCOPE_H
#define FG_HOSTSCOPE_H

#include "base/err.h"
#include "config/config.h"
#include "maps/pinned.h"
#include "policy/policy.h"

/* bpffs refuses dots in names; no interface name has a colon, and `status`
 * skips folders whose name has one. */

/*
 * Before a load of IFACE with `cfg` (under the pin folder lock): refuses a
 * host-scoped policy that another interface defines differently, and finds
 * the host's table if one exists, into *fd (to pass as fg_skel_opts.host_fd;
 * -1 when there is none yet or `cfg` has no host-scoped policy). Refuses a
 * table smaller than max_sources. Returns 0, or -1 with `err` (a refusal of
 * the config, FG_ERR_CONFIG, is on stderr as FILE:LINE); *fd is the
 * caller's to close.
 */
int fg_host_prepare(const char *ifname, const char *path, const struct fg_config *cfg,
		    const struct fg_compiled *compiled, int *fd, struct fg_err *err);

/* Before a reload of IFACE: the same refusal of differing definitions.
 * Returns 0, or -1 with `err`. */
int fg_host_check_peers(const char *ifname, const char *path, const struct fg_config *cfg,
			const struct fg_compiled *compiled, struct fg_err *err);

/* After a load created its maps in `pin_dir`: when `cfg` has host-scoped
 * policies and the host has no table pinned yet, pins `pin_dir`'s as the
 * host's. Returns 0, or -1 with `err`. */
int fg_host_publish(const char *pin_dir, const struct fg_config *cfg, struct fg_err *err);

/* Removes FG_HOST_DIR when no folder under FG_PIN_BASE pins its map any
 * more (under the pin folder lock). */
void fg_host_collect(void);

/* After a reload of IFACE flipped from `old` to `next`: deletes from the
 * host's table the state of host-scoped policies that `next` dropped and
 * that no other interface's active policy set still has. Returns how many
 * entries were deleted, or a negative errno. */
long fg_host_reclaim(const char *ifname, const struct fg_pinned *pinned,
		     const struct fg_policy_set *old, const struct fg_policy_set *next);

#endif /* FG_HOSTSCOPE_H */
