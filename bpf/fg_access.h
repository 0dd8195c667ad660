/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What decides a source before any policy: the [allow]/[deny] lists and
 * the bans (the walk past expired bans, the host's own addresses, and
 * `action = ban` with its share of the trie and its escalation). Part of bpf/floodgate.bpf.c, which
 * includes it after fg_maps.h, fg_clock.h, fg_parse.h and fg_events.h.
 */
#ifndef FG_ACCESS_H
#define FG_ACCESS_H

#ifndef EEXIST
#define EEXIST 17 /* as fg_charge.h */
#endif

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

/* Is this address one of the host's own? Asked only where a ban would
 * drop a packet or be made, never per packet. */
static __always_inline bool fg_own_address(__u8 family, const __u8 *addr)
{
	struct fg_own_addr_key key = {.family = family};

	__builtin_memcpy(key.addr, addr, 16);
	return bpf_map_lookup_elem(&own_addrs, &key) != NULL;
}

/* Adds delta to the count of policy bans; returns the count before, or
 * "full" when the map is missing. */
static __always_inline __s64 fg_ban_count_add(__s64 delta)
{
	__u32 zero = 0;
	struct fg_ban_count *count = bpf_map_lookup_elem(&ban_count, &zero);

	if (!count)
		return fg_max_policy_bans;
	return __sync_fetch_and_add(&count->policy_bans, delta);
}

/* Deletes the expired ban `ban` at `key`; a policy's ban leaves its share. */
static __always_inline void fg_ban_forget(struct fg_src_lpm_key *key, const struct fg_ban *ban)
{
	bool by_policy = fg_ban_by_policy(ban->policy_id);

	if (!bpf_map_delete_elem(&bans, key) && by_policy)
		fg_ban_count_add(-1);
}

/* Lookups of the ban walk: an expired ban is deleted, and the next
 * shorter prefix looked up, so it never shadows an active ban that covers
 * it. Nested bans come from policies' `per` prefixes and hand bans; more
 * than this many expired ones around one address is not a real table. */
#define FG_BAN_WALK 8

/* Is the source under an active ban? A non-matching trie costs one
 * lookup, and no clock read; an empty one none (fg_source_verdict). A ban that covers one of the
 * host's own addresses does not drop it. */
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
			return !fg_own_address(pkt->family, pkt->saddr);
		prefix_len = ban->prefix_len;
		if (prefix_len > 128)
			return 0; /* not a record floodgate wrote */
		key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len;
		fg_ban_forget(&key, ban);
		if (!prefix_len)
			return 0;
		key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len - 1;
	}
	return 0;
}

/* The first ban of a prefix, or a repeat offence's: ban_factor times the
 * last one, up to ban_max_ns, while its strike lives. */
static __always_inline void fg_ban_length(const struct fg_policy *policy,
					  const struct fg_src_lpm_key *ban_key, __u64 now,
					  struct fg_ban *fresh)
{
	struct fg_ban_strike *strike = bpf_map_lookup_elem(&ban_strikes, ban_key);

	fresh->duration_ns = policy->ban_ns;
	fresh->strikes = 1;
	if (!strike || now - strike->last_expires_ns >= FG_BAN_STRIKE_TTL_NS)
		return;
	fresh->strikes = strike->strikes + 1;
	fresh->duration_ns = strike->duration_ns * policy->ban_factor;
	if (fresh->duration_ns > policy->ban_max_ns || fresh->duration_ns < strike->duration_ns)
		fresh->duration_ns = policy->ban_max_ns;
}

/* Tells every later packet to look in `bans` (fg_source_verdict): before
 * the insert, so that no packet meets the ban with the flag clear, and
 * again after it, in case a rewrite of the runtime record by user space
 * read the record before the first (a reload's check of the trie, after
 * its rewrite, then sees the ban: fg_runtime_mark_bans_if_any). */
static __always_inline int fg_mark_bans(void)
{
	__u32 zero = 0;
	struct fg_runtime *rt = bpf_map_lookup_elem(&runtime, &zero);

	if (!rt)
		return -1;
	if (!rt->bans_may_exist)
		rt->bans_may_exist = 1;
	return 0;
}

/* Inserts a policy's ban within the policies' share of `bans`: 0, -EEXIST
 * when another CPU's insert won the race, anything else when the share or
 * the trie is full. */
static __always_inline int fg_ban_insert(const struct fg_src_lpm_key *ban_key,
					 const struct fg_ban *fresh)
{
	int err; /* int, not long: pre-6.4 JITs do not sign-extend it */

	if (fg_mark_bans())
		return 1;
	if (fg_ban_count_add(1) >= fg_max_policy_bans) {
		fg_ban_count_add(-1);
		return 1;
	}
	err = bpf_map_update_elem(&bans, ban_key, fresh, BPF_NOEXIST);
	if (err)
		fg_ban_count_add(-1);
	else
		fg_mark_bans();
	return err;
}

/* Bans the key's source prefix after a refusal under action = ban, when
 * the caller has evidence the source can receive. Never the host's own
 * address. */
static __always_inline void fg_ban(const struct fg_policy *policy, const struct fg_source_key *key,
				   const struct fg_packet *pkt, __u64 now,
				   struct fg_global_stats *gstats)
{
	struct fg_src_lpm_key ban_key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + key->prefix_len,
		.family = key->family,
	};
	struct fg_ban fresh = {
		.policy_id = policy->id,
		.family = key->family,
		.prefix_len = key->prefix_len,
	};
	struct fg_ban_strike strike = {};
	struct fg_ban *old;
	int err;

	if (fg_own_address(pkt->family, pkt->saddr))
		return;
	__builtin_memcpy(ban_key.addr, key->addr, 16);
	old = bpf_map_lookup_elem(&bans, &ban_key);
	if (old) {
		if (now < old->expires_ns)
			return; /* already banned (a packet that raced the ban) */
		fg_ban_forget(&ban_key, old);
	}
	fg_ban_length(policy, &ban_key, now, &fresh);
	fresh.expires_ns = now + fresh.duration_ns;
	err = fg_ban_insert(&ban_key, &fresh);
	if (err == -EEXIST)
		return; /* another CPU banned it first */
	if (err) {
		gstats->ban_insert_failed++; /* the share or the trie is full */
		fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
		return;
	}
	gstats->bans_added++;
	fg_emit_event(FG_EVENT_BANNED, key, fresh.expires_ns, now);
	strike.last_expires_ns = fresh.expires_ns;
	strike.duration_ns = fresh.duration_ns;
	strike.strikes = fresh.strikes;
	bpf_map_update_elem(&ban_strikes, &ban_key, &strike, BPF_ANY);
}

/* What fg_apply_layer (floodgate.bpf.c) returns for a refusal that may ban: the packet is
 * dropped, and fg_judge bans its source if it can receive (the socket
 * lookup of that evidence needs the program's context). */
#define FG_VERDICT_DROP_AND_BAN 2

/* A refusal under action = ban: TCP may ban, once fg_judge finds the
 * evidence; any other protocol only with ban_unverified = yes. */
static __always_inline int fg_ban_wanted(const struct fg_policy *policy,
					 const struct fg_packet *pkt,
					 struct fg_global_stats *gstats)
{
	if (pkt->proto == IPPROTO_TCP || (policy->flags & FG_POLICY_BAN_UNVERIFIED))
		return FG_VERDICT_DROP_AND_BAN;
	gstats->bans_unverified++;
	return FG_VERDICT_DROP;
}

/* Evidence that a TCP source can receive: the packet's 4-tuple is an
 * established connection of this host, in the network namespace of the
 * device it arrived on. Any other state (a listener, nothing) is none: a
 * spoofer cannot complete a handshake in its victim's name. */
static __always_inline bool fg_tcp_established(void *ctx, const struct fg_packet *pkt)
{
	struct bpf_sock_tuple tuple = {};
	struct bpf_sock *sk;
	__u32 size;
	bool established;

	if (pkt->proto != IPPROTO_TCP || !pkt->has_ports)
		return false;
	size = fg_packet_tuple(pkt, &tuple);
	sk = bpf_sk_lookup_tcp(ctx, &tuple, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return false;
	established = sk->state == BPF_TCP_ESTABLISHED;
	bpf_sk_release(sk);
	return established;
}

#endif /* FG_ACCESS_H */
