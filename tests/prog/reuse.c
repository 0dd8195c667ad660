// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fixtures' reuse of loaded skeletons (fixtures.c): a skeleton one test
 * dirtied and released, prepared again for the next, holds exactly what a
 * fresh load of the same config holds, map by map, so that no test sees
 * another's packets, bans, counters or events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixtures.h"

static const char reuse_config[] = "[policy flood]\n"
				   "match = udp dport 9\n"
				   "rate = 1/s\n"
				   "burst = 2\n"
				   "action = ban 10s\n";

static size_t entry_size; /* qsort's comparison: one key and its value */

static int compare_entries(const void *a, const void *b)
{
	return memcmp(a, b, entry_size);
}

/* A map's content as bytes: an array's values in index order, a hash or
 * trie's entries (key then value) sorted. */
static void dump_map(const struct bpf_map *map, FILE *out)
{
	int fd = bpf_map__fd(map);
	size_t key_size = bpf_map__key_size(map), stride = map_value_stride(map);
	__u32 n = bpf_map__max_entries(map), i, count = n, token;
	char *entries, *key;

	if (bpf_map__type(map) == BPF_MAP_TYPE_ARRAY ||
	    bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_ARRAY) {
		__u32 *keys = calloc(n, sizeof(*keys));
		char *values = calloc(n, stride);

		assert_true(keys && values);
		/* one batch for the whole array; ENOENT reports its end */
		if (bpf_map_lookup_batch(fd, NULL, &token, keys, values, &count, NULL))
			assert_int_equal(errno, ENOENT);
		assert_int_equal(count, n);
		fwrite(values, stride, n, out);
		free(keys);
		free(values);
		return;
	}
	entry_size = key_size + stride;
	entries = malloc((size_t)n * entry_size);
	assert_non_null(entries);
	for (i = 0, key = NULL; i < n; i++) {
		char *entry = entries + i * entry_size;

		if (bpf_map_get_next_key(fd, key, entry))
			break;
		assert_int_equal(bpf_map_lookup_elem(fd, entry, entry + key_size), 0);
		key = entry;
	}
	qsort(entries, i, entry_size, compare_entries);
	fwrite(&i, sizeof(i), 1, out);
	fwrite(entries, entry_size, i, out);
	free(entries);
}

static bool compared(const struct bpf_map *map)
{
	enum bpf_map_type type = bpf_map__type(map);

	/* a prog array holds the loaded programs' ids; the ring is read below */
	return type != BPF_MAP_TYPE_PROG_ARRAY && type != BPF_MAP_TYPE_RINGBUF;
}

/* A non-zero value in every array and one entry in every hash and trie. */
static void dirty_every_map(struct floodgate_bpf *skel)
{
	struct bpf_map *map;
	char key[256], value[65536];

	bpf_object__for_each_map (map, skel->obj) {
		size_t stride = map_value_stride(map);
		__u32 last = bpf_map__max_entries(map) - 1;

		if (!compared(map) || map == skel->maps.rodata)
			continue;
		assert_true(bpf_map__key_size(map) <= sizeof(key) && stride <= sizeof(value));
		memset(value, 0x5a, stride);
		switch (bpf_map__type(map)) {
		case BPF_MAP_TYPE_ARRAY:
		case BPF_MAP_TYPE_PERCPU_ARRAY:
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(map), &last, value, 0), 0);
			break;
		case BPF_MAP_TYPE_LPM_TRIE: /* prefixlen first: 8 bits of the rest */
			memset(key, 0x5a, sizeof(key));
			*(__u32 *)key = 8;
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(map), key, value, 0), 0);
			break;
		default:
			memset(key, 0x5a, sizeof(key));
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(map), key, value, 0), 0);
		}
	}
}

/* Bytes the ring's producer has written that its consumer has not read. */
static __u64 ring_unread(struct floodgate_bpf *skel)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pos = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.events), 0);
	__u64 consumer, producer;

	assert_true(pos != MAP_FAILED);
	consumer = *(volatile __u64 *)pos;
	producer = *(volatile __u64 *)((char *)pos + page);
	munmap(pos, 2 * page);
	return producer - consumer;
}

static char *dump_one(const struct bpf_map *map, size_t *len)
{
	char *bytes = NULL;
	FILE *out = open_memstream(&bytes, len);

	assert_non_null(out);
	dump_map(map, out);
	assert_int_equal(fclose(out), 0);
	return bytes;
}

/* Fails naming the first map whose content differs between two loads of
 * the same object. */
static void assert_same_maps(struct floodgate_bpf *a, struct floodgate_bpf *b)
{
	struct bpf_map *map_a, *map_b = bpf_object__next_map(b->obj, NULL);
	size_t len_a, len_b;
	char *dump_a, *dump_b;

	bpf_object__for_each_map (map_a, a->obj) {
		assert_non_null(map_b);
		assert_string_equal(bpf_map__name(map_a), bpf_map__name(map_b));
		if (compared(map_a)) {
			dump_a = dump_one(map_a, &len_a);
			dump_b = dump_one(map_b, &len_b);
			if (len_a != len_b || memcmp(dump_a, dump_b, len_a))
				fail_msg("map %s differs between the reused skeleton and a "
					 "fresh load",
					 bpf_map__name(map_a));
			free(dump_a);
			free(dump_b);
		}
		map_b = bpf_object__next_map(b->obj, map_b);
	}
}

FG_PROG_TEST(test_reused_skeleton_is_as_loaded)
{
	const struct fg_skel_opts opts = {.progs = FG_SKEL_XDP, .test_clock = true};
	struct floodgate_bpf *skel = prepare_skel(reuse_config, &opts), *again, *fresh;

	assert_non_null(skel);
	/* a flood banned, refused and reported, then every map written */
	xdp_passed(skel, T0, &udp_a, 50);
	assert_true(ring_unread(skel) > 0);
	dirty_every_map(skel);
	skel->bss->fg_test_clock_reads = 1;
	release_skel(skel);

	again = prepare_skel(reuse_config, &opts);
	assert_ptr_equal(again, skel); /* reused, or this test tests nothing */
	assert_int_equal(fg_skel_prepare_text(reuse_config, &opts, &fresh), 0);
	assert_int_equal(ring_unread(again), 0);
	assert_same_maps(again, fresh);
	floodgate_bpf__destroy(fresh);
	release_skel(again);
}
