/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The refusal cache: IPv4 sources this CPU has just refused, refused again
 * without their `sources4` lookup, and the policies' overflow keys, without
 * theirs in `sources` (fg_charge_overflow). Part of bpf/floodgate.bpf.c, which
 * includes it after fg_globals.h and fg_maps.h.
 */
#ifndef FG_REFUSAL_H
#define FG_REFUSAL_H

/* The source's index in `refusals`: its set in this CPU's part. */
static __always_inline __u32 fg_refusal_index(const struct fg_source4_key *key4)
{
	const __u32 *words = (const __u32 *)key4;
	__u32 hash = ((words[0] ^ words[1]) * 0x9e3779b1 ^ words[2]) * 0x9e3779b1;

	return bpf_get_smp_processor_id() << FG_REFUSAL_SET_BITS |
	       hash >> (32 - FG_REFUSAL_SET_BITS);
}

static __always_inline bool fg_same_key4(const struct fg_source4_key *a,
					 const struct fg_source4_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/* Whether the entry no longer answers for a source refused under the set
 * tagged `generation`: written under another set, FG_REFUSAL_REFRESH_NS
 * ago or more, or fg_refusal_churn_limit creations ago on this CPU. */
static __always_inline bool fg_refusal_stale(const struct fg_refusal *seen, __u64 now,
					     const struct fg_global_stats *gstats, __u32 generation)
{
	return seen->generation != generation ||
	       (__u32)(now >> FG_REFUSAL_TICK_SHIFT) - seen->written >= FG_REFUSAL_REFRESH_TICKS ||
	       (__u32)gstats->sources_created - seen->created >= fg_refusal_churn_limit;
}

/* The source's entry in the refusal cache, or NULL. The second way is
 * compared only when the first holds another key, in the line already
 * read: a source alone in its set is found where a direct-mapped cache
 * would have it, at no more cost. */
static __always_inline const struct fg_refusal *fg_refusal_entry(const struct fg_source4_key *key4)
{
	__u32 index = fg_refusal_index(key4);
	struct fg_refusal_set *set = bpf_map_lookup_elem(&refusals, &index);

	if (!set)
		return NULL;
	if (fg_same_key4(&set->way[0].key, key4))
		return &set->way[0];
	if (fg_same_key4(&set->way[1].key, key4))
		return &set->way[1];
	return NULL;
}

/*
 * Would the source's state refuse this packet, as the cache entry `seen`
 * says? It does when this CPU refused the source moments ago: the GCRA
 * refuses against the TAT seen then, so it refuses against the state's,
 * which can only be later (admissions move it forward, refusals do not
 * move it). The GCRA is the policy's as it is now; `generation` is its
 * set's tag. Apart from fg_refusal_entry so that a caller evaluates the
 * cost and the tag after the entry's lookup, not held across it
 * (fg_cached_refusal, in fg_xdp's frame).
 */
static __always_inline int fg_refusal_refuses(const struct fg_refusal *seen, struct fg_clock *clock,
					      __u64 cost, const struct fg_gcra_params *gcra,
					      const struct fg_global_stats *gstats,
					      __u32 generation)
{
	__u64 unused;

	if (fg_refusal_stale(seen, fg_clock_latest(clock), gstats, generation))
		return 0;
	/* A source whose next token is nearer than the coarse clock's lag
	 * (a limit of thousands a second, as the built-in policy's) cannot
	 * be refused at the latest time the packet can have: then the
	 * precise time decides, which spares the state's lookup still, and
	 * which an admission would read anyway. */
	if (fg_gcra_admit(gcra, seen->tat_ns, fg_clock_latest(clock), cost, &unused) &&
	    fg_gcra_admit(gcra, seen->tat_ns, fg_clock_now(clock), cost, &unused))
		return 0;
	if (fg_test_clock)
		fg_test_cached_refusals++;
	return 1;
}

/* Whether the refusal cache refuses the packet for the source's state
 * (fg_refusal_refuses). Inlined in its callers, which have this CPU's
 * global stats at hand: as a global function, with its own lookups, a
 * refusal took ~3 ns more (docs/design-costs.md, "What each per-packet
 * step costs"). */
static __always_inline int fg_refusal_cached(const struct fg_source4_key *key4,
					     struct fg_clock *clock, __u64 cost,
					     const struct fg_gcra_params *gcra,
					     const struct fg_global_stats *gstats, __u32 generation)
{
	const struct fg_refusal *seen = fg_refusal_entry(key4);

	return seen && fg_refusal_refuses(seen, clock, cost, gcra, gstats, generation);
}

/* Fills the source's cache entry after a refusal by its state: the way that
 * holds the source already, else the first unless that serves another
 * source, else the second. So two sources of a set both keep their
 * entries, and of three the one in the first way keeps its own (the other
 * two evict each other from the second). Nothing is needed after an
 * admission: the admission moved the TAT past what the entry holds, and a
 * TAT the GCRA would refuse against lies in the past now (a refusal at
 * `now` against it needs now < TAT + cost - tau, which an admission at or
 * before `now` rules out). */
__noinline int fg_refusal_note(const struct fg_source4_key *key4, __u64 refused_state, __u64 now,
			       __u32 generation)
{
	struct fg_global_stats *gstats;
	struct fg_refusal_set *set;
	struct fg_refusal *seen;
	__u32 index = 0;

	if (!key4)
		return 0;
	gstats = bpf_map_lookup_elem(&global_stats, &index);
	if (!gstats)
		return 0;
	index = fg_refusal_index(key4);
	set = bpf_map_lookup_elem(&refusals, &index);
	if (!set)
		return 0;
	seen = &set->way[0];
	if (!fg_same_key4(&seen->key, key4) && (fg_same_key4(&set->way[1].key, key4) ||
						!fg_refusal_stale(seen, now, gstats, generation)))
		seen = &set->way[1];
	seen->key = *key4;
	seen->generation = generation;
	seen->tat_ns = refused_state;
	seen->written = now >> FG_REFUSAL_TICK_SHIFT;
	seen->created = gstats->sources_created;
	return 0;
}

#endif /* FG_REFUSAL_H */
