// SPDX-License-Identifier: GPL-2.0-only
/* The benchmarks' baseline: the cheapest possible XDP program. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int baseline_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
