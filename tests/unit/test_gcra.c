// SPDX-License-Identifier: GPL-2.0-only
/* GCRA math (include/fg_gcra.h) and its compilation from a policy, against
 * the same code the BPF programs run. Time is injected: no clock is read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "fg_bits.h"
#include "fg_gcra.h"
#include "policy.h"

#define MS  1000000ULL
#define SEC 1000000000ULL
#define T0  (5 * SEC)

static struct fg_gcra_params params_for(__u64 count, __u64 period_ns, __u64 burst, bool bytes)
{
	struct fg_policy_conf pc = {
		.rate_count = count, .rate_period_ns = period_ns, .burst = burst, .bytes = bytes};
	struct fg_gcra_params p;

	fg_policy_gcra(&pc, &p.interval_fp, &p.tolerance_ns);
	return p;
}

/* Offers n packets of `cost` at `now`; returns how many were admitted. */
static int offer(const struct fg_gcra_params *p, __u64 *tat, __u64 now, __u64 cost, int n)
{
	int admitted = 0, i;

	for (i = 0; i < n; i++)
		admitted += fg_gcra_admit(p, *tat, now, cost, tat);
	return admitted;
}

static void test_burst_then_steady_rate(void **state)
{
	struct fg_gcra_params p = params_for(10, SEC, 20, false);
	__u64 tat = 0, t;
	int admitted = 0;

	(void)state;
	assert_int_equal(offer(&p, &tat, T0, 1, 100), 20);
	/* then exactly one packet per 100ms for 10 s of continuous offering */
	for (t = T0 + MS; t <= T0 + 10 * SEC; t += MS)
		admitted += offer(&p, &tat, t, 1, 1);
	assert_int_equal(admitted, 100);
}

static void test_exactly_at_tau(void **state)
{
	struct fg_gcra_params p = params_for(1000, SEC, 3, false); /* T = 1ms, tau = 3ms */
	__u64 tat = 0;

	(void)state;
	assert_int_equal(p.tolerance_ns, 3 * MS);
	assert_int_equal(offer(&p, &tat, T0, 1, 3), 3); /* TAT - now == tau: admitted */
	assert_int_equal(tat, T0 + 3 * MS);
	assert_int_equal(offer(&p, &tat, T0, 1, 1), 0);		 /* would be tau + T */
	assert_int_equal(offer(&p, &tat, T0 + MS - 1, 1, 1), 0); /* 1 ns early */
	assert_int_equal(offer(&p, &tat, T0 + MS, 1, 1), 1);	 /* on the boundary */
}

static void test_cost_larger_than_burst(void **state)
{
	struct fg_gcra_params p = params_for(1000, SEC, 1500, true); /* 1000 B/s, 1500 B */
	__u64 tat = 0;

	(void)state;
	/* a packet larger than the bucket never passes, however long idle */
	assert_int_equal(offer(&p, &tat, T0, 1501, 1), 0);
	assert_int_equal(offer(&p, &tat, T0 + 3600 * SEC, 1501, 1), 0);
	assert_int_equal(tat, 0); /* and a refusal does not change the state */
	assert_int_equal(offer(&p, &tat, T0, 1500, 1), 1);
	assert_int_equal(offer(&p, &tat, T0, 1, 1), 0);
	/* 1 byte per ms comes back */
	assert_int_equal(offer(&p, &tat, T0 + 100 * MS, 100, 1), 1);
	assert_int_equal(offer(&p, &tat, T0 + 100 * MS, 1, 1), 0);
}

static void test_idle_credit_is_capped_at_burst(void **state)
{
	struct fg_gcra_params p = params_for(100, SEC, 5, false);
	__u64 tat = 0;

	(void)state;
	assert_int_equal(offer(&p, &tat, T0, 1, 5), 5);
	assert_int_equal(offer(&p, &tat, T0 + 24 * 3600 * SEC, 1, 50), 5);
}

static void test_clock_that_does_not_move(void **state)
{
	struct fg_gcra_params p = params_for(1000000, SEC, 7, false);
	__u64 tat = 0;

	(void)state;
	assert_int_equal(offer(&p, &tat, T0, 1, 1000000), 7);
	/* a clock that steps back (another CPU's earlier reading) is no credit */
	assert_int_equal(offer(&p, &tat, T0 - SEC, 1, 10), 0);
}

static void test_uneven_interval_rounds_up(void **state)
{
	/* 3/s: T = 333333333.33 ns is rounded to whole ns; over 3000 s the
	 * admitted count stays burst + 3 x 3000, give or take one packet */
	struct fg_gcra_params p = params_for(3, SEC, 3, false);
	__u64 tat = 0, t;
	int admitted = 0;

	(void)state;
	for (t = T0; t < T0 + 3000 * SEC; t += MS)
		admitted += offer(&p, &tat, t, 1, 1);
	assert_in_range(admitted, 9002, 9003);
}

static void test_byte_rate_faster_than_a_byte_per_ns(void **state)
{
	/* 10 Gbit/s = 1.25 bytes/ns: T = 0.8 ns, kept in fixed point */
	struct fg_gcra_params p = params_for(1250000000ULL, SEC, 15000, true);
	__u64 tat = 0, t;
	__u64 bytes = 0;

	(void)state;
	assert_int_equal(offer(&p, &tat, T0, 1500, 20), 10);
	for (t = T0 + 1; t <= T0 + 1200 * 1000; t += 100)
		bytes += 1500ULL * offer(&p, &tat, t, 1500, 1);
	/* 1.2 ms at 1.25 B/ns = 1.5 MB, within one packet and the per-packet
	 * rounding of at most 0.5 ns */
	assert_in_range(bytes, 1500000 - 2 * 1500, 1500000);
}

static void test_lowest_bit(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 64; i++) {
		assert_int_equal(fg_lowest_bit(1ULL << i), i);
		assert_int_equal(fg_lowest_bit(~0ULL << i), i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_steady_rate),
		cmocka_unit_test(test_exactly_at_tau),
		cmocka_unit_test(test_cost_larger_than_burst),
		cmocka_unit_test(test_idle_credit_is_capped_at_burst),
		cmocka_unit_test(test_clock_that_does_not_move),
		cmocka_unit_test(test_uneven_interval_rounds_up),
		cmocka_unit_test(test_byte_rate_faster_than_a_byte_per_ns),
		cmocka_unit_test(test_lowest_bit),
	};

	return cmocka_run_group_tests_name("gcra", tests, NULL, NULL);
}
