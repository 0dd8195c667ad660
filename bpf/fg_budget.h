/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The new-source budget: how fast each CPU may create per-source entries,
 * with half of it kept for sources seen twice. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_maps.h and fg_events.h.
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

/* Has this CPU turned the unknown key away recently? If not, remember it,
 * evicting the older of its set. A spoofed flood of R packets a second per
 * CPU keeps a source in memory for about FG_RECENT_SETS / R seconds: two
 * more misses in its set evict it (docs in README, Flood resilience). */
static __always_inline int fg_seen_before(const struct fg_source_key *key)
{
	__u32 zero = 0, hash = fg_key_hash(key), set = hash >> 20;
	struct fg_recent_sources *recent = bpf_map_lookup_elem(&recent_sources, &zero);

	_Static_assert(FG_RECENT_SETS == 1 << 12, "set = the hash's top 12 bits");
	if (!recent)
		return 0;
	if (recent->hash[set][0] == hash || recent->hash[set][1] == hash)
		return 1;
	recent->hash[set][1] = recent->hash[set][0];
	recent->hash[set][0] = hash;
	return 0;
}

/* May this CPU create one more per-source entry now? Per-CPU state, so no
 * atomics; only unknown sources ever get here. A source seen for the first
 * time may only spend the upper half of the bucket: the lower half is kept
 * for sources seen twice, so a spoofed flood (whose sources never repeat)
 * cannot starve a real new source, which repeats at once. With a per-CPU
 * burst of one there is no half to keep. The first refusal after an
 * allowance emits an event about the source that found the budget spent. */
static __always_inline int fg_budget_allows(const struct fg_source_key *key, __u64 now)
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
	if (fg_gcra_admit(&limit, budget->tat_ns, now, 1, &tat) ||
	    (fg_seen_before(key) && fg_gcra_admit(&budget->gcra, budget->tat_ns, now, 1, &tat))) {
		budget->tat_ns = tat;
		if (budget->exhausted)
			budget->exhausted = 0;
		return 1;
	}
	if (!budget->exhausted) {
		budget->exhausted = 1;
		fg_emit_event(FG_EVENT_BUDGET_EXHAUSTED, key, 0, now);
	}
	return 0;
}

#endif /* FG_BUDGET_H */
