/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What test_prog's features share: skeletons loaded with private maps and
 * the injected clock, packets run through either program, the counters
 * read back, and the per-test fixtures named in FG_PROG_TEST_WITH.
 */
#ifndef FG_TEST_FIXTURES_H
#define FG_TEST_FIXTURES_H

#include <sched.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

#include "base/clock.h"
#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "maps/skeleton.h"
#include "packets.h"
#include "prog_test.h"

#define MS  FG_NS_PER_MS
#define SEC FG_NS_PER_S
#define T0  (1000 * SEC) /* an arbitrary, non-zero start for the test clock */

/* The fixtures' config: five layers, from the most specific to the default. */
extern const char test_config[];
enum { P_SSH, P_DNS, P_PARTNERS, P_PING, P_DEFAULT };

/* policies: test_config on fg_xdp, the test clock; *state is the skeleton. */
int fg_fixture_policies_setup(void **state);
int fg_fixture_policies_teardown(void **state);
/* both_programs: the same with fg_tc loaded too. */
int fg_fixture_both_programs_setup(void **state);
int fg_fixture_both_programs_teardown(void **state);

/* A UDP datagram from 10.0.0.1 to port 9. */
extern const struct pkt_spec udp_a;

/* fg_skel_prepare_text() for a test: a skeleton an earlier test released
 * is reused, emptied, when its load would be the same (fixtures.c). NULL
 * with errno set on failure. Every skeleton a test gets from these loaders
 * goes back through release_skel(). */
struct floodgate_bpf *prepare_skel(const char *config, const struct fg_skel_opts *opts);
void release_skel(struct floodgate_bpf *skel);
/* Bytes per entry of a map's value as userspace reads and writes it (a
 * per-CPU map's, every CPU's, each rounded up to 8). */
size_t map_value_stride(const struct bpf_map *map);

struct floodgate_bpf *load_skel_with(const char *config, bool test_clock, bool naive);
struct floodgate_bpf *load_with(const char *config);
struct floodgate_bpf *load_sized(const char *config, int progs, __u32 max_sources, __u32 max_bans,
				 bool fail_inserts);
int push_config(struct floodgate_bpf *skel, const char *text);

int run_prog(int prog_fd, const struct pkt_spec *spec, size_t truncate_to);
int xdp_at(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec);
int xdp_passed(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec, int n);
int hook_passed(struct floodgate_bpf *skel, bool tc, __u64 now, const struct pkt_spec *spec, int n);

struct fg_policy_stats policy_stats(struct floodgate_bpf *skel, __u32 index);
struct fg_global_stats global_stats(struct floodgate_bpf *skel);
__u32 fg_policy_id_of(struct floodgate_bpf *skel, const char *name);
void put_ban(struct floodgate_bpf *skel, int family, const char *addr, int len, __u64 expires_ns);
/* The record `ban` at `key`, written as every writer of `bans` must: the
 * runtime record's bans_may_exist set first. */
void put_ban_record(struct floodgate_bpf *skel, const struct fg_src_lpm_key *key,
		    const struct fg_ban *ban);

/* Pins the calling thread to CPU 0 (per-CPU budgets, caches and LRU free
 * lists) and returns the mask to restore with sched_setaffinity(). */
cpu_set_t stay_on_cpu0(void);

#endif
