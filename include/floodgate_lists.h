/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Source prefixes (include/floodgate.h's part): the LPM key shared by
 * `src_match`, the [allow]/[deny] lists and the bans, and the ban record.
 */
#ifndef FLOODGATE_LISTS_H
#define FLOODGATE_LISTS_H

#include <linux/types.h>

/* Key of the `src_match` LPM trie. prefixlen counts the slot, family and
 * pad bits (32) plus the address prefix. The value is a __u64 mask of the
 * policies whose source restriction contains the prefix. */
struct fg_src_lpm_key {
	__u32 prefixlen;
	__u8 slot;
	__u8 family;
	__u16 pad;
	__u8 addr[16];
};
#define FG_SRC_LPM_HEADER_BITS 32

/* Value of the `access_lists` LPM trie (same key as src_match): the
 * longest matching [allow] or [deny] prefix decides. */
enum fg_access {
	FG_ACCESS_ALLOW = 1, /* bypasses every policy */
	FG_ACCESS_DENY = 2,  /* dropped */
};
#define FG_MAX_ACCESS_PREFIXES 4096

/* Value of the `bans` LPM trie. Its key is a struct fg_src_lpm_key with
 * slot 0: bans outlive reloads. The trie holds bans only: an expired one
 * is deleted by the first packet that meets it, and what a repeat offence
 * needs (ban_factor) lives in `ban_strikes`. */
struct fg_ban {
	__u64 expires_ns;  /* bpf_ktime_get_ns() scale; ~0 = until unbanned */
	__u64 duration_ns; /* length of the latest ban */
	__u32 strikes;	   /* how many times banned */
	__u32 policy_id;   /* the policy that banned; 0 = by hand */
	__u8 family;
	__u8 prefix_len;
	__u8 pad[6];
#ifdef FG_TEST_LAYOUT_PAD
	/* Tests only (make's layout-b build): another layout of `bans`, for
	 * tests/integration/test_upgrade.sh. */
	__u64 test_layout_pad;
#endif
};
/* The entries of `bans`: the global key max_bans, fixed at load (the
 * loader sizes the trie before it is created). */
#define FG_DEFAULT_MAX_BANS 65536
#define FG_MIN_MAX_BANS	    8192
#define FG_MAX_MAX_BANS	    16777216

/* Bans by hand, by the fleet and by CrowdSec have a share of `bans` to
 * themselves: the datapath adds a policy's ban only while `ban_count` is
 * below fg_policy_ban_cap(max_bans), so `floodgate ban` works when policies
 * have filled theirs. The share is a sixteenth of the trie, at least 4,096
 * (4,096 of the default 65,536; 8,192 of 131,072). */
#define FG_BANS_RESERVED_BY_HAND 4096
static inline __u32 fg_bans_reserved(__u32 max_bans)
{
	return max_bans / 16 > FG_BANS_RESERVED_BY_HAND ? max_bans / 16 : FG_BANS_RESERVED_BY_HAND;
}
static inline __u32 fg_policy_ban_cap(__u32 max_bans)
{
	return max_bans > fg_bans_reserved(max_bans) ? max_bans - fg_bans_reserved(max_bans) : 0;
}

/* fg_ban.policy_id at or above FG_BAN_RESERVED_ID names no policy but where
 * a ban came from: the fleet (FG_FLEET_BAN_POLICY_ID, the last id) or
 * CrowdSec, one id per origin of its decisions. Such bans, like bans by
 * hand, are not in `ban_count`: they belong to the share kept for bans by
 * hand. */
#define FG_BAN_RESERVED_ID 0xffffff00U

static inline int fg_ban_by_policy(__u32 policy_id)
{
	return policy_id && policy_id < FG_BAN_RESERVED_ID;
}

/* The origins of CrowdSec decisions floodgate tells apart, X(NAME, "name"),
 * the name as the Local API writes it; OTHER (last) stands for any other. */
#define FG_CROWDSEC_ORIGINS(X)                                                                     \
	X(CROWDSEC, "crowdsec")                                                                    \
	X(CSCLI, "cscli")                                                                          \
	X(CAPI, "CAPI")                                                                            \
	X(LISTS, "lists")                                                                          \
	X(CSCLI_IMPORT, "cscli-import")                                                            \
	X(OTHER, "other")

enum fg_crowdsec_origin {
#define FG_CROWDSEC_ORIGIN_ENUM(name, text) FG_CROWDSEC_ORIGIN_##name,
	FG_CROWDSEC_ORIGINS(FG_CROWDSEC_ORIGIN_ENUM)
#undef FG_CROWDSEC_ORIGIN_ENUM
		FG_CROWDSEC_ORIGIN_COUNT
};

/* The policy_id of a ban from a CrowdSec decision of `origin`. */
#define FG_CROWDSEC_BAN_ID_FIRST   (FG_BAN_RESERVED_ID + 1)
#define FG_CROWDSEC_BAN_ID(origin) (FG_CROWDSEC_BAN_ID_FIRST + (__u32)(origin))
#define FG_IS_CROWDSEC_BAN_ID(id)                                                                  \
	((id) >= FG_CROWDSEC_BAN_ID_FIRST && (id) < FG_CROWDSEC_BAN_ID(FG_CROWDSEC_ORIGIN_COUNT))

/* The name of a CrowdSec origin ("cscli"), or NULL. */
static inline const char *fg_crowdsec_origin_name(unsigned int origin)
{
	switch (origin) {
#define FG_CROWDSEC_ORIGIN_CASE(name, text)                                                        \
	case FG_CROWDSEC_ORIGIN_##name:                                                            \
		return text;
		FG_CROWDSEC_ORIGINS(FG_CROWDSEC_ORIGIN_CASE)
#undef FG_CROWDSEC_ORIGIN_CASE
	}
	return 0;
}

/* Value of the one-entry, mmapable `ban_count` array: the bans action = ban
 * holds in `bans`. The datapath adds one for a ban it inserts and takes
 * one for a policy's ban it deletes; `unban` takes one for a policy's ban
 * (an atomic add on the mapped page). Signed: a race can only leave it
 * too high, which the next deletions repair, or briefly low. */
struct fg_ban_count {
	__s64 policy_bans;
	/* Bans from outside the datapath (by hand, the fleet, CrowdSec) that
	 * a full trie refused; user space adds them atomically
	 * (user/ops/bans.c, fg_bans_put). The datapath's own refusals are
	 * the ban_insert_failed counter. */
	__u64 outside_refused;
};

/* Value of the `ban_strikes` LRU hash, keyed like `bans`: the record of a
 * prefix a policy banned, kept FG_BAN_STRIKE_TTL_NS past the end of its
 * latest ban so that a repeat offence is banned longer (ban_factor). An
 * LRU map: strikes of sources that never come back are reclaimed as new
 * ones arrive, and never take room from bans. */
struct fg_ban_strike {
	__u64 last_expires_ns; /* when the latest ban ended or ends */
	__u64 duration_ns;     /* its length */
	__u32 strikes;	       /* how many times banned */
	__u32 pad;
};
#define FG_MAX_BAN_STRIKES 65536

/* How long a strike outlives its ban to escalate a repeat offence. */
#define FG_BAN_STRIKE_TTL_NS (24ULL * 3600 * 1000000000ULL)

/* Key of the `own_addrs` hash: an address on one of the host's interfaces,
 * in floodgate's network namespace. `load` fills it and `floodgate run`
 * follows it through netlink; a source found there is never banned, by a
 * policy, by hand or by the fleet (its packets still meet the policies).
 * The value, a __u8, is unused. */
struct fg_own_addr_key {
	__u32 family;  /* FG_FAMILY_IPV4 or FG_FAMILY_IPV6 */
	__u8 addr[16]; /* IPv4 in the first 4 bytes, the rest zero */
};
#define FG_MAX_OWN_ADDRS 1024

_Static_assert(sizeof(struct fg_own_addr_key) == 20, "fg_own_addr_key");
_Static_assert(sizeof(struct fg_src_lpm_key) == 24, "fg_src_lpm_key");
_Static_assert(sizeof(struct fg_ban_strike) == 24, "fg_ban_strike");
_Static_assert(sizeof(struct fg_ban_count) == 16, "fg_ban_count");
_Static_assert(FG_CROWDSEC_BAN_ID(FG_CROWDSEC_ORIGIN_COUNT) < 0xffffffffU,
	       "the CrowdSec ids stay clear of FG_FLEET_BAN_POLICY_ID");
#ifdef FG_TEST_LAYOUT_PAD
_Static_assert(sizeof(struct fg_ban) == 40, "fg_ban, padded for the upgrade test");
#else
_Static_assert(sizeof(struct fg_ban) == 32, "fg_ban");
#endif

#endif /* FLOODGATE_LISTS_H */
