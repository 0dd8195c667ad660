// SPDX-License-Identifier: GPL-2.0-only
/*
 * The [allow] and [deny] lists, longest prefix first, before everything
 * else.
 */
#include "fixtures.h"

FG_PROG_TEST(test_allow_and_deny_lists)
{
	struct floodgate_bpf *skel = load_with("[allow]\nsrc = 10.1.0.0/16, 2001:db8:a::/48\n"
					       "[deny]\nsrc = 10.0.0.0/8, 2001:db8::/32\n"
					       "[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec allowed = udp_a, denied = udp_a, other = udp_a;
	struct pkt_spec allowed6 = {
		.family = 6, .src = "2001:db8:a::1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec denied6 = allowed6,
			denied_tcp = {
				.family = 4, .src = "10.9.9.9", .proto = IPPROTO_TCP, .dport = 22};

	allowed.src = "10.1.2.3"; /* inside the deny /8, but the allow /16 is longer */
	denied.src = "10.2.0.1";
	other.src = "192.0.2.1";
	denied6.src = "2001:db8:b::1";
	assert_int_equal(xdp_passed(skel, T0, &allowed, 10), 10);
	assert_int_equal(xdp_passed(skel, T0, &allowed6, 10), 10);
	assert_int_equal(xdp_passed(skel, T0, &denied, 10), 0);
	assert_int_equal(xdp_passed(skel, T0, &denied6, 10), 0);
	assert_int_equal(xdp_passed(skel, T0, &other, 10), 1);
	/* a damaged packet from a denied source still meets the list first */
	skel->bss->fg_test_now_ns = T0;
	assert_int_equal(run_prog(xdp, &denied_tcp, 14 + 20 + 5), XDP_DROP);
	assert_int_equal(global_stats(skel).allowed, 20);
	assert_int_equal(global_stats(skel).denied, 21);
	assert_int_equal(global_stats(skel).malformed, 0);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 10);
	release_skel(skel);
}

/* --- feed files: lists of millions, switched whole ---------------------- */

#include <pthread.h>
#include <unistd.h>

#include "maps/pinned.h"
#include "policy/access.h"

static const char monitor_only[] = "[policy p]\nmatch = any\nrate = 1/s\naction = monitor\n";

/* `n` IPv4 /24s in 20.0.0.0/8 and as many IPv6 /48s in 2001:db8::/32, as
 * a feed file would give them. */
static void filler(struct fg_feed_list *list, size_t n)
{
	size_t i;

	list->cidrs = calloc(2 * n, sizeof(*list->cidrs));
	assert_non_null(list->cidrs);
	for (i = 0; i < n; i++) {
		struct fg_cidr *v4 = &list->cidrs[2 * i], *v6 = &list->cidrs[2 * i + 1];

		v4->family = FG_FAMILY_IPV4;
		v4->prefix_len = 24;
		v4->addr[0] = 20;
		v4->addr[1] = (__u8)(i >> 8);
		v4->addr[2] = (__u8)i;
		v6->family = FG_FAMILY_IPV6;
		v6->prefix_len = 48;
		v6->addr[0] = 0x20;
		v6->addr[1] = 0x01;
		v6->addr[2] = 0x0d;
		v6->addr[3] = 0xb8;
		v6->addr[4] = (__u8)(i >> 8);
		v6->addr[5] = (__u8)i;
	}
	list->n = 2 * n;
}

static struct fg_config *parsed(const char *text)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));

	assert_non_null(cfg);
	assert_int_equal(fg_config_parse_string("test", text, cfg, stderr), 0);
	return cfg;
}

static struct fg_compiled *compiled_for(const struct fg_config *cfg, const struct fg_feeds *feeds,
					__u32 slot)
{
	struct fg_compiled *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	assert_int_equal(fg_policy_compile_feeds(cfg, feeds, slot, c), 0);
	return c;
}

static struct floodgate_bpf *load_lists(struct fg_config *cfg, const struct fg_compiled *compiled)
{
	const struct fg_skel_opts opts = {.progs = FG_SKEL_EVERY_PROG, .test_clock = true};
	struct floodgate_bpf *skel;

	cfg->access_prefixes = compiled->access.n;
	assert_int_equal(fg_skel_prepare(cfg, &opts, compiled, NULL, &skel), 0);
	return skel;
}

/* A list of 130k feed prefixes sizes the trie at load and is enforced;
 * the same prefix in [allow] and [deny] is one entry, and allow wins. */
FG_PROG_TEST(test_feed_list_sized_at_load)
{
	struct fg_config *cfg = parsed("[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n"
				       "[allow]\nsrc = 20.0.7.0/24\n");
	struct fg_feeds feeds = {0};
	struct fg_compiled *compiled;
	struct floodgate_bpf *skel;
	struct pkt_spec listed = udp_a,
			listed6 = {.family = 6,
				   .src = "2001:db8:1:2::9",
				   .proto = IPPROTO_UDP,
				   .dport = 9},
			allowed = udp_a, other = udp_a;

	filler(&feeds.deny, 65536);
	compiled = compiled_for(cfg, &feeds, 0);
	assert_int_equal(compiled->access.n, 2 * 65536);
	assert_int_equal(compiled->access.n_allow, 1);
	skel = load_lists(cfg, compiled);
	assert_int_equal(bpf_map__max_entries(skel->maps.access_lists),
			 fg_access_lists_entries(2 * 65536));
	assert_true(bpf_map__max_entries(skel->maps.access_lists) >= 4 * 65536);
	listed.src = "20.1.2.3";
	allowed.src = "20.0.7.1";
	other.src = "21.1.2.3";
	assert_int_equal(xdp_passed(skel, T0, &listed, 3), 0);
	assert_int_equal(xdp_passed(skel, T0, &listed6, 3), 0);
	assert_int_equal(xdp_passed(skel, T0, &allowed, 3), 3);
	assert_int_equal(xdp_passed(skel, T0, &other, 3), 1);
	release_skel(skel);
	fg_compiled_free(compiled);
	fg_feeds_free(&feeds);
	free(cfg);
}

struct list_flood {
	int prog_fd, cpu;
	volatile bool *stop;
	pthread_barrier_t *barrier;
	__u64 runs;
};

/* 10.9.0.1 passes under both lists: allowed by A's /32 inside A's denied
 * /24, absent from B. Only a half-written list (A's /24 without its /32)
 * drops it. */
static void *flood_lists(void *arg)
{
	struct list_flood *t = arg;
	struct pkt_spec spec = {.family = 4, .src = "10.9.0.1", .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .repeat = 200);
	cpu_set_t set;

	opts.data_size_in = build_packet(buf, &spec);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(t->barrier);
	while (!*t->stop) {
		bpf_prog_test_run_opts(t->prog_fd, &opts);
		t->runs += opts.repeat;
	}
	return NULL;
}

/* Switches A <-> B `rounds` times under a flood from two CPUs, as reload
 * does (into the idle slot, flip, reclaim the old slot), or, `in_place`,
 * by rewriting the active slot, which stops at the first round after which
 * the lists have dropped a packet (whether a round's flood meets the
 * half-written list is the scheduler's call, so the in-place case gets
 * rounds until it does); returns the packets the lists dropped. */
static __u64 switch_under_flood(bool in_place, int rounds)
{
	struct fg_config *a = parsed("[policy p]\nmatch = any\nrate = 1/s\naction = monitor\n"
				     "[deny]\nsrc = 10.9.0.0/24\n[allow]\nsrc = 10.9.0.1/32\n");
	struct fg_config *b = parsed(monitor_only);
	struct fg_feeds feeds = {0};
	struct fg_compiled *list[2][2]; /* [A or B][slot] */
	pthread_barrier_t barrier;
	volatile bool stop = false;
	struct list_flood t[2];
	struct floodgate_bpf *skel;
	struct fg_pinned pinned;
	pthread_t tid[2];
	__u32 active = 0, next;
	int i, l, s, switches = 0;

	filler(&feeds.deny, 20000);
	for (l = 0; l < 2; l++)
		for (s = 0; s < 2; s++)
			list[l][s] = compiled_for(l ? b : a, &feeds, s);
	skel = load_lists(a, list[0][0]);
	assert_int_equal(fg_pinned_from_object(skel->obj, &pinned), 0);
	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++) {
		t[i] = (struct list_flood){.prog_fd = bpf_program__fd(skel->progs.fg_xdp),
					   .cpu = i,
					   .stop = &stop,
					   .barrier = &barrier};
		pthread_create(&tid[i], NULL, flood_lists, &t[i]);
	}
	pthread_barrier_wait(&barrier);
	for (i = 1; i <= rounds; i++) {
		next = in_place ? active : !active;
		assert_int_equal(fg_policy_write_slot(&pinned.maps, next, list[i % 2][next]), 0);
		assert_int_equal(fg_policy_activate(&pinned.maps, next), 0);
		if (next != active)
			assert_true(fg_policy_reclaim_access(&pinned.maps, active, NULL) >= 0);
		active = next;
		switches = i;
		if (in_place && global_stats(skel).denied)
			break;
	}
	stop = true;
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&barrier);
	assert_true(t[0].runs > 0 && t[1].runs > 0);
	{
		__u64 denied = global_stats(skel).denied;

		printf("%s: %d switches, %llu packets dropped by the lists\n",
		       in_place ? "in place" : "whole", switches, (unsigned long long)denied);
		release_skel(skel);
		for (l = 0; l < 2; l++)
			for (s = 0; s < 2; s++)
				fg_compiled_free(list[l][s]);
		fg_feeds_free(&feeds);
		free(a);
		free(b);
		return denied;
	}
}

FG_PROG_TEST(test_lists_switch_whole_under_flood)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skip: the two-CPU tests need two online CPUs\n");
		skip();
	}
	assert_int_equal(switch_under_flood(false, 10), 0);
	/* The same switches written over the list in force drop it: the
	 * test can see a half-written list. Only a rewrite into A (every
	 * second switch) can show it, and a given one may not: a fixed 10
	 * switches missed it in 3 of 30 runs (2026-12-06), so the switches go
	 * on until it shows (2 to 10 in 15 runs); 500 bound the wait. */
	assert_true(switch_under_flood(true, 500) > 0);
}
