// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmarks' baseline: the cheapest possible XDP program, and two
 * variants of it that price what floodgate's program is made of: one
 * BPF-to-BPF call (a subprogram's call and return) and one helper call.
 * On a CPU whose kernel mitigates SRSO with "Safe RET" every return is
 * made to mispredict, JITed subprograms' and helpers' alike
 * (docs/benchmarks.md, round 11).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int baseline_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

/* Not inlined, and given the context so that the call is not folded away. */
static __noinline int drop_verdict(struct xdp_md *ctx)
{
	return ctx ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int baseline_subprogram(struct xdp_md *ctx)
{
	return drop_verdict(ctx);
}

SEC("xdp")
int baseline_helper(struct xdp_md *ctx)
{
	(void)ctx;
	return bpf_ktime_get_coarse_ns() ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
