// SPDX-License-Identifier: GPL-2.0-only
/* GCRA math (include/fg_gcra.h), its parameters as production compiles
 * them (fg_gcra_params_init) and as `status` reads them back
 * (fg_policy_rate), against the same code the BPF programs run. Time is
 * injected: no clock is read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "config/config.h"
#include "fg_algos.h"
#include "fg_bits.h"
#include "fg_gcra.h"
#include "policy/policy.h"
#include "policy/readback.h"

#define MS  1000000ULL
#define SEC 1000000000ULL
#define T0  (5 * SEC)

static struct fg_gcra_params params_for(__u64 count, __u64 period_ns, __u64 burst, bool bytes)
{
	struct fg_gcra_params p = {0};

	assert_int_equal(fg_gcra_params_init(&p, count, period_ns, burst, bytes), 0);
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

typedef unsigned __int128 u128;

/* The parameters in 128-bit arithmetic, straight from their definition:
 * T = round(PERIOD << FRAC / COUNT); tau = round(burst * T) in bytes, burst
 * whole per-packet costs in packets. */
static void reference_params(__u64 count, __u64 period_ns, __u64 burst, bool bytes,
			     struct fg_gcra_params *p)
{
	u128 half = 1ULL << (FG_GCRA_FRAC_BITS - 1);

	p->interval_fp = (__u64)((((u128)period_ns << FG_GCRA_FRAC_BITS) + count / 2) / count);
	if (bytes)
		p->tolerance_ns =
			(__u64)(((u128)burst * p->interval_fp + half) >> FG_GCRA_FRAC_BITS);
	else
		p->tolerance_ns =
			(__u64)((u128)burst * ((p->interval_fp + half) >> FG_GCRA_FRAC_BITS));
}

static __u64 next_random(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The 64-bit params_init is exact over the whole validated range: every
 * rate 8 B/s..1 TB/s or up to 1G packets/s, PERIOD 1ms..24h, burst with
 * burst * T <= 2^62 (the validator's limits, user/config/config.h) compiles, to
 * the same numbers as the 128-bit definition. */
static void test_params_init_is_exact(void **state)
{
	static const __u64 periods[] = {MS,	  7 * MS,   250 * MS,	SEC,
					10 * SEC, 60 * SEC, 3600 * SEC, 86400 * SEC};
	__u64 x = 0x9e3779b97f4a7c15ULL;
	int i, checked = 0;

	(void)state;
	for (i = 0; i < 200000; i++) {
		__u64 period = periods[next_random(&x) % 8];
		bool bytes = next_random(&x) & 1;
		u128 max_count = (u128)(bytes ? 1000000000000ULL : 1000000000ULL) * period / SEC;
		u128 min_count = bytes ? ((u128)8 * period + SEC - 1) / SEC : 1;
		__u64 count, burst, max_burst;
		struct fg_gcra_params got, want;

		if (max_count < min_count)
			continue;
		/* counts spread over the decades, and the extremes */
		count = (__u64)(min_count +
				(u128)next_random(&x) %
					((max_count - min_count) >> (next_random(&x) % 40) | 1));
		if (i % 97 == 0)
			count = (__u64)(i & 1 ? max_count : min_count);
		max_burst = (__u64)(((u128)1 << 62) * count / period);
		if (max_burst > (bytes ? 1500000000000ULL : 1000000000ULL))
			max_burst = bytes ? 1500000000000ULL : 1000000000ULL;
		if (!max_burst)
			continue;
		burst = 1 + next_random(&x) % max_burst;
		if (i % 89 == 0)
			burst = max_burst;
		assert_int_equal(fg_gcra_params_init(&got, count, period, burst, bytes), 0);
		reference_params(count, period, burst, bytes, &want);
		if (got.interval_fp != want.interval_fp || got.tolerance_ns != want.tolerance_ns)
			fail_msg("%llu/%lluns burst %llu%s: %llu %llu, want %llu %llu",
				 (unsigned long long)count, (unsigned long long)period,
				 (unsigned long long)burst, bytes ? "B" : "",
				 (unsigned long long)got.interval_fp,
				 (unsigned long long)got.tolerance_ns,
				 (unsigned long long)want.interval_fp,
				 (unsigned long long)want.tolerance_ns);
		checked++;
	}
	assert_true(checked > 150000);
}

static void test_params_init_limits(void **state)
{
	struct fg_gcra_params p;

	(void)state;
	assert_int_equal(fg_gcra_params_init(&p, 0, SEC, 1, 0), -1);
	assert_int_equal(fg_gcra_params_init(&p, 10, SEC, 0, 0), -1);
	assert_int_equal(fg_gcra_params_init(&p, 10, 0, 1, 0), -1);
	assert_int_equal(fg_gcra_params_init(&p, 10, 1ULL << 48, 1, 0), -1);
	/* byte mode: cost * interval_fp must fit, so 1 B/24h does not */
	assert_int_equal(fg_gcra_params_init(&p, 1, 86400 * SEC, 1, 1), -1);
	assert_int_equal(fg_gcra_params_init(&p, 1, 86400 * SEC, 1, 0), 0);
	/* tau up to 2^63: 1/24h has T = 86400e9 ns, so 106751 packets fit */
	assert_int_equal(fg_gcra_params_init(&p, 1, 86400 * SEC, 106751, 0), 0);
	assert_int_equal(p.tolerance_ns, 106751ULL * 86400 * SEC);
	assert_int_equal(fg_gcra_params_init(&p, 1, 86400 * SEC, 106752, 0), -1);
	/* 8 B/s (T = 125 ms per byte): burst * (125e6 + 1) <= 2^63 */
	assert_int_equal(fg_gcra_params_init(&p, 8, SEC, 73786975704ULL, 1), 0);
	assert_int_equal(p.tolerance_ns, 73786975704ULL * 125000000);
	assert_int_equal(fg_gcra_params_init(&p, 8, SEC, 73786975705ULL, 1), -1);
}

/* A policy as compile_policy() makes it, for fg_policy_rate(). */
static struct fg_policy gcra_policy(__u8 algorithm, __u64 count, __u64 period_ns, __u64 burst,
				    bool bytes)
{
	struct fg_policy p = {.algorithm = algorithm, .flags = bytes ? FG_POLICY_BYTES : 0};

	assert_int_equal(
		fg_gcra_params_init(&p.params.token_bucket, count, period_ns, burst, bytes), 0);
	return p;
}

static void test_rate_read_back(void **state)
{
	static const struct {
		__u64 count, period_ns, burst;
		bool bytes;
		__u64 want_count, want_period_ns, want_burst;
	} cases[] = {
		{10, SEC, 5, false, 10, SEC, 5},
		{3, SEC, 1, false, 3, SEC, 1},
		{100, 60 * SEC, 100, false, 100, 60 * SEC, 100},
		{1, 3600 * SEC, 1, false, 1, 3600 * SEC, 1},
		{1, 2 * 3600 * SEC, 3, false, 1, 2 * 3600 * SEC, 3},
		{5, 10 * SEC, 30, false, 30, 60 * SEC, 30}, /* T = 2 s */
		{7, 3 * SEC, 7, false, 140, 60 * SEC, 7},   /* T = 3/7 s */
		{100, MS, 1000, false, 100000, SEC, 1000},  /* 100/ms */
		{1000000000, SEC, 1000000000, false, 1000000000, SEC, 1000000000},
		{10000000, SEC, 65536, true, 10000000, SEC, 65536},	/* 10MB/s burst 64KiB */
		{1250000000, SEC, 15001, true, 1250000000, SEC, 15001}, /* 10 Gbit/s */
		{1000000000000ULL, SEC, 1500000000000ULL, true, 1000000000000ULL, SEC,
		 1500000000000ULL},
		{8, SEC, 1514, true, 8, SEC, 1514},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_policy p = gcra_policy(i & 1 ? FG_ALG_LEAKY_BUCKET : FG_ALG_TOKEN_BUCKET,
						 cases[i].count, cases[i].period_ns, cases[i].burst,
						 cases[i].bytes);
		struct fg_readback_rate got;

		assert_int_equal(fg_policy_rate(&p, &got), 0);
		if (got.count != cases[i].want_count || got.period_ns != cases[i].want_period_ns ||
		    got.burst != cases[i].want_burst)
			fail_msg("%llu/%lluns burst %llu read back as %llu/%lluns burst %llu",
				 (unsigned long long)cases[i].count,
				 (unsigned long long)cases[i].period_ns,
				 (unsigned long long)cases[i].burst, (unsigned long long)got.count,
				 (unsigned long long)got.period_ns, (unsigned long long)got.burst);
	}
}

/* Whatever the config, what `status` prints compiles to the very params the
 * datapath runs: the rate read back is the rate enforced. */
static void test_rate_read_back_compiles_the_same(void **state)
{
	static const __u64 periods[] = {MS,	  7 * MS,   250 * MS,	SEC,
					10 * SEC, 90 * SEC, 3600 * SEC, 86400 * SEC};
	__u64 x = 0x2545f4914f6cdd1dULL;
	int i, checked = 0;

	(void)state;
	for (i = 0; i < 3000; i++) {
		__u64 period = periods[next_random(&x) % 8];
		bool bytes = next_random(&x) & 1;
		__u64 count = 1 + ((next_random(&x) % (bytes ? 100000000000ULL : 100000000ULL)) >>
				   (next_random(&x) % 36));
		__u64 burst = 1 + (next_random(&x) % 1000000 >> (next_random(&x) % 20));
		struct fg_policy p = {0};
		struct fg_gcra_params again = {0};
		struct fg_readback_rate got;

		if ((u128)count * SEC < (u128)8 * period && bytes)
			continue; /* below the validator's 8 B/s */
		if ((u128)count * SEC > (u128)1000000000 * period && !bytes)
			continue; /* above its 1G packets/s */
		p.algorithm = FG_ALG_TOKEN_BUCKET;
		p.flags = bytes ? FG_POLICY_BYTES : 0;
		if (fg_gcra_params_init(&p.params.token_bucket, count, period, burst, bytes))
			continue; /* tau past 2^63 */
		checked++;
		assert_int_equal(fg_policy_rate(&p, &got), 0);
		assert_int_equal(
			fg_gcra_params_init(&again, got.count, got.period_ns, got.burst, bytes), 0);
		if (again.interval_fp != p.params.token_bucket.interval_fp ||
		    again.tolerance_ns != p.params.token_bucket.tolerance_ns)
			fail_msg("%llu/%lluns burst %llu%s read back as %llu/%lluns burst %llu",
				 (unsigned long long)count, (unsigned long long)period,
				 (unsigned long long)burst, bytes ? "B" : "",
				 (unsigned long long)got.count, (unsigned long long)got.period_ns,
				 (unsigned long long)got.burst);
	}
	assert_true(checked > 1500);
}

static void test_window_rates_read_back_as_they_are(void **state)
{
	struct fg_policy p = {.algorithm = FG_ALG_SLIDING_WINDOW};
	struct fg_readback_rate got;

	(void)state;
	assert_int_equal(
		fg_sliding_window_params_init(&p.params.sliding_window, 1000, 10 * SEC, 1000, 0),
		0);
	assert_int_equal(fg_policy_rate(&p, &got), 0);
	assert_int_equal(got.count, 1000);
	assert_int_equal(got.period_ns, 10 * SEC);
	assert_int_equal(got.burst, 1000);
	p.algorithm = FG_ALG_FIXED_WINDOW;
	assert_int_equal(fg_fixed_window_params_init(&p.params.fixed_window, 5, 250 * MS, 5, 1), 0);
	assert_int_equal(fg_policy_rate(&p, &got), 0);
	assert_int_equal(got.count, 5);
	assert_int_equal(got.period_ns, 250 * MS);
	assert_int_equal(got.burst, 5);
	p.algorithm = FG_ALG_SLIDING_LOG;
	assert_int_equal(fg_sliding_log_params_init(&p.params.sliding_log, 128, 90 * SEC, 128, 0),
			 0);
	assert_int_equal(fg_policy_rate(&p, &got), 0);
	assert_int_equal(got.count, 128);
	assert_int_equal(got.period_ns, 90 * SEC);
	assert_int_equal(got.burst, 128);
}

/* compile_policy() and compile_budget() fill each algorithm's params with
 * that algorithm's params_init, from the parsed config; the validator's
 * extreme corners (1/24h with burst * T = 2^62, the slowest byte rate with
 * its largest burst, the fastest rates) compile. */
static void test_compile_fills_each_algorithms_params(void **state)
{
	static const char text[] =
		"new_sources = 300/ms\nnew_sources_burst = 7\n"
		"[policy tb]\nmatch = any\nrate = 10/s\nburst = 5\n"
		"[policy fw]\nmatch = any\nrate = 5/250ms\nalgorithm = fixed_window\n"
		"[policy sw]\nmatch = any\nrate = 4000000000B/24h\n"
		"algorithm = sliding_window\n"
		"[policy sl]\nmatch = any\nrate = 128/90s\nalgorithm = sliding_log\n"
		"[policy lb]\nmatch = any\nrate = 3/s\nalgorithm = leaky_bucket\n"
		"[policy slowest]\nmatch = any\nrate = 1/24h\nburst = 53375\n"
		"[policy slowbytes]\nmatch = any\nrate = 8B/s\nburst = 36893488147B\n"
		"[policy fastest]\nmatch = any\nrate = 1000000000/s\n"
		"[policy fastbytes]\nmatch = any\nrate = 1000GB/s\nburst = 1500GB\n";
	struct fg_compiled *out = calloc(1, sizeof(*out));
	const struct fg_policy *p;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	union fg_rate_params want;
	struct fg_gcra_params budget;
	int ncpus = libbpf_num_possible_cpus(), i;

	(void)state;
	assert_non_null(out);
	assert_non_null(cfg);
	assert_int_equal(fg_config_parse_string("t.conf", text, cfg, stderr), 0);
	assert_int_equal(fg_policy_compile(cfg, 0, out), 0);
	p = out->set.policies;
	for (i = 0; i < 9; i++) {
		const struct fg_policy_conf *pc = &cfg->policies[i];

		memset(&want, 0, sizeof(want));
		assert_int_equal(p[i].algorithm, pc->algorithm);
		switch (pc->algorithm) {
		case FG_ALG_FIXED_WINDOW:
			assert_int_equal(fg_fixed_window_params_init(
						 &want.fixed_window, pc->rate_count,
						 pc->rate_period_ns, pc->burst, pc->bytes),
					 0);
			break;
		case FG_ALG_SLIDING_WINDOW:
			assert_int_equal(fg_sliding_window_params_init(
						 &want.sliding_window, pc->rate_count,
						 pc->rate_period_ns, pc->burst, pc->bytes),
					 0);
			break;
		case FG_ALG_SLIDING_LOG:
			assert_int_equal(fg_sliding_log_params_init(
						 &want.sliding_log, pc->rate_count,
						 pc->rate_period_ns, pc->burst, pc->bytes),
					 0);
			break;
		default:
			assert_int_equal(fg_gcra_params_init(&want.token_bucket, pc->rate_count,
							     pc->rate_period_ns, pc->burst,
							     pc->bytes),
					 0);
		}
		assert_memory_equal(&p[i].params, &want, sizeof(want));
	}
	assert_int_equal(p[0].params.token_bucket.interval_fp, 100 * MS << FG_GCRA_FRAC_BITS);
	assert_int_equal(p[0].params.token_bucket.tolerance_ns, 500 * MS);
	/* 4e9 x ((86400e9 >> shift) + 1) < 2^64 first at shift 15 */
	assert_int_equal(p[2].params.sliding_window.shift, 15);
	assert_int_equal(p[4].params.leaky_bucket.gcra.tolerance_ns, 333333333);
	assert_int_equal(p[6].params.token_bucket.tolerance_ns, 36893488147ULL * 125000000);
	/* the budget: 300/ms burst 7, each CPU at 1/ncpus of the rate */
	assert_int_equal(fg_gcra_params_init(&budget, 300, MS, 7, 0), 0);
	assert_int_equal(out->budget.gcra.interval_fp, budget.interval_fp * (__u64)ncpus);
	assert_int_equal(out->budget.gcra.tolerance_ns, budget.tolerance_ns);
	/* new_sources = 1/h with burst 1e9: the credit is capped at 2^62 ns */
	assert_int_equal(
		fg_config_parse_string("t.conf",
				       "new_sources = 1/h\nnew_sources_burst = 1000000000\n"
				       "[policy p]\nmatch = any\nrate = 1/s\n",
				       cfg, stderr),
		0);
	assert_int_equal(fg_policy_compile(cfg, 0, out), 0);
	assert_int_equal(out->budget.gcra.tolerance_ns,
			 (1ULL << 62) / 3600000000000ULL * 3600000000000ULL);
	fg_compiled_free(out);
	free(cfg);
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
		cmocka_unit_test(test_params_init_is_exact),
		cmocka_unit_test(test_params_init_limits),
		cmocka_unit_test(test_rate_read_back),
		cmocka_unit_test(test_rate_read_back_compiles_the_same),
		cmocka_unit_test(test_window_rates_read_back_as_they_are),
		cmocka_unit_test(test_compile_fills_each_algorithms_params),
		cmocka_unit_test(test_lowest_bit),
	};

	return cmocka_run_group_tests_name("gcra", tests, NULL, NULL);
}
