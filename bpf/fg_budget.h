/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The new-source budget: how fast each CPU may create per-source entries,
 * with half of it kept for sources seen again, and each address's share of
 * it under per = src/N+dport. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_maps.h, fg_clock.h and
 * fg_events.h.
 */
#ifndef FG_BUDGET_H
#define FG_BUDGET_H

/* A 32-bit hash of the whole key, never 0. */
static __always_inline __u32 fg_key_hash(const struct fg_source_key *key)
{
	const __u32 *words = (const __u32 *)key;
	__u32 hash = 0, i;

#pragma unroll
	for (i = 0; i < sizeof(*key) / 4; i++)
		hash = (hash ^ words[i]) * 0x9e3779b1;
	return hash | 1;
}

/* How many times has this CPU turned the unknown key away, this time
 * included? Remembers it in way 0 of its set, moving the other way's entry
 * to way 1 (and evicting that way's). A spoofed flood of R packets a
 * second per CPU keeps a source in memory for about FG_RECENT_SETS / R
 * seconds: two more misses in its set evict it, while a source that keeps
 * sending keeps its place (docs in docs/flood-resilience.md, Flood resilience). */
static __always_inline __u32 fg_sightings(const struct fg_source_key *key)
{
	__u32 zero = 0, hash, set, tag;
	struct fg_recent_sources *recent = bpf_map_lookup_elem(&recent_sources, &zero);
	__u32 way0, way1, seen = 0;

	_Static_assert(FG_RECENT_SETS == 1 << 12, "set = the hash's top 12 bits");
	if (!recent)
		return 1;
	/* Hashed after the lookup: hashed before it, the key's six words
	 * were held across the call, on fg_apply_layer's stack. */
	hash = fg_key_hash(key);
	set = hash >> 20;
	tag = hash & ~FG_SIGHTINGS_MASK;
	way0 = recent->hash[set][0];
	way1 = recent->hash[set][1];
	if ((way0 & ~FG_SIGHTINGS_MASK) == tag)
		seen = way0 & FG_SIGHTINGS_MASK;
	else if ((way1 & ~FG_SIGHTINGS_MASK) == tag)
		seen = way1 & FG_SIGHTINGS_MASK;
	else
		recent->hash[set][1] = way0;
	if (seen && (way0 & ~FG_SIGHTINGS_MASK) != tag) /* a hit in way 1: swap */
		recent->hash[set][1] = way0;
	if (seen < FG_SIGHTINGS_MAX)
		seen++;
	recent->hash[set][0] = tag | seen;
	return seen;
}

/* The budget's GCRA at the packet's time, read precisely only when it may
 * admit: a GCRA that refuses at the latest time the packet can have refuses
 * it (bpf/fg_clock.h), and a spoofed flood's every packet is such a
 * refusal. */
static __always_inline int fg_budget_admits(const struct fg_gcra_params *limit, __u64 tat,
					    struct fg_clock *clock, __u64 *new_tat)
{
	__u64 unused;

	if (!fg_gcra_admit(limit, tat, fg_clock_latest(clock), 1, &unused))
		return 0;
	return fg_gcra_admit(limit, tat, fg_clock_now(clock), 1, new_tat);
}

/* The sightings a source needs to spend the reserve, relaxed by one for
 * each FG_RESERVE_CONTEST_NS since the bar last moved. */
static __always_inline __u32 fg_sightings_bar(const struct fg_reserve_guard *guard)
{
	return guard->sightings > FG_SIGHTINGS_MIN ? guard->sightings : FG_SIGHTINGS_MIN;
}

static __always_inline __u32 fg_sightings_needed(struct fg_reserve_guard *guard, __u64 now)
{
	if (guard->sightings > FG_SIGHTINGS_MIN &&
	    now - guard->raised_ns >= FG_RESERVE_CONTEST_NS) {
		guard->sightings--;
		guard->raised_ns = now;
	}
	return fg_sightings_bar(guard);
}

/* May a source turned away by the upper half spend the reserve (the whole
 * bucket)? Only once it has been seen as many times as the guard asks. A
 * source at exactly the bar that finds the reserve spent raises the bar
 * (struct fg_reserve_guard says why that shuts out spoofers, not clients). */
static __always_inline int fg_reserve_allows(const struct fg_source_key *key,
					     const struct fg_budget *budget, struct fg_clock *clock,
					     __u64 *tat)
{
	struct fg_reserve_guard *guard;
	__u32 zero = 0, seen = fg_sightings(key), needed;

	if (seen < FG_SIGHTINGS_MIN)
		return 0;
	guard = bpf_map_lookup_elem(&reserve_guard, &zero);
	if (!guard)
		return 0;
	needed = fg_sightings_needed(guard, fg_clock_earliest(clock));
	if (seen < needed)
		return 0;
	/* Branched before the clock read, so that no count is held across
	 * it: fg_tc's deepest call chain has no stack to spare
	 * (bpf/fg_clock.h). */
	if (seen != needed || needed >= FG_SIGHTINGS_MAX)
		return fg_budget_admits(&budget->gcra, budget->tat_ns, clock, tat);
	if (fg_budget_admits(&budget->gcra, budget->tat_ns, clock, tat))
		return 1;
	guard->sightings = fg_sightings_bar(guard) + 1;
	guard->raised_ns = fg_clock_earliest(clock);
	return 0;
}

/* Under per = src/N+dport: may this key's address create one more key? It
 * may take 1 / 2^FG_ADDRESS_SHARE_SHIFT of the budget's rate and burst (at
 * least one key), in its own GCRA in `address_shares`. */
static __always_inline int fg_address_share_allows(const struct fg_source_key *key,
						   const struct fg_budget *budget,
						   struct fg_clock *clock)
{
	struct fg_source_key address = *key;
	struct fg_gcra_params share = budget->gcra;
	struct fg_address_share *slot;
	__u32 hash, index;
	__u64 tat;

	address.dport = 0;
	hash = fg_key_hash(&address);
	index = hash & (FG_ADDRESS_SLOTS - 1);
	slot = bpf_map_lookup_elem(&address_shares, &index);
	if (!slot)
		return 1;
	if (share.interval_fp <= ~0ULL >> (FG_ADDRESS_SHARE_SHIFT + 1))
		share.interval_fp <<= FG_ADDRESS_SHARE_SHIFT;
	share.tolerance_ns >>= FG_ADDRESS_SHARE_SHIFT;
	if (share.tolerance_ns < fg_gcra_cost_ns(share.interval_fp, 1))
		share.tolerance_ns = fg_gcra_cost_ns(share.interval_fp, 1);
	if (slot->tag != hash) {
		slot->tag = hash;
		slot->tat_ns = 0;
	}
	if (!fg_budget_admits(&share, slot->tat_ns, clock, &tat))
		return 0;
	slot->tat_ns = tat;
	return 1;
}

/* May this CPU create one more per-source entry now? Per-CPU state, so no
 * atomics; only unknown sources ever get here. A source seen for the first
 * time may only spend the upper half of the bucket: the lower half is kept
 * for sources seen again (fg_reserve_allows), so a spoofed flood cannot
 * starve a real new source, which repeats at once. With a per-CPU burst of
 * one there is no half to keep. Under per = src/N+dport (`by_port`) an
 * address may also spend only its share. The first refusal after an
 * allowance owes an event about the source that found the budget spent. */
static __always_inline int fg_budget_allows(const struct fg_source_key *key, bool by_port,
					    struct fg_clock *clock)
{
	__u32 zero = 0;
	struct fg_budget *budget = bpf_map_lookup_elem(&new_source_budget, &zero);
	struct fg_gcra_params limit;
	__u64 tat;

	if (!budget || !budget->gcra.interval_fp)
		return 1;
	limit = budget->gcra;
	if (limit.tolerance_ns / 2 >= fg_gcra_cost_ns(limit.interval_fp, 1))
		limit.tolerance_ns /= 2;
	if ((fg_budget_admits(&limit, budget->tat_ns, clock, &tat) ||
	     fg_reserve_allows(key, budget, clock, &tat)) &&
	    (!by_port || fg_address_share_allows(key, budget, clock))) {
		budget->tat_ns = tat;
		if (budget->exhausted)
			budget->exhausted = 0;
		return 1;
	}
	if (!budget->exhausted) {
		budget->exhausted = 1;
		fg_owe_event(clock, FG_EVENT_BUDGET_EXHAUSTED, key, fg_clock_earliest(clock));
	}
	return 0;
}

#endif /* FG_BUDGET_H */
