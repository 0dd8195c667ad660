/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet parser: Ethernet, any mix of VLAN tags, IPv4 or IPv6 with its
 * extension headers, and the TCP or UDP ports, which a later fragment takes
 * from its datagram's first (`fragment_flows`); and the benchmarks' rewrite
 * of the parsed source. Part of bpf/floodgate.bpf.c, which includes it
 * after fg_globals.h and fg_maps.h.
 */
#ifndef FG_PARSE_H
#define FG_PARSE_H

/* What the parser extracts; addresses stay in network order. */
struct fg_packet {
	__u8 family;
	__u8 proto;
	__u8 has_ports; /* TCP/UDP with a readable header, not a later fragment */
	__u8 is_syn;	/* TCP with SYN set and ACK clear */
	__u16 dport;	/* host order */
	__u16 sport;	/* host order */
	__u8 saddr[16];
	__u8 l3_offset; /* where the IP header starts */
	/* The source answered a SYN cookie of the proxy (fg_synproxy_ack):
	 * it receives, which a ban needs (fg_judge). 0 from every parse: the
	 * entry points zero the struct and the parser never writes it. */
	__u8 proven;
	__u32 segments; /* wire packets it stands for: gso_segs at tc, else 1 */
	__u8 daddr[16]; /* for the socket lookup of a ban's evidence (fg_access.h) */
};

/* `proven` sits in the padding after l3_offset: the struct is on fg_tc's
 * stack, whose deepest chain takes all 512 bytes on 6.1, so it must not
 * grow. */
_Static_assert(sizeof(struct fg_packet) == 48 &&
		       __builtin_offsetof(struct fg_packet, segments) == 28,
	       "struct fg_packet must keep its size and layout");

/* The packet's TCP or UDP 4-tuple as the socket and conntrack lookups take
 * it (fg_access.h, fg_synproxy.h); returns its size for the family. */
static __always_inline __u32 fg_packet_tuple(const struct fg_packet *pkt,
					     struct bpf_sock_tuple *tuple)
{
	if (pkt->family == FG_FAMILY_IPV4) {
		__builtin_memcpy(&tuple->ipv4.saddr, pkt->saddr, 4);
		__builtin_memcpy(&tuple->ipv4.daddr, pkt->daddr, 4);
		tuple->ipv4.sport = bpf_htons(pkt->sport);
		tuple->ipv4.dport = bpf_htons(pkt->dport);
		return sizeof(tuple->ipv4);
	}
	__builtin_memcpy(tuple->ipv6.saddr, pkt->saddr, 16);
	__builtin_memcpy(tuple->ipv6.daddr, pkt->daddr, 16);
	tuple->ipv6.sport = bpf_htons(pkt->sport);
	tuple->ipv6.dport = bpf_htons(pkt->dport);
	return sizeof(tuple->ipv6);
}

enum fg_parse_result {
	FG_PARSE_IP,
	FG_PARSE_NON_IP,
	FG_PARSE_MALFORMED,    /* no trustworthy source address */
	FG_PARSE_MALFORMED_L4, /* the IP header is sound, what follows is not */
	/* The kernel would deliver it as IP, but the parser cannot see what
	 * the policies need: dropped whatever `malformed` says, or the framing
	 * would be a way around every list, ban and policy. */
	FG_PARSE_VLAN_OVERFLOW, /* more VLAN tags than FG_VLAN_MAX, no source */
	FG_PARSE_TINY_FRAGMENT, /* a first fragment without its whole L4 header */
	FG_PARSE_EXT_OVERFLOW,	/* an IPv6 chain longer than FG_IPV6_EXT_MAX */
	/* A later fragment whose first fragment was not seen: the policies
	 * with ports cannot judge it (fg_damage_verdict). */
	FG_PARSE_ORPHAN_FRAGMENT,
};

/* VLAN tags walked (802.1Q and 802.1ad in any mix). The kernel strips any
 * number of them and delivers the IP packet inside, so a deeper stack is
 * dropped rather than passed as non-IP. Real networks use one or two. */
#define FG_VLAN_MAX 8

struct vlan_hdr {
	__be16 tci;
	__be16 encapsulated_proto;
};

/* The generic header of hop-by-hop, routing and destination options. */
struct ipv6_ext_hdr {
	__u8 nexthdr;
	__u8 hdrlen; /* in 8-byte units, not counting the first 8 bytes */
};

struct ipv6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset in 8-byte units << 3, and flags */
	__be32 identification;
};

/* IPv6 extension headers walked to find the transport header. A longer
 * chain is counted and treated as malformed: an attacker must not hide the
 * ports behind padding headers. */
#define FG_IPV6_EXT_MAX 6

/* The most header bytes the parser reads: Ethernet, FG_VLAN_MAX tags, IPv6
 * and FG_IPV6_EXT_MAX extension headers of the largest size (2048 bytes,
 * above any IPv4 header's 60), and TCP. */
#define FG_PARSE_MAX_HEADER_BYTES                                                                  \
	(sizeof(struct ethhdr) + FG_VLAN_MAX * sizeof(struct vlan_hdr) + sizeof(struct ipv6hdr) +  \
	 FG_IPV6_EXT_MAX * 2048 + sizeof(struct tcphdr))

/* Where an IP header can start: after Ethernet and FG_VLAN_MAX tags. */
#define FG_PARSE_MAX_L3_OFFSET (sizeof(struct ethhdr) + FG_VLAN_MAX * sizeof(struct vlan_hdr))

/* Reads the L4 ports. Returns 0 when the header is readable or the protocol
 * has no ports, -1 when a TCP/UDP header is truncated. */
static __always_inline int fg_parse_ports(void *l4, void *data_end, struct fg_packet *pkt)
{
	if (pkt->proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(th->dest);
		pkt->sport = bpf_ntohs(th->source);
		pkt->is_syn = th->syn && !th->ack;
		pkt->has_ports = 1;
	} else if (pkt->proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(uh->dest);
		pkt->sport = bpf_ntohs(uh->source);
		pkt->has_ports = 1;
	}
	return 0;
}

/* Walks hop-by-hop, routing, fragment and destination-options headers.
 * Returns 0 with pkt->proto set to the transport protocol and *l4 at its
 * header (2 if this is a first fragment with more to follow); 1 for a later
 * fragment, with pkt->proto set to its fragment header's next header and
 * the walk stopped there; -1 when a header is truncated, -2 when the chain
 * is longer than FG_IPV6_EXT_MAX. */
static __always_inline int fg_walk_ipv6_ext(void **l4, void *data_end, struct fg_packet *pkt,
					    __u32 *frag_id)
{
	void *cursor = *l4;
	__u8 next = pkt->proto;
	int fragment = 0, i;

#pragma unroll
	for (i = 0; i < FG_IPV6_EXT_MAX + 1; i++) {
		if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS) {
			struct ipv6_ext_hdr *ext = cursor;

			if (i == FG_IPV6_EXT_MAX)
				return -2;
			if ((void *)(ext + 1) > data_end)
				return -1;
			next = ext->nexthdr;
			cursor += (ext->hdrlen + 1) * 8;
		} else if (next == IPPROTO_FRAGMENT) {
			struct ipv6_frag_hdr *frag = cursor;

			if (i == FG_IPV6_EXT_MAX)
				return -2;
			if ((void *)(frag + 1) > data_end)
				return -1;
			next = frag->nexthdr;
			cursor = frag + 1;
			*frag_id = frag->identification;
			if (frag->frag_off & bpf_htons(0xfff8)) {
				/* A later fragment: what follows is payload,
				 * which the sender chooses; walking on would
				 * let it choose the protocol too. */
				fragment = 1;
				break;
			}
			if (frag->frag_off & bpf_htons(1))
				fragment = 2; /* first, more follow */
		} else {
			break;
		}
	}
	pkt->proto = next;
	*l4 = cursor;
	return fragment;
}

/*
 * Fragments: a later fragment carries no ports, so a policy with `dport`
 * or `sport` would see a datagram's first fragment alone (a 60 KB datagram
 * charged as 60 bytes). A first fragment records its protocol and ports in
 * `fragment_flows` under the datagram's reassembly key; a later fragment
 * takes them from there, and matches and is charged as the first was.
 * Nothing here runs for a packet that is not a fragment.
 */

/* The key the kernel reassembles by: source, destination, identification,
 * and for IPv4 the protocol (IPv6 reassembly ignores a fragment header's
 * next header, which is the sender's word). Built in the per-CPU scratch;
 * NULL if that is missing. */
static __always_inline struct fg_fragment_scratch *
fg_fragment_key(const struct fg_packet *pkt, __u32 id, const void *daddr, __u32 addr_len)
{
	__u32 zero = 0;
	struct fg_fragment_scratch *scratch = bpf_map_lookup_elem(&fragment_scratch, &zero);

	if (!scratch)
		return NULL;
	__builtin_memset(&scratch->key, 0, sizeof(scratch->key));
	scratch->key.family = pkt->family;
	scratch->key.proto = pkt->family == FG_FAMILY_IPV4 ? pkt->proto : 0;
	scratch->key.id = id;
	__builtin_memcpy(scratch->key.saddr, pkt->saddr, 16);
	if (addr_len == 4)
		__builtin_memcpy(scratch->key.daddr, daddr, 4);
	else
		__builtin_memcpy(scratch->key.daddr, daddr, 16);
	return scratch;
}

static __always_inline void fg_note_first_fragment(const struct fg_packet *pkt, __u32 id,
						   const void *daddr, __u32 addr_len)
{
	struct fg_fragment_scratch *scratch = fg_fragment_key(pkt, id, daddr, addr_len);

	if (!scratch)
		return;
	scratch->flow.dport = pkt->dport;
	scratch->flow.sport = pkt->sport;
	scratch->flow.proto = pkt->proto;
	scratch->flow.has_ports = pkt->has_ports;
	scratch->flow.pad = 0;
	bpf_map_update_elem(&fragment_flows, &scratch->key, &scratch->flow, BPF_ANY);
}

/* A later fragment: its first's protocol and ports, or
 * FG_PARSE_ORPHAN_FRAGMENT when its first was not seen (out of order,
 * evicted, or spoofed). */
static __always_inline enum fg_parse_result
fg_follow_first_fragment(struct fg_packet *pkt, __u32 id, const void *daddr, __u32 addr_len)
{
	struct fg_fragment_scratch *scratch = fg_fragment_key(pkt, id, daddr, addr_len);
	struct fg_fragment_flow *flow;

	if (!scratch)
		return FG_PARSE_ORPHAN_FRAGMENT;
	flow = bpf_map_lookup_elem(&fragment_flows, &scratch->key);
	if (!flow)
		return FG_PARSE_ORPHAN_FRAGMENT;
	pkt->proto = flow->proto;
	pkt->dport = flow->dport;
	pkt->sport = flow->sport;
	pkt->has_ports = flow->has_ports;
	return FG_PARSE_IP;
}

static __always_inline bool fg_is_vlan(__u16 ethertype)
{
	return ethertype == bpf_htons(ETH_P_8021Q) || ethertype == bpf_htons(ETH_P_8021AD);
}

/* The L4 header is cut short. In a first fragment with more to follow,
 * reassembly would complete it (an 8-byte first fragment hides the TCP
 * flags from a `syn` match), so it is not merely malformed. */
static __always_inline enum fg_parse_result fg_tiny_fragment(bool more_fragments)
{
	return more_fragments ? FG_PARSE_TINY_FRAGMENT : FG_PARSE_MALFORMED_L4;
}

/* The IPv6 header at `cursor`, its extension headers and its ports. */
static __always_inline enum fg_parse_result fg_parse_ipv6(void *cursor, void *data_end,
							  struct fg_packet *pkt)
{
	struct ipv6hdr *ip6h = cursor;
	void *l4 = ip6h + 1;
	__u32 frag_id = 0;
	int walked;

	if ((void *)(ip6h + 1) > data_end)
		return FG_PARSE_MALFORMED;
	if (ip6h->version != 6)
		return FG_PARSE_MALFORMED;
	pkt->family = FG_FAMILY_IPV6;
	pkt->proto = ip6h->nexthdr;
	__builtin_memcpy(pkt->saddr, &ip6h->saddr, 16);
	__builtin_memcpy(pkt->daddr, &ip6h->daddr, 16);
	walked = fg_walk_ipv6_ext(&l4, data_end, pkt, &frag_id);
	if (walked == -2)
		return FG_PARSE_EXT_OVERFLOW;
	if (walked < 0)
		return FG_PARSE_MALFORMED_L4;
	if (walked == 1)
		return fg_follow_first_fragment(pkt, frag_id, &ip6h->daddr, 16);
	if (fg_parse_ports(l4, data_end, pkt))
		return fg_tiny_fragment(walked == 2);
	if (walked == 2)
		fg_note_first_fragment(pkt, frag_id, &ip6h->daddr, 16);
	return FG_PARSE_IP;
}

static __always_inline enum fg_parse_result fg_parse(void *data, void *data_end,
						     struct fg_packet *pkt)
{
	struct ethhdr *eth = data;
	void *cursor = eth + 1;
	__u16 ethertype;
	int i;

	if (cursor > data_end)
		return FG_PARSE_MALFORMED;
	ethertype = eth->h_proto;

#pragma unroll
	for (i = 0; i < FG_VLAN_MAX; i++) {
		struct vlan_hdr *vlan = cursor;

		if (!fg_is_vlan(ethertype))
			break;
		if ((void *)(vlan + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ethertype = vlan->encapsulated_proto;
		cursor = vlan + 1;
	}
	if (fg_is_vlan(ethertype))
		return FG_PARSE_VLAN_OVERFLOW;
	pkt->l3_offset = cursor - data;

	if (ethertype == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = cursor;
		__u32 ihl_bytes;

		if ((void *)(iph + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ihl_bytes = iph->ihl * 4;
		if (iph->version != 4 || ihl_bytes < sizeof(*iph) ||
		    bpf_ntohs(iph->tot_len) < ihl_bytes)
			return FG_PARSE_MALFORMED;
		if (cursor + ihl_bytes > data_end) /* options cut short */
			return FG_PARSE_MALFORMED;
		pkt->family = FG_FAMILY_IPV4;
		pkt->proto = iph->protocol;
		__builtin_memcpy(pkt->saddr, &iph->saddr, 4);
		__builtin_memcpy(pkt->daddr, &iph->daddr, 4);
		/* Only the first fragment carries the L4 header. */
		if (iph->frag_off & bpf_htons(0x1fff))
			return fg_follow_first_fragment(pkt, iph->id, &iph->daddr, 4);
		if (fg_parse_ports(cursor + ihl_bytes, data_end, pkt))
			/* More fragments follow: reassembly would complete
			 * the header, with flags the match never saw. */
			return fg_tiny_fragment(iph->frag_off & bpf_htons(0x2000));
		if (iph->frag_off & bpf_htons(0x2000))
			fg_note_first_fragment(pkt, iph->id, &iph->daddr, 4);
		return FG_PARSE_IP;
	}

	if (ethertype == bpf_htons(ETH_P_IPV6))
		return fg_parse_ipv6(cursor, data_end, pkt);

	return FG_PARSE_NON_IP;
}

/* Benchmarks only: rewrites the parsed IPv4 source (fg_bench_source_mask,
 * fg_globals.h); the verifier prunes it from every real load. */
static __always_inline void fg_bench_rewrite_source(struct fg_packet *pkt)
{
	__u32 index, saddr;

	if (!fg_bench_source_mask || pkt->family != FG_FAMILY_IPV4)
		return;
	/* FG_BENCH_RANDOM: a random address of 10.0.0.0/8 for every packet. */
	index = fg_bench_source_mask == FG_BENCH_RANDOM
			? fg_bench_source(bpf_get_prandom_u32(), 0xffffff)
			: fg_bench_source(fg_bench_seq++, fg_bench_source_mask);
	saddr = bpf_htonl(index);
	__builtin_memcpy(pkt->saddr, &saddr, 4);
}

#endif /* FG_PARSE_H */
