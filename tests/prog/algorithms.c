// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each algorithm's signature, with an injected clock: the fixed window's
 * seam burst, the sliding window's and log's exactness, the leaky bucket's
 * spacing, and byte limits.
 */
#include "fixtures.h"

FG_PROG_TEST(test_fixed_window_admits_seam_burst)
{
	struct floodgate_bpf *skel =
		load_with("[policy w]\nmatch = any\nalgorithm = fixed_window\nrate = 10/s\n");

	/* the last ms of window 1000 and the first of window 1001: 2 x COUNT
	 * within 1 ms, the documented behaviour */
	assert_int_equal(xdp_passed(skel, T0 + 999 * MS, &udp_a, 20), 10);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 20), 10);
	assert_int_equal(xdp_passed(skel, T0 + SEC + 999 * MS, &udp_a, 5), 0);
	release_skel(skel);
}

FG_PROG_TEST(test_sliding_window_refuses_seam_burst)
{
	struct floodgate_bpf *skel =
		load_with("[policy w]\nmatch = any\nalgorithm = sliding_window\nrate = 10/s\n");

	assert_int_equal(xdp_passed(skel, T0 + 999 * MS, &udp_a, 20), 10);
	/* at the seam the previous window still weighs 10 x (1 - 0): nothing */
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 20), 0);
	/* halfway, it weighs 5: five more */
	assert_int_equal(xdp_passed(skel, T0 + SEC + 500 * MS, &udp_a, 20), 5);
	release_skel(skel);
}

FG_PROG_TEST(test_sliding_log_is_exact)
{
	struct floodgate_bpf *skel =
		load_with("[policy l]\nmatch = any\nalgorithm = sliding_log\nrate = 5/s\n");
	int i;

	for (i = 0; i < 5; i++)
		assert_int_equal(xdp_passed(skel, T0 + i * 100 * MS, &udp_a, 1), 1);
	/* five in the last second: refused until the first is exactly 1 s old */
	assert_int_equal(xdp_passed(skel, T0 + 500 * MS, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(skel, T0 + 999 * MS, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC - 1, &udp_a, 1), 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 3), 1);
	assert_int_equal(xdp_passed(skel, T0 + SEC + 100 * MS, &udp_a, 3), 1);
	assert_int_equal(policy_stats(skel, 0).passed_packets, 7);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 3 + 3 + 1 + 2 + 2);
	release_skel(skel);
}

FG_PROG_TEST(test_leaky_bucket_constant_spacing)
{
	struct floodgate_bpf *skel =
		load_with("[policy m]\nmatch = any\nalgorithm = leaky_bucket\nrate = 10/s\n");
	__u64 t, last = 0;
	int admitted = 0;

	/* no initial burst: depth 1 */
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 5), 1);
	last = T0;
	for (t = T0 + MS; t <= T0 + SEC; t += MS) {
		if (xdp_at(skel, t, &udp_a) != XDP_PASS)
			continue;
		assert_true(t - last >= 100 * MS); /* never closer than T */
		last = t;
		admitted++;
	}
	assert_int_equal(admitted, 10);
	release_skel(skel);
}

/* Byte mode: 1000-byte frames against 3000 B buckets. */
FG_PROG_TEST(test_byte_limits)
{
	static const struct {
		const char *config;
		int at_once, after_1s;
	} cases[] = {
		{"[policy b]\nmatch = any\nrate = 1000B/s\nburst = 3000B\n", 3, 1},
		{"[policy b]\nmatch = any\nalgorithm = fixed_window\nrate = 3000B/s\n", 3, 3},
		{"[policy b]\nmatch = any\nalgorithm = sliding_window\nrate = 3000B/s\n", 3, 0},
		{"[policy b]\nmatch = any\nalgorithm = leaky_bucket\nrate = 1000B/s\n", 1, 1},
	};
	struct pkt_spec kb = udp_a;
	size_t i;

	kb.pad = 1000 - (14 + 20 + 8);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floodgate_bpf *skel = load_with(cases[i].config);

		assert_int_equal(xdp_passed(skel, T0, &kb, 10), cases[i].at_once);
		assert_int_equal(xdp_passed(skel, T0 + SEC, &kb, 10), cases[i].after_1s);
		assert_int_equal(policy_stats(skel, 0).passed_bytes,
				 1000ULL * (cases[i].at_once + cases[i].after_1s));
		release_skel(skel);
	}
}
