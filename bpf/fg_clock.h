/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet's clock: the injected test clock, the coarse clock or
 * bpf_ktime_get_ns(), read at most once a packet. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_globals.h.
 */
#ifndef FG_CLOCK_H
#define FG_CLOCK_H

static __always_inline __u64 fg_now(void)
{
	if (fg_test_clock) {
		fg_test_clock_reads++;
		return fg_test_now_ns;
	}
	if (fg_coarse_clock)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/* The packet's time, read on first use: the clock is the costliest single
 * step of a packet (docs/benchmarks.md, "Figures behind the code's
 * comments"), and a packet that meets no ban entry and matches no policy,
 * such as bulk TCP data under the built-in policy, does not need it. Read
 * at most once, so every layer judges the packet at the same instant. */
struct fg_clock {
	__u64 now;
	bool read;
};

static __always_inline __u64 fg_clock_now(struct fg_clock *clock)
{
	if (!clock->read) {
		clock->now = fg_now();
		clock->read = true;
	}
	return clock->now;
}

#endif /* FG_CLOCK_H */
