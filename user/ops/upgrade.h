/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Taking over from a running floodgate whose pinned maps have another
 * layout (an older or newer build): the new maps and program are prepared
 * in a staging pin folder, what converts is carried over, the program
 * replaces the old one in one attach, and the folders are swapped.
 */
#ifndef FG_UPGRADE_H
#define FG_UPGRADE_H

#include <stdbool.h>
#include <linux/types.h>

#include "base/err.h"
#include "config/config.h"
#include "ops/layout.h" /* fg_layout_hash, fg_upgrade_needed */
#include "policy/policy.h"

/*
 * Replaces the floodgate pinned in `pin_dir` on `ifname` (attached, of
 * another layout) with this build, running `cfg` (compiled into slot 0 as
 * `compiled`), with no moment unprotected: per-source state and bans of an
 * unchanged layout are shared with the old program, bans and counters of
 * an appended layout are converted, the rest is rebuilt or reset, and a
 * log line says which. The caller holds the pin lock. Returns 0, or -1
 * with `err`; on failure the old floodgate still runs, untouched.
 */
int fg_upgrade(const char *ifname, const char *pin_dir, const struct fg_config *cfg,
	       const struct fg_compiled *compiled, struct fg_err *err);

/* From a layout before `sources4` (one `sources` for every family): copies
 * each entry of the old table `old_fd` into the new ones, IPv4 keys
 * converted into `sources4_fd`, the others into `sources_fd`. Returns how
 * many entries were copied, or a negative errno. */
long fg_upgrade_split_sources(int old_fd, int sources4_fd, int sources_fd);

#endif /* FG_UPGRADE_H */
