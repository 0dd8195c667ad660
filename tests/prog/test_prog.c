// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF_PROG_TEST_RUN tests of the real XDP and tc programs: crafted packets,
 * an injected clock, exact admitted counts and counters, and a two-CPU
 * concurrency test of the compare-and-swap update.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

#include "config/config.h"
#include "floodgate.skel.h"
#include "packets.h"
#include "maps/pinned.h"
#include "policy/policy.h"
#include "maps/skeleton.h"
#include "ops/upgrade.h"

#define MS  1000000ULL
#define SEC 1000000000ULL
#define T0  (1000 * SEC) /* an arbitrary, non-zero start for the test clock */

static const char test_config[] = "malformed = drop\n"
				  "[policy ssh]\n"
				  "match = tcp dport 22\n"
				  "rate = 10/s\n"
				  "burst = 5\n"
				  "[policy dns]\n"
				  "match = udp dport 53\n"
				  "rate = 1/s\n"
				  "burst = 2\n"
				  "action = monitor\n"
				  "[policy partners]\n"
				  "match = udp dport 1000-2000\n"
				  "src = 192.0.2.0/24, 2001:db8:1::/48\n"
				  "rate = 100/s\n"
				  "burst = 3\n"
				  "[policy ping]\n"
				  "match = icmp\n"
				  "per = global\n"
				  "rate = 1/s\n"
				  "burst = 4\n"
				  "[policy default]\n"
				  "match = any\n"
				  "per = src/24 src/64\n"
				  "rate = 100/s\n"
				  "burst = 10\n";

enum { P_SSH, P_DNS, P_PARTNERS, P_PING, P_DEFAULT };

struct fixture {
	struct floodgate_bpf *skel;
};

/* Private maps (nothing is pinned, nothing outlives the test), fg_xdp only
 * (fg_tc's own tests load both: each verification costs seconds under
 * emulation, where `make test-kernels` runs this suite), prepared the way
 * the loader prepares them. */
static struct floodgate_bpf *load_skel_with(const char *config, bool test_clock, bool naive)
{
	const struct fg_skel_opts opts = {
		.progs = FG_SKEL_XDP, .test_clock = test_clock, .naive_update = naive};
	struct floodgate_bpf *skel;

	return fg_skel_prepare_text(config, &opts, &skel) ? NULL : skel;
}

/* Replaces the active policy of a loaded skeleton, in slot 0. */
static int push_config(struct floodgate_bpf *skel, const char *text)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_pinned maps;
	int err = cfg ? fg_config_parse_string("test", text, cfg, stderr) : -ENOMEM;

	if (!err)
		err = fg_pinned_from_object(skel->obj, &maps);
	if (!err)
		err = fg_skel_push(&maps.maps, cfg, NULL, 0);
	free(cfg);
	return err;
}

static int setup_progs(void **state, int progs)
{
	const struct fg_skel_opts opts = {.progs = progs, .test_clock = true};
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || fg_skel_prepare_text(test_config, &opts, &f->skel)) {
		fprintf(stderr, "cannot load floodgate: %s\n", strerror(errno));
		return -1;
	}
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_progs(state, FG_SKEL_XDP);
}

static int setup_both_programs(void **state)
{
	return setup_progs(state, FG_SKEL_EVERY_PROG);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	floodgate_bpf__destroy(f->skel);
	free(f);
	return 0;
}

static int run_prog(int prog_fd, const struct pkt_spec *spec, size_t truncate_to)
{
	uint8_t buf[1600];
	size_t len = build_packet(buf, spec);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = truncate_to ? truncate_to : len, .repeat = 1);
	int err = bpf_prog_test_run_opts(prog_fd, &opts);

	assert_int_equal(err, 0);
	return opts.retval;
}

/* Runs one packet through XDP at `now` and returns the XDP verdict. */
static int xdp_at(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec)
{
	int verdict;

	skel->bss->fg_test_now_ns = now;
	verdict = run_prog(bpf_program__fd(skel->progs.fg_xdp), spec, 0);
	assert_true(verdict == XDP_PASS || verdict == XDP_DROP); /* never XDP_ABORTED */
	return verdict;
}

/* Sends n packets at `now`; returns how many XDP passed. */
static int xdp_passed(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec, int n)
{
	int i, passed = 0;

	for (i = 0; i < n; i++)
		passed += xdp_at(skel, now, spec) == XDP_PASS;
	return passed;
}

static void sum_percpu(int fd, __u32 index, void *sum, size_t size)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	size_t words = size / 8, i;
	__u64 *values = calloc(ncpus, size), *out = sum;

	assert_non_null(values);
	assert_int_equal(bpf_map_lookup_elem(fd, &index, values), 0);
	memset(sum, 0, size);
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < words; i++)
			out[i] += values[cpu * words + i];
	free(values);
}

static struct fg_policy_stats policy_stats(struct floodgate_bpf *skel, __u32 index)
{
	struct fg_policy_stats s;

	sum_percpu(bpf_map__fd(skel->maps.policy_stats), index, &s, sizeof(s));
	return s;
}

static struct fg_global_stats global_stats(struct floodgate_bpf *skel)
{
	struct fg_global_stats s;

	sum_percpu(bpf_map__fd(skel->maps.global_stats), 0, &s, sizeof(s));
	return s;
}

static void test_ipv4_burst_then_rate(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec b = a;
	struct fg_policy_stats s;

	b.src = "10.0.9.2";
	/* burst 5, then nothing at the same instant */
	assert_int_equal(xdp_passed(skel, T0, &a, 8), 5);
	/* 10/s: one token per 100ms, exactly at the boundary */
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS - 1, &a, 1), 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &a, 3), 1);
	/* idle time refills to the burst, never beyond */
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &a, 20), 5);
	/* another /32 has its own bucket */
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &b, 8), 5);
	/* every ssh packet that passed was charged to the default layer too;
	 * the refused ones were not */
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 5 + 1 + 5 + 5);

	s = policy_stats(skel, P_SSH);
	assert_int_equal(s.matched_packets, 8 + 1 + 3 + 20 + 8);
	assert_int_equal(s.passed_packets, 5 + 0 + 1 + 5 + 5);
	assert_int_equal(s.dropped_packets, 3 + 1 + 2 + 15 + 3);
	assert_int_equal(s.would_drop_packets, 0);
	assert_int_equal(global_stats(skel).parsed, 40);
}

static void test_ipv6_and_prefix_keys(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec a = {
		.family = 6, .src = "2001:db8:5:6::1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec same64 = a, other64 = a;
	struct pkt_spec v4a = {.family = 4, .src = "10.1.2.3", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec v4b = v4a;

	same64.src = "2001:db8:5:6:ffff::9";
	other64.src = "2001:db8:5:7::1";
	v4b.src = "10.1.2.200";
	/* default policy keys IPv6 by /64: the two /64 siblings share burst 10 */
	assert_int_equal(xdp_passed(skel, T0, &a, 6), 6);
	assert_int_equal(xdp_passed(skel, T0, &same64, 6), 4);
	assert_int_equal(xdp_passed(skel, T0, &other64, 12), 10);
	/* and IPv4 by /24 */
	assert_int_equal(xdp_passed(skel, T0, &v4a, 7), 7);
	assert_int_equal(xdp_passed(skel, T0, &v4b, 7), 3);
	assert_int_equal(policy_stats(skel, P_DEFAULT).passed_packets, 30);
}

static void test_vlan_tags(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec plain = {.family = 4, .src = "10.9.9.9", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec one = plain, two = plain, two6 = plain;

	one.vlans = 1;
	two.vlans = 2;
	two6.family = 6;
	two6.src = "2001:db8::99";
	two6.vlans = 2;
	/* the same source behind 0, 1 or 2 tags is one key */
	assert_int_equal(xdp_passed(skel, T0, &plain, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &one, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &two, 4), 1);
	assert_int_equal(xdp_passed(skel, T0, &two6, 6), 5);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 14);
	assert_int_equal(global_stats(skel).malformed, 0);
}

static void test_truncated_and_malformed(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec tcp4 = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec tcp6 = {
		.family = 6, .src = "2001:db8::1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec vlan2 = tcp4, bad_ihl = tcp4;
	/* cut inside each header: IPv4, TCP; IPv6, TCP; VLAN tags. (The kernel
	 * refuses test frames shorter than Ethernet.) */
	const struct {
		const struct pkt_spec *spec;
		size_t len;
	} cases[] = {
		{&tcp4, 14 + 19},     {&tcp4, 14 + 20 + 19}, {&tcp6, 14 + 39},
		{&tcp6, 14 + 40 + 7}, {&vlan2, 14 + 2},	     {&vlan2, 14 + 4 + 3},
	};
	size_t i;

	vlan2.vlans = 2;
	bad_ihl.ihl = 4;
	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(run_prog(xdp, cases[i].spec, cases[i].len), XDP_DROP);
	assert_int_equal(run_prog(xdp, &bad_ihl, 0), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 7);
	assert_int_equal(global_stats(skel).parsed, 0);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);

	/* With malformed = pass the same packets pass, still counted. */
	assert_int_equal(push_config(skel, "malformed = pass\n[policy a]\nmatch = any\n"
					   "rate = 1/s\n"),
			 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(run_prog(xdp, cases[i].spec, cases[i].len), XDP_PASS);
	assert_int_equal(global_stats(skel).malformed, 7 + 6);
}

/* Every cut of several packet shapes, one byte at a time: a cut inside any
 * header is malformed (dropped here), a cut in the payload is not, and no cut
 * ever gets XDP_ABORTED. */
static void test_truncation_at_every_byte(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	const struct {
		struct pkt_spec spec;
		size_t headers; /* bytes up to the end of the L4 header */
	} shapes[] = {
		{{.family = 4, .src = "192.0.2.50", .proto = IPPROTO_TCP, .dport = 22, .pad = 8},
		 14 + 20 + 20},
		{{.family = 4,
		  .src = "192.0.2.51",
		  .proto = IPPROTO_UDP,
		  .dport = 53,
		  .vlans = 2,
		  .ihl = 7,
		  .pad = 8},
		 14 + 8 + 28 + 8},
		{{.family = 6,
		  .src = "2001:db8:9::1",
		  .proto = IPPROTO_TCP,
		  .dport = 22,
		  .n_ext = 3,
		  .ext = {0, 43, 60},
		  .pad = 8},
		 14 + 40 + 24 + 20},
	};
	struct fg_global_stats before, after;
	uint8_t buf[1600];
	size_t i, cut, len;
	int verdict;

	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		len = build_packet(buf, &shapes[i].spec);
		assert_int_equal(len, shapes[i].headers + 8);
		for (cut = 14; cut < len; cut++) {
			before = global_stats(skel);
			verdict = run_prog(xdp, &shapes[i].spec, cut);
			after = global_stats(skel);
			assert_true(verdict == XDP_PASS || verdict == XDP_DROP);
			if (cut < shapes[i].headers) {
				assert_int_equal(verdict, XDP_DROP);
				assert_int_equal(after.malformed, before.malformed + 1);
			} else {
				assert_int_equal(after.malformed, before.malformed);
			}
		}
	}
}

static void test_non_ip_passes(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = arp, .data_size_in = sizeof(arp));
	int i;

	for (i = 0; i < 50; i++) {
		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_xdp), &opts),
				 0);
		assert_int_equal(opts.retval, XDP_PASS);
	}
	assert_int_equal(global_stats(skel).non_ip, 50);
	assert_int_equal(global_stats(skel).packets, 50);
}

static void test_port_match_and_fallthrough(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec telnet = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 23};
	struct pkt_spec partner = {
		.family = 4, .src = "192.0.2.7", .proto = IPPROTO_UDP, .dport = 1500};
	struct pkt_spec stranger = partner, partner6 = partner, edge = partner;

	stranger.src = "198.51.100.1";
	partner6.family = 6;
	partner6.src = "2001:db8:1:ff::5";
	edge.dport = 2001;
	/* port 23 is not ssh's: it falls through to the default policy */
	assert_int_equal(xdp_passed(skel, T0, &telnet, 12), 10);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 12);
	/* the source restriction: inside -> partners (burst 3), outside -> default */
	assert_int_equal(xdp_passed(skel, T0, &partner, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &partner6, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &stranger, 5), 5);
	assert_int_equal(policy_stats(skel, P_PARTNERS).matched_packets, 10);
	/* one past the range end */
	assert_int_equal(xdp_passed(skel, T0, &edge, 1), 1);
	assert_int_equal(policy_stats(skel, P_PARTNERS).matched_packets, 10);
}

static void test_monitor_passes_and_counts(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec dns = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 53, .pad = 20};
	struct fg_policy_stats s;

	/* 12 packets: the monitor layer (burst 2) refuses 10 but passes them
	 * on, and the walk goes on to the default layer (burst 10), which drops
	 * 2. A monitor that ended the walk with PASS would pass all 12; one
	 * that dropped would pass 2. */
	assert_int_equal(xdp_passed(skel, T0, &dns, 12), 10);
	s = policy_stats(skel, P_DNS);
	assert_int_equal(s.matched_packets, 12);
	assert_int_equal(s.passed_packets, 12);
	assert_int_equal(s.would_drop_packets, 10);
	assert_int_equal(s.dropped_packets, 0);
	assert_int_equal(s.would_drop_bytes, 10 * (14 + 20 + 8 + 20));
	s = policy_stats(skel, P_DEFAULT);
	assert_int_equal(s.matched_packets, 12);
	assert_int_equal(s.dropped_packets, 2);
	assert_int_equal(s.would_drop_packets, 0);
}

static void test_global_key_and_fragments(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec ping = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_ICMP};
	struct pkt_spec ping2 = ping;
	struct pkt_spec frag = {
		.family = 4, .src = "10.7.7.7", .proto = IPPROTO_TCP, .dport = 22, .frag_off = 100};
	/* a first fragment (more-fragments set, offset 0) carries the ports */
	struct pkt_spec first = {.family = 4,
				 .src = "10.8.8.8",
				 .proto = IPPROTO_TCP,
				 .dport = 22,
				 .frag_off = 0x2000};

	ping2.src = "172.16.0.1";
	/* per = global: every source draws on one bucket of 4 */
	assert_int_equal(xdp_passed(skel, T0, &ping, 3), 3);
	assert_int_equal(xdp_passed(skel, T0, &ping2, 3), 1);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &ping2, 3), 1);
	/* a later fragment has no ports: not ssh's, the default's (burst 10) */
	assert_int_equal(xdp_passed(skel, T0, &frag, 12), 10);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);
	/* the 5 pings that passed the ping layer met the default layer too */
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 5 + 12);
	assert_int_equal(xdp_passed(skel, T0, &first, 8), 5);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 8);
}

static void test_tc_program(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
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

static void test_live_reload_keeps_state(void **state)
{
	struct floodgate_bpf *skel = ((struct fixture *)*state)->skel;
	struct pkt_spec a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct fg_pinned pinned;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = malloc(sizeof(*compiled));

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
	free(compiled);
}

/* The set `text` compiles to, for fg_pinned_reclaim_state(). */
static void compile_set(const char *text, struct fg_policy_set *set)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = malloc(sizeof(*compiled));

	assert_int_equal(fg_config_parse_string("test", text, cfg, stderr), 0);
	assert_int_equal(fg_policy_compile(cfg, 1, compiled), 0);
	*set = compiled->set;
	free(cfg);
	free(compiled);
}

/* What a reload keeps and reclaims: the state of a policy that keeps its
 * name, algorithm and (for sliding_log) COUNT stays; a removed policy's, or
 * a sliding_log policy's whose COUNT changed, is deleted from its table. */
static void test_reload_reclaims_state(void **state)
{
	static const char loaded[] = "[policy log]\nmatch = udp dport 9\nalgorithm = sliding_log\n"
				     "rate = 3/s\n[policy tb]\nmatch = udp dport 10\nrate = 3/s\n"
				     "burst = 3\n";
	struct pkt_spec udp = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec other = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 10};
	struct fg_policy_set *old = malloc(sizeof(*old)), *next = malloc(sizeof(*next));
	struct floodgate_bpf *skel = load_skel_with(loaded, true, false);
	struct fg_pinned pinned;

	(void)state;
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
	floodgate_bpf__destroy(skel);
	free(old);
	free(next);
}

/* Every map the BPF object pins has a row in the pinned-map table with its
 * type and sizes, and every row is a map the object pins: a map added on
 * the BPF side without a row would be missed by open, close, status and
 * the reload fit check. */
static void test_pinned_table_covers_every_map(void **state)
{
	struct floodgate_bpf *skel = floodgate_bpf__open();
	const struct fg_pinned_map *row;
	struct bpf_map *map;
	size_t pinned = 0, i;

	(void)state;
	assert_non_null(skel);
	bpf_object__for_each_map (map, skel->obj) {
		if (!bpf_map__pin_path(map))
			continue;
		pinned++;
		row = fg_pinned_find(bpf_map__name(map));
		if (!row)
			fail_msg("the pinned map %s has no row in fg_pinned_maps[]",
				 bpf_map__name(map));
		assert_int_equal(row->type, bpf_map__type(map));
		assert_int_equal(row->key_size, bpf_map__key_size(map));
		assert_int_equal(row->value_size, bpf_map__value_size(map));
	}
	for (i = 0; i < fg_pinned_map_count; i++) {
		map = bpf_object__find_map_by_name(skel->obj, fg_pinned_maps[i].name);
		if (!map || !bpf_map__pin_path(map))
			fail_msg("fg_pinned_maps[] names %s, which the object does not pin",
				 fg_pinned_maps[i].name);
	}
	assert_int_equal(pinned, fg_pinned_map_count);
	floodgate_bpf__destroy(skel);
}

/* The verifier's own count, from a stats-level log (BPF_LOG_STATS). The
 * policies are data, written after the load, so the count is the same for
 * 1 and for 64 of them: the walk is bounded at FG_MAX_POLICIES layers. */
static void test_verifier_instruction_counts(void **state)
{
	static char log[64 * 1024];
	const struct fg_skel_opts opts = {.progs = FG_SKEL_EVERY_PROG};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel = floodgate_bpf__open();
	struct bpf_program *prog;
	long processed;
	char *at;

	(void)state;
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
		 * mix and the refusal cache, 99k and 164k) */
		assert_true(processed > 0 && processed < 250000);
		floodgate_bpf__destroy(one);
	}
	floodgate_bpf__destroy(skel);
	free(cfg);
}

/* --- each algorithm's signature, with an injected clock ------------------- */

/* A skeleton with the test clock and one config; the test destroys it. */
static struct floodgate_bpf *load_with(const char *config)
{
	struct floodgate_bpf *skel = load_skel_with(config, true, false);

	assert_non_null(skel);
	return skel;
}

static const struct pkt_spec udp_a = {
	.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9};

static void test_fixed_window_admits_seam_burst(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy w]\nmatch = any\nalgorithm = fixed_window\nrate = 10/s\n");

	(void)state;
	/* the last ms of window 1000 and the first of window 1001: 2 x COUNT
	 * within 1 ms, the documented behaviour */
	assert_int_equal(xdp_passed(skel, T0 + 999 * MS, &udp_a, 20), 10);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 20), 10);
	assert_int_equal(xdp_passed(skel, T0 + SEC + 999 * MS, &udp_a, 5), 0);
	floodgate_bpf__destroy(skel);
}

static void test_sliding_window_refuses_seam_burst(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy w]\nmatch = any\nalgorithm = sliding_window\nrate = 10/s\n");

	(void)state;
	assert_int_equal(xdp_passed(skel, T0 + 999 * MS, &udp_a, 20), 10);
	/* at the seam the previous window still weighs 10 x (1 - 0): nothing */
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 20), 0);
	/* halfway, it weighs 5: five more */
	assert_int_equal(xdp_passed(skel, T0 + SEC + 500 * MS, &udp_a, 20), 5);
	floodgate_bpf__destroy(skel);
}

static void test_sliding_log_is_exact(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy l]\nmatch = any\nalgorithm = sliding_log\nrate = 5/s\n");
	int i;

	(void)state;
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
	floodgate_bpf__destroy(skel);
}

static void test_leaky_bucket_constant_spacing(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy m]\nmatch = any\nalgorithm = leaky_bucket\nrate = 10/s\n");
	__u64 t, last = 0;
	int admitted = 0;

	(void)state;
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
	floodgate_bpf__destroy(skel);
}

/* Byte mode: 1000-byte frames against 3000 B buckets. */
static void test_byte_limits(void **state)
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

	(void)state;
	kb.pad = 1000 - (14 + 20 + 8);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floodgate_bpf *skel = load_with(cases[i].config);

		assert_int_equal(xdp_passed(skel, T0, &kb, 10), cases[i].at_once);
		assert_int_equal(xdp_passed(skel, T0 + SEC, &kb, 10), cases[i].after_1s);
		assert_int_equal(policy_stats(skel, 0).passed_bytes,
				 1000ULL * (cases[i].at_once + cases[i].after_1s));
		floodgate_bpf__destroy(skel);
	}
}

/* Layers: per address, per /24, global. Each binds in turn, and a packet a
 * layer refuses is not charged to the layers after it. */
static void test_layers_bind_in_turn(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy ip]\nmatch = any\nrate = 1/s\nburst = 4\n"
					       "[policy net]\nmatch = any\nper = src/24\n"
					       "rate = 1/s\nburst = 6\n"
					       "[policy all]\nmatch = any\nper = global\n"
					       "rate = 1/s\nburst = 8\n");
	struct pkt_spec a = udp_a, b = udp_a, c = udp_a, far = udp_a;

	(void)state;
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
	floodgate_bpf__destroy(skel);
}

/* --- matching clauses, keys, extension headers, lists and bans ------------ */

static void test_sport_syn_and_port_keys(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy syn22]\nmatch = tcp dport 22 syn\n"
					       "rate = 1/s\nburst = 2\n"
					       "[policy from53]\nmatch = udp sport 53\n"
					       "rate = 1/s\nburst = 3\n"
					       "[policy perport]\nmatch = udp dport 1000-1001\n"
					       "per = src/32+dport\nrate = 1/s\nburst = 2\n");
	struct pkt_spec syn = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec synack = syn, dns = udp_a, other = udp_a, p1000 = udp_a, p1001 = udp_a;

	(void)state;
	synack.ack = 1;
	dns.sport = 53;
	other.sport = 54;
	p1000.dport = 1000;
	p1001.dport = 1001;
	assert_int_equal(xdp_passed(skel, T0, &syn, 5), 2);
	assert_int_equal(xdp_passed(skel, T0, &synack, 5), 5); /* not a bare SYN */
	assert_int_equal(xdp_passed(skel, T0, &dns, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &other, 5), 5);
	/* one bucket per source and destination port */
	assert_int_equal(xdp_passed(skel, T0, &p1000, 5), 2);
	assert_int_equal(xdp_passed(skel, T0, &p1001, 5), 2);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 5);
	assert_int_equal(global_stats(skel).unmatched, 5 + 5);
	floodgate_bpf__destroy(skel);
}

static void put_ban(struct floodgate_bpf *skel, int family, const char *addr, int len,
		    __u64 expires_ns);

static void test_ipv6_extension_headers(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy port9]\nmatch = udp dport 9\n"
			  "rate = 1/s\nburst = 1\n"
			  "[policy all]\nmatch = any\nrate = 1/s\nburst = 1000\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec two = {.family = 6,
			       .src = "2001:db8::7",
			       .proto = IPPROTO_UDP,
			       .dport = 9,
			       .n_ext = 2,
			       .ext = {0, 60}};
	struct pkt_spec four = two, later = two, six = two, seven = two;
	size_t cut[] = {14 + 40 + 1, 14 + 40 + 8 + 1, 14 + 40 + 16 + 7};
	size_t i;

	(void)state;
	four.src = "2001:db8:0:8::8"; /* another /64, another bucket */
	four.n_ext = 4;
	memcpy(four.ext, (uint8_t[]){0, 43, 60, 44}, 4);
	later.src = "2001:db8::9";
	later.n_ext = 1;
	later.ext[0] = 44;
	later.ext_frag = 100 << 3;
	six.src = "2001:db8:0:6::6";
	six.n_ext = 6;
	memcpy(six.ext, (uint8_t[]){0, 60, 43, 60, 60, 60}, 6);
	seven.n_ext = 7;
	memcpy(seven.ext, (uint8_t[]){0, 60, 60, 60, 60, 60, 60}, 7);
	skel->bss->fg_test_now_ns = T0;
	/* the walk finds the UDP port behind the chain */
	assert_int_equal(xdp_passed(skel, T0, &two, 3), 1);
	assert_int_equal(xdp_passed(skel, T0, &four, 3), 1); /* a first fragment */
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6);
	/* a later fragment has no ports: only the portless policy sees it */
	assert_int_equal(xdp_passed(skel, T0, &later, 3), 3);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6);
	assert_int_equal(policy_stats(skel, 1).matched_packets, 2 + 3);
	/* exactly 6 headers, the walk's bound, still reach the port: a bound
	 * off by one (5) would call them malformed and pass none */
	assert_int_equal(xdp_passed(skel, T0, &six, 3), 1);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6 + 3);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 0);
	/* a chain longer than the walk's bound (6) is malformed (drop here) */
	assert_int_equal(xdp_passed(skel, T0, &seven, 2), 0);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 2);
	/* ... but one from a banned source is counted as banned, not twice */
	put_ban(skel, 6, "2001:db8:bad::", 48, ~0ULL);
	seven.src = "2001:db8:bad::1";
	assert_int_equal(xdp_passed(skel, T0, &seven, 3), 0);
	assert_int_equal(global_stats(skel).banned, 3);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 2);
	seven.src = "2001:db8::7";
	/* truncated inside each extension header and inside UDP */
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		assert_int_equal(run_prog(xdp, &two, cut[i]), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 2 + 3);
	floodgate_bpf__destroy(skel);
}

/* Runs a raw frame through a program and returns its verdict. */
static int run_raw(int prog_fd, const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
	return opts.retval;
}

/* IP headers whose version disagrees with the ethertype, or whose total
 * length is below their own header length, are malformed (dropped under
 * malformed = drop, and counted). A parser that trusted the ethertype alone
 * or read ports past a too-short total length would pass them. Each bad
 * frame is a one-field edit of a good one, which passes (the control). */
static void test_bad_ip_headers_are_malformed(void **state)
{
	struct floodgate_bpf *skel = load_with(
		"malformed = drop\n[policy all]\nmatch = any\nrate = 1/s\nburst = 1000\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	const struct pkt_spec v4 = udp_a;
	const struct pkt_spec v6 = {
		.family = 6, .src = "2001:db8::7", .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600];
	size_t len;
	int version;

	(void)state;
	skel->bss->fg_test_now_ns = T0;
	len = build_packet(buf, &v4);
	assert_int_equal(run_raw(xdp, buf, len), XDP_PASS);
	len = build_packet(buf, &v6);
	assert_int_equal(run_raw(xdp, buf, len), XDP_PASS);
	assert_int_equal(global_stats(skel).malformed, 0);
	/* versions 0, 5, 6, 15 behind an IPv4 ethertype */
	for (version = 0; version < 16; version += 5) {
		len = build_packet(buf, &v4);
		buf[14] = (uint8_t)(version == 4 ? 6 << 4 : version << 4) | 5;
		assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	}
	/* version 4 behind an IPv6 ethertype */
	len = build_packet(buf, &v6);
	buf[14] = 4 << 4;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	/* total length 19, below IHL's 20 bytes (and 0) */
	len = build_packet(buf, &v4);
	buf[14 + 2] = 0;
	buf[14 + 3] = 19;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	buf[14 + 3] = 0;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 4 + 1 + 2);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 2);
	floodgate_bpf__destroy(skel);
}

static void test_ipv4_options(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy ssh]\nmatch = tcp dport 22 syn\nrate = 1/s\nburst = 2\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec opts = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22, .ihl = 15};

	(void)state;
	/* 40 bytes of options, and the port is still found */
	assert_int_equal(xdp_passed(skel, T0, &opts, 4), 2);
	/* options cut short, and the TCP header cut short after them */
	assert_int_equal(run_prog(xdp, &opts, 14 + 30), XDP_DROP);
	assert_int_equal(run_prog(xdp, &opts, 14 + 60 + 10), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 2);
	floodgate_bpf__destroy(skel);
}

static void test_allow_and_deny_lists(void **state)
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

	(void)state;
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
	floodgate_bpf__destroy(skel);
}

static struct fg_ban ban_of(struct floodgate_bpf *skel, int family, const char *addr, int len)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban = {};

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	return ban;
}

static void test_bans_escalate(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
					       "rate = 1/s\nburst = 2\naction = ban 10s\n"
					       "ban_factor = 3\nban_max = 60s\n");
	struct pkt_spec a = udp_a, neighbour = udp_a, stranger = udp_a;
	struct pkt_spec a6 = {
		.family = 6, .src = "2001:db8:1:2::1", .proto = IPPROTO_UDP, .dport = 9};
	struct fg_ban ban;
	__u64 t;

	(void)state;
	neighbour.src = "10.0.0.99";
	stranger.src = "10.0.1.1";
	/* two pass, the third is refused and bans the /24 for 10 s */
	assert_int_equal(xdp_passed(skel, T0, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 1);
	assert_int_equal(ban.expires_ns, T0 + 10 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &neighbour, 5), 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &stranger, 1), 1);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC - 1, &a, 1), 0);
	/* expired: the bucket has refilled; a repeat offence bans for 30 s */
	t = T0 + 10 * SEC;
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 2);
	assert_int_equal(ban.duration_ns, 30 * SEC);
	assert_int_equal(ban.expires_ns, t + 30 * SEC);
	/* and the third for 90 s, capped at ban_max = 60 s */
	t += 30 * SEC;
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 3);
	assert_int_equal(ban.duration_ns, 60 * SEC);
	/* IPv6: the /64 is banned */
	assert_int_equal(xdp_passed(skel, t, &a6, 3), 2);
	ban = ban_of(skel, 6, "2001:db8:1:2::", 64);
	assert_int_equal(ban.expires_ns, t + 10 * SEC);
	a6.src = "2001:db8:1:2::ffff";
	assert_int_equal(xdp_passed(skel, t + SEC, &a6, 3), 0);
	assert_int_equal(global_stats(skel).bans_added, 4);
	assert_int_equal(global_stats(skel).banned, 5 + 1 + 3);
	floodgate_bpf__destroy(skel);
}

/* The clock is read at most once a packet, and only when something needs
 * it: a policy matched, or the source met a ban entry. A packet that meets
 * neither (bulk TCP data under the built-in policy) skips the costliest
 * step. Counted through the injected clock's read counter. */
static void test_clock_read_only_when_needed(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy a]\nmatch = udp\nrate = 1/s\nburst = 2\n"
			  "action = ban 10s\n"
			  "[policy b]\nmatch = udp\nper = src/24\nrate = 1000/s\n"
			  "[policy c]\nmatch = udp\nper = global\nrate = 1000/s\n");
	struct pkt_spec tcp_a = udp_a, tcp_stranger = udp_a;
	__u64 reads;

	(void)state;
	tcp_a.proto = IPPROTO_TCP;
	tcp_stranger.proto = IPPROTO_TCP;
	tcp_stranger.src = "10.0.1.1";
	reads = skel->bss->fg_test_clock_reads;
	assert_int_equal(xdp_at(skel, T0, &tcp_a), XDP_PASS);
	assert_int_equal(skel->bss->fg_test_clock_reads, reads); /* no policy, no ban */
	assert_int_equal(xdp_at(skel, T0, &udp_a), XDP_PASS);
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 1); /* three layers, one read */
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 1);	     /* the refusal bans it */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 3);
	assert_int_equal(global_stats(skel).bans_added, 1);
	assert_int_equal(xdp_at(skel, T0, &tcp_a), XDP_DROP); /* met its ban entry */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 4);
	assert_int_equal(xdp_at(skel, T0, &tcp_stranger), XDP_PASS); /* no entry of its own */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 4);
	assert_int_equal(global_stats(skel).unmatched, 2);
	floodgate_bpf__destroy(skel);
}

/* ban_max defaults to the first ban's length: with ban_factor = 3 and no
 * ban_max, a repeat offence is banned for 10 s again, not 30 s. Catches a
 * default of "no cap" (or of the 30-day maximum). */
static void test_ban_max_defaults_to_first_ban(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
					       "rate = 1/s\nburst = 2\naction = ban 10s\n"
					       "ban_factor = 3\n");
	struct pkt_spec a = udp_a;
	struct fg_ban ban;
	__u64 t = T0 + 10 * SEC;

	(void)state;
	assert_int_equal(xdp_passed(skel, T0, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.expires_ns, T0 + 10 * SEC);
	/* expired, refilled, refused again: strike 2, still 10 s */
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 2);
	assert_int_equal(ban.duration_ns, 10 * SEC);
	assert_int_equal(ban.expires_ns, t + 10 * SEC);
	floodgate_bpf__destroy(skel);
}

/* 64 layers, the most a config may hold: a packet walks all of them, and
 * the last one's refusal still drops it. */
static void test_sixty_four_layers(void **state)
{
	char config[64 * 80], *at = config;
	struct floodgate_bpf *skel;
	int i;

	(void)state;
	for (i = 0; i < 64; i++)
		at += sprintf(at, "[policy p%d]\nmatch = any\nrate = 1/s\nburst = %d\n", i,
			      i == 63 ? 2 : 1000);
	skel = load_with(config);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 5), 2);
	for (i = 0; i < 64; i++)
		assert_int_equal(policy_stats(skel, i).matched_packets, 5);
	assert_int_equal(policy_stats(skel, 63).dropped_packets, 3);
	floodgate_bpf__destroy(skel);
}

/* The new-source budget: past it, unknown sources share the policy's
 * overflow bucket, and known sources keep their own. */
static void test_new_source_budget(void **state)
{
	struct pkt_spec known = udp_a, spoofed = udp_a;
	int ncpus = fg_online_cpus(), i, passed = 0;
	struct floodgate_bpf *skel;
	char addr[32], config[256];
	cpu_set_t one, all;
	/* Sources seen once may spend the upper half of this CPU's burst. */
	const int own = 4 / 2;

	(void)state;
	/* The budget is per online CPU: each gets rate/ncpus and burst/ncpus.
	 * Scale both by ncpus so that this CPU's share is 1000/s with a burst
	 * of 4 whatever the machine's CPU count (no skip past 4 CPUs). */
	snprintf(config, sizeof(config),
		 "new_sources = %d/s\nnew_sources_burst = %d\n"
		 "[policy p]\nmatch = any\nrate = 1/s\nburst = 3\n",
		 1000 * ncpus, 4 * ncpus);
	skel = load_with(config);
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	spoofed.src = addr;
	for (i = 0; i < 10; i++) {
		snprintf(addr, sizeof(addr), "10.7.0.%d", i + 1);
		passed += xdp_passed(skel, T0, &spoofed, 1);
	}
	/* `own` sources got their own state; the rest met the shared bucket
	 * of 3 (created once, unbudgeted) */
	assert_int_equal(global_stats(skel).sources_created, own + 1);
	assert_int_equal(global_stats(skel).budget_overflow, 10 - own);
	assert_int_equal(passed, own + 3);
	/* a source with state keeps its own bucket during the flood */
	known.src = "10.7.0.1";
	assert_int_equal(xdp_passed(skel, T0, &known, 5), 2);
	/* the budget refills, one new source per ms on this CPU */
	snprintf(addr, sizeof(addr), "10.7.1.1");
	assert_int_equal(xdp_passed(skel, T0 + MS, &spoofed, 5), 3);
	assert_int_equal(global_stats(skel).sources_created, own + 1 + 1);
	sched_setaffinity(0, sizeof(all), &all);
	floodgate_bpf__destroy(skel);
}

/* A spoofed flood simulated packet by packet: a prebuilt UDP frame whose
 * IPv4 source is rewritten in place, run through XDP at the injected time. */
struct spoofer {
	uint8_t frame[1600]; /* build_packet fills 1600 bytes */
	size_t len;
	uint32_t rng; /* xorshift32: deterministic spoofed sources */
	int prog_fd;
};

static void spoof_once(struct floodgate_bpf *skel, struct spoofer *sp, __u64 now)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = sp->frame, .data_size_in = sp->len,
		    .repeat = 1);
	uint32_t saddr;

	sp->rng ^= sp->rng << 13;
	sp->rng ^= sp->rng >> 17;
	sp->rng ^= sp->rng << 5;
	saddr = htonl(0x0a000000 | (sp->rng & 0xffffff)); /* 10.0.0.0/8 */
	memcpy(sp->frame + ETH_HLEN + offsetof(struct iphdr, saddr), &saddr, 4);
	skel->bss->fg_test_now_ns = now;
	assert_int_equal(bpf_prog_test_run_opts(sp->prog_fd, &opts), 0);
}

/* Sources that first appear during a spoofed flood of 10 Mpps on one CPU
 * (10 spoofed frames every simulated microsecond, each from a random source
 * in 10.0.0.0/8). After 5 ms of flood, a light source sends 5 packets
 * 1 us apart every 10 ms, and a heavy one sends every 50 us, for 50 ms.
 * The light one may lose only its very first packet; the heavy one is held
 * within 2% of burst + rate x elapsed. Without the seen-twice reserve both
 * would wait for a budget token that each packet wins with a chance of
 * about 1 in 400 (the budget's 25,000/s a CPU over 10 Mpps). */
#define FLOOD_PER_US	 10
#define FLOOD_WARMUP_US	 5000
#define FLOOD_NEW_US	 50000
#define LIGHT_ROUND_US	 10000
#define LIGHT_PER_ROUND	 5
#define HEAVY_EVERY_US	 50
#define NEW_SOURCE_RATE	 2000
#define NEW_SOURCE_BURST 20
static void test_new_sources_during_spoofed_flood(void **state)
{
	struct floodgate_bpf *skel = load_with("max_sources = 65536\nnew_sources = 50000/s\n"
					       "[policy p]\nmatch = udp\nrate = 2000/s\n"
					       "burst = 20\n");
	struct pkt_spec light = udp_a, heavy = udp_a;
	struct spoofer sp = {.rng = 2463534242u, .prog_fd = bpf_program__fd(skel->progs.fg_xdp)};
	int light_sent = 0, light_passed = 0, heavy_passed = 0, i;
	__u64 us, now, heavy_first = 0, heavy_last = 0;
	struct fg_global_stats g;
	double expected, elapsed_s, budget_bound;
	cpu_set_t one, all;

	(void)state;
	light.src = "192.0.2.1";
	heavy.src = "192.0.2.2";
	sp.len = build_packet(sp.frame, &udp_a);
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (us = 0; us < FLOOD_WARMUP_US + FLOOD_NEW_US; us++) {
		now = T0 + us * 1000;
		for (i = 0; i < FLOOD_PER_US; i++)
			spoof_once(skel, &sp, now);
		if (us < FLOOD_WARMUP_US)
			continue;
		if ((us - FLOOD_WARMUP_US) % LIGHT_ROUND_US < LIGHT_PER_ROUND) {
			light_sent++;
			light_passed += xdp_at(skel, now, &light) == XDP_PASS;
		}
		if ((us - FLOOD_WARMUP_US) % HEAVY_EVERY_US == 0) {
			heavy_first = heavy_first ? heavy_first : now;
			heavy_last = now;
			heavy_passed += xdp_at(skel, now, &heavy) == XDP_PASS;
		}
	}
	sched_setaffinity(0, sizeof(all), &all);
	g = global_stats(skel);
	elapsed_s = (double)(heavy_last - heavy_first) / 1e9;
	expected = NEW_SOURCE_BURST + NEW_SOURCE_RATE * elapsed_s;
	print_message("10 Mpps spoofed: light %d of %d, heavy %d (expected %.1f), "
		      "%llu sources created, %llu packets to the overflow bucket\n",
		      light_passed, light_sent, heavy_passed, expected,
		      (unsigned long long)g.sources_created, (unsigned long long)g.budget_overflow);
	assert_true(light_passed >= light_sent - 1);
	assert_true(heavy_passed >= expected * 0.98 && heavy_passed <= expected * 1.02);
	/* The flood still cannot churn the table: no more entries than one
	 * CPU's budget allows (burst 50000/ncpus, then 50000/ncpus a second),
	 * plus the overflow key. */
	budget_bound = 50000.0 / fg_online_cpus() * (1 + (FLOOD_WARMUP_US + FLOOD_NEW_US) / 1e6);
	assert_true(g.sources_created <= budget_bound + 1);
	assert_true(g.budget_overflow > (FLOOD_WARMUP_US + FLOOD_NEW_US) * FLOOD_PER_US / 2);
	floodgate_bpf__destroy(skel);
}

/* --- framing: no VLAN stack, fragment or header trick skips a check ------- */

/* A skeleton with the test clock, optional insert-failure injection and the
 * given table sizes (0 keeps the default); the test destroys it. */
static struct floodgate_bpf *load_sized(const char *config, int progs, __u32 max_sources,
					__u32 max_bans, bool fail_inserts)
{
	const struct fg_skel_opts opts = {
		.progs = progs, .test_clock = true, .sources_entries = max_sources};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel;

	assert_non_null(cfg);
	assert_int_equal(fg_config_parse_string("test", config, cfg, stderr), 0);
	skel = fg_skel_open(cfg, &opts);
	free(cfg);
	assert_non_null(skel);
	skel->rodata->fg_test_fail_inserts = fail_inserts;
	if (max_bans)
		assert_int_equal(bpf_map__set_max_entries(skel->maps.bans, max_bans), 0);
	assert_int_equal(floodgate_bpf__load(skel), 0);
	assert_int_equal(push_config(skel, config), 0);
	return skel;
}

/* Sends n packets through fg_xdp or fg_tc at `now`; returns how many passed. */
static int hook_passed(struct floodgate_bpf *skel, bool tc, __u64 now, const struct pkt_spec *spec,
		       int n)
{
	int fd = bpf_program__fd(tc ? skel->progs.fg_tc : skel->progs.fg_xdp);
	int i, verdict, passed = 0;

	skel->bss->fg_test_now_ns = now;
	for (i = 0; i < n; i++) {
		verdict = run_prog(fd, spec, 0);
		if (tc)
			assert_true(verdict == TC_ACT_OK || verdict == TC_ACT_SHOT);
		else
			assert_true(verdict == XDP_PASS || verdict == XDP_DROP);
		passed += verdict == (tc ? TC_ACT_OK : XDP_PASS);
	}
	return passed;
}

/* Runs one packet n times through fg_xdp in one BPF_PROG_TEST_RUN call at
 * `now` and returns the last verdict: n separate runs cost a system call
 * each, seconds under emulation (`make test-kernels`). */
static int xdp_repeat(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec, __u32 n)
{
	uint8_t buf[1600];
	size_t len = build_packet(buf, spec);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = n);

	skel->bss->fg_test_now_ns = now;
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_xdp), &opts), 0);
	return opts.retval;
}

/* `match = ... size LO-HI` at both hooks: the class boundaries are exact
 * (frame length, Ethernet header included), and a packet outside the range
 * is not charged. */
static void test_size_classes(void **state)
{
	static const char config[] = "[policy mid]\nmatch = udp size 64-127\nrate = 1/s\n"
				     "burst = 1000\n"
				     "[policy big]\nmatch = any size 1024-max\nrate = 1/s\n"
				     "burst = 1\n";
	/* 42 bytes of headers: pad 21 makes a 63-byte frame */
	static const struct {
		size_t pad;
		int passed_mid, passed_big; /* of 3 sent, at the hook; -1: not matched */
	} rows[] = {
		{21, -1, -1},  {22, 3, -1},  {85, 3, -1},   {86, -1, -1},
		{981, -1, -1}, {982, -1, 1}, {1472, -1, 1},
	};
	/* One skeleton; each row is a source of its own, judged on fresh
	 * state, and the counters are compared by difference. */
	struct floodgate_bpf *skel = load_sized(config, FG_SKEL_EVERY_PROG, 1024, 1024, false);
	struct pkt_spec spec = udp_a;
	char source[INET_ADDRSTRLEN];
	size_t i;
	int tc;

	(void)state;
	spec.src = source;
	for (tc = 0; tc <= 1; tc++) {
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			struct fg_policy_stats mid = policy_stats(skel, 0),
					       big = policy_stats(skel, 1);
			__u64 unmatched = global_stats(skel).unmatched;
			int expect = 3;

			snprintf(source, sizeof(source), "10.9.%d.%zu", tc, i + 1);
			spec.pad = rows[i].pad;
			if (rows[i].passed_big >= 0)
				expect = rows[i].passed_big;
			assert_int_equal(hook_passed(skel, tc, T0, &spec, 3), expect);
			assert_int_equal(policy_stats(skel, 0).matched_packets -
						 mid.matched_packets,
					 rows[i].passed_mid < 0 ? 0 : 3);
			assert_int_equal(policy_stats(skel, 1).matched_packets -
						 big.matched_packets,
					 rows[i].passed_big < 0 ? 0 : 3);
			assert_int_equal(global_stats(skel).unmatched - unmatched,
					 rows[i].passed_mid < 0 && rows[i].passed_big < 0 ? 3 : 0);
		}
	}
	floodgate_bpf__destroy(skel);
}

/* The built-in policy (README "The built-in policy"), with a frozen clock so
 * that every count is a burst: small floods are held per source, large
 * datagrams and bulk TCP segments are never charged. */
static void test_builtin_policy(void **state)
{
	struct floodgate_bpf *skel =
		load_sized(fg_default_config, FG_SKEL_EVERY_PROG, 1024, 1024, false);
	struct pkt_spec small_udp = udp_a, vpn = udp_a, syn = udp_a, ack = udp_a;
	struct pkt_spec segment, ping6 = {.family = 6, .src = "fd00::1", .proto = IPPROTO_ICMPV6};

	(void)state;
	/* Never charged: unmatched, so not one of 200000 frames was dropped
	 * (global_stats.unmatched counts them; below), and the last passes. */
	vpn.pad = 1400; /* a 1442-byte frame: a VPN tunnel's datagram */
	assert_int_equal(xdp_repeat(skel, T0, &vpn, 200000), XDP_PASS);
	assert_int_equal(global_stats(skel).unmatched, 200000);
	small_udp.src = "10.0.0.2";
	assert_int_equal(hook_passed(skel, false, T0, &small_udp, 60000), 50000);
	syn.src = "10.0.0.3";
	syn.proto = IPPROTO_TCP;
	assert_int_equal(hook_passed(skel, false, T0, &syn, 3000), 2000);
	ack = syn; /* SYN+ACK: not a new connection, charged as a small frame */
	ack.src = "10.0.0.4";
	ack.ack = 1;
	assert_int_equal(hook_passed(skel, false, T0, &ack, 110000), 100000);
	segment = ack; /* a 1514-byte TCP segment of a bulk transfer */
	segment.pad = 1460;
	assert_int_equal(xdp_repeat(skel, T0, &segment, 200000), XDP_PASS);
	assert_int_equal(hook_passed(skel, false, T0, &ping6, 1500), 1000);
	assert_int_equal(global_stats(skel).unmatched, 400000);
	floodgate_bpf__destroy(skel);
}

/* A ban by hand, as `floodgate ban` writes it. */
static void put_ban(struct floodgate_bpf *skel, int family, const char *addr, int len,
		    __u64 expires_ns)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban = {.expires_ns = expires_ns,
			     .duration_ns = 1,
			     .strikes = 1,
			     .family = family,
			     .prefix_len = len};

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.bans), &key, &ban, BPF_ANY), 0);
}

static const char framing_config[] =
	"malformed = pass\n"
	"[deny]\nsrc = 10.66.0.0/16, 2001:db8:66::/48\n"
	"[policy port9]\nmatch = udp dport 9\nrate = 1/min\nburst = 2\n"
	"[policy all]\nmatch = any\nrate = 1/min\nburst = 3\n";

/* Tag stacks: all 802.1Q, all 802.1ad, alternating, priority-only VID 0. */
#define VLAN_KINDS 4
static void set_tags(struct pkt_spec *spec, int kind, int tags)
{
	spec->vlans = tags;
	spec->ad_tags = kind == 1 ? ~0u : kind == 2 ? 0x55555555u : 0;
	if (kind == 0 || kind == 3) /* ad_tags 0 would mean classic QinQ */
		spec->ad_tags = 0x80000000u;
	spec->vid0 = kind == 3;
}

/* One family at one hook behind `tags` tags of one kind: the deny list, a
 * ban and both policies see through the stack, for whole datagrams and
 * for later fragments (which carry the source but no ports). */
static void check_framing(struct floodgate_bpf *skel, bool tc, int family, int kind, int tags)
{
	struct pkt_spec whole = {.family = family, .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec later;
	char denied[64], banned[64], fresh[64], fresh_frag[64];

	if (family == 4) {
		snprintf(denied, sizeof(denied), "10.66.%d.%d", kind, tags);
		snprintf(banned, sizeof(banned), "10.67.%d.%d", kind, tags);
		snprintf(fresh, sizeof(fresh), "10.%d.%d.%d", 100 + tc, kind, tags);
		snprintf(fresh_frag, sizeof(fresh_frag), "10.%d.%d.%d", 110 + tc, kind, tags);
	} else {
		snprintf(denied, sizeof(denied), "2001:db8:66::%d:%d", kind, tags);
		snprintf(banned, sizeof(banned), "2001:db8:67::%d:%d", kind, tags);
		/* one /64 each: the default key of IPv6 */
		snprintf(fresh, sizeof(fresh), "2001:db8:%d:%d::1", 100 + tc, kind * 16 + tags);
		snprintf(fresh_frag, sizeof(fresh_frag), "2001:db8:%d:%d::1", 110 + tc,
			 kind * 16 + tags);
	}
	set_tags(&whole, kind, tags);
	later = whole;
	if (family == 4) {
		later.frag_off = 100;
	} else {
		later.n_ext = 1;
		later.ext[0] = 44;
		later.ext_frag = 100 << 3;
	}
	whole.src = later.src = denied;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 3), 0);
	assert_int_equal(hook_passed(skel, tc, T0, &later, 3), 0);
	whole.src = later.src = banned;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 3), 0);
	assert_int_equal(hook_passed(skel, tc, T0, &later, 3), 0);
	/* port9 (burst 2) binds whole datagrams; a later fragment meets only
	 * the portless `all` (burst 3) */
	whole.src = fresh;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 5), 2);
	later.src = fresh_frag;
	assert_int_equal(hook_passed(skel, tc, T0, &later, 5), 3);
}

static void test_vlan_stacks_meet_lists_bans_policies(void **state)
{
	struct floodgate_bpf *skel = load_sized(framing_config, FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec deep = {.family = 4, .src = "10.5.5.5", .proto = IPPROTO_UDP, .dport = 9};
	int tc, family, kind, tags, combos = 0;
	struct fg_global_stats g;

	(void)state;
	put_ban(skel, 4, "10.67.0.0", 16, ~0ULL);
	put_ban(skel, 6, "2001:db8:67::", 48, ~0ULL);
	for (tc = 0; tc < 2; tc++)
		for (family = 4; family <= 6; family += 2)
			for (kind = 0; kind < VLAN_KINDS; kind++)
				for (tags = 1; tags <= 8; tags++, combos++)
					check_framing(skel, tc, family, kind, tags);
	g = global_stats(skel);
	assert_int_equal(g.denied, combos * 6);
	assert_int_equal(g.banned, combos * 6);
	assert_int_equal(g.malformed, 0);
	assert_int_equal(g.non_ip, 0);
	/* deeper than the walk: dropped though malformed = pass, at both hooks */
	for (tags = 9; tags <= PKT_MAX_VLANS; tags++) {
		set_tags(&deep, 3, tags);
		assert_int_equal(hook_passed(skel, false, T0, &deep, 1), 0);
		assert_int_equal(hook_passed(skel, true, T0, &deep, 1), 0);
		deep.family = 6;
		deep.src = "2001:db8:5::5";
		assert_int_equal(hook_passed(skel, true, T0, &deep, 1), 0);
		deep.family = 4;
		deep.src = "10.5.5.5";
	}
	g = global_stats(skel);
	assert_int_equal(g.vlan_overflow, 3 * (PKT_MAX_VLANS - 8));
	assert_int_equal(g.malformed, 3 * (PKT_MAX_VLANS - 8));
	floodgate_bpf__destroy(skel);
}

/* A TCP SYN split into an 8-byte first fragment and the rest hides its
 * flags from a `syn` match; reassembled, the kernel would deliver it. Such
 * a first fragment is dropped whatever `malformed` says. */
static void test_tiny_first_fragments_dropped(void **state)
{
	struct floodgate_bpf *skel =
		load_sized("malformed = pass\n"
			   "[policy syn]\nmatch = tcp dport 80 syn\nrate = 1/min\nburst = 1\n",
			   FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec syn = {.family = 4, .src = "10.1.0.1", .proto = IPPROTO_TCP, .dport = 80};
	struct pkt_spec tiny = syn, first = syn, cut = syn, syn6, tiny6, seven6;
	int tc;

	(void)state;
	tiny.frag_off = 0x2000; /* more fragments, offset 0 */
	tiny.l4_cut = 8;
	first.frag_off = 0x2000; /* a first fragment with the whole header */
	cut.l4_cut = 8;		 /* no fragment: the kernel drops it itself */
	syn6 = syn;
	syn6.family = 6;
	syn6.src = "2001:db8:1::1";
	tiny6 = syn6;
	tiny6.n_ext = 1;
	tiny6.ext[0] = 44;
	tiny6.ext_frag = 1; /* M set, offset 0 */
	tiny6.l4_cut = 8;
	seven6 = syn6;
	seven6.n_ext = 7;
	memcpy(seven6.ext, (uint8_t[]){0, 60, 60, 60, 60, 60, 60}, 7);
	for (tc = 0; tc < 2; tc++) {
		tiny.vlans = tiny6.vlans = tc; /* and behind a tag */
		assert_int_equal(hook_passed(skel, tc, T0, &tiny, 5), 0);
		assert_int_equal(hook_passed(skel, tc, T0, &tiny6, 5), 0);
		/* an IPv6 chain longer than the walk is delivered by the
		 * kernel: dropped too, not passed as malformed */
		assert_int_equal(hook_passed(skel, tc, T0, &seven6, 2), 0);
	}
	assert_int_equal(global_stats(skel).tiny_fragments, 20);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 4);
	/* the SYN limit holds for whole SYNs and whole first fragments */
	assert_int_equal(hook_passed(skel, false, T0, &syn, 5), 1);
	assert_int_equal(hook_passed(skel, true, T0, &syn6, 5), 1);
	first.src = "10.1.0.2";
	assert_int_equal(hook_passed(skel, false, T0, &first, 5), 1);
	/* a cut header that is not a fragment stays `malformed` (pass here) */
	assert_int_equal(hook_passed(skel, false, T0, &cut, 2), 2);
	assert_int_equal(global_stats(skel).malformed, 20 + 4 + 2);
	floodgate_bpf__destroy(skel);
}

/* --- bans ------------------------------------------------------------------ */

/* An expired /32 record, kept to escalate, must not shadow an active /24. */
static void test_expired_strike_does_not_shadow_ban(void **state)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 2\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct pkt_spec a = udp_a, neighbour = udp_a,
			a6 = {.family = 6,
			      .src = "2001:db8:1:2::1",
			      .proto = IPPROTO_UDP,
			      .dport = 9};
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	struct fg_ban ban;
	__u64 forget = T0 + 2 * SEC + FG_BAN_STRIKE_TTL_NS;

	(void)state;
	neighbour.src = "10.0.0.2";
	/* ban A --for 2s; after it expires, ban A/24 --for 10m */
	put_ban(skel, 4, "10.0.0.1", 32, T0 + 2 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &a, 3), 0);
	put_ban(skel, 4, "10.0.0.0", 24, T0 + 3 * SEC + 600 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + 3 * SEC, &a, 100), 0);
	assert_int_equal(xdp_passed(skel, T0 + 3 * SEC, &neighbour, 100), 0);
	/* the same, three deep, for IPv6: /128 and /64 expired, /48 active */
	put_ban(skel, 6, "2001:db8:1:2::1", 128, T0);
	put_ban(skel, 6, "2001:db8:1:2::", 64, T0);
	put_ban(skel, 6, "2001:db8:1::", 48, ~0ULL);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &a6, 10), 0);
	assert_int_equal(global_stats(skel).banned, 3 + 200 + 10);
	/* the expired /32 still escalates until its lifetime ends... */
	inet_pton(AF_INET, "10.0.0.1", key.addr);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	/* ...and the first packet that meets it after that deletes it */
	put_ban(skel, 4, "10.0.0.0", 24, T0); /* lift the /24 */
	assert_int_equal(xdp_passed(skel, forget - 1, &a, 1), 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	assert_int_equal(xdp_passed(skel, forget, &a, 1), 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), -ENOENT);
	floodgate_bpf__destroy(skel);
}

/* A strike record escalates only within its lifetime, and a full trie
 * fails a ban visibly (ban_insert_failed) while the refusal still drops. */
static void test_strike_lifetime_and_full_trie(void **state)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 1\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\n",
			   FG_SKEL_XDP, 0, 2, false);
	struct pkt_spec a = udp_a, b = udp_a, c = udp_a;
	__u64 t = T0;

	(void)state;
	b.src = "10.0.0.2";
	c.src = "10.0.0.3";
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 10 * SEC);
	t += 10 * SEC; /* expired: a repeat within the lifetime escalates */
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).strikes, 2);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 30 * SEC);
	t += 30 * SEC + FG_BAN_STRIKE_TTL_NS; /* forgotten: back to the first ban */
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).strikes, 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 10 * SEC);
	/* the trie holds 2: b's ban fits, c's does not, c is still refused */
	assert_int_equal(xdp_passed(skel, t, &b, 2), 1);
	assert_int_equal(xdp_passed(skel, t, &c, 3), 1);
	assert_int_equal(global_stats(skel).bans_added, 4);
	assert_int_equal(global_stats(skel).ban_insert_failed, 2);
	assert_int_equal(global_stats(skel).banned, 0);
	floodgate_bpf__destroy(skel);
}

/* --- the state tables ----------------------------------------------------- */

/* The tables are LRU maps: full, they evict; they refuse only when the
 * kernel cannot get an element, and then on_insert_failure decides. The
 * failure is injected, for each table and each value. */
static void test_on_insert_failure_values(void **state)
{
	/* One policy per algorithm, each for a source of its own (src =
	 * 10.8.0.N, policy N-1), so one load per verdict. */
	static const char *const algorithms[] = {"token_bucket", "sliding_window", "sliding_log"};
	const size_t n = sizeof(algorithms) / sizeof(algorithms[0]);
	char config[1024], src[INET_ADDRSTRLEN];
	struct pkt_spec spec = udp_a;
	struct floodgate_bpf *skel;
	size_t i, used;
	int verdict;

	(void)state;
	spec.src = src;
	for (verdict = 0; verdict < 2; verdict++) {
		used = snprintf(config, sizeof(config),
				"on_insert_failure = %s\nnew_sources = off\n",
				verdict ? "drop" : "pass");
		for (i = 0; i < n; i++)
			used += snprintf(config + used, sizeof(config) - used,
					 "[policy p%zu]\nmatch = any\nsrc = 10.8.0.%zu\n"
					 "algorithm = %s\nrate = 1/s\n",
					 i, i + 1, algorithms[i]);
		assert_true(used < sizeof(config));
		skel = load_sized(config, FG_SKEL_XDP, 0, 0, true);
		for (i = 0; i < n; i++) {
			snprintf(src, sizeof(src), "10.8.0.%zu", i + 1);
			assert_int_equal(xdp_passed(skel, T0, &spec, 4), verdict ? 0 : 4);
			assert_int_equal(global_stats(skel).insert_failed, 4 * (i + 1));
			assert_int_equal(policy_stats(skel, i).dropped_packets, verdict ? 4 : 0);
		}
		assert_int_equal(global_stats(skel).sources_created, 0);
		floodgate_bpf__destroy(skel);
	}
}

/* Sends one packet from each of n new sources 10.9.x.y, and one from
 * `abuser` after every `every` of them (never when every is 0); returns how
 * many of the abuser's packets passed. */
static int churn(struct floodgate_bpf *skel, int n, int every, const struct pkt_spec *abuser)
{
	struct pkt_spec spoofed = udp_a;
	char addr[32];
	int i, passed = 0;

	spoofed.src = addr;
	for (i = 0; i < n; i++) {
		/* three packets each: referenced, so as hot as the abuser */
		snprintf(addr, sizeof(addr), "10.9.%d.%d", i / 250, i % 250 + 1);
		xdp_passed(skel, T0, &spoofed, 3);
		if (every && i % every == every - 1)
			passed += xdp_passed(skel, T0, abuser, 1);
	}
	return passed;
}

/* A full LRU table evicts, but a lookup marks an entry used: a refused
 * source that keeps sending keeps its state (and its empty bucket) while a
 * churn of new sources turns the table over many times. One that falls
 * silent for a whole turnover is evicted and starts again with a burst. */
static void test_full_table_keeps_refused_source(void **state)
{
	struct floodgate_bpf *skel =
		load_sized("new_sources = off\n"
			   "[policy p]\nmatch = any\nrate = 1/min\nburst = 2\n",
			   FG_SKEL_XDP, 256, 0, false);
	struct pkt_spec abuser = udp_a;
	cpu_set_t one, all;
	int passed;

	(void)state;
	/* one CPU: the LRU's free lists are per CPU */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	abuser.src = "10.8.0.1";
	assert_int_equal(xdp_passed(skel, T0, &abuser, 5), 2);
	/* 20 turnovers of a 256-entry table, the abuser every 32 sources */
	passed = churn(skel, 20 * 256, 32, &abuser);
	printf("refused source, once per 32 new ones: %d of %d passed\n", passed, 20 * 256 / 32);
	assert_int_equal(passed, 0);
	/* silent through 4 turnovers: its state is gone, its burst is back */
	churn(skel, 4 * 256, 0, NULL);
	passed = xdp_passed(skel, T0, &abuser, 5);
	printf("silent through 4 turnovers: %d of 5 passed\n", passed);
	assert_int_equal(passed, 2);
	assert_int_equal(global_stats(skel).insert_failed, 0);
	sched_setaffinity(0, sizeof(all), &all);
	floodgate_bpf__destroy(skel);
}

/* --- two CPUs, one key ---------------------------------------------------- */

struct flood_thread {
	int prog_fd;
	int cpu;
	const char *src;
	__u32 repeat, rounds;
	pthread_barrier_t *barrier;
};

static void *flood_one_cpu(void *arg)
{
	struct flood_thread *t = arg;
	struct pkt_spec spec = {.family = 4, .src = t->src, .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .repeat = t->repeat);
	cpu_set_t set;
	__u32 i;

	opts.data_size_in = build_packet(buf, &spec);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(t->barrier);
	for (i = 0; i < t->rounds; i++)
		bpf_prog_test_run_opts(t->prog_fd, &opts);
	return NULL;
}

/* Floods one key, `src`, from CPUs 0 and 1 at once; returns what policy
 * `policy` admitted and the elapsed CLOCK_MONOTONIC time (the clock
 * bpf_ktime_get_ns reads). */
static __u64 flood_two_cpus_from(struct floodgate_bpf *skel, const char *src, __u32 policy,
				 __u32 repeat, __u32 rounds, __u64 *elapsed_ns)
{
	pthread_barrier_t barrier;
	struct flood_thread t[2];
	pthread_t tid[2];
	struct timespec start, end;
	int i;

	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++) {
		t[i] = (struct flood_thread){.prog_fd = bpf_program__fd(skel->progs.fg_xdp),
					     .cpu = i,
					     .src = src,
					     .repeat = repeat,
					     .rounds = rounds,
					     .barrier = &barrier};
		pthread_create(&tid[i], NULL, flood_one_cpu, &t[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_barrier_wait(&barrier);
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	pthread_barrier_destroy(&barrier);
	if (elapsed_ns)
		*elapsed_ns = (end.tv_sec - start.tv_sec) * SEC + end.tv_nsec - start.tv_nsec;
	return policy_stats(skel, policy).passed_packets;
}

/* Floods 10.0.0.1 through the first policy. */
static __u64 flood_two_cpus(struct floodgate_bpf *skel, __u32 repeat, __u32 rounds,
			    __u64 *elapsed_ns)
{
	return flood_two_cpus_from(skel, "10.0.0.1", 0, repeat, rounds, elapsed_ns);
}

static const char concurrency_config[] = "[policy one]\nmatch = any\nrate = 1000/s\n"
					 "burst = 100000\n";

static void skip_unless_two_cpus(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skip: the two-CPU tests need two online CPUs\n");
		skip();
	}
}

static void test_two_cpus_frozen_clock_exact(void **state)
{
	struct floodgate_bpf *skel = load_skel_with(concurrency_config, true, false);
	__u64 passed;

	(void)state;
	skip_unless_two_cpus();
	assert_non_null(skel);
	skel->bss->fg_test_now_ns = T0;
	/* 2 x 1M packets against a burst of 100000, time standing still */
	passed = flood_two_cpus(skel, 100000, 10, NULL);
	printf("two CPUs, frozen clock: admitted %llu, limit 100000\n", (unsigned long long)passed);
	assert_int_equal(passed, 100000);
	floodgate_bpf__destroy(skel);
}

/* Every algorithm under the same two-CPU flood with time standing still
 * admits exactly its limit. */
static void test_two_cpus_every_algorithm_exact(void **state)
{
	/* One policy per case, each for a source of its own (src = 10.7.0.N,
	 * policy N-1): one load instead of one per case, which costs seconds
	 * under emulation (`make test-kernels`). */
	static const struct {
		const char *limit_keys;
		__u64 limit;
	} cases[] = {
		{"algorithm = fixed_window\nrate = 100000/s\n", 100000},
		{"algorithm = sliding_window\nrate = 100000/s\n", 100000},
		{"algorithm = sliding_log\nrate = 128/s\n", 128},
		{"algorithm = leaky_bucket\nrate = 1000/s\nburst = 100000\n", 100000},
		{"algorithm = fixed_window\nrate = 4200000B/s\n", 100000},
		{"algorithm = sliding_window\nrate = 4200000B/s\n", 100000},
		{"algorithm = leaky_bucket\nrate = 1000B/s\nburst = 4200000B\n", 100000},
		/* byte mode: the flood's frames are 42 bytes */
		{"rate = 1000B/s\nburst = 4200000B\n", 100000},
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	char config[2048], src[INET_ADDRSTRLEN];
	struct floodgate_bpf *skel;
	size_t i, used = 0;

	(void)state;
	skip_unless_two_cpus();
	for (i = 0; i < n; i++)
		used += snprintf(config + used, sizeof(config) - used,
				 "[policy a%zu]\nmatch = any\nsrc = 10.7.0.%zu\n%s", i, i + 1,
				 cases[i].limit_keys);
	assert_true(used < sizeof(config));
	skel = load_with(config);
	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < n; i++) {
		__u64 passed;

		snprintf(src, sizeof(src), "10.7.0.%zu", i + 1);
		passed = flood_two_cpus_from(skel, src, i, 100000, 10, NULL);
		printf("two CPUs, frozen clock, case %zu: admitted %llu, limit %llu\n", i,
		       (unsigned long long)passed, (unsigned long long)cases[i].limit);
		assert_int_equal(passed, cases[i].limit);
	}
	floodgate_bpf__destroy(skel);
}

static void test_two_cpus_real_clock_bounded(void **state)
{
	struct floodgate_bpf *skel = load_skel_with(concurrency_config, false, false);
	__u64 passed, elapsed, limit;

	(void)state;
	skip_unless_two_cpus();
	assert_non_null(skel);
	passed = flood_two_cpus(skel, 100000, 10, &elapsed);
	/* burst + rate x elapsed, +1 for the token that is due at the edge */
	limit = 100000 + elapsed * 1000 / SEC + 1;
	printf("two CPUs, real clock: admitted %llu in %.3f s, limit %llu\n",
	       (unsigned long long)passed, elapsed / 1e9, (unsigned long long)limit);
	assert_true(passed <= limit);
	assert_true(passed >= 100000);
	floodgate_bpf__destroy(skel);
}

/* clock = coarse reads the time of the last tick: it lags the real clock by
 * less than one tick, so over a flood of `elapsed` the coarse clock advances
 * at most elapsed + one tick, and the bound gains rate x tick. */
static void test_two_cpus_coarse_clock_bounded(void **state)
{
	char config[sizeof(concurrency_config) + 32];
	struct floodgate_bpf *skel;
	struct timespec tick;
	__u64 passed, elapsed, tick_ns, limit;

	(void)state;
	skip_unless_two_cpus();
	snprintf(config, sizeof(config), "clock = coarse\n%s", concurrency_config);
	skel = load_skel_with(config, false, false);
	assert_non_null(skel);
	assert_true(skel->rodata->fg_coarse_clock);
	assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &tick), 0);
	tick_ns = tick.tv_sec * SEC + tick.tv_nsec;
	passed = flood_two_cpus(skel, 100000, 10, &elapsed);
	limit = 100000 + (elapsed + tick_ns) * 1000 / SEC + 1;
	printf("two CPUs, coarse clock (tick %.1f ms): admitted %llu in %.3f s, limit %llu\n",
	       tick_ns / 1e6, (unsigned long long)passed, elapsed / 1e9, (unsigned long long)limit);
	assert_true(passed <= limit);
	assert_true(passed >= 100000);
	floodgate_bpf__destroy(skel);
}

/* The same flood against the deliberately naive read-modify-write must
 * overshoot: this is what shows the exactness tests can fail. It covers the
 * lock-free word (token_bucket, CAS) and a lock-striped algorithm
 * (sliding_window): with fg_lock_for returning NULL, the locked algorithms
 * would run this unlocked path and overshoot the same way. */
static void test_two_cpus_naive_update_overshoots(void **state)
{
	static const char *const configs[] = {
		concurrency_config,
		"[policy a]\nmatch = any\nalgorithm = sliding_window\nrate = 100000/s\n",
	};
	size_t c;

	(void)state;
	skip_unless_two_cpus();
	for (c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		__u64 passed = 0;
		int attempt;

		for (attempt = 0; attempt < 5 && passed <= 100000; attempt++) {
			struct floodgate_bpf *skel = load_skel_with(configs[c], true, true);

			assert_non_null(skel);
			skel->bss->fg_test_now_ns = T0;
			passed = flood_two_cpus(skel, 100000, 10, NULL);
			floodgate_bpf__destroy(skel);
		}
		printf("two CPUs, naive update, case %zu: admitted %llu, limit 100000\n", c,
		       (unsigned long long)passed);
		assert_true(passed > 100000);
	}
}

/* --- scope = fleet ----------------------------------------------------------- */

/* Sums the per-CPU fleet_counts of `epoch`; *entries is how many keys. */
static struct fg_fleet_count fleet_counted(struct floodgate_bpf *skel, __u32 epoch, int *entries)
{
	int fd = bpf_map__fd(skel->maps.fleet_counts), ncpus = libbpf_num_possible_cpus(), cpu;
	struct fg_fleet_count total = {0}, *values = calloc(ncpus, sizeof(*values));
	struct fg_fleet_key key, *prev = NULL;

	assert_non_null(values);
	*entries = 0;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (key.epoch != epoch)
			continue;
		(*entries)++;
		assert_int_equal(bpf_map_lookup_elem(fd, &key, values), 0);
		for (cpu = 0; cpu < ncpus; cpu++) {
			total.packets += values[cpu].packets;
			total.bytes += values[cpu].bytes;
		}
	}
	free(values);
	return total;
}

/* The id the loaded slot 0 gave policy `name`. */
static __u32 fg_policy_id_of(struct floodgate_bpf *skel, const char *name)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	__u32 zero = 0, i, id = 0;

	assert_non_null(set);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.policy_sets), &zero, set), 0);
	for (i = 0; i < set->count; i++)
		if (!strcmp(set->policies[i].name, name))
			id = set->policies[i].id;
	free(set);
	assert_int_not_equal(id, 0);
	return id;
}

static void set_fleet_state(struct floodgate_bpf *skel, __u32 epoch, __u32 refuse_all)
{
	struct fg_fleet_state st = {.epoch = epoch, .refuse_all = refuse_all};
	__u32 zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_state), &zero, &st, 0),
			 0);
}

/* Fleet-scoped admissions are counted per epoch, and only theirs; a hold
 * refuses its key until it ends; refuse_all (on_redis_down = closed while
 * Redis is down) refuses every fleet-scoped key and nothing else. */
static void test_fleet_counts_and_holds(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy f]\nmatch = udp\nrate = 10/s\nburst = 5\n"
					       "scope = fleet\n"
					       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n"
					       "[fleet]\nredis = 127.0.0.1:6379\n");
	struct pkt_spec tcp_a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	uint8_t buf[1600];
	size_t len = build_packet(buf, &udp_a);
	struct fg_source_key held = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_fleet_hold hold = {.until_ns = T0 + 2 * SEC};
	struct fg_fleet_count c;
	int entries;

	(void)state;
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 8), 5);
	assert_int_equal(xdp_passed(skel, T0, &tcp_a, 8), 5);
	c = fleet_counted(skel, 0, &entries);
	assert_int_equal(entries, 1); /* the local policy counts nothing */
	assert_int_equal(c.packets, 5);
	assert_int_equal(c.bytes, 5 * len);

	/* A new epoch: the old counts stay for the daemon, new ones go apart. */
	set_fleet_state(skel, 1, 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 3), 1);
	assert_int_equal(fleet_counted(skel, 0, &entries).packets, 5);
	assert_int_equal(fleet_counted(skel, 1, &entries).packets, 1);

	/* Held until T0 + 2 s: refused (and counted as such), then admitted. */
	held.policy_id = fg_policy_id_of(skel, "f");
	inet_pton(AF_INET, "10.0.0.1", held.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_holds), &held, &hold, 0),
			 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 4), 0);
	assert_int_equal(global_stats(skel).fleet_held, 4);
	assert_int_equal(fleet_counted(skel, 1, &entries).packets, 1);
	assert_int_equal(xdp_passed(skel, T0 + 2 * SEC, &udp_a, 8), 5);

	/* Fail closed: fleet keys refused, the local policy untouched. */
	set_fleet_state(skel, 1, 1);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &tcp_a, 3), 3);
	assert_int_equal(global_stats(skel).fleet_held, 7);
	floodgate_bpf__destroy(skel);
}

/* scope = host: two programs (two interfaces) whose host_sources is one map,
 * as the loader shares it, charge one source to one bucket, whichever
 * interface its packets come through; the policy's place in each file
 * differs, its name (hence its id) does not. A local policy keeps a bucket
 * per program, in each one's own `sources`. */
static void test_host_scope_shares_one_bucket(void **state)
{
	static const char config_a[] = "[policy h]\nmatch = udp\nrate = 10/s\nburst = 5\n"
				       "scope = host\n"
				       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n";
	static const char config_b[] = "[policy icmp]\nmatch = icmp\nrate = 1/s\n"
				       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n"
				       "[policy h]\nmatch = udp\nrate = 10/s\nburst = 5\n"
				       "scope = host\n";
	struct floodgate_bpf *a = load_with(config_a), *b = NULL;
	struct fg_skel_opts opts = {.progs = FG_SKEL_XDP, .test_clock = true};
	struct pkt_spec tcp_a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_source4_key key4;
	struct fg_source_state st;

	(void)state;
	opts.host_fd = bpf_map__fd(a->maps.host_sources);
	assert_int_equal(fg_skel_prepare_text(config_b, &opts, &b), 0);
	assert_int_equal(fg_policy_id_of(a, "h"), fg_policy_id_of(b, "h"));

	/* burst 5 over both: 3 through a, then only 2 through b */
	assert_int_equal(xdp_passed(a, T0, &udp_a, 3), 3);
	assert_int_equal(xdp_passed(b, T0, &udp_a, 8), 2);
	assert_int_equal(xdp_passed(a, T0, &udp_a, 4), 0);
	/* 10/s: one token per 100 ms, to whichever interface takes it first */
	assert_int_equal(xdp_passed(b, T0 + 100 * MS, &udp_a, 3), 1);
	assert_int_equal(xdp_passed(a, T0 + 100 * MS, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(a, T0 + 200 * MS, &udp_a, 3), 1);
	assert_int_equal(xdp_passed(b, T0 + 200 * MS, &udp_a, 3), 0);
	/* idle: refilled to one burst for both together, never one each */
	assert_int_equal(xdp_passed(a, T0 + 10 * SEC, &udp_a, 4) +
				 xdp_passed(b, T0 + 10 * SEC, &udp_a, 4),
			 5);

	/* the local policy: one bucket per program */
	assert_int_equal(xdp_passed(a, T0, &tcp_a, 8), 5);
	assert_int_equal(xdp_passed(b, T0, &tcp_a, 8), 5);

	/* the host key is in the shared map (24-byte keys for every family),
	 * in neither program's sources4 */
	key.policy_id = fg_policy_id_of(a, "h");
	inet_pton(AF_INET, "10.0.0.1", key.addr);
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(b->maps.host_sources), &key, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.sources4), &key4, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(b->maps.sources4), &key4, &st), 0);
	key.policy_id = fg_policy_id_of(a, "l");
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.sources4), &key4, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.host_sources), &key, &st), 0);
	floodgate_bpf__destroy(b);
	floodgate_bpf__destroy(a);
}

/* Entries of a hash map, whatever its key size (up to fg_source_key's). */
static unsigned int map_entries(int fd)
{
	struct fg_source_key key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* A source this CPU has just refused is refused again from the `refusals`
 * cache, without the sources4 lookup, except the one refusal in 64 that
 * the drop count samples. The cache never refuses what the state would
 * admit: the bucket refills on time, an admission leaves the cached TAT
 * behind, and a reload's looser policy applies at once. (A new generation after a
 * reclaim: test_reload_reclaims_state.) */
static void test_refusal_cache(void **state)
{
	struct floodgate_bpf *skel = load_with("[policy p]\nmatch = udp\nrate = 10/s\nburst = 2\n");
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_source4_key key4;
	struct fg_source_state source;
	cpu_set_t one, all;
	__u64 cached, sampled;

	(void)state;
	/* one CPU: the cache is per CPU */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	key.policy_id = fg_policy_id_of(skel, "p");
	inet_pton(AF_INET, udp_a.src, key.addr);
	key4 = fg_source4_key_of(&key);

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1000), 0);
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.sources4), &key4, &source), 0);
	sampled = (source.dropped & FG_DROPPED_COUNT) / 64;
	printf("1000 refusals of a hot source: %llu from the cache, %llu sampled\n",
	       (unsigned long long)cached, (unsigned long long)sampled);
	/* the first refusal fills the cache, each sampled one goes to the
	 * state (and may be the first): 1 in 64, 15.6 expected */
	assert_in_range(cached + sampled, 999, 1000);
	assert_in_range(sampled, 2, 40);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 1000);

	/* TAT = T0 + 200 ms, tau = 200 ms: one token at T0 + 100 ms, not 1 ns before */
	assert_int_equal(xdp_at(skel, T0 + 100 * MS - 1, &udp_a), XDP_DROP);
	assert_int_equal(xdp_at(skel, T0 + 100 * MS, &udp_a), XDP_PASS);
	/* the admission left the cached TAT behind, refusing nothing now: this
	 * refusal goes to the state, and refills the cache */
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(xdp_at(skel, T0 + 100 * MS, &udp_a), XDP_DROP);
	assert_int_equal(skel->bss->fg_test_cached_refusals, cached);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 100), 0);
	assert_true(skel->bss->fg_test_cached_refusals > cached);

	/* a reload to burst 1000 at the same instant: admitted at once */
	assert_int_equal(push_config(skel, "[policy p]\nmatch = udp\nrate = 10/s\nburst = 1000\n"),
			 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 10), 10);
	sched_setaffinity(0, sizeof(all), &all);
	floodgate_bpf__destroy(skel);
}

/* IPv4 keys of local one-word policies (every algorithm of them) land in
 * sources4 with their 12-byte key; IPv6 and global keys in sources. */
static void test_sources_split_by_family(void **state)
{
	struct floodgate_bpf *skel =
		load_with("[policy tb]\nmatch = udp\nrate = 10/s\nburst = 5\n"
			  "[policy fw]\nmatch = tcp dport 22\nalgorithm = fixed_window\n"
			  "rate = 10/s\n"
			  "[policy lb]\nmatch = tcp dport 80\nper = src/24+dport src/48+dport\n"
			  "algorithm = leaky_bucket\nrate = 10/s\n"
			  "[policy all]\nmatch = icmp\nper = global\nrate = 10/s\n");
	struct pkt_spec v6 = {.family = 6, .src = "fd00::1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec ssh = {.family = 4, .src = "10.0.0.2", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec web = {.family = 4, .src = "10.0.7.9", .proto = IPPROTO_TCP, .dport = 80};
	struct pkt_spec ping = {.family = 4, .src = "10.0.0.3", .proto = IPPROTO_ICMP};
	int fd4 = bpf_map__fd(skel->maps.sources4), fd = bpf_map__fd(skel->maps.sources);
	struct fg_source_key key = {.policy_id = fg_policy_id_of(skel, "tb"),
				    .family = FG_FAMILY_IPV4,
				    .prefix_len = 32};
	struct fg_source4_key key4;
	struct fg_source_state st;

	(void)state;
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 8), 5);
	assert_int_equal(xdp_passed(skel, T0, &ssh, 1), 1);
	assert_int_equal(xdp_passed(skel, T0, &web, 1), 1);
	assert_int_equal(xdp_passed(skel, T0, &v6, 8), 5);
	assert_int_equal(xdp_passed(skel, T0, &ping, 1), 1);

	inet_pton(AF_INET, "10.0.0.1", key.addr);
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(fd4, &key4, &st), 0);
	assert_true(st.tat_ns > T0); /* burst spent: the TAT is ahead */
	assert_int_not_equal(bpf_map_lookup_elem(fd, &key, &st), 0);
	/* per = src/24+dport: the masked address and the port, in 12 bytes */
	key = (struct fg_source_key){.policy_id = fg_policy_id_of(skel, "lb"),
				     .family = FG_FAMILY_IPV4,
				     .prefix_len = 24,
				     .dport = 80,
				     .addr = {10, 0, 7, 0}};
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(fd4, &key4, &st), 0);
	/* the IPv6 /64 and the global key stay in sources */
	key = (struct fg_source_key){.policy_id = fg_policy_id_of(skel, "tb"),
				     .family = FG_FAMILY_IPV6,
				     .prefix_len = 64,
				     .addr = {0xfd}};
	assert_int_equal(bpf_map_lookup_elem(fd, &key, &st), 0);
	key = (struct fg_source_key){.policy_id = fg_policy_id_of(skel, "all")};
	assert_int_equal(bpf_map_lookup_elem(fd, &key, &st), 0);
	assert_int_equal(map_entries(fd4), 3); /* tb, fw, lb */
	assert_int_equal(map_entries(fd), 2);  /* tb's IPv6 key, all's global key */
	floodgate_bpf__destroy(skel);
}

/* The kernel's accounting of a map (fdinfo "memlock"). */
static unsigned long long memlock_of(int fd)
{
	unsigned long long bytes = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

/* Issue 10: at most 96 bytes of kernel memory per tracked IPv4 source at
 * max_sources = 1048576. Kernels since 6.5 report an LRU hash's real size
 * (48-byte element header + key + value + 16-byte bucket an entry, and a
 * fixed part that this integer division drops); older ones report only
 * key + value rounded up (6.1: 32 and 40 bytes), where only "sources4's
 * entries are smaller" can be asserted. Maps only: no program is loaded. */
static void test_sources4_memory_per_entry(void **state)
{
	const struct fg_skel_opts opts = {.progs = FG_SKEL_XDP};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel;
	struct bpf_program *prog;
	unsigned long long per4, per6;

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(fg_config_parse_string("test",
						"max_sources = 1048576\n[policy p]\n"
						"match = udp\nrate = 10/s\n",
						cfg, stderr),
			 0);
	skel = fg_skel_open(cfg, &opts);
	assert_non_null(skel);
	bpf_object__for_each_program (prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	assert_int_equal(floodgate_bpf__load(skel), 0);
	assert_int_equal(bpf_map__max_entries(skel->maps.sources4), 1048576);
	assert_int_equal(bpf_map__max_entries(skel->maps.sources), 262144);
	per4 = memlock_of(bpf_map__fd(skel->maps.sources4)) / 1048576;
	per6 = memlock_of(bpf_map__fd(skel->maps.sources)) / 262144;
	printf("memlock per entry: sources4 (IPv4) %llu B, sources %llu B\n", per4, per6);
	assert_true(per4 > 0 && per4 < per6);
	if (per6 >= 100) /* the kernel counts element headers: the real figure */
		assert_true(per4 <= 96);
	floodgate_bpf__destroy(skel);
	free(cfg);
}

/* An upgrade from the layout before sources4: every entry of the old
 * `sources` is copied, its IPv4 keys into sources4 and the rest into the
 * new sources, each with its state. */
static void test_upgrade_splits_old_sources(void **state)
{
	const struct fg_source_key old_keys[] = {
		{.policy_id = 7,
		 .family = FG_FAMILY_IPV4,
		 .prefix_len = 24,
		 .dport = 53,
		 .addr = {10, 1, 2}},
		{.policy_id = 7, .family = FG_FAMILY_IPV6, .prefix_len = 64, .addr = {0x20, 0x01}},
		{.policy_id = 8}, /* a global key */
		{.policy_id = 7, .family = FG_FAMILY_OVERFLOW},
	};
	int old = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "sources", sizeof(struct fg_source_key),
				 sizeof(struct fg_source_state), 64, NULL);
	int fd4 = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "sources4", sizeof(struct fg_source4_key),
				 sizeof(struct fg_source_state), 64, NULL);
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "sources", sizeof(struct fg_source_key),
				sizeof(struct fg_source_state), 64, NULL);
	struct fg_source4_key key4 = fg_source4_key_of(&old_keys[0]);
	struct fg_source_state st;
	size_t i;

	(void)state;
	assert_true(old >= 0 && fd4 >= 0 && fd >= 0);
	for (i = 0; i < sizeof(old_keys) / sizeof(old_keys[0]); i++) {
		st = (struct fg_source_state){.tat_ns = 1000 + i, .last_seen = 3, .dropped = 64};
		assert_int_equal(bpf_map_update_elem(old, &old_keys[i], &st, BPF_NOEXIST), 0);
	}
	assert_int_equal(fg_upgrade_split_sources(old, fd4, fd), 4);
	assert_int_equal(map_entries(fd4), 1);
	assert_int_equal(map_entries(fd), 3);
	assert_int_equal(bpf_map_lookup_elem(fd4, &key4, &st), 0);
	assert_int_equal(st.tat_ns, 1000);
	assert_int_equal(key4.addr[1], 1);
	for (i = 1; i < sizeof(old_keys) / sizeof(old_keys[0]); i++) {
		assert_int_equal(bpf_map_lookup_elem(fd, &old_keys[i], &st), 0);
		assert_int_equal(st.tat_ns, 1000 + i);
	}
	close(old);
	close(fd4);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ipv4_burst_then_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_and_prefix_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vlan_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_and_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation_at_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_ip_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_match_and_fallthrough, setup, teardown),
		cmocka_unit_test_setup_teardown(test_monitor_passes_and_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_key_and_fragments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tc_program, setup_both_programs, teardown),
		cmocka_unit_test_setup_teardown(test_live_reload_keeps_state, setup, teardown),
		cmocka_unit_test(test_fixed_window_admits_seam_burst),
		cmocka_unit_test(test_sliding_window_refuses_seam_burst),
		cmocka_unit_test(test_sliding_log_is_exact),
		cmocka_unit_test(test_leaky_bucket_constant_spacing),
		cmocka_unit_test(test_byte_limits),
		cmocka_unit_test(test_layers_bind_in_turn),
		cmocka_unit_test(test_sport_syn_and_port_keys),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_bad_ip_headers_are_malformed),
		cmocka_unit_test(test_allow_and_deny_lists),
		cmocka_unit_test(test_bans_escalate),
		cmocka_unit_test(test_ban_max_defaults_to_first_ban),
		cmocka_unit_test(test_clock_read_only_when_needed),
		cmocka_unit_test(test_refusal_cache),
		cmocka_unit_test(test_sixty_four_layers),
		cmocka_unit_test(test_new_source_budget),
		cmocka_unit_test(test_new_sources_during_spoofed_flood),
		cmocka_unit_test(test_pinned_table_covers_every_map),
		cmocka_unit_test(test_reload_reclaims_state),
		cmocka_unit_test(test_vlan_stacks_meet_lists_bans_policies),
		cmocka_unit_test(test_tiny_first_fragments_dropped),
		cmocka_unit_test(test_expired_strike_does_not_shadow_ban),
		cmocka_unit_test(test_strike_lifetime_and_full_trie),
		cmocka_unit_test(test_on_insert_failure_values),
		cmocka_unit_test(test_size_classes),
		cmocka_unit_test(test_builtin_policy),
		cmocka_unit_test(test_full_table_keeps_refused_source),
		cmocka_unit_test(test_verifier_instruction_counts),
		cmocka_unit_test(test_two_cpus_frozen_clock_exact),
		cmocka_unit_test(test_two_cpus_every_algorithm_exact),
		cmocka_unit_test(test_two_cpus_real_clock_bounded),
		cmocka_unit_test(test_two_cpus_coarse_clock_bounded),
		cmocka_unit_test(test_two_cpus_naive_update_overshoots),
		cmocka_unit_test(test_fleet_counts_and_holds),
		cmocka_unit_test(test_host_scope_shares_one_bucket),
		cmocka_unit_test(test_sources_split_by_family),
		cmocka_unit_test(test_sources4_memory_per_entry),
		cmocka_unit_test(test_upgrade_splits_old_sources),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_prog: needs root for BPF_PROG_TEST_RUN; skipped\n");
		return 77;
	}
	return cmocka_run_group_tests_name("bpf_prog_test_run", tests, NULL, NULL);
}
