/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The presence filter: IPv4 keys that may have state in `sources4` or
 * `known4`, so that while the new-source budget refuses, a spoofed
 * source's packet is refused without those tables' lookups (the filter's
 * two levels, their layout and why: include/floodgate_state.h,
 * FG_PRESENCE_WORDS_LOG2).
 * Part of bpf/floodgate.bpf.c, which includes it after fg_globals.h,
 * fg_maps.h, fg_clock.h and fg_budget.h.
 */
#ifndef FG_PRESENCE_H
#define FG_PRESENCE_H

/* Is the new-source budget on? Only then can the filter spare a lookup. */
static __always_inline bool fg_budget_in_force(void)
{
	__u32 zero = 0;
	struct fg_budget *budget = bpf_map_lookup_elem(&new_source_budget, &zero);

	return budget && budget->gcra.interval_fp;
}

/* Is the bit set in this level's word? A plain read: a bit set by another
 * CPU a moment ago may be missed, which costs that packet the budget's
 * check first. */
static __always_inline bool fg_presence_in(void *level, __u32 index, __u32 bit, __u32 gen)
{
	__u64 *word = bpf_map_lookup_elem(level, &index);

	return !word || fg_presence_has(*(volatile __u64 *)word, gen, bit);
}

/* May the key have state? Both levels must say so; the first, which stays
 * in the cache, is asked first. */
static __always_inline bool fg_presence_maybe(const struct fg_source4_key *key4, __u32 gen)
{
	__u32 index, bit = fg_presence_first_slot(key4, &index);

	if (!fg_presence_in(&presence4_first, index, bit, gen))
		return false;
	bit = fg_presence_slot(key4, &index);
	return fg_presence_in(&presence4, index, bit, gen);
}

/* The packet's generation, on the clock its refusals record. */
static __always_inline __u32 fg_presence_gen_at(struct fg_clock *clock)
{
	return fg_presence_gen(fg_clock_earliest(clock));
}

/* Is this packet its key's first of the generation, due to renew the
 * note? Read from the state's last_seen as it was before the packet. */
static __always_inline bool fg_presence_lapsing(__u32 last_seen, struct fg_clock *clock)
{
	return ((last_seen >> (FG_PRESENCE_GEN_SHIFT - FG_LAST_SEEN_SHIFT)) & 0xff) !=
	       fg_presence_gen_at(clock);
}

/* Notes the bit in this level's word: compare-and-swap, so no CPU's note
 * overwrites another's. */
static __always_inline int fg_presence_note_in(void *level, __u32 index, __u32 bit, __u32 gen)
{
	__u64 *word = bpf_map_lookup_elem(level, &index), old, noted;
	__u32 i;

	if (!word)
		return 0;
	for (i = 0; i < 4; i++) {
		old = *(volatile __u64 *)word;
		noted = fg_presence_with(old, gen, bit);
		if (noted == old || __sync_val_compare_and_swap(word, old, noted) == old)
			return 1;
	}
	return 0;
}

/* Notes the key in generation `gen`, in both levels. Reached when a state
 * is made, or met for the first time in a generation, or met though its
 * bit was clear. */
__noinline int fg_presence_note(const struct fg_source4_key *key4, __u32 gen)
{
	__u32 index, bit;
	int first;

	if (!key4)
		return 0;
	bit = fg_presence_first_slot(key4, &index);
	first = fg_presence_note_in(&presence4_first, index, bit, gen);
	bit = fg_presence_slot(key4, &index);
	return fg_presence_note_in(&presence4, index, bit, gen) && first;
}

#endif /* FG_PRESENCE_H */
