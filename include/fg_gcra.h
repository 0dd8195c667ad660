/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Token bucket as GCRA (generic cell rate algorithm), as a pure function.
 *
 * The state is one theoretical arrival time (TAT). With interval
 * T = period / count and tolerance tau = burst * T, a packet of cost c at
 * time now is admitted iff
 *
 *     max(TAT, now) + c * T - now <= tau
 *
 * and the new TAT is max(TAT, now) + c * T. This is exactly a bucket of
 * `burst` tokens refilled at `count / period`, starting full (TAT = 0).
 *
 * T is kept in fixed point (FG_GCRA_FRAC_BITS fractional bits) so that rates
 * that do not divide a second, and byte rates of more than 1 byte/ns, keep
 * their precision; TAT is in whole ns, so each packet's cost is rounded to
 * the nearest ns. The error is at most 0.5 ns per packet: none at all where
 * T * cost is a whole number of ns (10/s, 10MB/s, ...), and 1.5e-9 of the
 * rate at 3/s. In packet mode a burst is always exactly `burst` packets.
 *
 * No BPF helper is used here: the same code is compiled into the BPF
 * programs and into the cmocka tests.
 */
#ifndef FG_GCRA_H
#define FG_GCRA_H

#include "floodgate.h"

/* Cost of `cost` units in ns, rounded to the nearest ns. cost <= FG_MAX_COST
 * and fg_gcra_params_init() keeps interval_fp small enough that the product
 * does not overflow. */
static inline __u64 fg_gcra_cost_ns(__u64 interval_fp, __u64 cost)
{
	return (cost * interval_fp + (1ULL << (FG_GCRA_FRAC_BITS - 1))) >> FG_GCRA_FRAC_BITS;
}

/* Returns 1 and stores the new TAT if the packet is admitted, else 0 and
 * leaves *new_tat untouched. */
static inline int fg_gcra_admit(const struct fg_gcra_params *p, __u64 tat, __u64 now, __u64 cost,
				__u64 *new_tat)
{
	__u64 start = tat > now ? tat : now;
	__u64 next = start + fg_gcra_cost_ns(p->interval_fp, cost);

	if (next - now > p->tolerance_ns)
		return 0;
	*new_tat = next;
	return 1;
}

/* T = PERIOD / COUNT in fixed point, rounded to nearest. PERIOD < 2^48 ns
 * keeps period << FG_GCRA_FRAC_BITS in 64 bits. */
static inline __u64 fg_gcra_interval_fp(__u64 count, __u64 period_ns)
{
	return ((period_ns << FG_GCRA_FRAC_BITS) + count / 2) / count;
}

/* tau = burst * T. In packet mode exactly `burst` packets fit, with no
 * partial packet lost to rounding: burst times the rounded per-packet
 * cost. In byte mode round(burst * interval_fp >> FRAC), computed in 64
 * bits by splitting interval_fp into whole ns and fraction (burst < 2^48;
 * the caller checks that burst * (whole + 1) fits). */
static inline __u64 fg_gcra_tolerance_ns(__u64 interval_fp, __u64 burst, int bytes)
{
	const __u64 half = 1ULL << (FG_GCRA_FRAC_BITS - 1);
	const __u64 frac = (1ULL << FG_GCRA_FRAC_BITS) - 1;

	if (!bytes)
		return burst * fg_gcra_cost_ns(interval_fp, 1);
	return burst * (interval_fp >> FG_GCRA_FRAC_BITS) +
	       ((burst * (interval_fp & frac) + half) >> FG_GCRA_FRAC_BITS);
}

/* The one encoding of a token bucket of `burst` refilled at COUNT/PERIOD
 * (and of leaky_bucket, and of the new-source budget). Returns 0, or -1
 * when the numbers do not fit the arithmetic: PERIOD >= 2^48 ns, a cost
 * times interval_fp past 2^64 (cost <= FG_MAX_COST in byte mode, 1 in packet
 * mode), or tau past 2^63 (which keeps TAT + cost in 64 bits). The config
 * validator's limits (PERIOD <= 24h, burst * T <= 2^62, at least 8 B/s) are
 * inside these, so a validated config always compiles. */
static inline int fg_gcra_params_init(struct fg_gcra_params *p, __u64 count, __u64 period_ns,
				      __u64 burst, int bytes)
{
	const __u64 half = 1ULL << (FG_GCRA_FRAC_BITS - 1);
	__u64 interval_fp, per_burst;

	if (!count || !burst || !period_ns || period_ns >= 1ULL << (64 - FG_GCRA_FRAC_BITS) ||
	    burst >= 1ULL << (64 - FG_GCRA_FRAC_BITS))
		return -1;
	interval_fp = fg_gcra_interval_fp(count, period_ns);
	if (!interval_fp || interval_fp > (~0ULL - half) / (bytes ? FG_MAX_COST : 1))
		return -1;
	/* the most one unit of burst can add to tau */
	per_burst =
		bytes ? (interval_fp >> FG_GCRA_FRAC_BITS) + 1 : fg_gcra_cost_ns(interval_fp, 1);
	if (per_burst && burst > (1ULL << 63) / per_burst)
		return -1;
	p->interval_fp = interval_fp;
	p->tolerance_ns = fg_gcra_tolerance_ns(interval_fp, burst, bytes);
	return 0;
}

#endif /* FG_GCRA_H */
