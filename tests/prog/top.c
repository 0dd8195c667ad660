// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate top` against real kernel maps: a full 1,000,000-entry
 * `sources4` LRU table (IPv4, 12-byte keys) is ranked with batch reads
 * together with a small `sources` table (IPv6, 24-byte keys); its time is
 * printed, not asserted: a speed on a shared machine, or under emulation,
 * is a measurement. The heaviest source comes first, whichever table holds
 * it, and --policy keeps only its policy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "floodgate.h"
#include "prog_test.h"
#include "views/top.h"

#define FULL_TABLE  1000000U
#define FILL_CHUNK  65536U
#define POLICY_A    0x1111
#define POLICY_B    0x2222
#define HEAVY_DROPS 5000000U
#define IPV6_DROPS  (64 * 39062U) /* the second heaviest (a sampled count: x 64) */

struct tables {
	int sources4;
	int sources;
};

static double seconds_since(clockid_t clock, const struct timespec *start)
{
	struct timespec now;

	clock_gettime(clock, &now);
	return (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Entry i: 10.x.y.z = i, policy A or B alternating, dropped = (i % 1000)
 * x 64 as the datapath samples it (so many ties), with the refusing flag
 * on odd entries (top masks it), except the last, the heaviest of all. */
static void make_entry(__u32 i, struct fg_source4_key *key, struct fg_source_state *value)
{
	__u32 addr = htobe32(0x0a000000 | i);

	*key = (struct fg_source4_key){.policy_id = i % 2 ? POLICY_B : POLICY_A,
				       .family = FG_FAMILY_IPV4,
				       .prefix_len = 32};
	memcpy(key->addr, &addr, 4);
	*value = (struct fg_source_state){.tat_ns = 1,
					  .last_seen = i,
					  .dropped = (i % 1000) * 64 | (i & FG_DROPPED_REFUSING)};
	if (i == FULL_TABLE - 1)
		value->dropped = HEAVY_DROPS;
}

static int full_table(void)
{
	struct fg_source4_key *keys = calloc(FILL_CHUNK, sizeof(*keys));
	struct fg_source_state *values = calloc(FILL_CHUNK, sizeof(*values));
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "sources4", sizeof(*keys), sizeof(*values),
				FULL_TABLE, NULL);
	__u32 i, n;

	assert_true(fd >= 0);
	assert_non_null(keys);
	assert_non_null(values);
	for (i = 0; i < FULL_TABLE; i += n) {
		__u32 count, j;

		n = FULL_TABLE - i < FILL_CHUNK ? FULL_TABLE - i : FILL_CHUNK;
		for (j = 0; j < n; j++)
			make_entry(i + j, &keys[j], &values[j]);
		count = n;
		assert_int_equal(bpf_map_update_batch(fd, keys, values, &count, NULL), 0);
	}
	free(keys);
	free(values);
	return fd;
}

/* The other table: one IPv6 source of policy B, and policy A's global key. */
static int ipv6_table(void)
{
	struct fg_source_key v6 = {.policy_id = POLICY_B,
				   .family = FG_FAMILY_IPV6,
				   .prefix_len = 64,
				   .addr = {0xfd, 0, 0, 0, 0, 0, 0, 9}};
	struct fg_source_key global = {.policy_id = POLICY_A};
	struct fg_source_state heavy = {.tat_ns = 1, .last_seen = 1, .dropped = IPV6_DROPS};
	struct fg_source_state idle = {.tat_ns = 1};
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "sources", sizeof(v6), sizeof(heavy), 1024,
				NULL);

	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &v6, &heavy, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(fd, &global, &idle, BPF_ANY), 0);
	return fd;
}

/* Built once for the feature's tests: filling a million entries takes a
 * while, under emulation above all. */
FG_PROG_GROUP_FIXTURE(tables);

int fg_fixture_tables_setup(void **state)
{
	static struct tables fds;

	fds.sources4 = full_table();
	fds.sources = ipv6_table();
	*state = &fds;
	return 0;
}

int fg_fixture_tables_teardown(void **state)
{
	const struct tables *fds = *state;

	close(fds->sources4);
	close(fds->sources);
	return 0;
}

static struct fg_top_maps maps_of(void **state)
{
	const struct tables *fds = *state;

	return (struct fg_top_maps){
		.sources4 = fds->sources4, .sources = fds->sources, .windows = -1, .logs = -1};
}

FG_PROG_TEST(test_full_table_ranked)
{
	struct fg_top_maps maps = maps_of(state);
	struct fg_top top;
	struct timespec wall_start, cpu_start;
	double wall, cpu;
	unsigned int i;

	clock_gettime(CLOCK_MONOTONIC, &wall_start);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_start);
	assert_int_equal(fg_top_collect(&maps, false, 0, 20, &top), 0);
	cpu = seconds_since(CLOCK_PROCESS_CPUTIME_ID, &cpu_start);
	wall = seconds_since(CLOCK_MONOTONIC, &wall_start);
	printf("    top -n 20 over %llu entries: %.3f s (%.3f s of CPU, user + kernel)\n",
	       top.scanned, wall, cpu);
	/* An LRU table may evict a few entries as it fills up. */
	assert_true(top.scanned >= FULL_TABLE * 99ULL / 100 + 2);
	assert_int_equal(top.count, 20);
	/* the IPv4 key comes back whole from its 12 bytes */
	assert_int_equal(top.rows[0].dropped, HEAVY_DROPS);
	assert_int_equal(top.rows[0].key.family, FG_FAMILY_IPV4);
	assert_int_equal(top.rows[0].key.prefix_len, 32);
	assert_int_equal(top.rows[0].key.policy_id, POLICY_B);
	assert_int_equal(top.rows[0].key.addr[0], 10);
	assert_int_equal(top.rows[0].key.addr[3], (FULL_TABLE - 1) & 0xff);
	assert_int_equal(top.rows[0].key.addr[4], 0);
	/* the IPv6 source, from the other table */
	assert_int_equal(top.rows[1].dropped, IPV6_DROPS);
	assert_int_equal(top.rows[1].key.family, FG_FAMILY_IPV6);
	assert_int_equal(top.rows[1].key.addr[7], 9);
	for (i = 2; i < top.count; i++) {
		assert_true(top.rows[i - 1].dropped >= top.rows[i].dropped);
		assert_int_equal(top.rows[i].dropped, 999 * 64);
	}
	fg_top_free(&top);
}

FG_PROG_TEST(test_policy_filter)
{
	struct fg_top_maps maps = maps_of(state);
	struct fg_top top;
	unsigned int i;

	/* The heaviest entry is policy B's (odd index): A's list lacks it. */
	assert_int_equal(fg_top_collect(&maps, true, POLICY_A, 50, &top), 0);
	assert_int_equal(top.count, 50);
	for (i = 0; i < top.count; i++) {
		assert_int_equal(top.rows[i].key.policy_id, POLICY_A);
		assert_true(top.rows[i].dropped < 1000 * 64);
	}
	/* Ties go to the most recently seen. */
	assert_true(top.rows[0].last_seen_ns >= top.rows[1].last_seen_ns);
	fg_top_free(&top);
	assert_int_equal(fg_top_collect(&maps, true, POLICY_B, 2, &top), 0);
	assert_int_equal(top.rows[0].dropped, HEAVY_DROPS);
	assert_int_equal(top.rows[1].dropped, IPV6_DROPS);
	fg_top_free(&top);
}
