// SPDX-License-Identifier: GPL-2.0-only
/* The fixtures and helpers of fixtures.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "fixtures.h"

const char test_config[] = "malformed = drop\n"
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

/* Private maps (nothing is pinned, nothing outlives the test), fg_xdp only
 * (fg_tc's own tests load both: each verification costs seconds under
 * emulation, where `make test-kernels` runs this suite), prepared the way
 * the loader prepares them. */
struct floodgate_bpf *load_skel_with(const char *config, bool test_clock, bool naive)
{
	const struct fg_skel_opts opts = {
		.progs = FG_SKEL_XDP, .test_clock = test_clock, .naive_update = naive};
	struct floodgate_bpf *skel;

	return fg_skel_prepare_text(config, &opts, &skel) ? NULL : skel;
}

/* Replaces the active policy of a loaded skeleton, in slot 0. */
int push_config(struct floodgate_bpf *skel, const char *text)
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
	struct floodgate_bpf *skel;

	if (fg_skel_prepare_text(test_config, &opts, &skel)) {
		fprintf(stderr, "cannot load floodgate: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static int destroy_skel(void **state)
{
	floodgate_bpf__destroy(*state);
	return 0;
}

int fg_fixture_policies_setup(void **state)
{
	return setup_progs(state, FG_SKEL_XDP);
}

int fg_fixture_policies_teardown(void **state)
{
	return destroy_skel(state);
}

int fg_fixture_both_programs_setup(void **state)
{
	return setup_progs(state, FG_SKEL_EVERY_PROG);
}

int fg_fixture_both_programs_teardown(void **state)
{
	return destroy_skel(state);
}

cpu_set_t stay_on_cpu0(void)
{
	cpu_set_t one, all;

	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	return all;
}

int run_prog(int prog_fd, const struct pkt_spec *spec, size_t truncate_to)
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
int xdp_at(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec)
{
	int verdict;

	skel->bss->fg_test_now_ns = now;
	verdict = run_prog(bpf_program__fd(skel->progs.fg_xdp), spec, 0);
	assert_true(verdict == XDP_PASS || verdict == XDP_DROP); /* never XDP_ABORTED */
	return verdict;
}

/* Sends n packets at `now`; returns how many XDP passed. */
int xdp_passed(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec, int n)
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

struct fg_policy_stats policy_stats(struct floodgate_bpf *skel, __u32 index)
{
	struct fg_policy_stats s;

	sum_percpu(bpf_map__fd(skel->maps.policy_stats), index, &s, sizeof(s));
	return s;
}

struct fg_global_stats global_stats(struct floodgate_bpf *skel)
{
	struct fg_global_stats s;

	sum_percpu(bpf_map__fd(skel->maps.global_stats), 0, &s, sizeof(s));
	return s;
}

/* A skeleton with the test clock and one config; the test destroys it. */
struct floodgate_bpf *load_with(const char *config)
{
	struct floodgate_bpf *skel = load_skel_with(config, true, false);

	assert_non_null(skel);
	return skel;
}

const struct pkt_spec udp_a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 9};

/* A skeleton with the test clock, optional insert-failure injection and the
 * given table sizes (0 keeps the default); the test destroys it. */
struct floodgate_bpf *load_sized(const char *config, int progs, __u32 max_sources, __u32 max_bans,
				 bool fail_inserts)
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
int hook_passed(struct floodgate_bpf *skel, bool tc, __u64 now, const struct pkt_spec *spec, int n)
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

/* A ban by hand, as `floodgate ban` writes it (ban_flag.c tests what a
 * write without the runtime record's flag does). */
void put_ban(struct floodgate_bpf *skel, int family, const char *addr, int len, __u64 expires_ns)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban = {.expires_ns = expires_ns,
			     .duration_ns = 1,
			     .strikes = 1,
			     .family = family,
			     .prefix_len = len};

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	put_ban_record(skel, &key, &ban);
}

void put_ban_record(struct floodgate_bpf *skel, const struct fg_src_lpm_key *key,
		    const struct fg_ban *ban)
{
	assert_int_equal(fg_runtime_mark_bans(bpf_map__fd(skel->maps.runtime)), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.bans), key, ban, BPF_ANY), 0);
}

/* The id the loaded slot 0 gave policy `name`. */
__u32 fg_policy_id_of(struct floodgate_bpf *skel, const char *name)
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
