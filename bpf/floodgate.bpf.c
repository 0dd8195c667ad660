// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate datapath: one engine with two entry points, XDP (fg_xdp) and tc
 * clsact ingress (fg_tc). Per packet: parse, find the matching policy from
 * precomputed bitmasks, and charge the masked source's GCRA state.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "floodgate.h"
#include "fg_bits.h"
#include "fg_gcra.h"

#define EEXIST	       17
#define FG_CAS_RETRIES 8

/* Load-time settings (rodata), set by the loader between open and load. */
const volatile bool fg_test_clock = false;	  /* use fg_test_now_ns, tests only */
const volatile bool fg_test_naive_update = false; /* racy read-modify-write, tests only */

/* The injected clock; only read when fg_test_clock is set, so a production
 * load never reaches it and the verifier prunes the branch. */
__u64 fg_test_now_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES); /* resized from max_sources */
	__type(key, struct fg_source_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_policy_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_PORT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} dport_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_SRC_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} src_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_runtime);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} runtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct fg_policy_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_global_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} global_stats SEC(".maps");

/* What the parser extracts; addresses stay in network order. */
struct fg_packet {
	__u8 family;
	__u8 proto;
	__u8 has_ports; /* TCP/UDP with a readable header, not a later fragment */
	__u16 dport;	/* host order */
	__u8 saddr[16];
};

enum fg_parse_result {
	FG_PARSE_IP,
	FG_PARSE_NON_IP,
	FG_PARSE_MALFORMED,
};

struct vlan_hdr {
	__be16 tci;
	__be16 encapsulated_proto;
};

static __always_inline __u64 fg_now(void)
{
	if (fg_test_clock)
		return fg_test_now_ns;
	return bpf_ktime_get_ns();
}

/* Reads the L4 destination port. Returns 0 when the header is readable or
 * the protocol has no ports, -1 when a TCP/UDP header is truncated. */
static __always_inline int fg_parse_ports(void *l4, void *data_end, struct fg_packet *pkt)
{
	if (pkt->proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(th->dest);
		pkt->has_ports = 1;
	} else if (pkt->proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(uh->dest);
		pkt->has_ports = 1;
	}
	return 0;
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
	for (i = 0; i < 2; i++) {
		struct vlan_hdr *vlan = cursor;

		if (ethertype != bpf_htons(ETH_P_8021Q) && ethertype != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vlan + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ethertype = vlan->encapsulated_proto;
		cursor = vlan + 1;
	}

	if (ethertype == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = cursor;
		__u32 ihl_bytes;

		if ((void *)(iph + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ihl_bytes = iph->ihl * 4;
		if (iph->version != 4 || ihl_bytes < sizeof(*iph) ||
		    bpf_ntohs(iph->tot_len) < ihl_bytes)
			return FG_PARSE_MALFORMED;
		if (cursor + ihl_bytes > data_end)
			return FG_PARSE_MALFORMED;
		pkt->family = FG_FAMILY_IPV4;
		pkt->proto = iph->protocol;
		__builtin_memcpy(pkt->saddr, &iph->saddr, 4);
		/* Only the first fragment carries the L4 header. */
		if (iph->frag_off & bpf_htons(0x1fff))
			return FG_PARSE_IP;
		if (fg_parse_ports(cursor + ihl_bytes, data_end, pkt))
			return FG_PARSE_MALFORMED;
		return FG_PARSE_IP;
	}

	if (ethertype == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = cursor;

		if ((void *)(ip6h + 1) > data_end)
			return FG_PARSE_MALFORMED;
		if (ip6h->version != 6)
			return FG_PARSE_MALFORMED;
		pkt->family = FG_FAMILY_IPV6;
		pkt->proto = ip6h->nexthdr;
		__builtin_memcpy(pkt->saddr, &ip6h->saddr, 16);
		if (fg_parse_ports(ip6h + 1, data_end, pkt))
			return FG_PARSE_MALFORMED;
		return FG_PARSE_IP;
	}

	return FG_PARSE_NON_IP;
}

/* Bitmask of the policies whose match fits the packet. */
static __always_inline __u64 fg_match(const struct fg_policy_set *set, __u32 slot,
				      const struct fg_packet *pkt)
{
	__u64 candidates = set->proto_match[pkt->proto];

	if (pkt->has_ports) {
		__u32 index = slot * FG_PORT_SLOTS + pkt->dport;
		__u64 *ports = bpf_map_lookup_elem(&dport_match, &index);

		candidates &= ports ? *ports : 0;
	} else {
		candidates &= set->portless_match;
	}

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

static __always_inline void fg_make_key(const struct fg_policy *policy, const struct fg_packet *pkt,
					struct fg_source_key *key)
{
	__u64 *addr = (__u64 *)key->addr;

	key->policy_id = policy->id;
	if (policy->key_kind == FG_KEY_GLOBAL)
		return;
	key->family = pkt->family;
	if (pkt->family == FG_FAMILY_IPV4) {
		__u32 saddr;

		__builtin_memcpy(&saddr, pkt->saddr, 4);
		saddr &= policy->mask_v4_be;
		__builtin_memcpy(key->addr, &saddr, 4);
		key->prefix_len = policy->prefix_v4;
	} else {
		__u64 saddr[2];

		__builtin_memcpy(saddr, pkt->saddr, 16);
		addr[0] = saddr[0] & policy->mask_v6_be[0];
		addr[1] = saddr[1] & policy->mask_v6_be[1];
		key->prefix_len = policy->prefix_v6;
	}
}

/* Charges `cost` to the key's GCRA state. Returns 1 if admitted, 0 if
 * refused, and -1 if no state could be created (table full). */
static __always_inline int fg_charge(const struct fg_policy *policy,
				     const struct fg_source_key *key, __u64 now, __u64 cost,
				     struct fg_global_stats *gstats)
{
	struct fg_gcra_params params = {
		.interval_fp = policy->interval_fp,
		.tolerance_ns = policy->tolerance_ns,
	};
	struct fg_source_state *state;
	__u64 new_tat = 0;
	int i;

	state = bpf_map_lookup_elem(&sources, key);
	if (!state) {
		struct fg_source_state fresh = {.last_seen_ns = now};
		int admitted = fg_gcra_admit(&params, 0, now, cost, &new_tat);
		long err;

		if (admitted)
			fresh.tat_ns = new_tat;
		else
			fresh.dropped = 1;
		err = bpf_map_update_elem(&sources, key, &fresh, BPF_NOEXIST);
		if (!err)
			return admitted;
		/* Another CPU created it first: charge the state it made. */
		if (err != -EEXIST || !(state = bpf_map_lookup_elem(&sources, key))) {
			if (gstats)
				gstats->insert_failed++;
			return -1;
		}
	}

	if (now - state->last_seen_ns >= FG_LAST_SEEN_GRAIN_NS && now > state->last_seen_ns)
		state->last_seen_ns = now;

	if (fg_test_naive_update) {
		/* Deliberately racy, to prove the concurrency test can fail. */
		if (!fg_gcra_admit(&params, state->tat_ns, now, cost, &new_tat)) {
			__sync_fetch_and_add(&state->dropped, 1);
			return 0;
		}
		state->tat_ns = new_tat;
		return 1;
	}

	for (i = 0; i < FG_CAS_RETRIES; i++) {
		__u64 tat = *(volatile __u64 *)&state->tat_ns;

		if (!fg_gcra_admit(&params, tat, now, cost, &new_tat)) {
			__sync_fetch_and_add(&state->dropped, 1);
			return 0;
		}
		if (__sync_val_compare_and_swap(&state->tat_ns, tat, new_tat) == tat)
			return 1;
	}
	/* Refusing is the safe side: admitting here could exceed the limit. */
	if (gstats)
		gstats->cas_exhausted++;
	__sync_fetch_and_add(&state->dropped, 1);
	return 0;
}

static __always_inline enum fg_verdict fg_process(void *data, void *data_end, __u64 pkt_len)
{
	struct fg_packet pkt = {};
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_runtime *rt;
	__u32 zero = 0, slot, index;
	__u64 candidates;
	int admitted;

	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!gstats || !rt)
		return FG_VERDICT_PASS;
	slot = rt->active_slot & (FG_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!set)
		return FG_VERDICT_PASS;
	gstats->packets++;

	switch (fg_parse(data, data_end, &pkt)) {
	case FG_PARSE_NON_IP:
		gstats->non_ip++;
		return FG_VERDICT_PASS;
	case FG_PARSE_MALFORMED:
		gstats->malformed++;
		return set->malformed_verdict == FG_VERDICT_DROP ? FG_VERDICT_DROP
								 : FG_VERDICT_PASS;
	case FG_PARSE_IP:
		break;
	}
	gstats->parsed++;

	candidates = fg_match(set, slot, &pkt);
	if (!candidates) {
		gstats->unmatched++;
		return FG_VERDICT_PASS;
	}

	/* First match decides: the lowest set bit is the earliest policy in the
	 * file. Multi-layer evaluation will walk the remaining bits here. */
	index = fg_lowest_bit(candidates);
	/* clang knows the table's values and would drop this bound, which
	 * the verifier needs; hide the value from it. */
	asm volatile("" : "+r"(index));
	if (index >= FG_MAX_POLICIES)
		return FG_VERDICT_PASS;
	{
		const struct fg_policy *policy = &set->policies[index];
		__u32 stats_index = slot * FG_MAX_POLICIES + index;
		struct fg_policy_stats *pstats = bpf_map_lookup_elem(&policy_stats, &stats_index);
		struct fg_source_key key = {};
		__u64 cost = 1;

		if (!pstats)
			return FG_VERDICT_PASS;
		if (policy->flags & FG_POLICY_BYTES)
			cost = pkt_len > FG_MAX_COST ? FG_MAX_COST : pkt_len;
		pstats->matched_packets++;
		pstats->matched_bytes += pkt_len;

		fg_make_key(policy, &pkt, &key);
		admitted = fg_charge(policy, &key, fg_now(), cost, gstats);
		if (admitted < 0)
			admitted = set->table_full_verdict == FG_VERDICT_PASS;
		if (admitted) {
			pstats->passed_packets++;
			pstats->passed_bytes += pkt_len;
			return FG_VERDICT_PASS;
		}
		if (policy->action == FG_ACTION_MONITOR) {
			pstats->would_drop_packets++;
			pstats->would_drop_bytes += pkt_len;
			pstats->passed_packets++;
			pstats->passed_bytes += pkt_len;
			return FG_VERDICT_PASS;
		}
		pstats->dropped_packets++;
		pstats->dropped_bytes += pkt_len;
		return FG_VERDICT_DROP;
	}
}

SEC("xdp")
int fg_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (fg_process(data, data_end, data_end - data) == FG_VERDICT_DROP)
		return XDP_DROP;
	return XDP_PASS;
}

/* Enough linear bytes for Ethernet, two VLAN tags, IPv4 with options or
 * IPv6, and a TCP header. */
#define FG_TC_HEADER_BYTES 128

SEC("tc")
int fg_tc(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 want = skb->len < FG_TC_HEADER_BYTES ? skb->len : FG_TC_HEADER_BYTES;

	/* Headers may sit in paged data; make them readable, once. */
	if (data_end - data < want) {
		bpf_skb_pull_data(skb, want);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}

	if (fg_process(data, data_end, skb->len) == FG_VERDICT_DROP)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
