/* SPDX-License-Identifier: GPL-2.0-only */
/* Readers of the pinned maps and counter printers shared by status, stats,
 * replay, top and the metrics endpoint (user/report.c); `stats` and `replay`
 * print the same schema: the `global` object and the `policies` array. */
#ifndef FG_REPORT_H
#define FG_REPORT_H

#include <stddef.h>

#include "floodgate.h"
#include "pinned.h"

/* The counters of struct fg_global_stats and struct fg_policy_stats, in
 * order, for printers that name every field. */
/* clang-format off */
#define GLOBAL_FIELDS(X) \
	X(packets) X(parsed) X(non_ip) X(malformed) X(unmatched) X(insert_failed) \
	X(cas_exhausted) X(allowed) X(denied) X(banned) X(bans_added) X(ipv6_ext_overflow) \
	X(sources_created) X(budget_overflow) X(vlan_overflow) X(tiny_fragments) \
	X(ban_insert_failed) X(events_suppressed) X(fleet_held)
#define POLICY_FIELDS(X) \
	X(matched_packets) X(matched_bytes) X(passed_packets) X(passed_bytes) \
	X(dropped_packets) X(dropped_bytes) X(would_drop_packets) X(would_drop_bytes)
/* clang-format on */

/* Sums entry `index` of a per-CPU array over every possible CPU into `sum`
 * (value_size bytes of __u64 counters). Returns 0 or a negative errno. */
int fg_sum_percpu(int fd, __u32 index, void *sum, size_t value_size);

/* Prints `"global":{...},"policies":[...]` (no braces around it), for the
 * caller to embed in its own JSON object. */
void fg_print_counters_json(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

/* The same counters as indented readable lines and a policy table. */
void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

/* Reads the policy set the datapath uses now. Returns 0 or a negative errno. */
int fg_read_active_set(const struct fg_pinned *pinned, struct fg_policy_set *set);

/* Formats a policy's rate in the config's vocabulary (fg_policy_rate()
 * says how it is read back from the params); returns its burst. */
__u64 fg_format_rate(const struct fg_policy *p, char *buf, size_t size);

/* The policy of the set named `name`, or NULL. */
const struct fg_policy *fg_find_policy(const struct fg_policy_set *set, const char *name);

/* A key's source as ADDR/LEN, or "overflow" (the new-source budget's shared
 * key) or "global" (per = global). buf holds INET6_ADDRSTRLEN + 8. */
void fg_format_key(const struct fg_source_key *key, char *buf, size_t size);

/* The policy of the set whose id (fg_source_key.policy_id) is `id`, or NULL. */
const struct fg_policy *fg_policy_by_id(const struct fg_policy_set *set, __u32 id);

/* Is the program recorded in `rt` still attached where it was put? */
int fg_still_attached(const struct fg_runtime *rt);

#endif /* FG_REPORT_H */
