// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known sources survive churn: a source known for FG_KNOWN_AFTER moves to
 * `known4`, which a flood of new sources, turning `sources4` over, cannot
 * evict; it keeps its state there, so pausing buys it no fresh burst.
 */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "fixtures.h"

#define CHURN_TABLE	256
#define CHURN_TURNOVERS 10

/* An abuser spends its burst, comes back once when it has been known long
 * enough (and is moved to known4), then pauses while CHURN_TURNOVERS x the
 * table of new sources, each sent twice (so that the kernel's LRU counts
 * them used), pass through. When it returns it has only what the rate
 * refilled: the table churned, but its state was not lost. */
FG_PROG_TEST(test_known_source_survives_churn)
{
	struct floodgate_bpf *skel = load_with("max_sources = 256\nnew_sources = off\n"
					       "[policy p]\nmatch = udp\nrate = 1/s\nburst = 10\n");
	struct pkt_spec abuser = udp_a, spoofed = udp_a;
	const __u64 back = T0 + 3 * SEC, churned = T0 + 4 * SEC;
	struct fg_global_stats g;
	char addr[32];
	int i;

	abuser.src = "192.0.2.66";
	spoofed.src = addr;
	assert_int_equal(xdp_passed(skel, T0, &abuser, 20), 10);
	/* 3 s later: 3 tokens; it takes one, and is known long enough */
	assert_int_equal(xdp_passed(skel, back, &abuser, 1), 1);
	for (i = 0; i < CHURN_TURNOVERS * CHURN_TABLE; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.1", i / 250, i % 250);
		assert_int_equal(xdp_passed(skel, back + (__u64)i * (SEC / 4096), &spoofed, 2), 2);
	}
	g = global_stats(skel);
	assert_true(g.sources_created >= CHURN_TURNOVERS * CHURN_TABLE); /* the premise */
	assert_int_equal(g.sources_promoted, 1);
	/* 2 tokens left at `back`, 1 more a second later: no fresh burst of 10 */
	assert_int_equal(xdp_passed(skel, churned, &abuser, 20), 3);
	release_skel(skel);
}
