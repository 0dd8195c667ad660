// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layers: each binds in turn, a refusal is not charged to the layers after
 * it, and 64 layers (the most a config may hold) are all walked.
 */
#include <stdio.h>

#include "fixtures.h"

/* Layers: per address, per /24, global. Each binds in turn, and a packet a
 * layer refuses is not charged to the layers after it. */
FG_PROG_TEST(test_layers_bind_in_turn)
{
	struct floodgate_bpf *skel = load_with("[policy ip]\nmatch = any\nrate = 1/s\nburst = 4\n"
					       "[policy net]\nmatch = any\nper = src/24\n"
					       "rate = 1/s\nburst = 6\n"
					       "[policy all]\nmatch = any\nper = global\n"
					       "rate = 1/s\nburst = 8\n");
	struct pkt_spec a = udp_a, b = udp_a, c = udp_a, far = udp_a;

	b.src = "10.0.0.2";
	c.src = "10.0.0.3";
	far.src = "192.0.2.9";
	assert_int_equal(xdp_passed(skel, T0, &a, 10), 4);   /* the per-address layer */
	assert_int_equal(xdp_passed(skel, T0, &b, 10), 2);   /* the /24 layer: 6 - 4 */
	assert_int_equal(xdp_passed(skel, T0, &far, 10), 2); /* the global layer: 8 - 6 */
	assert_int_equal(xdp_passed(skel, T0, &c, 10), 0);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 40);
	assert_int_equal(policy_stats(skel, 1).matched_packets, 4 + 4 + 4 + 4);
	assert_int_equal(policy_stats(skel, 2).matched_packets, 4 + 2 + 4);
	assert_int_equal(policy_stats(skel, 2).passed_packets, 8);
	release_skel(skel);
}

/* 64 layers, the most a config may hold: a packet walks all of them, and
 * the last one's refusal still drops it. */
FG_PROG_TEST(test_sixty_four_layers)
{
	char config[64 * 80], *at = config;
	struct floodgate_bpf *skel;
	int i;

	for (i = 0; i < 64; i++)
		at += sprintf(at, "[policy p%d]\nmatch = any\nrate = 1/s\nburst = %d\n", i,
			      i == 63 ? 2 : 1000);
	skel = load_with(config);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 5), 2);
	for (i = 0; i < 64; i++)
		assert_int_equal(policy_stats(skel, i).matched_packets, 5);
	assert_int_equal(policy_stats(skel, 63).dropped_packets, 3);
	release_skel(skel);
}
