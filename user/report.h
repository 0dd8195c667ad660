/* SPDX-License-Identifier: GPL-2.0-only */
/* The counter printers that `stats` and `replay` share, so that both print
 * the same schema: the `global` object and the `policies` array. */
#ifndef FG_REPORT_H
#define FG_REPORT_H

#include "floodgate.h"

/* Sums the per-CPU values at `index` of a per-CPU array whose values are
 * __u64 words. Returns 0 or a negative errno. */
int fg_sum_percpu(int fd, __u32 index, void *sum, size_t value_size);

/* Prints `"global":{...},"policies":[...]` (no braces around it), for the
 * caller to embed in its own JSON object. */
void fg_print_counters_json(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

/* The same counters as indented readable lines and a policy table. */
void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

#endif /* FG_REPORT_H */
