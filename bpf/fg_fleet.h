/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scope = fleet: the keys the fleet holds, and the admissions counted for
 * `floodgate run`'s next sync. Part of bpf/floodgate.bpf.c, which includes
 * it after fg_maps.h and before fg_charge.h (which checks the hold of the
 * overflow key it swaps in).
 */
#ifndef FG_FLEET_H
#define FG_FLEET_H

/* Does the fleet hold this key (or every fleet-scoped key, while Redis is
 * down under on_redis_down = closed)? */
static __always_inline bool fg_fleet_held(const struct fg_fleet_state *fleet,
					  const struct fg_source_key *key, __u64 now)
{
	struct fg_fleet_hold *hold;

	if (fleet->refuse_all)
		return true;
	hold = bpf_map_lookup_elem(&fleet_holds, key);
	return hold && now < hold->until_ns;
}

/* Counts an admission of a fleet-scoped key for the next sync. Per-CPU
 * values: no atomics. A count that cannot be stored is lost to the fleet,
 * never to the local limit. */
static __always_inline void fg_fleet_count(const struct fg_fleet_state *fleet,
					   const struct fg_source_key *key, __u64 pkt_len)
{
	struct fg_fleet_key fkey = {.key = *key, .epoch = fleet->epoch};
	struct fg_fleet_count *count = bpf_map_lookup_elem(&fleet_counts, &fkey);
	struct fg_fleet_count fresh = {.packets = 1, .bytes = pkt_len};

	if (count) {
		count->packets++;
		count->bytes += pkt_len;
		return;
	}
	if (bpf_map_update_elem(&fleet_counts, &fkey, &fresh, BPF_NOEXIST)) {
		count = bpf_map_lookup_elem(&fleet_counts, &fkey);
		if (count) {
			count->packets++;
			count->bytes += pkt_len;
		}
	}
}

#endif /* FG_FLEET_H */
