/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate events`: the datapath's events from the `events` ring buffer,
 * and the ban expiries the reader derives from the `bans` trie. */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>

#include "base/err.h"
#include "floodgate.h"

/* What `events` reports for a record type, or for a derived one. */
enum fg_event_kind {
	FG_EVENT_KIND_BAN_EXPIRED = 100, /* derived: a tracked ban reached its end */
	FG_EVENT_KIND_UNBANNED = 101,	 /* derived: an active ban was removed */
};

/* The name of an fg_event_type or fg_event_kind, or "unknown". */
const char *fg_event_name(__u32 type);

/* One event, as data. Times are wall-clock (CLOCK_REALTIME) ns. */
struct fg_event_view {
	__u32 type; /* enum fg_event_type or fg_event_kind */
	char source[INET6_ADDRSTRLEN + 16];
	__u16 dport;	    /* 0: not a per = src/N+dport key */
	const char *policy; /* NULL: a ban by hand */
	__u64 time_ns;
	bool is_ban;  /* FG_EVENT_BANNED: `forever` and `expires_ns` apply */
	bool forever; /* a ban until unbanned */
	__u64 expires_ns;
};

/*
 * Calls `fn` with every event of the floodgate loaded on `ifname`, as they
 * come, until `*stop` is set (a signal handler's flag; the wait is cut
 * short by the signal), fn returns non-zero, or floodgate is unloaded.
 * Returns 0, or -1 with `err` saying why.
 */
int fg_events_stream(const char *ifname, const volatile sig_atomic_t *stop,
		     int (*fn)(const struct fg_event_view *event, void *ctx), void *ctx,
		     struct fg_err *err);

#endif /* FG_EVENTS_H */
