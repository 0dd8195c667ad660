/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the read commands print: for each read model, its text (as the
 * manual shows it) and its --json value (docs/json.md), which the caller
 * hands to fg_json_print. Only the CLI prints.
 */
#ifndef FG_CLI_PRINT_H
#define FG_CLI_PRINT_H

#include <stddef.h>

#include "cli/json.h"
#include "views/bans.h"
#include "views/events.h"
#include "views/replay.h"
#include "views/stats.h"
#include "views/status.h"
#include "views/top.h"

/* The counters `stats` and `replay` share: readable lines and a policy
 * table, or the members "global" and "policies" added to `object`. */
void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps);
void fg_counters_json(json_t *object, const struct fg_global_stats *g,
		      const struct fg_policy_set *set, const struct fg_policy_stats *ps);

void fg_print_status_text(const char *ifname, const struct fg_status *status);
json_t *fg_status_json(const char *ifname, const struct fg_status *status);
/* An interface whose state could not be read, in the status array. */
json_t *fg_status_error_json(const char *ifname, const struct fg_err *err);

void fg_print_stats_text(const char *ifname, const struct fg_stats *stats);
json_t *fg_stats_json(const char *ifname, const struct fg_stats *stats);

void fg_print_top_text(const struct fg_top_view *view);
json_t *fg_top_json(const struct fg_top_view *view);

void fg_print_bans_text(const struct fg_ban_list *list);
json_t *fg_bans_json(const char *ifname, const struct fg_ban_list *list);

void fg_print_event_text(const struct fg_event_view *event);
json_t *fg_event_json(const struct fg_event_view *event);

void fg_print_replay_text(const char *capture, const struct fg_replay_result *r,
			  const struct fg_replay_source **top, size_t n_top);
json_t *fg_replay_json(const char *capture, const struct fg_replay_result *r,
		       const struct fg_replay_source **top, size_t n_top);

/* A wall-clock time in ns as UTC ISO 8601, with `decimals` digits of the
 * second (3: events, 9: replay). */
void fg_format_utc(__u64 ns, int decimals, char *buf, size_t size);

#endif /* FG_CLI_PRINT_H */
