// SPDX-License-Identifier: GPL-2.0-only
/* The pure decision functions of include/fg_algos.h against brute-force
 * reference models, on randomized traffic from a fixed-seed PRNG (identical
 * everywhere) and on hand-made boundary cases. Time is injected.
 *
 * Every reference is evaluated on the implementation's own admission log,
 * so a single wrong decision shows up as that decision, not as a cascade. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fg_algos.h"

#define US  1000ULL
#define MS  1000000ULL
#define SEC 1000000000ULL
#define DAY (86400 * SEC)

#define N_PACKETS 20000

typedef unsigned __int128 u128;

/* --- deterministic PRNG and traffic ------------------------------------- */

static __u64 rnd(__u64 *s) /* xorshift64* */
{
	__u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static __u64 rnd_below(__u64 *s, __u64 n)
{
	return n ? rnd(s) % n : 0;
}

/* Arrivals at a mix of paces around the configured rate: bursts in the same
 * or adjacent ns, idle gaps of one to several periods, arrivals exactly on,
 * 1 ns before and 1 ns after window boundaries, starting at `t`. */
struct traffic {
	__u64 seed;
	__u64 t;
	__u64 period;
	__u64 spacing; /* mean gap that would offer exactly the rate */
	__u64 burst_max;
	int bytes;
	__u64 burst_left;
};

static void traffic_init(struct traffic *tr, __u64 seed, __u64 t0, __u64 count, __u64 period,
			 int bytes)
{
	__u64 units_per_packet = bytes ? 770 : 1;

	memset(tr, 0, sizeof(*tr));
	tr->seed = seed;
	tr->t = t0;
	tr->period = period;
	tr->spacing = period * units_per_packet / count;
	tr->burst_max = 2 * count / units_per_packet + 2;
	tr->bytes = bytes;
}

static __u64 traffic_next(struct traffic *tr, __u64 *cost)
{
	__u64 *s = &tr->seed, r, boundary;
	static const __s64 around[4] = {-1, 0, 0, 1};

	*cost = tr->bytes ? 40 + rnd_below(s, 1461) : 1;
	if (tr->burst_left) {
		tr->burst_left--;
		tr->t += rnd_below(s, 3);
		return tr->t;
	}
	r = rnd_below(s, 100);
	if (r < 5) {
		tr->burst_left = rnd_below(s, tr->burst_max);
	} else if (r < 15) {
		/* same ns */
	} else if (r < 25) {
		boundary = (tr->t / tr->period + 1) * tr->period + around[rnd_below(s, 4)];
		if (boundary > tr->t)
			tr->t = boundary;
	} else if (r < 29) {
		tr->t += tr->period + rnd_below(s, 2 * tr->period);
	} else if (r < 30) {
		tr->t += rnd_below(s, 10 * tr->period);
	} else if (r < 65) {
		tr->t += rnd_below(s, 2 * tr->spacing + 1); /* about the rate */
	} else {
		tr->t += rnd_below(s, tr->spacing / 2 + 1); /* about twice the rate */
	}
	return tr->t;
}

/* The admission log the references are computed from. */
struct adm_log {
	__u64 *t;
	__u64 *cost;
	size_t n;
};

static void log_init(struct adm_log *l)
{
	l->t = calloc(N_PACKETS, sizeof(*l->t));
	l->cost = calloc(N_PACKETS, sizeof(*l->cost));
	l->n = 0;
	assert_non_null(l->t);
	assert_non_null(l->cost);
}

static void log_add(struct adm_log *l, __u64 t, __u64 cost)
{
	assert_true(l->n < N_PACKETS);
	l->t[l->n] = t;
	l->cost[l->n] = cost;
	l->n++;
}

static void log_free(struct adm_log *l)
{
	free(l->t);
	free(l->cost);
}

/* Units admitted in [from, to), times being non-decreasing. */
static __u64 log_sum(const struct adm_log *l, __u64 from, __u64 to)
{
	__u64 sum = 0;
	size_t i = l->n;

	while (i > 0 && l->t[i - 1] >= from) {
		i--;
		if (l->t[i] < to)
			sum += l->cost[i];
	}
	return sum;
}

/* Every aligned window [k*P, (k+1)*P) holds at most `count` units. */
static void assert_aligned_windows(const struct adm_log *l, __u64 period, __u64 count)
{
	size_t i = 0;

	while (i < l->n) {
		__u64 window = l->t[i] / period, sum = 0;

		while (i < l->n && l->t[i] / period == window)
			sum += l->cost[i++];
		assert_true(sum <= count);
	}
}

/* The most units admitted in any interval (t - period, t]; the maximum is
 * reached with t at an admission. */
static __u64 max_in_period(const struct adm_log *l, __u64 period)
{
	__u64 sum = 0, max = 0;
	size_t lo = 0, i;

	for (i = 0; i < l->n; i++) {
		sum += l->cost[i];
		while (l->t[lo] + period <= l->t[i])
			sum -= l->cost[lo++];
		if (sum > max)
			max = sum;
	}
	return max;
}

struct conf {
	__u64 count;
	__u64 period;
	__u64 burst; /* 0: COUNT */
	int bytes;
	__u64 t0;
};

/* --- fixed_window --------------------------------------------------------- */

static struct fg_fixed_window_params fw_params(__u64 count, __u64 period)
{
	struct fg_fixed_window_params p = {0};

	assert_int_equal(fg_fixed_window_params_init(&p, count, period, count, 0), 0);
	return p;
}

static int fw_offer(const struct fg_fixed_window_params *p, __u64 *st, __u64 now, __u64 cost, int n)
{
	int admitted = 0, i;

	for (i = 0; i < n; i++)
		admitted += fg_fixed_window_admit(p, *st, now, cost, st);
	return admitted;
}

static void test_fixed_window_vs_reference(void **state)
{
	static const struct conf confs[] = {
		{10, MS, 0, 0, 0},
		{1, 100 * US, 0, 0, 0},
		{7, 3 * MS, 0, 0, 5 * SEC},
		{100, SEC, 0, 0, 0},
		{20000, MS, 0, 1, 0},
		{4000, 10 * MS, 0, 1, DAY},
		{1500, MS, 0, 1, 0},
		{FG_WINDOW_MAX_COUNT, SEC, 0, 1, 0},
		{3, 7 * MS + 3, 0, 0, 1ULL << 50},
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		const struct conf *cf = &confs[c];
		struct fg_fixed_window_params p = fw_params(cf->count, cf->period);
		struct traffic tr;
		struct adm_log l;
		__u64 st = 0, now, cost, used, window;
		int i, got, want, admitted = 0;

		traffic_init(&tr, 0x5eed0000 + c, cf->t0, cf->count > 100000 ? 100000 : cf->count,
			     cf->period, cf->bytes);
		log_init(&l);
		for (i = 0; i < N_PACKETS; i++) {
			now = traffic_next(&tr, &cost);
			window = now / cf->period;
			used = log_sum(&l, window * cf->period, ~0ULL);
			want = used + cost <= cf->count;
			got = fg_fixed_window_admit(&p, st, now, cost, &st);
			assert_int_equal(got, want);
			if (got) {
				log_add(&l, now, cost);
				admitted++;
				assert_int_equal(fg_fixed_window_window(st), (__u32)window);
				assert_int_equal(fg_fixed_window_used(st), used + cost);
			}
		}
		assert_aligned_windows(&l, cf->period, cf->count);
		assert_true(admitted > 0);
		if (cf->count < 100000)
			assert_true(admitted < N_PACKETS);
		log_free(&l);
	}
}

static void test_fixed_window_seam(void **state)
{
	struct fg_fixed_window_params p = fw_params(10, SEC);
	__u64 st = 0, k = 7 * SEC;

	(void)state;
	/* COUNT in the last ns of window 6, COUNT in the first ns of window 7:
	 * 2 x COUNT within 2 ns, as documented */
	assert_int_equal(fw_offer(&p, &st, k - 1, 1, 15), 10);
	assert_int_equal(fw_offer(&p, &st, k, 1, 15), 10);
	assert_int_equal(fw_offer(&p, &st, k + SEC - 1, 1, 1), 0);
	assert_int_equal(fw_offer(&p, &st, k + SEC, 1, 1), 1);
}

static void test_fixed_window_boundaries(void **state)
{
	struct fg_fixed_window_params p = fw_params(3000, MS);
	__u64 st = 0, before;

	(void)state;
	/* bytes: exactly COUNT passes, one unit more does not */
	assert_int_equal(fw_offer(&p, &st, 0, 1500, 1), 1); /* at now = 0 */
	assert_int_equal(fw_offer(&p, &st, 1, 1499, 1), 1);
	before = st;
	assert_int_equal(fw_offer(&p, &st, MS - 1, 2, 1), 0);
	assert_int_equal(st, before); /* a refusal writes nothing */
	assert_int_equal(fw_offer(&p, &st, MS - 1, 1, 1), 1);
	assert_int_equal(fg_fixed_window_used(st), 3000);
	/* cost above COUNT never passes, however long idle */
	assert_int_equal(fw_offer(&p, &st, 3600 * SEC, 3001, 1), 0);
	assert_int_equal(fw_offer(&p, &st, 3600 * SEC, 3000, 1), 1);
	/* a clock that does not move */
	p = fw_params(5, SEC);
	st = 0;
	assert_int_equal(fw_offer(&p, &st, 42 * SEC + 17, 1, 1000), 5);
	/* a clock one window behind the state (another CPU's earlier ktime)
	 * is charged to the newer window instead of resetting it */
	st = 0;
	assert_int_equal(fw_offer(&p, &st, 43 * SEC, 1, 5), 5);
	assert_int_equal(fw_offer(&p, &st, 43 * SEC - 1, 1, 5), 0);
	assert_int_equal(fg_fixed_window_window(st), 43);
	/* a zeroed state is not "one window ahead" of window 2^32 - 1 */
	st = 0;
	assert_int_equal(fw_offer(&p, &st, 0xffffffffULL * SEC, 1, 6), 5);
	assert_int_equal(fg_fixed_window_window(st), 0xffffffffU);
	assert_int_equal(fw_offer(&p, &st, 0x100000000ULL * SEC, 1, 6), 5);
}

static void test_fixed_window_params(void **state)
{
	struct fg_fixed_window_params p = {0};

	(void)state;
	assert_int_equal(sizeof(__u64), 8); /* the state */
	assert_int_equal(sizeof(p), 16);
	assert_int_equal(fg_fixed_window_params_init(&p, 0, SEC, 0, 0), -1);
	assert_int_equal(fg_fixed_window_params_init(&p, 10, 0, 10, 0), -1);
	assert_int_equal(fg_fixed_window_params_init(&p, 10, SEC, 20, 0), -1);
	assert_int_equal(fg_fixed_window_params_init(&p, 1ULL << 32, SEC, 1ULL << 32, 1), -1);
	assert_int_equal(
		fg_fixed_window_params_init(&p, FG_WINDOW_MAX_COUNT, DAY, FG_WINDOW_MAX_COUNT, 1),
		0);
}

/* --- sliding_window ------------------------------------------------------- */

static struct fg_sliding_window_params sw_params(__u64 count, __u64 period)
{
	struct fg_sliding_window_params p = {0};

	assert_int_equal(fg_sliding_window_params_init(&p, count, period, count, 0), 0);
	return p;
}

static int sw_offer(const struct fg_sliding_window_params *p, struct fg_sliding_window_state *st,
		    __u64 now, __u64 cost, int n)
{
	int admitted = 0, i;

	for (i = 0; i < n; i++)
		admitted += fg_sliding_window_admit(p, st, now, cost, st);
	return admitted;
}

/* The formula in exact rational arithmetic, multiplied out by PERIOD. */
static int sw_exact(__u64 count, __u64 period, __u64 cur, __u64 prev, __u64 elapsed, __u64 cost)
{
	return (u128)(cur + cost) * period + (u128)prev * (period - elapsed) <=
	       (u128)count * period;
}

static double sw_worst_ratio;

static void test_sliding_window_vs_reference(void **state)
{
	static const struct conf confs[] = {
		{10, MS, 0, 0, 0},
		{1, 100 * US, 0, 0, 0},
		{7, 3 * MS, 0, 0, 5 * SEC},
		{100, SEC, 0, 0, 0},
		{20000, MS, 0, 1, 0},
		{4000, 10 * MS, 0, 1, DAY},
		{1500, MS, 0, 1, 0},
		{3, 7 * MS + 3, 0, 0, 1ULL << 50},
		{1000000, DAY, 0, 1, 0}, /* COUNT * PERIOD > 2^64: shift > 0 */
		{300000, DAY, 0, 1, 3 * DAY},
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		const struct conf *cf = &confs[c];
		struct fg_sliding_window_params p = sw_params(cf->count, cf->period);
		struct fg_sliding_window_state st = {0};
		struct traffic tr;
		struct adm_log l;
		__u64 now, cost, k, cur, prev, max;
		int i, got, want, admitted = 0, stricter = 0;

		traffic_init(&tr, 0x51d00000 + c, cf->t0, cf->count, cf->period, cf->bytes);
		log_init(&l);
		for (i = 0; i < N_PACKETS; i++) {
			now = traffic_next(&tr, &cost);
			k = now / cf->period;
			cur = log_sum(&l, k * cf->period, ~0ULL);
			prev = k ? log_sum(&l, (k - 1) * cf->period, k * cf->period) : 0;
			want = sw_exact(cf->count, cf->period, cur, prev, now - k * cf->period,
					cost);
			got = fg_sliding_window_admit(&p, &st, now, cost, &st);
			if (p.shift == 0)
				assert_int_equal(got, want);
			else
				assert_true(got <= want); /* never admits what exact refuses */
			stricter += got < want;
			if (got) {
				log_add(&l, now, cost);
				admitted++;
				assert_int_equal(st.start_ns, k * cf->period);
				assert_int_equal(st.cur, cur + cost);
				assert_int_equal(st.prev, prev);
			}
		}
		assert_true(admitted > 0 && admitted < N_PACKETS);
		/* the shift's rounding costs at most a few units per decision */
		assert_true(stricter <= N_PACKETS / 1000);
		/* the error bound against the exact sliding log */
		assert_aligned_windows(&l, cf->period, cf->count);
		max = max_in_period(&l, cf->period);
		assert_true(max <= 2 * cf->count - 1);
		if ((double)max / cf->count > sw_worst_ratio)
			sw_worst_ratio = (double)max / cf->count;
		log_free(&l);
	}
	printf("[ INFO     ] sliding_window: worst units admitted in any PERIOD / COUNT "
	       "over the random runs = %.4f (bound 2 - 1/COUNT)\n",
	       sw_worst_ratio);
}

/* Crafted states at the edges of the 64-bit range, against the exact
 * formula: identical with shift 0, never more permissive with shift > 0. */
static void test_sliding_window_vs_exact_formula(void **state)
{
	static const struct {
		__u64 count, period;
		__u32 shift;
	} confs[] = {
		{FG_WINDOW_MAX_COUNT, 1ULL << 32, 0}, /* count * (period + 1) == 2^64 - 1 */
		{FG_WINDOW_MAX_COUNT, (1ULL << 32) + 1, 1},
		{FG_WINDOW_MAX_COUNT, DAY, 15},
		{213503, DAY, 0},
		{213504, DAY, 1},
		{1, DAY, 0},
		{10, 1000, 0},
		{FG_WINDOW_MAX_COUNT, 1, 0},
	};
	__u64 seed = 0xc0ffee;
	size_t c;
	int i;

	(void)state;
	for (c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		__u64 count = confs[c].count, period = confs[c].period;
		struct fg_sliding_window_params p = sw_params(count, period);
		int stricter = 0;

		assert_int_equal(p.shift, confs[c].shift);
		assert_true((u128)count * ((period >> p.shift) + 1) <= ~0ULL);
		for (i = 0; i < 200000; i++) {
			__u64 start = 1000 * period, e, cur, prev, cost, r = rnd(&seed);
			struct fg_sliding_window_state st, out = {0, 0, 0};
			int got, want;

			/* half the draws at the extremes */
			e = r & 1 ? rnd_below(&seed, period) : (r & 2 ? 0 : period - 1);
			prev = r & 4 ? rnd_below(&seed, count + 1) : count;
			cur = rnd_below(&seed, count + 1);
			cost = r & 8 ? 1 : 1 + rnd_below(&seed, FG_MAX_COST);
			if (r & 16 && count - cur < FG_MAX_COST) /* near the limit */
				cost = count - cur + (r & 32 ? 1 : 0);
			if (!cost)
				cost = 1;
			st = (struct fg_sliding_window_state){start, (__u32)cur, (__u32)prev};
			want = sw_exact(count, period, cur, prev, e, cost);
			got = fg_sliding_window_admit(&p, &st, start + e, cost, &out);
			if (p.shift == 0)
				assert_int_equal(got, want);
			else
				assert_true(got <= want);
			stricter += got < want;
			if (got)
				assert_int_equal(out.cur, cur + cost);
		}
		/* with shift > 0 the overestimate is < 4 units: rarely decisive */
		assert_true(stricter <= 200);
	}
}

static void test_sliding_window_seam_refused(void **state)
{
	struct fg_sliding_window_params p = sw_params(10, SEC);
	struct fg_sliding_window_state st = {0};
	__u64 k = 7 * SEC;

	(void)state;
	/* the fixed window's seam burst: COUNT at the end of window 6 ... */
	assert_int_equal(sw_offer(&p, &st, k - 1, 1, 15), 10);
	/* ... and almost nothing at the start of window 7: the estimate there
	 * is 10 x (1 - elapsed/PERIOD) */
	assert_int_equal(sw_offer(&p, &st, k, 1, 15), 0);
	assert_int_equal(sw_offer(&p, &st, k + 99 * MS, 1, 15), 0);  /* 9.01 */
	assert_int_equal(sw_offer(&p, &st, k + 100 * MS, 1, 15), 1); /* 9 */
	assert_int_equal(sw_offer(&p, &st, k + 500 * MS, 1, 15), 4); /* up to 5 + 5 */
}

static void test_sliding_window_boundaries(void **state)
{
	struct fg_sliding_window_params p = sw_params(10, 1000);
	struct fg_sliding_window_state st = {0};
	__u64 w = 5000; /* a window start */

	(void)state;
	/* estimate exactly at the limit: prev = 10 at elapsed 500 weighs 5 */
	assert_int_equal(sw_offer(&p, &st, w - 1000, 1, 10), 10);
	assert_int_equal(st.start_ns, w - 1000);
	assert_int_equal(sw_offer(&p, &st, w + 499, 1, 10), 4); /* 5.01 */
	assert_int_equal(sw_offer(&p, &st, w + 500, 1, 10), 1); /* 4 + 5 + 1 == 10 */
	assert_int_equal(sw_offer(&p, &st, w + 501, 1, 10), 0); /* 5 + 4.99 + 1 > 10 */
	assert_int_equal(sw_offer(&p, &st, w + 600, 1, 10), 1); /* 5 + 4 + 1 */
	/* the tight case of the bound: COUNT in the last ns of a window and
	 * COUNT - 1 just before the end of the next: 2 x COUNT - 1 within
	 * (t - PERIOD, t] */
	st = (struct fg_sliding_window_state){0};
	assert_int_equal(sw_offer(&p, &st, 1999, 1, 20), 10);
	assert_int_equal(sw_offer(&p, &st, 2998, 1, 20), 9);
	/* after two idle windows the history is gone; now == 0 is fine */
	assert_int_equal(sw_offer(&p, &st, 4999, 1, 20), 10);
	st = (struct fg_sliding_window_state){0};
	assert_int_equal(sw_offer(&p, &st, 0, 1, 20), 10);
	/* bytes: cost above COUNT never passes, however long idle */
	p = sw_params(3000, MS);
	st = (struct fg_sliding_window_state){0};
	assert_int_equal(sw_offer(&p, &st, DAY, 3001, 1), 0);
	assert_int_equal(st.start_ns, 0); /* a refusal writes nothing */
	assert_int_equal(sw_offer(&p, &st, DAY, 3000, 1), 1);
	assert_int_equal(sw_offer(&p, &st, DAY + 2 * MS, 3001, 1), 0);
	/* a clock that does not move */
	p = sw_params(5, SEC);
	st = (struct fg_sliding_window_state){0};
	assert_int_equal(sw_offer(&p, &st, 42 * SEC + 17, 1, 1000), 5);
	/* a clock behind the window start counts as elapsed = 0 */
	assert_int_equal(sw_offer(&p, &st, 43 * SEC + 1, 1, 1), 0); /* 5 x 0.99... */
	st = (struct fg_sliding_window_state){43 * SEC, 0, 5};
	assert_int_equal(sw_offer(&p, &st, 43 * SEC - 1, 1, 1), 0);
	assert_int_equal(sw_offer(&p, &st, 43 * SEC + SEC / 5, 1, 2), 1); /* 4 + 1 */
}

static void test_sliding_window_params(void **state)
{
	struct fg_sliding_window_params p = {0};

	(void)state;
	assert_int_equal(sizeof(struct fg_sliding_window_state), 16);
	assert_int_equal(sizeof(p), 32);
	assert_int_equal(fg_sliding_window_params_init(&p, 0, SEC, 0, 0), -1);
	assert_int_equal(fg_sliding_window_params_init(&p, 10, 0, 10, 0), -1);
	assert_int_equal(fg_sliding_window_params_init(&p, 10, SEC, 1, 0), -1);
	assert_int_equal(fg_sliding_window_params_init(&p, 1ULL << 32, SEC, 1ULL << 32, 1), -1);
	assert_int_equal(fg_sliding_window_params_init(&p, 10, ~0ULL, 10, 0), 0);
	assert_true(p.period_q >= 1 && (u128)10 * (p.period_q + 1) <= ~0ULL);
	/* the largest config: 1 TB/s over 24h is refused by COUNT, 4 GiB/24h is
	 * fine with a shift */
	assert_int_equal(
		fg_sliding_window_params_init(&p, FG_WINDOW_MAX_COUNT, DAY, FG_WINDOW_MAX_COUNT, 1),
		0);
	assert_true(p.shift > 0 && p.period_q >= 1ULL << 31);
}

/* --- sliding_log ---------------------------------------------------------- */

static struct fg_sliding_log_params sl_params(__u64 count, __u64 period)
{
	struct fg_sliding_log_params p = {0};

	assert_int_equal(fg_sliding_log_params_init(&p, count, period, count, 0), 0);
	return p;
}

static int sl_offer(const struct fg_sliding_log_params *p, struct fg_sliding_log_state *st,
		    __u64 now, int n)
{
	int admitted = 0, i;

	for (i = 0; i < n; i++)
		admitted += fg_sliding_log_admit(p, st, now, 1);
	return admitted;
}

static void test_sliding_log_vs_reference(void **state)
{
	static const struct conf confs[] = {
		{10, MS, 0, 0, 0},
		{1, 100 * US, 0, 0, 0},
		{7, 3 * MS, 0, 0, 5 * SEC},
		{100, SEC, 0, 0, 0},
		{128, 10 * MS, 0, 0, DAY},
		{127, MS, 0, 0, 0},
		{3, 7 * MS + 3, 0, 0, 1ULL << 50},
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		const struct conf *cf = &confs[c];
		struct fg_sliding_log_params p = sl_params(cf->count, cf->period);
		struct fg_sliding_log_state *st = calloc(1, sizeof(*st));
		struct traffic tr;
		struct adm_log l;
		__u64 now, cost, recent, max;
		int i, got, want, admitted = 0;

		assert_non_null(st);
		traffic_init(&tr, 0x10900000 + c, cf->t0, cf->count, cf->period, 0);
		log_init(&l);
		for (i = 0; i < N_PACKETS; i++) {
			struct fg_sliding_log_state before;
			int changed = 0, j;

			now = traffic_next(&tr, &cost);
			/* admissions in (now - PERIOD, now] */
			recent = log_sum(&l, now >= cf->period ? now - cf->period + 1 : 0, ~0ULL);
			want = recent < cf->count;
			before = *st;
			got = fg_sliding_log_admit(&p, st, now, cost);
			assert_int_equal(got, want);
			/* refused only with COUNT in the last PERIOD */
			if (!got)
				assert_int_equal(recent, cf->count);
			/* at most one ring slot written, and only on admission */
			for (j = 0; j < FG_SLIDING_LOG_MAX; j++)
				changed += st->ring[j] != before.ring[j];
			assert_int_equal(changed, got);
			assert_true(st->head < cf->count);
			if (got) {
				log_add(&l, now, cost);
				admitted++;
			}
		}
		assert_true(admitted > 0 && admitted < N_PACKETS);
		/* exact: no PERIOD-long interval holds more than COUNT */
		max = max_in_period(&l, cf->period);
		assert_true(max <= cf->count);
		log_free(&l);
		free(st);
	}
}

static void test_sliding_log_boundaries(void **state)
{
	struct fg_sliding_log_params p = sl_params(3, 1000);
	struct fg_sliding_log_state *st = calloc(1, sizeof(*st));

	(void)state;
	assert_non_null(st);
	/* near boot: now = 0 and now < PERIOD are not "long ago" */
	assert_int_equal(sl_offer(&p, st, 0, 5), 3);
	assert_int_equal(sl_offer(&p, st, 999, 1), 0); /* 999 after: 1 ns early */
	assert_int_equal(sl_offer(&p, st, 1000, 5), 3);
	assert_int_equal(sl_offer(&p, st, 1500, 1), 0);
	/* one per slot as they age */
	assert_int_equal(sl_offer(&p, st, 1999, 1), 0);
	assert_int_equal(sl_offer(&p, st, 2000, 1), 1);
	assert_int_equal(sl_offer(&p, st, 2600, 1), 1);
	assert_int_equal(sl_offer(&p, st, 2700, 1), 1);
	assert_int_equal(sl_offer(&p, st, 2999, 1), 0);
	assert_int_equal(sl_offer(&p, st, 3000, 3), 1);
	/* a clock behind the oldest entry is age 0 */
	assert_int_equal(sl_offer(&p, st, 2500, 1), 0);
	/* byte mode is refused: the config, and a cost other than 1 */
	assert_int_equal(fg_sliding_log_admit(&p, st, DAY, 2), 0);
	assert_int_equal(fg_sliding_log_admit(&p, st, DAY, 1500), 0);
	/* a clock that does not move */
	p = sl_params(128, SEC);
	memset(st, 0, sizeof(*st));
	assert_int_equal(sl_offer(&p, st, 42 * SEC + 17, 1000), 128);
	assert_int_equal(sl_offer(&p, st, 43 * SEC + 16, 1), 0);
	assert_int_equal(sl_offer(&p, st, 43 * SEC + 17, 1000), 128);
	free(st);
}

static void test_sliding_log_params(void **state)
{
	struct fg_sliding_log_params p = {0};

	(void)state;
	assert_int_equal(sizeof(struct fg_sliding_log_state), 8 * FG_SLIDING_LOG_MAX + 8);
	assert_int_equal(sizeof(p), 16);
	assert_int_equal(fg_sliding_log_params_init(&p, 10, SEC, 10, 1), -1); /* bytes */
	assert_int_equal(fg_sliding_log_params_init(&p, 0, SEC, 0, 0), -1);
	assert_int_equal(fg_sliding_log_params_init(&p, 129, SEC, 129, 0), -1);
	assert_int_equal(fg_sliding_log_params_init(&p, 10, SEC, 5, 0), -1);
	assert_int_equal(fg_sliding_log_params_init(&p, 10, 0, 10, 0), -1);
	assert_int_equal(fg_sliding_log_params_init(&p, 128, DAY, 128, 0), 0);
}

/* --- leaky_bucket --------------------------------------------------------- */

static struct fg_leaky_bucket_params lb_params(__u64 count, __u64 period, __u64 burst, int bytes)
{
	struct fg_leaky_bucket_params p = {0};

	assert_int_equal(fg_leaky_bucket_params_init(&p, count, period, burst, bytes), 0);
	return p;
}

static int lb_offer(const struct fg_leaky_bucket_params *p, __u64 *st, __u64 now, __u64 cost, int n)
{
	int admitted = 0, i;

	for (i = 0; i < n; i++)
		admitted += fg_leaky_bucket_admit(p, *st, now, cost, st);
	return admitted;
}

/* A meter whose level (in units) drains at COUNT/PERIOD, in exact rational
 * arithmetic: level_p is the level times PERIOD, which drains by COUNT per
 * ns. */
struct meter {
	u128 level_p;
	__u64 last;
};

static int meter_fits(const struct meter *m, __u64 count, __u64 period, __u64 depth, __u64 now,
		      __u64 cost, u128 *level_now)
{
	u128 drained = (u128)(now - m->last) * count;

	*level_now = m->level_p > drained ? m->level_p - drained : 0;
	return *level_now + (u128)cost * period <= (u128)depth * period;
}

static void test_leaky_bucket_vs_reference(void **state)
{
	/* rates whose T * cost is a whole number of ns: GCRA is then exact */
	static const struct conf confs[] = {
		{1000, SEC, 1, 0, 0},
		{1000, SEC, 4, 0, 5 * SEC},
		{10, SEC, 1, 0, 0},
		{1, 100 * US, 1, 0, 0},
		{100, SEC, 100, 0, DAY},
		{1000000, SEC, 1500, 1, 0},
		{125000000, SEC, 3000, 1, 0}, /* 1 Gbit/s */
		{1000, MS, 9000, 1, 1ULL << 50},
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		const struct conf *cf = &confs[c];
		struct fg_leaky_bucket_params p =
			lb_params(cf->count, cf->period, cf->burst, cf->bytes);
		__u64 t_ns = cf->period / cf->count, st = 0, now, cost, last = 0;
		struct meter m = {0, 0};
		struct traffic tr;
		int i, got, want, admitted = 0;
		u128 level_now;

		assert_int_equal(t_ns * cf->count, cf->period);
		traffic_init(&tr, 0x1eac0000 + c, cf->t0, cf->count, cf->period, cf->bytes);
		/* bursts of at most twice the depth, gaps on the scale of T */
		tr.burst_max = 2 * cf->burst / (cf->bytes ? 770 : 1) + 2;
		tr.period = cf->burst * t_ns;
		for (i = 0; i < N_PACKETS; i++) {
			now = traffic_next(&tr, &cost);
			want = meter_fits(&m, cf->count, cf->period, cf->burst, now, cost,
					  &level_now);
			got = fg_leaky_bucket_admit(&p, st, now, cost, &st);
			assert_int_equal(got, want);
			if (got) {
				m.level_p = level_now + (u128)cost * cf->period;
				m.last = now;
				/* empty_at is the level expressed as a time */
				assert_true((u128)(st - now) * cf->count == m.level_p);
				if (cf->burst == 1 && admitted)
					assert_true(now - last >= t_ns); /* constant spacing */
				last = now;
				admitted++;
			}
		}
		assert_true(admitted > 0 && admitted < N_PACKETS);
	}
}

static void test_leaky_bucket_uneven_rate(void **state)
{
	/* 3/s: T = 333333333.3 ns is rounded to whole ns per packet, as in
	 * GCRA; decisions match the real-number meter except within the
	 * rounding. Offered every ms, each admission comes 334 ms after the
	 * previous one (burst 1 banks nothing): 1 + 3000 s / 334 ms */
	struct fg_leaky_bucket_params p = lb_params(3, SEC, 1, 0);
	struct meter m = {0, 0};
	__u64 st = 0, t;
	int got = 0, want = 0;
	u128 level_now;

	(void)state;
	for (t = 5 * SEC; t < 3005 * SEC; t += MS) {
		got += fg_leaky_bucket_admit(&p, st, t, 1, &st);
		if (meter_fits(&m, 3, SEC, 1, t, 1, &level_now)) {
			m.level_p = level_now + SEC;
			m.last = t;
			want++;
		}
	}
	assert_int_equal(got, want);
	assert_int_equal(got, 8983);
}

static void test_leaky_bucket_burst(void **state)
{
	struct fg_leaky_bucket_params p = lb_params(1000, SEC, 1, 0); /* T = 1ms */
	__u64 st = 0, t;
	int admitted = 0;

	(void)state;
	/* burst 1: no credit banked by idling, one packet per T exactly */
	assert_int_equal(lb_offer(&p, &st, 0, 1, 10), 1); /* now = 0 */
	assert_int_equal(lb_offer(&p, &st, MS - 1, 1, 1), 0);
	assert_int_equal(lb_offer(&p, &st, MS, 1, 1), 1);
	assert_int_equal(lb_offer(&p, &st, DAY, 1, 10), 1);
	/* burst 5: after an idle spell exactly 5 at once, then one per T */
	p = lb_params(1000, SEC, 5, 0);
	st = 0;
	assert_int_equal(lb_offer(&p, &st, 5 * SEC, 1, 100), 5);
	for (t = 5 * SEC + US; t <= 6 * SEC; t += US)
		admitted += lb_offer(&p, &st, t, 1, 1);
	assert_int_equal(admitted, 1000);
	assert_int_equal(lb_offer(&p, &st, DAY, 1, 100), 5);
	/* a clock that does not move, and one stepping back */
	assert_int_equal(lb_offer(&p, &st, DAY, 1, 100), 0);
	assert_int_equal(lb_offer(&p, &st, DAY - SEC, 1, 100), 0);
	/* bytes: depth 1500 B at 1 B/us; cost above the depth never passes */
	p = lb_params(1000000, SEC, 1500, 1);
	st = 0;
	assert_int_equal(lb_offer(&p, &st, DAY, 1501, 1), 0);
	assert_int_equal(st, 0);
	assert_int_equal(lb_offer(&p, &st, DAY, 1500, 1), 1); /* exactly the depth */
	assert_int_equal(lb_offer(&p, &st, DAY + 40 * US - 1, 40, 1), 0);
	assert_int_equal(lb_offer(&p, &st, DAY + 40 * US, 40, 1), 1);
}

static void test_leaky_bucket_params(void **state)
{
	struct fg_leaky_bucket_params p = {0};

	(void)state;
	assert_int_equal(sizeof(p), 16);
	p = lb_params(1000, SEC, 1, 0);
	assert_int_equal(p.gcra.interval_fp, MS << FG_GCRA_FRAC_BITS);
	assert_int_equal(p.gcra.tolerance_ns, MS);
	/* 3/s: packet mode tolerance is burst whole intervals */
	p = lb_params(3, SEC, 2, 0);
	assert_int_equal(p.gcra.tolerance_ns, 2 * 333333333ULL);
	/* 10 Gbit/s, T = 0.8 ns in fixed point; byte-mode tolerance rounded */
	p = lb_params(1250000000ULL, SEC, 15001, 1);
	assert_int_equal(p.gcra.interval_fp, 52429); /* 0.8 * 65536 = 52428.8 */
	assert_int_equal(p.gcra.tolerance_ns, (15001ULL * 52429 + 32768) >> 16);
	/* the slowest byte rate (8 B/s) with the validator's largest burst,
	 * burst * T = 2^62 (check_refill()); params_init allows up to 2^63 */
	assert_int_equal(fg_leaky_bucket_params_init(&p, 8, SEC, 36893488147ULL, 1), 0);
	assert_int_equal(p.gcra.tolerance_ns, 36893488147ULL * 125000000);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 8, SEC, 80000000000ULL, 1), -1);
	/* the slowest packet rate, 1/24h: 2^62 / T = 53375, 2^63 / T = 106751 */
	assert_int_equal(fg_leaky_bucket_params_init(&p, 1, DAY, 53375, 0), 0);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 1, DAY, 106751, 0), 0);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 1, DAY, 106752, 0), -1);
	/* ... which in byte mode would overflow cost * interval_fp */
	assert_int_equal(fg_leaky_bucket_params_init(&p, 1, DAY, 1, 1), -1);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 0, SEC, 1, 0), -1);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 10, SEC, 0, 0), -1);
	assert_int_equal(fg_leaky_bucket_params_init(&p, 10, 1ULL << 48, 1, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_window_vs_reference),
		cmocka_unit_test(test_fixed_window_seam),
		cmocka_unit_test(test_fixed_window_boundaries),
		cmocka_unit_test(test_fixed_window_params),
		cmocka_unit_test(test_sliding_window_vs_reference),
		cmocka_unit_test(test_sliding_window_vs_exact_formula),
		cmocka_unit_test(test_sliding_window_seam_refused),
		cmocka_unit_test(test_sliding_window_boundaries),
		cmocka_unit_test(test_sliding_window_params),
		cmocka_unit_test(test_sliding_log_vs_reference),
		cmocka_unit_test(test_sliding_log_boundaries),
		cmocka_unit_test(test_sliding_log_params),
		cmocka_unit_test(test_leaky_bucket_vs_reference),
		cmocka_unit_test(test_leaky_bucket_uneven_rate),
		cmocka_unit_test(test_leaky_bucket_burst),
		cmocka_unit_test(test_leaky_bucket_params),
	};

	return cmocka_run_group_tests_name("algos", tests, NULL, NULL);
}
