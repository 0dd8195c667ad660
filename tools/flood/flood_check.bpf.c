// SPDX-License-Identifier: GPL-2.0-only
/*
 * flood_check: a receiver-side checker for floodgate-flood, used by
 * tests/integration/test_flood_gen.sh. Attached natively to the receiving
 * veth end, it verifies every frame completely (IPv4 header checksum,
 * UDP/TCP checksum over the pseudo-header and the whole segment, lengths,
 * the TCP SYN fields, a zero payload), counts frames per source and per
 * flow (MACs, ports), and drops them.
 *
 * With fc_bounce[0] set it instead sends each well-formed frame back out
 * (XDP_TX) with a payload byte set, and 2 bytes shorter when it is
 * FC_BOUNCE_SHORTER, as a receiver that answers in place does (floodgate's
 * SYN proxy): the generator's page pool then gets back pages whose frame is
 * no longer the template, and the frames it makes of them must still be.
 *
 * Read the maps with bpftool (the test pins them with `pinmaps`).
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define FC_MAX_L4 (1514 - ETH_HLEN - 20) /* the longest segment we can get */

enum fc_counter {
	FC_FRAMES = 0, /* every frame seen */
	FC_IPV4 = 1,   /* well-formed, by family and protocol */
	FC_IPV6 = 2,
	FC_UDP = 3,
	FC_TCP = 4,
	FC_MALFORMED = 5,     /* not IPv4/IPv6 + UDP/TCP, options, fragments... */
	FC_BAD_LEN = 6,	      /* IP or UDP length disagrees with the frame */
	FC_BAD_IP_CSUM = 7,   /* IPv4 header checksum */
	FC_BAD_L4_CSUM = 8,   /* UDP or TCP checksum (UDP 0 counts as bad) */
	FC_BAD_TCP = 9,	      /* not a bare SYN, data offset 5, window 64240 */
	FC_BAD_PAYLOAD = 10,  /* a non-zero payload byte */
	FC_TCP_SEQ_SUM = 11,  /* sum of the TCP sequence numbers */
	FC_FIRST_NS = 12,     /* bpf_ktime_get_ns() of the first frame */
	FC_LAST_NS = 13,      /* ... and of the latest */
	FC_SOURCES_FULL = 14, /* frames whose source found no room in fc_sources */
	FC_NR = 16,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} fc_bounce SEC(".maps");

#define FC_BOUNCE_MIN	  60 /* the frames long enough to bounce: byte 57 is payload */
#define FC_BOUNCE_WRITE	  1  /* fc_bounce[0]: the payload byte only */
#define FC_BOUNCE_SHORTER 2  /* ... and 2 bytes off the frame */

struct fc_source_key {
	__u8 family; /* 4 or 6 */
	__u8 pad[3];
	__u8 addr[16];
};

struct fc_flow_key {
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
	__u8 family;
	__u8 proto;
	__u16 sport; /* host order */
	__u16 dport;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FC_NR);
	__type(key, __u32);
	__type(value, __u64);
} fc_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct fc_source_key);
	__type(value, __u64);
} fc_sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct fc_flow_key);
	__type(value, __u64);
} fc_flows SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&fc_counters, &idx);

	if (v)
		__sync_fetch_and_add(v, n);
}

static __always_inline void count_key(void *map, const void *key)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, key);

	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST)) {
		/* Lost a race with another CPU, or the map is full. */
		v = bpf_map_lookup_elem(map, key);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			count(FC_SOURCES_FULL, 1);
	}
}

static __always_inline __u16 fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Sum of the 16-bit words of the payload at `off` (a constant) of `len`
 * bytes; *orv gets the OR of its bytes (non-zero if any byte is). */
static __always_inline __u64 sum_payload(void *data, void *end, const __u32 off, __u32 len,
					 __u32 *orv)
{
	__u64 sum = 0;
	__u32 acc = 0, i;

	for (i = 0; i < FC_MAX_L4 / 2; i++) {
		__u16 *p = data + off + 2 * i;

		if (2 * i + 2 > len || (void *)(p + 1) > end)
			break;
		sum += *p;
		acc |= *p;
	}
	if ((len & 1) && len < 2048) {
		/* Bounded so that the verifier can check the access. */
		__u8 *b = data + off + (len & 0x7fe);

		if ((void *)(b + 1) <= end) {
			__u16 last = 0;

			*(__u8 *)&last = *b;
			sum += last;
			acc |= last;
		}
	}
	*orv = acc;
	return sum;
}

static __always_inline __u64 sum_words(const void *p, const int len)
{
	const __u16 *w = p;
	__u64 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < len / 2; i++)
		sum += w[i];
	return sum;
}

/* Checks the L4 header and segment; `sum` holds the pseudo-header. */
static __always_inline void check_l4(void *data, void *end, const __u32 off, __u32 l4len,
				     __u8 proto, __u64 sum, struct fc_flow_key *flow)
{
	__u32 nonzero = 0;
	bool bad = false;

	if (proto == IPPROTO_UDP) {
		struct udphdr *udp = data + off;

		if ((void *)(udp + 1) > end || l4len < sizeof(*udp)) {
			count(FC_MALFORMED, 1);
			return;
		}
		count(FC_UDP, 1);
		if (bpf_ntohs(udp->len) != l4len)
			count(FC_BAD_LEN, 1);
		bad = udp->check == 0;
		flow->sport = bpf_ntohs(udp->source);
		flow->dport = bpf_ntohs(udp->dest);
		sum += sum_words(udp, sizeof(*udp)) +
		       sum_payload(data, end, off + sizeof(*udp), l4len - sizeof(*udp), &nonzero);
	} else {
		struct tcphdr *tcp = data + off;

		if ((void *)(tcp + 1) > end || l4len < sizeof(*tcp)) {
			count(FC_MALFORMED, 1);
			return;
		}
		count(FC_TCP, 1);
		if (tcp->doff != 5 || ((__u8 *)tcp)[13] != 0x02 ||
		    bpf_ntohs(tcp->window) != 64240 || tcp->ack_seq || tcp->urg_ptr)
			count(FC_BAD_TCP, 1);
		count(FC_TCP_SEQ_SUM, bpf_ntohl(tcp->seq));
		flow->sport = bpf_ntohs(tcp->source);
		flow->dport = bpf_ntohs(tcp->dest);
		sum += sum_words(tcp, sizeof(*tcp)) +
		       sum_payload(data, end, off + sizeof(*tcp), l4len - sizeof(*tcp), &nonzero);
	}
	if (bad || fold(sum) != 0xffff)
		count(FC_BAD_L4_CSUM, 1);
	if (nonzero)
		count(FC_BAD_PAYLOAD, 1);
}

SEC("xdp")
int flood_check(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 frame_len = (__u32)(end - data);
	struct fc_flow_key flow = {};
	struct fc_source_key src = {};
	struct ethhdr *eth = data;
	__u64 now = bpf_ktime_get_ns(), *first;
	__u32 *bounce;
	__u32 idx = FC_FIRST_NS;

	count(FC_FRAMES, 1);
	first = bpf_map_lookup_elem(&fc_counters, &idx);
	if (first && !*first)
		__sync_val_compare_and_swap(first, 0, now);
	idx = FC_LAST_NS;
	first = bpf_map_lookup_elem(&fc_counters, &idx);
	if (first)
		*first = now;

	if ((void *)(eth + 1) > end) {
		count(FC_MALFORMED, 1);
		return XDP_DROP;
	}
	__builtin_memcpy(flow.dmac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(flow.smac, eth->h_source, ETH_ALEN);

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data + ETH_HLEN;
		__u32 l4len;
		__u64 sum;

		if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl != 5 ||
		    (ip->frag_off & bpf_htons(0x3fff)) ||
		    (ip->protocol != IPPROTO_UDP && ip->protocol != IPPROTO_TCP)) {
			count(FC_MALFORMED, 1);
			return XDP_DROP;
		}
		count(FC_IPV4, 1);
		if (bpf_ntohs(ip->tot_len) != frame_len - ETH_HLEN) {
			count(FC_BAD_LEN, 1);
			return XDP_DROP;
		}
		if (fold(sum_words(ip, 20)) != 0xffff)
			count(FC_BAD_IP_CSUM, 1);
		src.family = 4;
		__builtin_memcpy(src.addr, &ip->saddr, 4);
		flow.family = 4;
		flow.proto = ip->protocol;
		l4len = frame_len - ETH_HLEN - 20;
		/* Pseudo-header: addresses, protocol, length. */
		sum = sum_words(&ip->saddr, 8) + bpf_htons((__u16)ip->protocol) +
		      bpf_htons((__u16)l4len);
		check_l4(data, end, ETH_HLEN + 20, l4len, ip->protocol, sum, &flow);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + ETH_HLEN;
		__u32 l4len;
		__u64 sum;

		if ((void *)(ip6 + 1) > end || ip6->version != 6 ||
		    (ip6->nexthdr != IPPROTO_UDP && ip6->nexthdr != IPPROTO_TCP)) {
			count(FC_MALFORMED, 1);
			return XDP_DROP;
		}
		count(FC_IPV6, 1);
		l4len = frame_len - ETH_HLEN - 40;
		if (bpf_ntohs(ip6->payload_len) != l4len) {
			count(FC_BAD_LEN, 1);
			return XDP_DROP;
		}
		src.family = 6;
		__builtin_memcpy(src.addr, &ip6->saddr, 16);
		flow.family = 6;
		flow.proto = ip6->nexthdr;
		sum = sum_words(&ip6->saddr, 32) + bpf_htons((__u16)ip6->nexthdr) +
		      bpf_htons((__u16)l4len);
		check_l4(data, end, ETH_HLEN + 40, l4len, ip6->nexthdr, sum, &flow);
	} else {
		count(FC_MALFORMED, 1);
		return XDP_DROP;
	}
	count_key(&fc_sources, &src);
	count_key(&fc_flows, &flow);
	idx = 0;
	bounce = bpf_map_lookup_elem(&fc_bounce, &idx);
	if (!bounce || !*bounce || data + FC_BOUNCE_MIN > end)
		return XDP_DROP;
	((__u8 *)data)[FC_BOUNCE_MIN - 3] = 0xff;
	if (*bounce == FC_BOUNCE_SHORTER && bpf_xdp_adjust_tail(ctx, -2))
		return XDP_DROP;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
