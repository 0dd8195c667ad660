/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet's clock: the injected test clock, the coarse clock or
 * bpf_ktime_get_ns(), read at most once a packet, and the coarse clock's
 * upper bound that lets a refusal skip the precise read. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_globals.h.
 */
#ifndef FG_CLOCK_H
#define FG_CLOCK_H

/* The time of the last tick: the test clock lags fg_test_now_ns by
 * fg_test_coarse_lag_ns, as the coarse clock lags the precise one. */
static __always_inline __u64 fg_coarse_now(void)
{
	if (fg_test_clock)
		return fg_test_now_ns - fg_test_coarse_lag_ns;
	return bpf_ktime_get_coarse_ns();
}

static __always_inline __u64 fg_now(void)
{
	if (fg_test_clock) {
		fg_test_clock_reads++;
		return fg_test_now_ns;
	}
	if (fg_coarse_clock)
		return fg_coarse_now();
	return bpf_ktime_get_ns();
}

/* The packet's time, read on first use: the clock is the costliest single
 * step of a packet (docs/benchmarks.md, "Figures behind the code's
 * comments"), and a packet that meets no ban entry and matches no policy,
 * such as bulk TCP data under the built-in policy, does not need it. Read
 * at most once, so every layer judges the packet at the same instant.
 *
 * A refusal may not need it either. The GCRA refuses at `now` iff
 * now < TAT + cost - tau: if it refuses at a time no earlier than the
 * precise clock's, it refuses at the precise clock's. bpf_ktime_get_coarse_ns()
 * is the monotonic clock as of the last timekeeping update, so coarse <=
 * precise, and precise < coarse + fg_coarse_lag_ns (its argument:
 * user/maps/skeleton.c, fg_coarse_lag). So a GCRA that refuses at
 * fg_clock_latest() refuses at the instant of the coarse read, and only a
 * packet within the lag of its limit, or one that is admitted, reads the
 * precise clock (~40 ns here against ~4; docs/benchmarks.md).
 *
 * 0 stands for "not read yet", not a flag beside each time: both clocks
 * are past 0 once the host is up (a 0 would only be read again, and be the
 * same 0), and the flags' 8 bytes took fg_tc's deepest call chain past
 * the 512-byte stack of 6.1, which rounds each frame up to 32 (README,
 * Kernels). With owes_events, fg_tc's frame is 208 bytes, rounded to 224:
 * 24 bytes more on it would cost the chain 32. */
struct fg_clock {
	__u64 now;    /* the precise time, once read; 0 until then */
	__u64 coarse; /* the coarse time, once read; 0 until then */
	/* Not a time: set while the layer being applied owes events
	 * (bpf/fg_events.h), read at its end in the line of the times. */
	__u64 owes_events;
};

static __always_inline __u64 fg_clock_now(struct fg_clock *clock)
{
	if (!clock->now)
		clock->now = fg_now();
	return clock->now;
}

/* A time no later than the packet's, for what a refusal records
 * (last_seen, the refusal cache's age, events): the coarse reading, or the
 * precise one without the shortcut. */
static __always_inline __u64 fg_clock_earliest(struct fg_clock *clock)
{
	if (!fg_coarse_lag_ns)
		return fg_clock_now(clock);
	if (!clock->coarse)
		clock->coarse = fg_coarse_now();
	return clock->coarse;
}

/* A time no earlier than the packet's: the precise one once read, else the
 * coarse reading plus its lag. */
static __always_inline __u64 fg_clock_latest(struct fg_clock *clock)
{
	if (clock->now)
		return clock->now;
	return fg_clock_earliest(clock) + fg_coarse_lag_ns;
}

#endif /* FG_CLOCK_H */
