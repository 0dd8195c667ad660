/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The runtime record (struct fg_runtime) and the config keys fixed at
 * load: a load and an upgrade record them, a reload must match them. Both
 * follow the key table (config/keys.c).
 */
#ifndef FG_MAPS_RUNTIME_H
#define FG_MAPS_RUNTIME_H

#include "base/err.h"
#include "config/config.h"

/* Records in `rt` what the config says of each key fixed at load. */
void fg_runtime_record_config(struct fg_runtime *rt, const struct fg_config *cfg);

/*
 * Refuses a reload whose config changes a key only a load can set (the
 * program's hook and mode, its clock, the table sizes, the interface) with
 * FG_ERR_CONFIG and "SOURCE: KEY = VALUE cannot change by reload ...".
 * `ifname` is the interface loaded on, `source` the config's name. The
 * size of `sources` (max_sources_ipv6) is the reload's own check.
 */
int fg_runtime_check_reload(const struct fg_runtime *rt, const char *ifname, const char *source,
			    const struct fg_config *cfg, struct fg_err *err);

/* Sets the runtime record's bans_may_exist (in the `runtime` map
 * `runtime_fd`): call it BEFORE putting a ban in `bans`, so that the
 * datapath never skips the lookup of a ban in force, and again after:
 * a rewrite of the record (a reload's slot flip) that read it before the
 * first call writes it clear, and checks the trie only after its write
 * (fg_runtime_mark_bans_if_any). 0 or -errno. */
int fg_runtime_mark_bans(int runtime_fd);

/* fg_runtime_mark_bans when the `bans` trie `bans_fd` holds anything: for
 * what reached the trie without it (a load's carried or restored state, a
 * reload racing a policy's ban, a ban written with bpftool). */
int fg_runtime_mark_bans_if_any(int runtime_fd, int bans_fd);

#endif /* FG_MAPS_RUNTIME_H */
