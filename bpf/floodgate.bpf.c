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
 * refusal cache, charging, and the fleet.
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

#include "fg_globals.h"
#include "fg_maps.h"
#include "fg_clock.h"
#include "fg_parse.h"
#include "fg_match.h"
#include "fg_events.h"
#include "fg_access.h"
#include "fg_budget.h"
#include "fg_refusal.h"
#include "fg_charge.h"
#include "fg_fleet.h"

/* Applies one policy to the packet and counts the outcome. Returns
 * FG_VERDICT_PASS, FG_VERDICT_DROP or FG_VERDICT_DROP_AND_BAN. */
static __always_inline int fg_apply(const struct fg_policy_set *set, __u32 slot, __u32 index,
				    const struct fg_packet *pkt, __u64 pkt_len, __u64 now,
				    struct fg_global_stats *gstats)
{
	const struct fg_policy *policy = &set->policies[index];
	__u32 stats_index = slot * FG_MAX_POLICIES + index;
	struct fg_policy_stats *pstats = bpf_map_lookup_elem(&policy_stats, &stats_index);
	struct fg_fleet_state *fleet = NULL;
	struct fg_source_key key = {};
	__u32 zero = 0;
	__u64 cost = 1;
	bool fleet_refused = false;
	int admitted;

	if (!pstats)
		return FG_VERDICT_PASS;
	if (policy->flags & FG_POLICY_FLEET)
		fleet = bpf_map_lookup_elem(&fleet_state, &zero);
	if (policy->flags & FG_POLICY_BYTES)
		cost = pkt_len > FG_MAX_COST ? FG_MAX_COST : pkt_len;
	pstats->matched_packets++;
	pstats->matched_bytes += pkt_len;

	fg_make_key(policy, pkt, &key);
	if (fleet && fg_fleet_held(fleet, &key, now)) {
		/* Not charged locally: the fleet already counted it. */
		gstats->fleet_held++;
		admitted = 0;
		fleet_refused = true;
	} else {
		admitted = fg_charge(policy, &key, now, cost, gstats);
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
 * instruction limit.
 */
__noinline int fg_apply_layer(__u32 slot, __u32 index, const struct fg_packet *pkt, __u64 pkt_len,
			      __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	__u32 zero = 0;

	slot &= FG_POLICY_SLOTS - 1;
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!pkt || !gstats || !set || index >= FG_MAX_POLICIES)
		return FG_VERDICT_PASS;
	return fg_apply(set, slot, index, pkt, pkt_len, now, gstats);
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
 * before anything else, whatever its protocol or its damage. */
static __always_inline int fg_source_verdict(const struct fg_policy_set *set, __u32 slot,
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
	if (fg_banned(pkt, clock)) {
		gstats->banned++;
		return FG_VERDICT_DROP;
	}
	return FG_UNDECIDED;
}

/* A sound source whose transport header is damaged or out of the parser's
 * sight. Counted only here, after the lists and bans: a packet a list or a
 * ban already dropped is counted there, not twice. */
static __always_inline int fg_damage_verdict(enum fg_parse_result parsed,
					     const struct fg_policy_set *set,
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
	return FG_UNDECIDED;
}

/* `ctx` is the program's context (struct xdp_md or __sk_buff), for the
 * socket lookup of a ban's evidence. */
static __always_inline enum fg_verdict fg_process(void *ctx, void *data, void *data_end,
						  __u64 pkt_len)
{
	struct fg_packet pkt = {};
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_runtime *rt;
	enum fg_parse_result parsed;
	struct fg_clock clock = {};
	__u32 zero = 0, slot, index, i;
	__u64 candidates, now;
	int verdict, refused;

	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!gstats || !rt)
		return FG_VERDICT_PASS;
	slot = rt->active_slot & (FG_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!set)
		return FG_VERDICT_PASS;
	gstats->packets++;

	parsed = fg_parse(data, data_end, &pkt);
	fg_bench_rewrite_source(&pkt);
	verdict = fg_sourceless_verdict(parsed, set, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	verdict = fg_source_verdict(set, slot, &pkt, &clock, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	verdict = fg_damage_verdict(parsed, set, gstats);
	if (verdict != FG_UNDECIDED)
		return verdict;
	gstats->parsed++;

	candidates = fg_match(set, slot, &pkt, pkt_len);
	if (!candidates) {
		gstats->unmatched++;
		return FG_VERDICT_PASS;
	}
	now = fg_clock_now(&clock);

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
		refused = fg_apply_layer(slot, index, &pkt, pkt_len, now);
		if (refused == FG_VERDICT_PASS)
			continue;
		if (refused == FG_VERDICT_DROP_AND_BAN) {
			if (pkt.proto != IPPROTO_TCP || fg_tcp_established(ctx, &pkt))
				fg_ban_layer(slot, index, &pkt, now);
			else
				gstats->bans_unverified++;
		}
		return FG_VERDICT_DROP;
	}
	return FG_VERDICT_PASS;
}

SEC("xdp")
int fg_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 pkt_len = data_end - data;

	if (fg_test_clock && fg_test_wire_len)
		pkt_len = fg_test_wire_len;
	if (fg_process(ctx, data, data_end, pkt_len) == FG_VERDICT_DROP)
		return XDP_DROP;
	return XDP_PASS;
}

/* Enough linear bytes for Ethernet, FG_VLAN_MAX VLAN tags, IPv4 with
 * options or IPv6 with a few extension headers, and a TCP header. */
#define FG_TC_HEADER_BYTES 256

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

	if (fg_process(skb, data, data_end, skb->len) == FG_VERDICT_DROP)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
