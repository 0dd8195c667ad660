/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate events`: the datapath's events from the `events` ring buffer,
 * and the ban expiries the reader derives from the `bans` trie. */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

#include <stdbool.h>

#include "floodgate.h"

/* What `events` prints for a record type, or for a derived one. */
enum fg_event_kind {
	FG_EVENT_KIND_BAN_EXPIRED = 100, /* derived: a tracked ban reached its end */
	FG_EVENT_KIND_UNBANNED = 101,	 /* derived: an active ban was removed */
};

/* The name printed for an fg_event_type or fg_event_kind, or "unknown". */
const char *fg_event_name(__u32 type);

/* Streams events until SIGINT or SIGTERM; returns an exit code. */
int fg_cmd_events(const char *ifname, bool json);

#endif /* FG_EVENTS_H */
