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

struct fg_gcra_params {
	__u64 interval_fp;  /* ns per unit of cost << FG_GCRA_FRAC_BITS */
	__u64 tolerance_ns; /* burst * T, in ns */
};

/* Cost of `cost` units in ns, rounded to the nearest ns. cost <= FG_MAX_COST
 * and the config validator keeps interval_fp small enough that the product
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

#endif /* FG_GCRA_H */
