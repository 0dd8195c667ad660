/* SPDX-License-Identifier: GPL-2.0-only */
/* Readers of the pinned maps and counter printers shared by status, stats,
 * replay, top and the metrics endpoint (user/report.c); `stats` and `replay`
 * print the same schema: the `global` object and the `policies` array. */
#ifndef FG_REPORT_H
#define FG_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "floodgate.h"
#include "maps/pinned.h"

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

/* Prints `"global":{...},"policies":[...]` (no braces around it), for the
 * caller to embed in its own JSON object. */
void fg_print_counters_json(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

/* The same counters as indented readable lines and a policy table. */
void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);

/* `status` and `stats` (declared in ops/loader.h until ops returned
 * results). Each returns an exit code. */
int fg_cmd_status(const char *ifname, bool json);
int fg_cmd_stats(const char *ifname, bool json);

#endif /* FG_REPORT_H */
