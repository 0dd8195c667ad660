/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet's clock: the injected test clock, the coarse clock or
 * bpf_ktime_get_ns(), read at most once a packet, and the coarse clock's
 * upper bound that lets a refusal skip the precise read, from a reading of
 * the coarse clock each CPU takes once a jiffy. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_globals.h and fg_maps.h.
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

/*
 * The coarse clock as the shortcut reads it: once a jiffy on each CPU, and
 * reused until jiffies move. bpf_ktime_get_coarse_ns() is a helper call,
 * 15-20 ns here, most of it the call's return (this CPU's SRSO mitigation
 * makes every return mispredict: docs/benchmarks.md, round 11), while
 * bpf_jiffies64() is a load the verifier inlines and the CPU's entry in
 * `coarse_readings` stays in its cache. Jiffies and the coarse clock move
 * in the same timekeeping update, jiffies first, so a reading reused
 * within its jiffy lags the precise clock by less than twice the coarse
 * clock's own bound, which is the lag the loader gives (fg_coarse_lag_ns;
 * the argument: user/maps/skeleton.c, fg_coarse_reading_lag_ns). The time
 * is written before the jiffy: a program that ran on this CPU between the
 * two writes (a preemptible kernel) would pair the new time with the old
 * jiffy, which the next packet replaces, never an old time with the new
 * jiffy. The injected test clock stands for the reading as it is.
 */
static __always_inline __u64 fg_coarse_cached(void)
{
	struct fg_coarse_reading *reading;
	__u64 jiffy;

	if (fg_test_clock)
		return fg_coarse_now();
	reading = bpf_map_lookup_elem(&coarse_readings, FG_FIRST_ENTRY);
	if (!reading)
		return fg_coarse_now();
	jiffy = bpf_jiffies64();
	if (reading->jiffies != jiffy) {
		reading->coarse_ns = fg_coarse_now();
		reading->jiffies = jiffy;
	}
	return reading->coarse_ns;
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

/* The packet's precise time, read on first use: it is the costliest single
 * step of a packet (docs/benchmarks.md, "Figures behind the code's
 * comments"), and a packet that meets no ban entry and matches no policy,
 * such as bulk TCP data under the built-in policy, does not need it. Read
 * at most once, so every layer judges the packet at the same instant.
 *
 * A refusal may not need it either. The GCRA refuses at `now` iff
 * now < TAT + cost - tau: if it refuses at a time no earlier than the
 * precise clock's, it refuses at the precise clock's. bpf_ktime_get_coarse_ns()
 * is the monotonic clock as of the last timekeeping update, so coarse <=
 * precise, and precise < coarse + fg_coarse_lag_ns, for the reading of it
 * reused within a jiffy too (fg_coarse_cached; the argument:
 * user/maps/skeleton.c, fg_coarse_lag_ns). So a GCRA that refuses at
 * fg_clock_latest() refuses at the instant of the coarse read, and only a
 * packet within the lag of its limit, or one that is admitted, reads the
 * precise clock (~20-40 ns here against ~2 for the reading reused within
 * its jiffy; docs/benchmarks.md). The coarse reading is taken as the
 * packet starts (fg_clock_start), with the shortcut on.
 *
 * 0 stands for "not read yet", not a flag beside each time: both clocks
 * are past 0 once the host is up (a 0 would only be read again, and be the
 * same 0), and the flags' 8 bytes took fg_tc's deepest call chain past
 * the 512-byte stack of 6.1, which rounds each frame up to 32 (README,
 * Kernels). fg_xdp's frame is 224 bytes and its deepest chain 512 of
 * 512 (round 14 of issue 25, docs/benchmarks.md): 8 bytes more on this
 * struct take fg_xdp past 6.1's limit. */
struct fg_clock {
	__u64 now;    /* the precise time, once read; 0 until then */
	__u64 coarse; /* the coarse reading, from the packet's start; 0 without the shortcut */
	/* Not a time: set while the layer being applied owes events
	 * (bpf/fg_events.h), read at its end in the line of the times. */
	__u32 owes_events;
	/* Not a time: set while the first layer's charge need not ask the
	 * refusal cache, which fg_cached_refusal asked in vain. */
	__u32 refusal_asked;
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
	return clock->coarse; /* read by fg_clock_start */
}

/* A time no earlier than the packet's: the precise one once read, else the
 * coarse reading plus its lag. */
static __always_inline __u64 fg_clock_latest(struct fg_clock *clock)
{
	if (clock->now)
		return clock->now;
	return fg_clock_earliest(clock) + fg_coarse_lag_ns;
}

/* Starts the packet's clock with the coarse reading, where the shortcut is
 * on: a load or two (fg_coarse_cached), taken once, before the layers, so
 * that the layer's many places that may need it only read clock->coarse.
 * Read lazily there, the reading took fg_apply_layer's frame past 6.1's
 * stack and fg_xdp's verification up by a quarter. fg_process takes it
 * before its own map lookups: after them, it doubled fg_tc's verification
 * (the SYN proxy's programs, which start from the tail call, were not
 * affected: 155k either way on 6.18). */
static __always_inline void fg_clock_start(struct fg_clock *clock)
{
	if (fg_coarse_lag_ns)
		clock->coarse = fg_coarse_cached();
}

#endif /* FG_CLOCK_H */
