/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Counters (include/floodgate.h's part): per policy and global, per CPU.
 */
#ifndef FLOODGATE_STATS_H
#define FLOODGATE_STATS_H

#include <linux/types.h>

/* Per-CPU counters of one policy (`policy_stats`, indexed by
 * slot * FG_MAX_POLICIES + policy index). */
struct fg_policy_stats {
	__u64 matched_packets;
	__u64 matched_bytes;
	__u64 passed_packets;
	__u64 passed_bytes;
	__u64 dropped_packets;
	__u64 dropped_bytes;
	__u64 would_drop_packets; /* monitor: refused but passed */
	__u64 would_drop_bytes;
};

/* Per-CPU global counters (`global_stats`, one entry). */
struct fg_global_stats {
	__u64 packets;		 /* every packet the program saw */
	__u64 parsed;		 /* IPv4/IPv6 packets parsed */
	__u64 non_ip;		 /* passed untouched */
	__u64 malformed;	 /* truncated or invalid; malformed_verdict */
	__u64 unmatched;	 /* IP packets no policy matched; passed */
	__u64 insert_failed;	 /* no state entry could be created (not: full) */
	__u64 cas_exhausted;	 /* contention beat the bounded CAS loop; refused */
	__u64 allowed;		 /* an [allow] prefix matched: passed, no policy */
	__u64 denied;		 /* a [deny] prefix matched: dropped */
	__u64 banned;		 /* dropped by an active ban */
	__u64 bans_added;	 /* bans set by `action = ban` */
	__u64 ipv6_ext_overflow; /* more IPv6 extension headers than walked */
	__u64 sources_created;	 /* per-source entries created */
	__u64 budget_overflow;	 /* new sources judged by the shared overflow bucket */
	__u64 vlan_overflow;	 /* more VLAN tags than the parser walks: dropped */
	__u64 tiny_fragments;	 /* first fragments without their L4 header: dropped */
	__u64 ban_insert_failed; /* `action = ban` could not add a ban (trie full) */
	__u64 events_suppressed; /* events over the `events` rate, or with the ring full */
	__u64 fleet_held;	 /* refused because the fleet holds the key (scope = fleet) */
};

_Static_assert(sizeof(struct fg_policy_stats) == 64, "fg_policy_stats");
_Static_assert(sizeof(struct fg_global_stats) == 152, "fg_global_stats");

#endif /* FLOODGATE_STATS_H */
