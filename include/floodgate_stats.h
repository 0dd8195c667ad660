/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Counters (include/floodgate.h's part): per policy and global, per CPU.
 * Their fields, names and help are listed once, in fg_counters.h.
 */
#ifndef FLOODGATE_STATS_H
#define FLOODGATE_STATS_H

#include <linux/types.h>

#include "fg_counters.h"

/* Per-CPU counters of one policy (`policy_stats`, indexed by
 * slot * FG_MAX_POLICIES + policy index). */
struct fg_policy_stats {
	FG_POLICY_COUNTERS(FG_COUNTER_MEMBER)
};

/* Per-CPU global counters (`global_stats`, one entry). */
struct fg_global_stats {
	FG_GLOBAL_COUNTERS(FG_COUNTER_MEMBER)
};

_Static_assert(sizeof(struct fg_policy_stats) == 64, "fg_policy_stats");
_Static_assert(sizeof(struct fg_global_stats) == 232, "fg_global_stats");

#endif /* FLOODGATE_STATS_H */
