// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF_PROG_TEST_RUN tests of the datapath's events: each kind is emitted on
 * its transition only, with its fields; the per-CPU cap admits exactly
 * burst + rate x elapsed events under the injected clock and counts the
 * rest in events_suppressed; `events = off` emits nothing. The tests stay
 * on CPU 0, since the cap, like the new-source budget, is per CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "policy/policy.h"

#define MAX_EVENTS 1024

struct collected {
	struct fg_event events[MAX_EVENTS];
	int count;
};

/* Sends n packets from `src` at `now`; returns how many passed. */
static int send_from(struct floodgate_bpf *skel, __u64 now, const char *src, int n)
{
	const struct pkt_spec spec = {.family = 4, .src = src, .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600]; /* build_packet clears 1600 bytes */
	size_t len = build_packet(buf, &spec);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = 1);
	int i, passed = 0;

	skel->bss->fg_test_now_ns = now;
	for (i = 0; i < n; i++) {
		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_xdp), &opts),
				 0);
		passed += opts.retval == XDP_PASS;
	}
	return passed;
}

static int collect_one(void *ctx, void *data, size_t size)
{
	struct collected *c = ctx;

	assert_int_equal(size, sizeof(struct fg_event));
	assert_true(c->count < MAX_EVENTS);
	memcpy(&c->events[c->count++], data, sizeof(struct fg_event));
	return 0;
}

/* Drains the ring into `c` (appending); returns how many were read. */
static int drain(struct floodgate_bpf *skel, struct collected *c)
{
	struct ring_buffer *rb =
		ring_buffer__new(bpf_map__fd(skel->maps.events), collect_one, c, NULL);
	int n;

	assert_non_null(rb);
	n = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	assert_true(n >= 0);
	return n;
}

/* Events the per-CPU cap suppressed, over every CPU. */
static __u64 suppressed(struct floodgate_bpf *skel)
{
	return global_stats(skel).events_suppressed;
}

/* The id of the config's one policy, as the datapath keys it. */
static __u32 only_policy_id(struct floodgate_bpf *skel)
{
	static struct fg_policy_set set;
	__u32 slot = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.policy_sets), &slot, &set), 0);
	assert_int_equal(set.count, 1);
	return set.policies[0].id;
}

static void assert_event(struct floodgate_bpf *skel, const struct fg_event *e, __u32 type,
			 const char *addr, __u8 prefix_len, __u64 time_ns)
{
	__u8 expected[16] = {0};

	assert_int_equal(inet_pton(AF_INET, addr, expected), 1);
	assert_int_equal(e->type, type);
	assert_int_equal(e->family, FG_FAMILY_IPV4);
	assert_int_equal(e->prefix_len, prefix_len);
	assert_memory_equal(e->addr, expected, sizeof(expected));
	assert_int_equal(e->time_ns, time_ns);
	assert_int_equal(e->policy_id, only_policy_id(skel));
}

/* One `refusing` event per refusal episode: none for the refusals that
 * follow the first, a new one after an admission ended the episode. */
FG_PROG_TEST(test_refusing_on_transition_only)
{
	struct floodgate_bpf *skel =
		load_sized("events = 1000/s\n[policy p]\nmatch = any\nrate = 1/s\nburst = 2\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct collected *c = calloc(1, sizeof(*c));
	cpu_set_t all = stay_on_cpu0();

	assert_int_equal(send_from(skel, T0, "10.0.0.1", 50), 2);
	assert_int_equal(drain(skel, c), 1);
	assert_event(skel, &c->events[0], FG_EVENT_REFUSING, "10.0.0.1", 32, T0);
	/* another source's episode is its own */
	assert_int_equal(send_from(skel, T0 + MS, "10.0.0.2", 10), 2);
	assert_int_equal(drain(skel, c), 1);
	assert_event(skel, &c->events[1], FG_EVENT_REFUSING, "10.0.0.2", 32, T0 + MS);
	/* still refused: nothing new */
	assert_int_equal(send_from(skel, T0 + 500 * MS, "10.0.0.1", 10), 0);
	assert_int_equal(drain(skel, c), 0);
	/* one token back: admitted, which ends the episode; the next refusal
	 * starts a new one */
	assert_int_equal(send_from(skel, T0 + 1500 * MS, "10.0.0.1", 5), 1);
	assert_int_equal(drain(skel, c), 1);
	assert_event(skel, &c->events[2], FG_EVENT_REFUSING, "10.0.0.1", 32, T0 + 1500 * MS);
	assert_int_equal(suppressed(skel), 0);
	sched_setaffinity(0, sizeof(all), &all);
	free(c);
	release_skel(skel);
}

/* A ban carries its expiry; the refusal that causes it is its own event. */
FG_PROG_TEST(test_banned_event)
{
	struct floodgate_bpf *skel =
		load_sized("[policy p]\nmatch = any\nper = src/24\nrate = 1/s\n"
			   "burst = 2\naction = ban 10s\nban_unverified = yes\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct collected *c = calloc(1, sizeof(*c));
	cpu_set_t all = stay_on_cpu0();

	assert_int_equal(send_from(skel, T0, "10.1.2.3", 5), 2);
	assert_int_equal(drain(skel, c), 2);
	assert_event(skel, &c->events[0], FG_EVENT_REFUSING, "10.1.2.0", 24, T0);
	assert_event(skel, &c->events[1], FG_EVENT_BANNED, "10.1.2.0", 24, T0);
	assert_int_equal(c->events[1].expires_ns, T0 + 10 * SEC);
	sched_setaffinity(0, sizeof(all), &all);
	free(c);
	release_skel(skel);
}

/* The new-source budget's exhaustion is reported once per episode; a
 * table that refuses an entry, each time (within the cap). */
FG_PROG_TEST(test_budget_and_table_events)
{
	/* This CPU's share of the budget: 1000/s with a burst of 4, of which
	 * sources seen once may spend the upper half (as in budget.c). */
	int ncpus = fg_online_cpus(), own = 4 / 2, i, budget_events = 0;
	struct collected *c = calloc(1, sizeof(*c));
	cpu_set_t all = stay_on_cpu0();
	struct floodgate_bpf *skel;
	char addr[32], config[256];

	snprintf(config, sizeof(config),
		 "new_sources = %d/s\nnew_sources_burst = %d\n"
		 "[policy p]\nmatch = any\nrate = 1/s\nburst = 3\n",
		 1000 * ncpus, 4 * ncpus);
	skel = load_sized(config, FG_SKEL_XDP, 0, 0, false);
	for (i = 0; i < 10; i++) {
		snprintf(addr, sizeof(addr), "10.7.0.%d", i + 1);
		send_from(skel, T0, addr, 1);
	}
	/* the first source past the budget reports it; the shared overflow
	 * bucket the others meet has its own refusal episode */
	drain(skel, c);
	for (i = 0; i < c->count; i++) {
		if (c->events[i].type != FG_EVENT_BUDGET_EXHAUSTED)
			continue;
		snprintf(addr, sizeof(addr), "10.7.0.%d", own + 1);
		assert_event(skel, &c->events[i], FG_EVENT_BUDGET_EXHAUSTED, addr, 32, T0);
		budget_events++;
	}
	assert_int_equal(budget_events, 1);
	/* the budget refills (one source per ms on this CPU), then runs out
	 * again: a second episode */
	c->count = 0;
	send_from(skel, T0 + MS, "10.7.1.1", 1);
	send_from(skel, T0 + MS, "10.7.1.2", 1);
	assert_int_equal(drain(skel, c), 1);
	assert_event(skel, &c->events[0], FG_EVENT_BUDGET_EXHAUSTED, "10.7.1.2", 32, T0 + MS);
	release_skel(skel);

	/* every insert fails: each new source is a table_full event */
	skel = load_sized("[policy p]\nmatch = any\nrate = 1/s\nburst = 3\n", FG_SKEL_XDP, 0, 0,
			  true);
	c->count = 0;
	send_from(skel, T0, "10.8.0.1", 2);
	send_from(skel, T0, "10.8.0.2", 1);
	assert_int_equal(drain(skel, c), 3);
	assert_event(skel, &c->events[0], FG_EVENT_TABLE_FULL, "10.8.0.1", 32, T0);
	assert_event(skel, &c->events[2], FG_EVENT_TABLE_FULL, "10.8.0.2", 32, T0);
	sched_setaffinity(0, sizeof(all), &all);
	free(c);
	release_skel(skel);
}

/* One packet can owe two events: the new-source budget runs out on it,
 * and the overflow key it is then charged to refuses it, the first refusal
 * of that key's episode. Both are emitted, in that order (fg_owe_event). */
FG_PROG_TEST(test_one_packet_owes_two_events)
{
	int ncpus = fg_online_cpus();
	struct collected *c = calloc(1, sizeof(*c));
	cpu_set_t all = stay_on_cpu0();
	struct floodgate_bpf *skel;
	char config[256];

	/* this CPU: two new sources at once, then one a ms (as above); the
	 * overflow key's bucket holds one packet */
	snprintf(config, sizeof(config),
		 "new_sources = %d/s\nnew_sources_burst = %d\n"
		 "[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n",
		 1000 * ncpus, 4 * ncpus);
	skel = load_sized(config, FG_SKEL_XDP, 0, 0, false);
	assert_int_equal(send_from(skel, T0, "10.7.0.1", 1), 1);
	assert_int_equal(send_from(skel, T0, "10.7.0.2", 1), 1);
	/* past the budget: reported, and the overflow key admits it, which
	 * empties its bucket without a refusal */
	assert_int_equal(send_from(skel, T0, "10.7.0.3", 1), 1);
	assert_int_equal(drain(skel, c), 1);
	assert_event(skel, &c->events[0], FG_EVENT_BUDGET_EXHAUSTED, "10.7.0.3", 32, T0);
	/* a ms later the budget admits one source (ending the episode), and
	 * the next both runs it out again and meets the empty bucket */
	c->count = 0;
	assert_int_equal(send_from(skel, T0 + MS, "10.7.1.1", 1), 1);
	assert_int_equal(send_from(skel, T0 + MS, "10.7.1.2", 1), 0);
	assert_int_equal(drain(skel, c), 2);
	assert_event(skel, &c->events[0], FG_EVENT_BUDGET_EXHAUSTED, "10.7.1.2", 32, T0 + MS);
	assert_int_equal(c->events[1].type, FG_EVENT_REFUSING);
	assert_int_equal(c->events[1].family, FG_FAMILY_OVERFLOW);
	assert_int_equal(c->events[1].policy_id, only_policy_id(skel));
	assert_int_equal(c->events[1].time_ns, T0 + MS);
	assert_int_equal(suppressed(skel), 0);
	sched_setaffinity(0, sizeof(all), &all);
	free(c);
	release_skel(skel);
}

/* `n` new sources at `now`, each admitted once and then refused: n events
 * due. */
static void refuse_sources(struct floodgate_bpf *skel, __u64 now, int first, int n)
{
	char addr[32];
	int i;

	for (i = first; i < first + n; i++) {
		snprintf(addr, sizeof(addr), "10.9.%d.%d", i / 250, i % 250 + 1);
		assert_int_equal(send_from(skel, now, addr, 2), 1);
	}
}

/* events = 10/s on ncpus CPUs: this CPU's bucket has interval ncpus x
 * 100 ms and the tolerance of the whole burst, 1 s, so it holds
 * floor(1 s / interval) events and earns one per interval. Under steady
 * pressure (more events due every 50 ms than it allows) it emits exactly
 * burst + elapsed / interval; after an idle minute, one burst again. */
FG_PROG_TEST(test_cap_is_burst_plus_rate_times_elapsed)
{
	struct floodgate_bpf *skel =
		load_sized("events = 10/s\n[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n",
			   FG_SKEL_XDP, 0, 0, false);
	int ncpus = libbpf_num_possible_cpus();
	const __u64 interval = ncpus * 100 * MS, burst = SEC / interval, step = 50 * MS;
	struct collected *c = calloc(1, sizeof(*c));
	cpu_set_t all = stay_on_cpu0();
	__u64 due = 0, elapsed;

	for (elapsed = 0; elapsed <= 3 * SEC; elapsed += step) {
		refuse_sources(skel, T0 + elapsed, (int)due, 8);
		due += 8;
		drain(skel, c);
		assert_int_equal(c->count, burst + elapsed / interval);
		assert_int_equal(suppressed(skel), due - c->count);
	}
	printf("events = 10/s on %d CPUs, 3 s of pressure on CPU 0: %d emitted (burst %llu + "
	       "%llu), %llu suppressed\n",
	       ncpus, c->count, (unsigned long long)burst, (unsigned long long)(3 * SEC / interval),
	       (unsigned long long)suppressed(skel));
	c->count = 0;
	refuse_sources(skel, T0 + 63 * SEC, (int)due, 100);
	drain(skel, c);
	assert_int_equal(c->count, burst);
	sched_setaffinity(0, sizeof(all), &all);
	free(c);
	release_skel(skel);
}

FG_PROG_TEST(test_events_off)
{
	struct floodgate_bpf *skel =
		load_sized("events = off\n[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct collected *c = calloc(1, sizeof(*c));

	refuse_sources(skel, T0, 0, 20);
	assert_int_equal(drain(skel, c), 0);
	assert_int_equal(suppressed(skel), 0);
	free(c);
	release_skel(skel);
}
