// SPDX-License-Identifier: GPL-2.0-only
/*
 * The presence filter (`presence4_first`, then `presence4`): while the
 * new-source budget is spent, an IPv4 source it has no note of is refused
 * without the lookups of `sources4` and `known4`; a source with state is
 * noted when the state is made and by its first packet of each
 * generation, so it keeps its own bucket through a flood; one whose note
 * has gone from either level is found again as soon as the budget lets
 * it be looked up, with its state, not a fresh burst.
 */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "fixtures.h"

/* This CPU's share of the budget: 1000/s with a burst of 4, of which
 * sources seen once may spend 2; the policy: 1/s, burst 3. */
static struct floodgate_bpf *load_budgeted(void)
{
	int ncpus = fg_online_cpus();
	char config[256];

	snprintf(config, sizeof(config),
		 "new_sources = %d/s\nnew_sources_burst = %d\n"
		 "[policy p]\nmatch = udp\nrate = 1/s\nburst = 3\n",
		 1000 * ncpus, 4 * ncpus);
	return load_with(config);
}

/* Sends one packet from each of `n` sources never seen before, at `now`:
 * the first two (at most) spend the budget's upper half, which is then
 * spent at `now`. */
static void spend_budget(struct floodgate_bpf *skel, __u64 now, int n)
{
	static int next;
	struct pkt_spec spoofed = udp_a;
	char addr[32];
	int i;

	spoofed.src = addr;
	for (i = 0; i < n; i++, next++) {
		snprintf(addr, sizeof(addr), "10.99.%d.%d", next / 250, next % 250 + 1);
		xdp_at(skel, now, &spoofed);
	}
}

/* What the budget refused while the source's packets went by: overflow
 * charges, and of them those refused without a table lookup. */
struct budget_refusals {
	__u64 overflow, unlooked;
};

static struct budget_refusals budget_refusals(struct floodgate_bpf *skel)
{
	return (struct budget_refusals){global_stats(skel).budget_overflow,
					skel->bss->fg_test_presence_refusals};
}

/* Sends `n` packets from `spec` at `now` with the budget spent; returns how
 * many passed, and checks whether they met the source's own state (no
 * overflow charge) or were refused by the budget without a lookup. */
static int passed_with_budget_spent(struct floodgate_bpf *skel, __u64 now,
				    const struct pkt_spec *spec, int n, bool own_state)
{
	struct budget_refusals before, after;
	int passed;

	spend_budget(skel, now, 8);
	before = budget_refusals(skel);
	passed = xdp_passed(skel, now, spec, n);
	after = budget_refusals(skel);
	assert_int_equal(after.overflow - before.overflow, own_state ? 0 : n);
	assert_int_equal(after.unlooked - before.unlooked, own_state ? 0 : n);
	return passed;
}

FG_PROG_TEST(test_presence_spares_spoofed_lookups)
{
	struct floodgate_bpf *skel = load_budgeted();
	struct pkt_spec known = udp_a;
	struct fg_global_stats g;
	cpu_set_t all = stay_on_cpu0();
	__u64 unlooked;

	/* a source with state made before the flood, and noted */
	known.src = "10.7.0.1";
	assert_int_equal(xdp_passed(skel, T0, &known, 3), 3);
	/* 10 new sources at once: 1 gets state (the upper half's other
	 * token), 9 find the budget spent, and none of the 9 had a note:
	 * refused without a lookup */
	spend_budget(skel, T0, 10);
	g = global_stats(skel);
	unlooked = skel->bss->fg_test_presence_refusals;
	assert_int_equal(g.sources_created, 1 + 1 + 1); /* and the overflow key */
	assert_int_equal(g.budget_overflow, 9);
	assert_int_equal(unlooked, 9);
	/* and of the 9 overflow charges (3 admitted), the refusals after the
	 * first were refused from the cache, without the overflow key's
	 * lookup, but for any the drop count sampled */
	assert_in_range(skel->bss->fg_test_cached_refusals, 1, 5);
	/* the known source keeps its own bucket meanwhile */
	assert_int_equal(passed_with_budget_spent(skel, T0, &known, 5, true), 0);
	/* a second later: its own bucket's one token, budget spent or not */
	assert_int_equal(passed_with_budget_spent(skel, T0 + SEC, &known, 5, true), 1);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* The filter's two levels, as the datapath reads them. */
enum presence_level { FIRST_LEVEL, SECOND_LEVEL, LEVELS };

/* Clears the bit's word in one level, by the slot function the datapath
 * uses for it. */
static void clear_note(struct floodgate_bpf *skel, const char *src, __u64 now,
		       enum presence_level level)
{
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	int fd = bpf_map__fd(level == FIRST_LEVEL ? skel->maps.presence4_first
						  : skel->maps.presence4);
	struct fg_source4_key key4;
	__u64 word = 1, none = 0;
	__u32 index, bit;

	key.policy_id = fg_policy_id_of(skel, "p");
	inet_pton(AF_INET, src, key.addr);
	key4 = fg_source4_key_of(&key);
	bit = level == FIRST_LEVEL ? fg_presence_first_slot(&key4, &index)
				   : fg_presence_slot(&key4, &index);
	assert_int_equal(bpf_map_lookup_elem(fd, &index, &word), 0);
	assert_true(fg_presence_has(word, fg_presence_gen(now), bit)); /* noted */
	assert_int_equal(bpf_map_update_elem(fd, &index, &none, 0), 0);
}

/* A known source (moved to known4) whose note is gone from either level
 * meets the budget first: refused while it is spent (as a source the table
 * had evicted would be), and found, with its state and noted again, once
 * the budget lets it be looked up: no fresh state, no fresh burst. */
FG_PROG_TEST(test_presence_lost_note_finds_state)
{
	const __u64 later = T0 + 3 * SEC;
	enum presence_level level;

	for (level = FIRST_LEVEL; level < LEVELS; level++) {
		struct floodgate_bpf *skel = load_budgeted();
		struct pkt_spec source = udp_a;
		cpu_set_t all = stay_on_cpu0();
		__u64 created;

		source.src = "10.7.0.2";
		assert_int_equal(xdp_passed(skel, T0, &source, 3), 3);
		/* 3 s later: known long enough, and moved to known4 */
		assert_int_equal(xdp_passed(skel, later, &source, 3), 3);
		assert_int_equal(global_stats(skel).sources_promoted, 1);
		clear_note(skel, source.src, later, level);
		/* the overflow key's burst of 3 went to the flood */
		assert_int_equal(passed_with_budget_spent(skel, later, &source, 1, false), 0);
		/* the budget's token of the next ms lets it be looked up: its
		 * own bucket is empty (no fresh burst of 3), and it is noted
		 * again */
		created = global_stats(skel).sources_created;
		assert_int_equal(xdp_passed(skel, later + MS, &source, 3), 0);
		assert_int_equal(global_stats(skel).sources_created, created);
		assert_int_equal(passed_with_budget_spent(skel, later + SEC, &source, 2, true), 1);
		sched_setaffinity(0, sizeof(all), &all);
		release_skel(skel);
	}
}

/* The generations: a note lasts the generation it was made in and the
 * next; a source's first packet of a generation renews it; a source idle
 * for two whole generations has none. */
FG_PROG_TEST(test_presence_generations)
{
	const __u64 gen_ns = 1ULL << FG_PRESENCE_GEN_SHIFT;
	/* the start of the generation after T0's */
	const __u64 next = (T0 / gen_ns + 1) * gen_ns;
	struct floodgate_bpf *skel = load_budgeted();
	struct pkt_spec source = udp_a;
	cpu_set_t all = stay_on_cpu0();

	source.src = "10.7.0.3";
	assert_int_equal(xdp_passed(skel, T0, &source, 1), 1);
	/* the next generation: noted in T0's, and renewed by this packet */
	assert_int_equal(passed_with_budget_spent(skel, next + SEC, &source, 1, true), 1);
	/* the one after: T0's note has lapsed, the renewed one holds */
	assert_int_equal(passed_with_budget_spent(skel, next + gen_ns + SEC, &source, 1, true), 1);
	/* idle through the next generation: no note left */
	assert_int_equal(passed_with_budget_spent(skel, next + 3 * gen_ns + SEC, &source, 1, false),
			 0);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}
