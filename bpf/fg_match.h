/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which policies match a packet: the precomputed bitmasks of the active
 * policy set, the port arrays and the src_match trie. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_maps.h and fg_parse.h.
 */
#ifndef FG_MATCH_H
#define FG_MATCH_H

static __always_inline __u64 fg_port_mask(void *map, __u32 slot, __u16 port)
{
	__u32 index = slot * FG_PORT_SLOTS + port;
	__u64 *mask = bpf_map_lookup_elem(map, &index);

	return mask ? *mask : 0;
}

/* The frame-length class of `match = ... size` (see FG_SIZE_CLASSES). */
static __always_inline __u32 fg_size_class(__u64 pkt_len)
{
	__u32 size_class = pkt_len >> FG_SIZE_CLASS_SHIFT < FG_SIZE_CLASSES
				   ? (__u32)(pkt_len >> FG_SIZE_CLASS_SHIFT)
				   : FG_SIZE_CLASSES - 1;

	/* The mask changes nothing but gives the verifier its bound, which
	 * clang's reordering of the clamp would otherwise lose. */
	asm volatile("" : "+r"(size_class));
	return size_class & (FG_SIZE_CLASSES - 1);
}

/* Bitmask of the policies whose match fits the packet. */
static __always_inline __u64 fg_match(const struct fg_policy_set *set, __u32 slot,
				      const struct fg_packet *pkt, __u64 pkt_len)
{
	__u64 candidates = set->proto_match[pkt->proto] & set->size_match[fg_size_class(pkt_len)];

	if (pkt->has_ports) {
		candidates &= fg_port_mask(&dport_match, slot, pkt->dport);
		if (candidates)
			candidates &= fg_port_mask(&sport_match, slot, pkt->sport);
	} else {
		candidates &= set->portless_match;
	}
	if (!pkt->is_syn)
		candidates &= ~set->syn_only;

	/* The LPM walk is the costliest step; skip it unless a candidate
	 * restricts its sources. */
	if (candidates & set->src_restricted) {
		struct fg_src_lpm_key key = {
			.prefixlen =
				FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
			.slot = slot,
			.family = pkt->family,
		};
		__u64 *allowed;

		__builtin_memcpy(key.addr, pkt->saddr, 16);
		allowed = bpf_map_lookup_elem(&src_match, &key);
		candidates &= ~set->src_restricted | (allowed ? *allowed : 0);
	}
	return candidates;
}

#endif /* FG_MATCH_H */
