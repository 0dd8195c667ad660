// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF_PROG_TEST_RUN micro-benchmark: ns/packet of the floodgate XDP program
 * (production build: real clock, CAS update) beside a bare XDP_DROP program,
 * interleaved in one run, medians of several rounds. Not a test: it asserts
 * nothing about speed, it reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "baseline.skel.h"
#include "config.h"
#include "floodgate.skel.h"
#include "pinned.h"
#include "policy.h"
#include "../prog/packets.h"

#define ROUNDS 7
#define REPEAT 2000000

struct scenario {
	const char *name;
	const char *config;
	struct pkt_spec pkt;
	bool frozen_clock; /* the test clock: shows what bpf_ktime_get_ns costs */
};

static const struct scenario scenarios[] = {
	{"token_bucket, hot key, admitted",
	 "[policy p]\nmatch = udp\nrate = 1000000000/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"token_bucket, hot key, dropped",
	 "[policy p]\nmatch = udp\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"token_bucket, hot key, IPv6 /64",
	 "[policy p]\nmatch = udp\nrate = 10/s\n",
	 {.family = 6, .src = "2001:db8::1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"token_bucket, hot key, dropped, no clock",
	 "[policy p]\nmatch = udp\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 true},
	{"fixed_window (CAS), hot key, dropped",
	 "[policy p]\nmatch = udp\nalgorithm = fixed_window\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"sliding_window (lock), hot key, dropped",
	 "[policy p]\nmatch = udp\nalgorithm = sliding_window\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"sliding_log (lock), hot key, dropped",
	 "[policy p]\nmatch = udp\nalgorithm = sliding_log\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"leaky_bucket (CAS), hot key, dropped",
	 "[policy p]\nmatch = udp\nalgorithm = leaky_bucket\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"3 layers (ip, /24, global), admitted",
	 "[policy a]\nmatch = udp\nrate = 1000000000/s\n[policy b]\nmatch = any\nper = "
	 "src/24\nrate = 1000000000/s\n[policy c]\nmatch = any\nper = global\nrate = "
	 "1000000000/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
	{"src-restricted policy (LPM lookup)",
	 "[policy p]\nmatch = udp dport 9\nsrc = 10.0.0.0/8\nrate = 10/s\n",
	 {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9},
	 false},
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double run_ns(int prog_fd, const struct pkt_spec *spec)
{
	uint8_t buf[1600];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .repeat = REPEAT);

	opts.data_size_in = build_packet(buf, spec);
	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		fprintf(stderr, "test run failed: %s\n", strerror(errno));
		exit(1);
	}
	return opts.duration; /* the kernel's average ns per repeat */
}

static struct floodgate_bpf *load_floodgate(const char *config, bool frozen_clock)
{
	struct floodgate_bpf *skel = floodgate_bpf__open();
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = malloc(sizeof(*compiled));
	struct fg_policy_maps maps;
	struct bpf_map *map;

	if (!skel || !cfg || !compiled)
		exit(1);
	bpf_object__for_each_map (map, skel->obj) {
		bpf_map__set_pin_path(map, NULL);
	}
	skel->rodata->fg_test_clock = frozen_clock;
	if (floodgate_bpf__load(skel) || fg_config_parse_string("bench", config, cfg, stderr) ||
	    fg_policy_compile(cfg, 0, compiled))
		exit(1);
	fg_policy_maps_from_skel(skel, &maps);
	if (fg_policy_write_slot(&maps, 0, compiled) || fg_policy_activate(&maps, 0))
		exit(1);
	free(cfg);
	free(compiled);
	return skel;
}

int main(void)
{
	size_t n = sizeof(scenarios) / sizeof(scenarios[0]), i;
	struct floodgate_bpf *skels[sizeof(scenarios) / sizeof(scenarios[0])];
	double base[ROUNDS], ns[sizeof(scenarios) / sizeof(scenarios[0])][ROUNDS], base_med;
	struct baseline_bpf *baseline = baseline_bpf__open_and_load();
	struct pkt_spec any = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9};
	int r;

	if (geteuid() != 0 || !baseline) {
		fprintf(stderr, "bench_prog: needs root and BPF\n");
		return 77;
	}
	for (i = 0; i < n; i++)
		skels[i] = load_floodgate(scenarios[i].config, scenarios[i].frozen_clock);
	for (r = 0; r < ROUNDS; r++) {
		base[r] = run_ns(bpf_program__fd(baseline->progs.baseline_drop), &any);
		for (i = 0; i < n; i++)
			ns[i][r] =
				run_ns(bpf_program__fd(skels[i]->progs.fg_xdp), &scenarios[i].pkt);
	}
	qsort(base, ROUNDS, sizeof(double), cmp_double);
	base_med = base[ROUNDS / 2];
	printf("BPF_PROG_TEST_RUN, %d repeats x %d rounds, medians\n", REPEAT, ROUNDS);
	printf("%-40s %10s %10s\n", "program", "ns/pkt", "x XDP_DROP");
	printf("%-40s %10.1f %10.2f\n", "bare XDP_DROP (baseline)", base_med, 1.0);
	for (i = 0; i < n; i++) {
		qsort(ns[i], ROUNDS, sizeof(double), cmp_double);
		printf("%-40s %10.1f %10.2f\n", scenarios[i].name, ns[i][ROUNDS / 2],
		       ns[i][ROUNDS / 2] / base_med);
		floodgate_bpf__destroy(skels[i]);
	}
	baseline_bpf__destroy(baseline);
	return 0;
}
