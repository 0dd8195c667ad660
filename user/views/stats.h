/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate stats`: the global and per-policy counters of a loaded
 * interface, summed over the CPUs. */
#ifndef FG_STATS_H
#define FG_STATS_H

#include "base/err.h"
#include "floodgate.h"
#include "policy/policy.h"

struct fg_stats {
	__u32 hook; /* enum fg_hook */
	__u64 generation;
	struct fg_global_stats global;
	struct fg_policy_set *set;	  /* the active policies */
	struct fg_policy_stats *policies; /* FG_MAX_POLICIES, set->count used */
};

/* Reads the counters of the floodgate loaded on `ifname`. Returns 0, or -1
 * with `err` saying why; release with fg_stats_free either way. */
int fg_stats_read(const char *ifname, struct fg_stats *stats, struct fg_err *err);
void fg_stats_free(struct fg_stats *stats);

#endif /* FG_STATS_H */
