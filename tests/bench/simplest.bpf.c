// SPDX-License-Identifier: GPL-2.0-only
/* The simplest limiter a user would write (issue 25's baseline): a fixed
 * window per IPv4 source in an LRU hash, plain increments, one
 * bpf_ktime_get_ns() a packet; no atomics, layers, lists or IPv6. The
 * window, its allowance and the table size are fixed at build time
 * (scripts/bench.sh builds one per limit and table size). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fg_bench_source.h"

#ifndef SIMPLEST_WINDOW_NS
#define SIMPLEST_WINDOW_NS 1000000000ULL /* 1 second */
#endif
#ifndef SIMPLEST_LIMIT
#define SIMPLEST_LIMIT 100 /* packets per window */
#endif
#ifndef SIMPLEST_ENTRIES
#define SIMPLEST_ENTRIES 65536
#endif

struct window {
	__u64 start_ns;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SIMPLEST_ENTRIES);
	__type(key, __u32);
	__type(value, struct window);
} windows SEC(".maps");

/* Benchmarks only (build/bench_prog): rewrite the source to the
 * sequence's key of the set the mask names (include/fg_bench_source.h), as
 * floodgate's does, so BPF_PROG_TEST_RUN can time many keys; 0 in the lab,
 * where the verifier prunes it. */
const volatile __u32 bench_source_mask = 0;
__u32 bench_seq = 0;

SEC("xdp")
int simplest(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct window *w, fresh = {.count = 1};
	__u64 now = bpf_ktime_get_ns();
	__u32 src;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	src = bench_source_mask ? bpf_htonl(fg_bench_source(bench_seq++, bench_source_mask))
				: ip->saddr;
	w = bpf_map_lookup_elem(&windows, &src);
	if (!w || now - w->start_ns >= SIMPLEST_WINDOW_NS) {
		fresh.start_ns = now;
		bpf_map_update_elem(&windows, &src, &fresh, BPF_ANY);
		return XDP_PASS;
	}
	if (w->count >= SIMPLEST_LIMIT)
		return XDP_DROP; /* no write: a refused source's line stays clean */
	w->count++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
