// SPDX-License-Identifier: GPL-2.0-only
/*
 * Both programs: fg_tc's verdicts, the verifier's instruction counts of
 * each program, and their call chains' stack as the oldest kernel counts it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

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

/* Linux 6.1's verifier rounds each frame of a call chain up to 32 bytes
 * (round_up(max(depth, 1), 32) in check_max_stack_depth) and refuses a chain
 * past MAX_BPF_STACK; 6.18 counts the frames unrounded. A chain that fits
 * here by a few bytes can be refused there (an fg_tc of 200 + 264 + 32 bytes
 * was, 2026-12-04), so the bound is checked here the way 6.1 counts it. */
#define FG_OLDEST_FRAME_ROUND 32
#define FG_MAX_BPF_STACK      512
#define FG_MAX_SUBPROGS	      16

struct fg_subprogs {
	int count;
	__u32 start[FG_MAX_SUBPROGS]; /* first instruction, in load order */
	__u32 depth[FG_MAX_SUBPROGS]; /* stack bytes, from the verifier's log */
	char name[FG_MAX_SUBPROGS][64];
	bool calls[FG_MAX_SUBPROGS][FG_MAX_SUBPROGS];
};

static int subprog_at(const struct fg_subprogs *sp, __u32 insn)
{
	int i;

	for (i = sp->count - 1; i >= 0; i--)
		if (insn >= sp->start[i])
			return i;
	return -1;
}

/* Adds `insn` to the sorted, distinct subprogram starts. */
static void add_start(__u32 *starts, __u32 *count, __u32 insn)
{
	__u32 i, j;

	for (i = 0; i < *count && starts[i] < insn; i++)
		;
	if (i < *count && starts[i] == insn)
		return;
	assert_true(*count < FG_MAX_SUBPROGS);
	for (j = *count; j > i; j--)
		starts[j] = starts[j - 1];
	starts[i] = insn;
	(*count)++;
}

static __u32 oldest_frame(__u32 depth)
{
	depth = depth ? depth : 1;
	return (depth + FG_OLDEST_FRAME_ROUND - 1) / FG_OLDEST_FRAME_ROUND * FG_OLDEST_FRAME_ROUND;
}

/* The deepest chain from `from`, frames rounded as 6.1 does. */
static __u32 deepest_chain(const struct fg_subprogs *sp, int from, int level)
{
	__u32 deepest = 0, chain;
	int to;

	assert_true(level < FG_MAX_SUBPROGS); /* no recursion in BPF */
	for (to = 0; to < sp->count; to++) {
		if (!sp->calls[from][to])
			continue;
		chain = deepest_chain(sp, to, level + 1);
		deepest = chain > deepest ? chain : deepest;
	}
	return oldest_frame(sp->depth[from]) + deepest;
}

/* Reads the subprograms of a loaded `prog` (the kernel's function info
 * and BTF names), their stack from the stats log's "stack depth A+B+...",
 * and the calls between them from the instructions libbpf loaded. */
static void read_subprogs(struct bpf_program *prog, const char *log, struct fg_subprogs *sp)
{
	struct bpf_func_info funcs[FG_MAX_SUBPROGS] = {};
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info), i;
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t insn_count = bpf_program__insn_cnt(prog);
	const char *at = strstr(log, "stack depth ");
	__u32 starts[FG_MAX_SUBPROGS] = {0}, start_count = 1;
	struct btf *btf;
	char *end;

	memset(sp, 0, sizeof(*sp));
	info.nr_func_info = FG_MAX_SUBPROGS;
	info.func_info_rec_size = sizeof(funcs[0]);
	info.func_info = (__u64)(unsigned long)funcs;
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &info_len), 0);
	assert_true(info.nr_func_info > 0 && info.nr_func_info <= FG_MAX_SUBPROGS);
	btf = btf__load_from_kernel_by_id(info.btf_id);
	assert_non_null(btf);
	assert_non_null(at);
	at += strlen("stack depth ");
	for (i = 0; i < info.nr_func_info; i++) {
		const struct btf_type *func = btf__type_by_id(btf, funcs[i].type_id);

		snprintf(sp->name[i], sizeof(sp->name[i]), "%s",
			 func ? btf__name_by_offset(btf, func->name_off) : "?");
		sp->depth[i] = strtoul(at, &end, 10);
		assert_true(end != at);
		at = *end == '+' ? end + 1 : end;
	}
	sp->count = info.nr_func_info;
	btf__free(btf);
	/* The kernel's instruction offsets are of the rewritten program;
	 * libbpf's, of the one it loaded. In both, each subprogram after the
	 * first starts where a call lands, and they come in the same order. */
	assert_non_null(insns);
	for (i = 0; i < insn_count; i++) {
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL)
			add_start(starts, &start_count, i + insns[i].imm + 1);
	}
	assert_int_equal(start_count, sp->count);
	memcpy(sp->start, starts, sizeof(starts));
	for (i = 0; i < insn_count; i++) {
		int from, to;

		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg != BPF_PSEUDO_CALL)
			continue;
		from = subprog_at(sp, i);
		to = subprog_at(sp, i + insns[i].imm + 1);
		assert_true(from >= 0 && to >= 0);
		sp->calls[from][to] = true;
	}
}

/* The verifier's own count, from a stats-level log (BPF_LOG_STATS). The
 * policies are data, written after the load, so the count is the same for
 * 1 and for 64 of them: the walk is bounded at FG_MAX_POLICIES layers.
 * The SYN proxy is on, so the entry programs carry their hand-off to it. */
FG_PROG_TEST(test_verifier_instruction_counts)
{
	static char log[64 * 1024], config[4096];
	const struct fg_skel_opts opts = {.progs = FG_SKEL_EVERY_PROG};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel = floodgate_bpf__open();
	struct fg_subprogs subprogs;
	struct bpf_program *prog;
	long processed;
	__u32 stack;
	char *at;
	int i;

	assert_non_null(skel);
	snprintf(config, sizeof(config), "%s[synproxy]\nports = 22\n", test_config);
	assert_int_equal(fg_config_parse_string("test", config, cfg, stderr), 0);
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
		 * of the limit, and winning the margin back is issue 25's).
		 * 2026-12-06, with the SYN proxy's hand-off and the presence
		 * filter: fg_xdp 212k and fg_tc 221k on 6.18, 638k and 658k on
		 * 6.1, 94% of this bound. Where 6.1's excess is, measured in its
		 * guest (docs/kernels.md, "The verifier on 6.1"): not the parse
		 * (56k, as on 6.18) nor the walk's loop, but fg_apply_layer's
		 * calls to other functions. With the events owed and emitted at
		 * the layer's end (bpf/fg_events.h): 212k and 221k on 6.18,
		 * 439k and 458k on 6.1, 65% of this bound. */
		assert_true(processed > 0 && processed < 700000);
		read_subprogs(p, log, &subprogs);
		stack = deepest_chain(&subprogs, 0, 0);
		printf("verifier: %s's deepest call chain takes %u of %u stack bytes on 6.1 (",
		       bpf_program__name(prog), stack, FG_MAX_BPF_STACK);
		for (i = 0; i < subprogs.count; i++)
			printf("%s%s %u", i ? ", " : "", subprogs.name[i], subprogs.depth[i]);
		printf(")\n");
		assert_true(stack <= FG_MAX_BPF_STACK);
		release_skel(one);
	}
	release_skel(skel);
	free(cfg);
}
