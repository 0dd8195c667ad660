/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The `events` ring's records (include/floodgate.h's part).
 */
#ifndef FLOODGATE_EVENTS_H
#define FLOODGATE_EVENTS_H

#include <linux/types.h>

/* Record of the `events` ring buffer. A ban's expiry is not a record: the
 * datapath has no timer, so `floodgate events` derives it from `bans`. */
enum fg_event_type {
	FG_EVENT_REFUSING = 1,	       /* a source's first refusal after admissions */
	FG_EVENT_BANNED = 2,	       /* action = ban banned the source's prefix */
	FG_EVENT_BUDGET_EXHAUSTED = 3, /* a CPU's new-source budget ran out */
	FG_EVENT_TABLE_FULL = 4,       /* a state table or the bans trie refused an entry */
};

/* The ring's size in bytes: a power of two of pages, ~5000 records. */
#define FG_EVENTS_RING_BYTES (256 * 1024)

struct fg_event {
	__u64 time_ns;	  /* the datapath's clock (monotonic, as bans' expires_ns) */
	__u64 expires_ns; /* FG_EVENT_BANNED: the ban's end; ~0 = never; else 0 */
	__u32 type;	  /* enum fg_event_type */
	__u32 policy_id;  /* fg_policy.id */
	__u8 family;	  /* of the key: FG_FAMILY_*, 0 for a global key */
	__u8 prefix_len;
	__u16 dport; /* host order; per = src/N+dport keys only */
	__u32 pad;
	__u8 addr[16]; /* the masked source, as in fg_source_key */
};

_Static_assert(sizeof(struct fg_event) == 48, "fg_event");

#endif /* FLOODGATE_EVENTS_H */
