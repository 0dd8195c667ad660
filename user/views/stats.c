// SPDX-License-Identifier: GPL-2.0-only
/* `stats`: the counters of a loaded interface. */
#include <stdlib.h>
#include <string.h>

#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "views/stats.h"

int fg_stats_read(const char *ifname, struct fg_stats *stats, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	__u32 i, zero = 0;
	int rc;

	*stats = (struct fg_stats){0};
	stats->policies = calloc(FG_MAX_POLICIES, sizeof(*stats->policies));
	stats->set = malloc(sizeof(*stats->set));
	if (!stats->policies || !stats->set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the counters of %s",
			       ifname);
	if (fg_open_loaded(ifname, &pinned, err))
		return -1;
	stats->hook = pinned.rt.hook;
	stats->generation = pinned.rt.generation;
	rc = fg_read_active_set(&pinned, stats->set);
	if (!rc)
		rc = fg_sum_percpu(pinned.global_stats, zero, &stats->global,
				   sizeof(stats->global));
	for (i = 0; !rc && i < stats->set->count && i < FG_MAX_POLICIES; i++)
		rc = fg_sum_percpu(pinned.maps.policy_stats,
				   pinned.rt.active_slot * FG_MAX_POLICIES + i, &stats->policies[i],
				   sizeof(stats->policies[i]));
	fg_pinned_close(&pinned);
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the counters of %s: %s", ifname,
			       strerror(-rc));
	return 0;
}

void fg_stats_free(struct fg_stats *stats)
{
	free(stats->policies);
	free(stats->set);
	*stats = (struct fg_stats){0};
}
