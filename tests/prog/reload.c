// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reloads: a live reload keeps the state of a kept policy; what a reload
 * keeps and what it reclaims from the state tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/config.h"
#include "maps/pinned.h"
#include "policy/policy.h"
#include "fixtures.h"

FG_PROG_TEST_WITH(test_live_reload_keeps_state, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct fg_pinned pinned;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = calloc(1, sizeof(*compiled));

	assert_int_equal(xdp_passed(skel, T0, &a, 8), 5);
	/* a new file order, the same ssh policy: its bucket stays empty */
	assert_int_equal(fg_config_parse_string("reload",
						"[policy default]\nmatch = udp\nrate = 1/s\n"
						"[policy ssh]\nmatch = tcp dport 22\nrate = 10/s\n"
						"burst = 5\n",
						cfg, stderr),
			 0);
	assert_int_equal(fg_policy_compile(cfg, 1, compiled), 0);
	assert_int_equal(fg_pinned_from_object(skel->obj, &pinned), 0);
	assert_int_equal(fg_policy_write_slot(&pinned.maps, 1, compiled), 0);
	assert_int_equal(fg_policy_carry_stats(&pinned.maps, 0, 1), 0);
	assert_int_equal(fg_policy_activate(&pinned.maps, 1), 0);
	assert_int_equal(xdp_passed(skel, T0, &a, 3), 0);
	assert_int_equal(policy_stats(skel, FG_MAX_POLICIES + 1).matched_packets, 8 + 3);
	free(cfg);
	fg_compiled_free(compiled);
}

/* The set `text` compiles to, for fg_pinned_reclaim_state(). */
static void compile_set(const char *text, struct fg_policy_set *set)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = calloc(1, sizeof(*compiled));

	assert_int_equal(fg_config_parse_string("test", text, cfg, stderr), 0);
	assert_int_equal(fg_policy_compile(cfg, 1, compiled), 0);
	*set = compiled->set;
	free(cfg);
	fg_compiled_free(compiled);
}

/* What a reload keeps and reclaims: the state of a policy that keeps its
 * name, algorithm and (for sliding_log) COUNT stays; a removed policy's, or
 * a sliding_log policy's whose COUNT changed, is deleted from its table. */
FG_PROG_TEST(test_reload_reclaims_state)
{
	static const char loaded[] = "[policy log]\nmatch = udp dport 9\nalgorithm = sliding_log\n"
				     "rate = 3/s\n[policy tb]\nmatch = udp dport 10\nrate = 3/s\n"
				     "burst = 3\n";
	struct pkt_spec udp = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec other = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 10};
	struct fg_policy_set *old = malloc(sizeof(*old)), *next = malloc(sizeof(*next));
	struct floodgate_bpf *skel = load_skel_with(loaded, true, false);
	struct fg_pinned pinned;

	assert_non_null(skel);
	assert_int_equal(fg_pinned_from_object(skel->obj, &pinned), 0);
	assert_int_equal(xdp_passed(skel, T0, &udp, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &other, 5), 3);
	compile_set(loaded, old);
	/* another rate for tb, the same COUNT for log: both kept */
	compile_set("[policy log]\nmatch = udp dport 9\nalgorithm = sliding_log\nrate = 3/min\n"
		    "[policy tb]\nmatch = udp dport 10\nrate = 30/s\n",
		    next);
	assert_int_equal(fg_pinned_reclaim_state(&pinned, old, next), 0);
	/* log's COUNT changes: its ring goes; tb is removed: its bucket goes */
	compile_set("[policy log]\nmatch = udp dport 9\nalgorithm = sliding_log\nrate = 4/s\n",
		    next);
	assert_int_equal(fg_pinned_reclaim_state(&pinned, old, next), 2);
	assert_int_equal(bpf_map_get_next_key(pinned.logs, NULL, &(struct fg_source_key){}),
			 -ENOENT);
	/* tb's IPv4 bucket was in sources4: reclaim reads its 12-byte keys */
	assert_int_equal(bpf_map_get_next_key(pinned.sources4, NULL, &(struct fg_source_key){}),
			 -ENOENT);
	assert_int_equal(bpf_map_get_next_key(pinned.sources, NULL, &(struct fg_source_key){}),
			 -ENOENT);
	/* tb becomes scope = host: its state moves to host_sources, so what
	 * it has in sources4 goes. (Its refusals above are cached on this CPU
	 * under the policy push of the load; a reload reclaims right after its
	 * own push, a new generation, as here.) */
	assert_int_equal(fg_policy_activate(&pinned.maps, 0), 0);
	assert_int_equal(xdp_passed(skel, T0, &other, 1), 1);
	compile_set("[policy log]\nmatch = udp dport 9\nalgorithm = sliding_log\nrate = 3/s\n"
		    "[policy tb]\nmatch = udp dport 10\nrate = 3/s\nburst = 3\nscope = host\n",
		    next);
	assert_int_equal(fg_pinned_reclaim_state(&pinned, old, next), 1);
	release_skel(skel);
	free(old);
	free(next);
}
