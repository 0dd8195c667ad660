/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What decides a source before any policy: the [allow]/[deny] lists and
 * the bans (the walk past expired records, and `action = ban` with its
 * escalation). Part of bpf/floodgate.bpf.c, which includes it after
 * fg_maps.h, fg_clock.h, fg_parse.h and fg_events.h.
 */
#ifndef FG_ACCESS_H
#define FG_ACCESS_H

/* The longest [allow]/[deny] prefix that holds the source, or 0. An empty
 * trie answers at once. */
static __always_inline __u32 fg_access(__u32 slot, const struct fg_packet *pkt)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
		.slot = slot,
		.family = pkt->family,
	};
	__u32 *access;

	__builtin_memcpy(key.addr, pkt->saddr, 16);
	access = bpf_map_lookup_elem(&access_lists, &key);
	return access ? *access : 0;
}

/* An expired record is a strike record: it is kept FG_BAN_STRIKE_TTL_NS
 * past its ban so that a repeat offence is banned longer, then forgotten. */
static __always_inline bool fg_strike_forgotten(const struct fg_ban *ban, __u64 now)
{
	return ban->expires_ns != ~0ULL && now - ban->expires_ns >= FG_BAN_STRIKE_TTL_NS;
}

/* Lookups of the ban walk: an expired record is skipped by looking up the
 * next shorter prefix, so it never shadows an active ban that covers it.
 * Nested records come from policies' `per` prefixes and hand bans; more
 * than this many expired ones around one address is not a real table. */
#define FG_BAN_WALK 8

/* Is the source under an active ban? An empty or non-matching trie costs
 * one lookup, and no clock read. A strike record past its lifetime is
 * deleted on the way. */
static __always_inline int fg_banned(const struct fg_packet *pkt, struct fg_clock *clock)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
		.family = pkt->family,
	};
	struct fg_ban *ban;
	__u32 prefix_len, i;
	__u64 now;

	__builtin_memcpy(key.addr, pkt->saddr, 16);
#pragma unroll
	for (i = 0; i < FG_BAN_WALK; i++) {
		ban = bpf_map_lookup_elem(&bans, &key);
		if (!ban)
			return 0;
		now = fg_clock_now(clock);
		if (now < ban->expires_ns)
			return 1;
		prefix_len = ban->prefix_len;
		if (prefix_len > 128)
			return 0; /* not a record floodgate wrote */
		if (fg_strike_forgotten(ban, now)) {
			key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len;
			bpf_map_delete_elem(&bans, &key);
		}
		if (!prefix_len)
			return 0;
		key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len - 1;
	}
	return 0;
}

/* Bans the key's source prefix after a refusal under action = ban. A repeat
 * offender's ban is ban_factor times the last one, up to ban_max_ns, while
 * its strike record lives. */
static __always_inline void fg_ban(const struct fg_policy *policy, const struct fg_source_key *key,
				   __u64 now, struct fg_global_stats *gstats)
{
	struct fg_src_lpm_key ban_key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + key->prefix_len,
		.family = key->family,
	};
	struct fg_ban fresh = {
		.duration_ns = policy->ban_ns,
		.strikes = 1,
		.policy_id = policy->id,
		.family = key->family,
		.prefix_len = key->prefix_len,
	};
	struct fg_ban *old;
	int err; /* int, not long: pre-6.4 JITs do not sign-extend it */

	__builtin_memcpy(ban_key.addr, key->addr, 16);
	old = bpf_map_lookup_elem(&bans, &ban_key);
	if (old && old->family == key->family && old->prefix_len == key->prefix_len) {
		if (now < old->expires_ns)
			return; /* already banned (a packet that raced the ban) */
		if (!fg_strike_forgotten(old, now)) {
			fresh.strikes = old->strikes + 1;
			fresh.duration_ns = old->duration_ns * policy->ban_factor;
			if (fresh.duration_ns > policy->ban_max_ns ||
			    fresh.duration_ns < old->duration_ns)
				fresh.duration_ns = policy->ban_max_ns;
		}
	}
	fresh.expires_ns = now + fresh.duration_ns;
	err = bpf_map_update_elem(&bans, &ban_key, &fresh, BPF_ANY);
	if (!err) {
		gstats->bans_added++;
		fg_emit_event(FG_EVENT_BANNED, key, fresh.expires_ns, now);
	} else {
		gstats->ban_insert_failed++; /* the trie is full: -ENOSPC */
		fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
	}
}

#endif /* FG_ACCESS_H */
