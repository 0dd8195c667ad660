/* SPDX-License-Identifier: GPL-2.0-only */
/* Time units, and the clocks userspace reads. CLOCK_MONOTONIC is the scale
 * of bpf_ktime_get_ns(), so a ban's expiry or a source's last-seen time in
 * a map compares with fg_monotonic_ns(). */
#ifndef FG_CLOCK_H
#define FG_CLOCK_H

#include <time.h>
#include <linux/types.h>

#define FG_NS_PER_US 1000ULL
#define FG_NS_PER_MS 1000000ULL
#define FG_NS_PER_S  1000000000ULL

static inline __u64 fg_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * FG_NS_PER_S + (__u64)ts.tv_nsec;
}

static inline __u64 fg_monotonic_ns(void)
{
	return fg_clock_ns(CLOCK_MONOTONIC);
}

static inline struct timespec fg_timespec_of(__u64 ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / FG_NS_PER_S),
			      .tv_nsec = (long)(ns % FG_NS_PER_S)};

	return ts;
}

#endif /* FG_CLOCK_H */
