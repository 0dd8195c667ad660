// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate datapath: one engine with two entry points, XDP (fg_xdp) and tc
 * clsact ingress (fg_tc). Per packet: parse, find the matching policy from
 * precomputed bitmasks, and charge the masked source's rate-limit state with
 * the policy's algorithm (include/fg_gcra.h, include/fg_algos.h), whose
 * parameters are read from the policy as they are.
 *
 * This file holds the entry points, fg_process and the policy walk; each
 * feature is a header of its own under bpf/, included here only, in the
 * order of what each needs: the globals and maps, the clock, the parser,
 * the match, events, the lists and bans, the new-source budget, the
 * refusal cache, charging, the fleet, and the SYN proxy, whose programs
 * (fg_xdp_synproxy, fg_tc_synproxy) fg_process reaches by a tail call.
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
#include "fg_algos.h"
#include "fg_bits.h"
#include "fg_gcra.h"
#include "fg_bench_source.h"

#include "fg_globals.h"
#include "fg_maps.h"
#include "fg_clock.h"
#include "fg_parse.h"
#include "fg_match.h"
#include "fg_events.h"
#include "fg_access.h"
#include "fg_budget.h"
#include "fg_refusal.h"
#include "fg_presence.h"
#include "fg_fleet.h"
#include "fg_charge.h"
#include "fg_synproxy.h"

/* What the packet costs a layer: its length (at most FG_MAX_COST) under a
 * byte limit, else the wire packets it stands for. */
static __always_inline __u64 fg_layer_cost(const struct fg_policy *policy,
					   const struct fg_packet *pkt, __u64 pkt_len)
{
	if (policy->flags & FG_POLICY_BYTES)
		return pkt_len > FG_MAX_COST ? FG_MAX_COST : pkt_len;
	return pkt->segments;
}

/* Applies one policy to the packet and counts the outcome. Returns
 * FG_VERDICT_PASS, FG_VERDICT_DROP or FG_VERDICT_DROP_AND_BAN. */
static __always_inline int fg_apply(const struct fg_policy_set *set, __u32 slot, __u32 index,
				    const struct fg_packet *pkt, __u64 pkt_len,
				    struct fg_clock *clock, struct fg_global_stats *gstats)
{
	const struct fg_policy *policy = &set->policies[index];
	__u32 stats_index = slot * FG_MAX_POLICIES + index;
	struct fg_policy_stats *pstats = bpf_map_lookup_elem(&policy_stats, &stats_index);
	struct fg_fleet_state *fleet = NULL;
	struct fg_source_key key = {};
	__u64 cost = fg_layer_cost(policy, pkt, pkt_len);
	bool fleet_refused = false;
	int admitted;

	if (!pstats)
		return FG_VERDICT_PASS;
	if (policy->flags & FG_POLICY_FLEET)
		fleet = bpf_map_lookup_elem(&fleet_state, FG_FIRST_ENTRY);
	pstats->matched_packets++;
	pstats->matched_bytes += pkt_len;

	fg_make_key(policy, pkt, &key);
	if (fleet && fg_fleet_held(fleet, &key, fg_clock_now(clock))) {
		/* Not charged locally: the fleet already counted it. */
		gstats->fleet_held++;
		admitted = 0;
		fleet_refused = true;
	} else {
		admitted = fg_charge(policy, &key, clock, cost, fleet, gstats, set->generation);
		if (admitted < 0)
			admitted = set->table_full_verdict == FG_VERDICT_PASS;
		if (admitted && fleet)
			fg_fleet_count(fleet, &key, pkt_len);
	}
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
	/* A refusal the fleet made (a hold, or Redis down under
	 * on_redis_down = closed) says nothing about this source: no ban. */
	if (policy->action == FG_ACTION_BAN && !fleet_refused && key.family != FG_FAMILY_OVERFLOW &&
	    policy->key_kind != FG_KEY_GLOBAL)
		return fg_ban_wanted(policy, pkt, gstats);
	return FG_VERDICT_DROP;
}

/*
 * One layer of the policy walk, as a global (non-static) function: the
 * verifier checks a global function once, on its own, instead of once per
 * call site and loop iteration, which keeps the 64-layer walk far below the
 * instruction limit. The walk's caller has this CPU's global stats and the
 * active set at hand and passes them, rather than each layer looking them up
 * again; a BPF function takes five arguments, so the layer's stats index
 * (slot * FG_MAX_POLICIES + index) and the packet's length share one.
 * The layer's events are emitted at the end (fg_owe_event).
 */
__noinline int fg_apply_layer(__u64 layer_and_len, const struct fg_packet *pkt,
			      struct fg_clock *clock, struct fg_global_stats *gstats,
			      const struct fg_policy_set *set)
{
	__u32 stats_index = (__u32)layer_and_len;
	__u32 slot = stats_index / FG_MAX_POLICIES, index = stats_index % FG_MAX_POLICIES;
	int verdict;

	if (!pkt || !clock || !gstats || !set || slot >= FG_POLICY_SLOTS)
		return FG_VERDICT_PASS;
	verdict = fg_apply(set, slot, index, pkt, layer_and_len >> 32, clock, gstats);
	if (clock->owes_events) {
		fg_emit_owed();
		clock->owes_events = 0;
	}
	return verdict;
}

/*
 * Whether the refusal cache refuses the packet under layer `index`, judged
 * in the walk's own frame; if so, counts the layer's refusal as fg_apply
 * would. A cached refusal needs nothing else of fg_apply_layer, whose
 * call's return was a third to a half of the program's samples in every
 * profile (docs/benchmarks.md, round 11: under "Safe RET" each return
 * mispredicts). Taken only where fg_apply's outcome would be the same to
 * the letter: an IPv4 source, keyed by its address (not per = global),
 * of a GCRA policy that drops (a monitor's or a ban's refusal does more),
 * at local scope (no fleet hold, not the host table), and not the refusal
 * FG_DROP_SAMPLE samples, which looks the state up. At XDP only: in
 * fg_tc it took 6.18's verifier from 231k to 443k instructions, and
 * 6.1's walks two to three times as many (docs/kernels.md), where
 * fg_xdp's grew by 1k.
 */
static __always_inline bool fg_cached_refusal(const struct fg_policy_set *set, __u32 slot,
					      __u32 index, const struct fg_packet *pkt,
					      __u64 pkt_len, struct fg_clock *clock,
					      struct fg_global_stats *gstats)
{
	const struct fg_policy *policy = &set->policies[index];
	const struct fg_refusal *seen;
	struct fg_policy_stats *pstats;
	__u64 cost;

	if (pkt->family != FG_FAMILY_IPV4 || policy->action != FG_ACTION_DROP ||
	    policy->key_kind == FG_KEY_GLOBAL ||
	    (policy->flags & (FG_POLICY_FLEET | FG_POLICY_HOST)) || !fg_refusal_serves(policy) ||
	    fg_drop_sampled(gstats))
		return false;
	/* The key's and the stats index's slots in a block each, and the
	 * cost taken after the entry's lookup: what lives across a helper
	 * call takes a slot in fg_xdp's frame, whose deepest call chain is
	 * at 6.1's 512 stack bytes. */
	{
		struct fg_source_key key = {};
		struct fg_source4_key key4;

		fg_make_key(policy, pkt, &key);
		key4 = fg_source4_key_of(&key);
		seen = fg_refusal_entry(&key4);
	}
	/* A miss now is a miss in the layer's charge: the call need not ask
	 * again (a spoofed packet's every first layer). */
	clock->refusal_asked = !seen;
	if (!seen)
		return false;
	cost = fg_layer_cost(policy, pkt, pkt_len);
	if (!fg_refusal_refuses(seen, clock, cost, &policy->params.token_bucket, gstats,
				set->generation))
		return false;
	{
		__u32 stats_index = slot * FG_MAX_POLICIES + index;

		pstats = bpf_map_lookup_elem(&policy_stats, &stats_index);
	}
	/* fg_apply passes the packet when the index has no stats, which
	 * cannot be: the walk's call decides it then, as before. */
	if (!pstats)
		return false;
	pstats->matched_packets++;
	pstats->matched_bytes += pkt_len;
	pstats->dropped_packets++;
	pstats->dropped_bytes += pkt_len;
	return true;
}

/* Bans the packet's source under layer `index`, whose refusal asked for it
 * and found the evidence: a global function, like fg_apply_layer, and off
 * the path of every packet the layers admit. */
__noinline int fg_ban_layer(__u32 slot, __u32 index, const struct fg_packet *pkt, __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_source_key key = {};
	__u32 zero = 0;

	slot &= FG_POLICY_SLOTS - 1;
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!pkt || !gstats || !set || index >= FG_MAX_POLICIES)
		return 0;
	fg_make_key(&set->policies[index], pkt, &key);
	fg_ban(&set->policies[index], &key, pkt, now, gstats);
	return 0;
}

/* What a step of fg_process returns when it leaves the packet to the next
 * step; otherwise it returns the packet's enum fg_verdict. */
#define FG_UNDECIDED -1

/* A frame without a trustworthy source address: not IP, malformed, or
 * behind more VLAN tags than the parser walks. */
static __always_inline int fg_sourceless_verdict(enum fg_parse_result parsed,
						 const struct fg_policy_set *set,
						 struct fg_global_stats *gstats)
{
	if (parsed == FG_PARSE_NON_IP) {
		gstats->non_ip++;
		return FG_VERDICT_PASS;
	}
	if (parsed == FG_PARSE_MALFORMED) {
		gstats->malformed++;
		return set->malformed_verdict;
	}
	if (parsed == FG_PARSE_VLAN_OVERFLOW) {
		gstats->malformed++;
		gstats->vlan_overflow++;
		return FG_VERDICT_DROP;
	}
	return FG_UNDECIDED;
}

/* Every packet with a source address meets the access lists and the bans
 * before anything else, whatever its protocol or its damage. The bans cost
 * nothing until something may have put one in the trie (the runtime
 * record's bans_may_exist, which every writer of `bans` sets first). */
static __always_inline int fg_source_verdict(const struct fg_policy_set *set, __u32 slot,
					     const struct fg_runtime *rt,
					     const struct fg_packet *pkt, struct fg_clock *clock,
					     struct fg_global_stats *gstats)
{
	__u32 access = set->access_prefixes ? fg_access(slot, pkt) : 0;

	if (access == FG_ACCESS_ALLOW) {
		gstats->allowed++;
		return FG_VERDICT_PASS;
	}
	if (access == FG_ACCESS_DENY) {
		gstats->denied++;
		return FG_VERDICT_DROP;
	}
	if (rt->bans_may_exist && fg_banned(pkt, clock)) {
		gstats->banned++;
		return FG_VERDICT_DROP;
	}
	return FG_UNDECIDED;
}

/* Whether a later fragment whose first was not seen could belong to a
 * datagram a policy with ports would judge: one matching TCP or UDP on
 * `dport` or `sport` (a `syn` policy judges a first fragment alone). IPv4
 * carries the protocol in every fragment and the kernel reassembles by it;
 * an IPv6 fragment header's next header is the sender's word, which
 * reassembly ignores. */
static __always_inline bool fg_orphan_needs_ports(const struct fg_policy_set *set,
						  const struct fg_packet *pkt)
{
	if (pkt->family == FG_FAMILY_IPV4 && pkt->proto != IPPROTO_TCP && pkt->proto != IPPROTO_UDP)
		return false;
	return (set->proto_match[IPPROTO_TCP] | set->proto_match[IPPROTO_UDP]) &
	       ~set->portless_match & ~set->syn_only;
}

/* A sound source whose transport header is damaged or out of the parser's
 * sight. Counted only here, after the lists and bans: a packet a list or a
 * ban already dropped is counted there, not twice. */
static __always_inline int fg_damage_verdict(enum fg_parse_result parsed,
					     const struct fg_policy_set *set,
					     const struct fg_packet *pkt,
					     struct fg_global_stats *gstats)
{
	if (parsed == FG_PARSE_MALFORMED_L4) {
		gstats->malformed++;
		return set->malformed_verdict;
	}
	if (parsed == FG_PARSE_TINY_FRAGMENT || parsed == FG_PARSE_EXT_OVERFLOW) {
		gstats->malformed++;
		if (parsed == FG_PARSE_TINY_FRAGMENT)
			gstats->tiny_fragments++;
		else
			gstats->ipv6_ext_overflow++;
		return FG_VERDICT_DROP;
	}
	if (parsed == FG_PARSE_ORPHAN_FRAGMENT && fg_orphan_needs_ports(set, pkt)) {
		gstats->fragment_orphans++;
		return FG_VERDICT_DROP;
	}
	return FG_UNDECIDED;
}

/* Linear bytes fg_tc makes readable first: enough for Ethernet, FG_VLAN_MAX
 * VLAN tags, IPv4 with options or IPv6 with a few extension headers, and a
 * TCP header. Longer headers are pulled when the parse needs them. */
#define FG_TC_HEADER_BYTES 256

/* Makes the first `limit` bytes of the frame (or all of it) linear. */
static __always_inline void fg_tc_pull(struct __sk_buff *skb, __u32 limit)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 want = skb->len < limit ? skb->len : limit;

	if (data_end - data < want)
		bpf_skb_pull_data(skb, want);
}

/* Parses the frame; headers may sit in paged data. The first pull covers
 * every header but a long IPv6 extension chain (IPv4's end by byte 126).
 * An IPv6 parse that runs off the linear bytes of a longer frame pulls up
 * to the parser's reach and walks the IPv6 part again, rather than judge a
 * sound packet malformed (which `malformed = pass` would let past every
 * policy). */
static __always_inline enum fg_parse_result fg_tc_parse(struct __sk_buff *skb,
							struct fg_packet *pkt)
{
	enum fg_parse_result parsed;
	__u32 l3_offset;

	fg_tc_pull(skb, FG_TC_HEADER_BYTES);
	parsed = fg_parse((void *)(long)skb->data, (void *)(long)skb->data_end, pkt);
	if ((parsed != FG_PARSE_MALFORMED_L4 && parsed != FG_PARSE_TINY_FRAGMENT) ||
	    pkt->family != FG_FAMILY_IPV6 || skb->data_end - skb->data >= skb->len)
		return parsed;
	l3_offset = pkt->l3_offset;
	if (l3_offset > FG_PARSE_MAX_L3_OFFSET)
		return parsed;
	fg_tc_pull(skb, FG_PARSE_MAX_HEADER_BYTES);
	/* The failed walk wrote no ports: what it wrote, the walk rewrites. */
	return fg_parse_ipv6((void *)(long)skb->data + l3_offset, (void *)(long)skb->data_end, pkt);
}

/* The wire packets a GRO or GSO super-packet stands for, which packet
 * limits charge: gso_segs, or, where a sender left it unset (a packet
 * from a virtio or tap device), the length over gso_size rounded up. */
static __always_inline __u32 fg_tc_segments(struct __sk_buff *skb)
{
	if (!skb->gso_size)
		return 1;
	if (skb->gso_segs)
		return skb->gso_segs;
	return (skb->len + skb->gso_size - 1) / skb->gso_size;
}

/* The policies' verdict on a parsed packet whose source the lists and bans
 * left to them. */
static __always_inline enum fg_verdict fg_judge(void *ctx, bool tc, __u32 slot,
						const struct fg_policy_set *set,
						const struct fg_packet *pkt, __u64 pkt_len,
						struct fg_clock *clock,
						struct fg_global_stats *gstats)
{
	__u32 index, i;
	__u64 candidates;
	int refused;

	candidates = fg_match(set, slot, pkt, pkt_len);
	if (!candidates) {
		gstats->unmatched++;
		return FG_VERDICT_PASS;
	}
	if (!tc) {
		index = fg_lowest_bit(candidates);
		asm volatile("" : "+r"(index)); /* the bound below, as in the walk */
		if (index < FG_MAX_POLICIES &&
		    fg_cached_refusal(set, slot, index, pkt, pkt_len, clock, gstats))
			return FG_VERDICT_DROP;
	}

	/* Every matching policy is a layer, applied in file order (lowest bit
	 * first). The packet passes only if all admit it; the first refusal
	 * stops the walk, so later layers are not charged for a dropped
	 * packet. */
	for (i = 0; i < FG_MAX_POLICIES; i++) {
		if (!candidates)
			break;
		index = fg_lowest_bit(candidates);
		candidates &= candidates - 1;
		/* clang knows the table's values and would drop this bound,
		 * which the verifier needs; hide the value from it. */
		asm volatile("" : "+r"(index));
		if (index >= FG_MAX_POLICIES)
			break;
		refused = fg_apply_layer(pkt_len << 32 | (slot * FG_MAX_POLICIES + index), pkt,
					 clock, gstats, set);
		if (refused == FG_VERDICT_PASS)
			continue;
		if (refused == FG_VERDICT_DROP_AND_BAN) {
			/* A TCP source has evidence it receives when the SYN
			 * proxy accepted its cookie (proven), or when the
			 * packet is on an established connection. */
			if (pkt->proto != IPPROTO_TCP || pkt->proven ||
			    fg_tcp_established(ctx, pkt))
				fg_ban_layer(slot, index, pkt, fg_clock_now(clock));
			else
				gstats->bans_unverified++;
		}
		return FG_VERDICT_DROP;
	}
	return FG_VERDICT_PASS;
}

/* Parses and judges a packet: at tc `skb`, at XDP `data`..`data_end` (skb
 * NULL). `ctx` is the program's context (struct xdp_md or __sk_buff), for
 * the socket lookup of a ban's evidence. The parse comes after the map lookups: the verifier then
 * explores fewer states (parsed in the entry points first, fg_xdp cost it a fifth more). */
static __always_inline enum fg_verdict fg_process(void *ctx, struct fg_packet *pkt,
						  struct __sk_buff *skb, void *data, void *data_end,
						  __u64 pkt_len)
{
	enum fg_parse_result parsed;
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_runtime *rt;
	struct fg_clock clock = {};
	__u32 zero = 0, slot;
	int verdict;

	fg_clock_start(&clock);
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!gstats || !rt)
		return FG_VERDICT_PASS;
	slot = rt->active_slot & (FG_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!set)
		return FG_VERDICT_PASS;
	gstats->packets++;

	parsed = skb ? fg_tc_parse(skb, pkt) : fg_parse(data, data_end, pkt);
	fg_bench_rewrite_source(pkt);
	verdict = fg_sourceless_verdict(parsed, set, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	verdict = fg_source_verdict(set, slot, rt, pkt, &clock, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	verdict = fg_damage_verdict(parsed, set, pkt, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	gstats->parsed++;

	/* A SYN proves nothing and is not charged: the proxy answers it, and
	 * judges the rest of the port's traffic before the policies do, but
	 * for the connections this CPU has just found in conntrack. */
	if (fg_synproxy_wanted(pkt)) {
		if (!pkt->is_syn && fg_synproxy_known_flow(pkt))
			gstats->synproxy_established++;
		else
			fg_synproxy_hand_off(ctx, skb != NULL, pkt, pkt_len);
	}
	return fg_judge(ctx, skb != NULL, slot, set, pkt, pkt_len, &clock, gstats);
}

SEC("xdp")
int fg_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fg_packet pkt = {.segments = 1};
	__u64 pkt_len = data_end - data;

	if (fg_test_clock && fg_test_wire_len)
		pkt_len = fg_test_wire_len;
	if (fg_process(ctx, &pkt, NULL, data, data_end, pkt_len) == FG_VERDICT_DROP)
		return XDP_DROP;
	return XDP_PASS;
}

SEC("tc")
int fg_tc(struct __sk_buff *skb)
{
	struct fg_packet pkt = {};

	pkt.segments = fg_tc_segments(skb);
	if (fg_process(skb, &pkt, skb, NULL, NULL, skb->len) == FG_VERDICT_DROP)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

/* What fg_synproxy_process returns when the frame became the SYN-ACK; it
 * returns an enum fg_verdict otherwise. */
#define FG_SYNACK_SENT -2

/* The SYN proxy's verdict, then the policies' on what it lets through
 * (bpf/fg_synproxy.h); reached from fg_process by a tail call. */
static __always_inline int fg_synproxy_process(void *ctx, bool tc)
{
	struct fg_synproxy_scratch *scratch;
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_runtime *rt;
	struct fg_clock clock = {};
	__u32 zero = 0, slot;
	enum fg_synproxy_outcome outcome;

	scratch = bpf_map_lookup_elem(&synproxy_scratch, &zero);
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!scratch || !gstats || !rt)
		return FG_VERDICT_PASS;
	outcome = fg_synproxy_verdict(ctx, tc, scratch, gstats);
	if (outcome == FG_SYNPROXY_ANSWER)
		return FG_SYNACK_SENT;
	if (outcome == FG_SYNPROXY_DROP)
		return FG_VERDICT_DROP;
	if (outcome == FG_SYNPROXY_STACK)
		return FG_VERDICT_PASS;
	slot = rt->active_slot & (FG_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!set)
		return FG_VERDICT_PASS;
	fg_clock_start(&clock);
	return fg_judge(ctx, tc, slot, set, &scratch->pkt, scratch->pkt_len, &clock, gstats);
}

SEC("xdp")
int fg_xdp_synproxy(struct xdp_md *ctx)
{
	int verdict = fg_synproxy_process(ctx, false);

	if (verdict == FG_SYNACK_SENT)
		return XDP_TX;
	return verdict == FG_VERDICT_DROP ? XDP_DROP : XDP_PASS;
}

/* tc answers by redirecting the SYN-ACK to the egress of the interface
 * the SYN came in on, as XDP_TX does at XDP. */
SEC("tc")
int fg_tc_synproxy(struct __sk_buff *skb)
{
	int verdict = fg_synproxy_process(skb, true);

	if (verdict == FG_SYNACK_SENT)
		return bpf_redirect(skb->ifindex, 0);
	return verdict == FG_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
