// SPDX-License-Identifier: GPL-2.0-only
/* The fixtures and helpers of fixtures.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
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

/*
 * Loads kept for reuse. A load is a full verification of the programs, most
 * of this suite's time under emulation (10-25 s a load on the 6.1 guest of
 * `make test-kernels`), and most tests load the same programs: the config's
 * policies live in maps, and only the read-only data, the map sizes and the
 * programs loaded make two loads differ. A skeleton a test releases is kept,
 * and a later prepare_skel() whose load would be the same (its image: those
 * three) gets it back emptied as a fresh load leaves it (every map zeroed or
 * emptied, the ring drained, .bss zeroed; the prog arrays the loader filled
 * kept) with its own config pushed; reuse.c proves the emptying against a
 * fresh load, map by map.
 */
#define KEPT_SKELS 2 /* a skeleton's default tables take ~57 MiB; the guest has 3 GiB */

struct kept_skel {
	struct floodgate_bpf *skel; /* NULL: a free slot */
	char *image;
	size_t image_len;
	bool in_use;
	unsigned long last_used;
};

static struct kept_skel kept[KEPT_SKELS];
static unsigned long kept_uses;

/* What makes two loads of the object the same program: the read-only data,
 * every map's size and flags, and which programs load. */
static char *load_image(struct floodgate_bpf *skel, size_t *len)
{
	const void *rodata = bpf_map__initial_value(skel->maps.rodata, len);
	struct bpf_program *prog;
	struct bpf_map *map;
	char *image = NULL;
	FILE *out = open_memstream(&image, len);

	if (!out)
		return NULL;
	fwrite(rodata, 1, *len, out);
	bpf_object__for_each_map (map, skel->obj) {
		__u32 shape[2] = {bpf_map__max_entries(map), bpf_map__map_flags(map)};

		fwrite(shape, sizeof(shape), 1, out);
	}
	bpf_object__for_each_program (prog, skel->obj) {
		bool autoload = bpf_program__autoload(prog);

		fwrite(&autoload, sizeof(autoload), 1, out);
	}
	if (fclose(out)) {
		free(image);
		return NULL;
	}
	return image;
}

/* Every key of a hash or trie map, collected before any is deleted: a hash
 * map's walk from NULL rescans its buckets from the first. */
static int empty_keyed_map(int fd, size_t key_size)
{
	size_t n = 0, cap = 1024, i;
	char *keys = malloc(cap * key_size), *grown;
	int err = 0;

	while (keys && !bpf_map_get_next_key(fd, n ? keys + (n - 1) * key_size : NULL,
					     keys + n * key_size)) {
		if (++n < cap)
			continue;
		cap *= 2;
		grown = realloc(keys, cap * key_size);
		if (!grown)
			free(keys);
		keys = grown;
	}
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++)
		if (bpf_map_delete_elem(fd, keys + i * key_size))
			err = -errno;
	free(keys);
	return err;
}

size_t map_value_stride(const struct bpf_map *map)
{
	enum bpf_map_type type = bpf_map__type(map);
	size_t size = bpf_map__value_size(map);

	if (type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	    type == BPF_MAP_TYPE_PERCPU_HASH)
		return ((size + 7) & ~(size_t)7) * libbpf_num_possible_cpus();
	return size;
}

/* Every index of an array map set to zeros, in one batch. */
static int zero_array_map(const struct bpf_map *map)
{
	__u32 n = bpf_map__max_entries(map), i, count = n;
	size_t stride = map_value_stride(map);
	__u32 *keys = malloc(n * sizeof(*keys));
	void *zeros = calloc(n, stride);
	int err = 0;

	if (!keys || !zeros)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++)
		keys[i] = i;
	if (!err && bpf_map_update_batch(bpf_map__fd(map), keys, zeros, &count, NULL))
		err = -errno;
	free(keys);
	free(zeros);
	return err;
}

static int discard_event(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

static int drain_ring(int fd)
{
	struct ring_buffer *ring = ring_buffer__new(fd, discard_event, NULL, NULL);
	int err = ring ? ring_buffer__consume(ring) : -errno;

	ring_buffer__free(ring);
	return err < 0 ? err : 0;
}

/* Empties every map of a loaded skeleton as its load left them; -ENOTSUP
 * for a map it cannot (the caller loads afresh). */
static int empty_skel(struct floodgate_bpf *skel)
{
	struct bpf_map *map;
	int err = 0;

	bpf_object__for_each_map (map, skel->obj) {
		int fd = bpf_map__fd(map);

		if (err)
			break;
		if (map == skel->maps.rodata)
			continue; /* frozen; the image says it is the same */
		if (map == skel->maps.bss) {
			memset(skel->bss, 0, sizeof(*skel->bss));
			continue;
		}
		switch (bpf_map__type(map)) {
		case BPF_MAP_TYPE_ARRAY:
		case BPF_MAP_TYPE_PERCPU_ARRAY:
			err = zero_array_map(map);
			break;
		case BPF_MAP_TYPE_HASH:
		case BPF_MAP_TYPE_LRU_HASH:
		case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		case BPF_MAP_TYPE_LPM_TRIE:
			err = empty_keyed_map(fd, bpf_map__key_size(map));
			break;
		case BPF_MAP_TYPE_RINGBUF:
			err = drain_ring(fd);
			break;
		case BPF_MAP_TYPE_PROG_ARRAY:
			break; /* the loader's tail calls, the same for the same image */
		default:
			err = -ENOTSUP;
		}
	}
	return err;
}

/* A kept skeleton not in use whose image is `image`, emptied; or NULL. */
static struct floodgate_bpf *reuse_kept(const char *image, size_t image_len)
{
	struct kept_skel *k;

	for (k = kept; k < kept + KEPT_SKELS; k++) {
		if (!k->skel || k->in_use || k->image_len != image_len ||
		    memcmp(k->image, image, image_len))
			continue;
		if (empty_skel(k->skel)) {
			floodgate_bpf__destroy(k->skel);
			free(k->image);
			memset(k, 0, sizeof(*k));
			return NULL;
		}
		k->in_use = true;
		k->last_used = ++kept_uses;
		return k->skel;
	}
	return NULL;
}

/* Keeps a loaded skeleton in a free slot, or in place of the least recently
 * used one not in use; takes `image`. */
static void keep(struct floodgate_bpf *skel, char *image, size_t image_len)
{
	struct kept_skel *k, *slot = NULL;

	for (k = kept; k < kept + KEPT_SKELS; k++) {
		if (!k->skel) {
			slot = k;
			break;
		}
		if (!k->in_use && (!slot || k->last_used < slot->last_used))
			slot = k;
	}
	if (!slot) {
		free(image);
		return;
	}
	if (slot->skel) {
		floodgate_bpf__destroy(slot->skel);
		free(slot->image);
	}
	*slot = (struct kept_skel){.skel = skel,
				   .image = image,
				   .image_len = image_len,
				   .in_use = true,
				   .last_used = ++kept_uses};
}

/* prepare_skel(), and for load_sized() the injected insert failures and
 * the bans table's size (0: the default) set before the load. */
static struct floodgate_bpf *prepare_tuned(const char *config, const struct fg_skel_opts *opts,
					   bool fail_inserts, __u32 max_bans)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct floodgate_bpf *skel = NULL, *opened = NULL;
	struct fg_pinned maps;
	char *image = NULL;
	size_t image_len = 0;
	int err = cfg ? fg_config_parse_string("<test>", config, cfg, stderr) : -ENOMEM;

	if (!err) {
		opened = fg_skel_open(cfg, opts);
		err = opened ? 0 : -errno;
	}
	if (!err) {
		opened->rodata->fg_test_fail_inserts = fail_inserts;
		if (max_bans && bpf_map__set_max_entries(opened->maps.bans, max_bans)) {
			err = -errno;
			floodgate_bpf__destroy(opened);
		}
	}
	if (!err && !opts->pin_dir && opts->host_fd <= 0)
		image = load_image(opened, &image_len);
	if (image)
		skel = reuse_kept(image, image_len);
	if (skel) {
		floodgate_bpf__destroy(opened);
		free(image);
		err = fg_pinned_from_object(skel->obj, &maps);
		if (!err)
			err = fg_skel_push(&maps.maps, cfg, NULL, 0);
		if (err)
			release_skel(skel);
	} else if (!err) {
		err = fg_skel_load_opened(opened, cfg, NULL, NULL);
		skel = err ? NULL : opened;
		if (skel && image)
			keep(skel, image, image_len);
		else
			free(image);
	}
	free(cfg);
	errno = -err;
	return err ? NULL : skel;
}

struct floodgate_bpf *prepare_skel(const char *config, const struct fg_skel_opts *opts)
{
	return prepare_tuned(config, opts, false, 0);
}

void release_skel(struct floodgate_bpf *skel)
{
	struct kept_skel *k;

	for (k = kept; k < kept + KEPT_SKELS; k++)
		if (k->skel == skel) {
			k->in_use = false;
			return;
		}
	floodgate_bpf__destroy(skel);
}

/* Private maps (nothing is pinned, nothing outlives the test), fg_xdp only
 * (fg_tc's own tests load both: each verification costs seconds under
 * emulation, where `make test-kernels` runs this suite), prepared the way
 * the loader prepares them. */
struct floodgate_bpf *load_skel_with(const char *config, bool test_clock, bool naive)
{
	const struct fg_skel_opts opts = {
		.progs = FG_SKEL_XDP, .test_clock = test_clock, .naive_update = naive};

	return prepare_skel(config, &opts);
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
	struct floodgate_bpf *skel = prepare_skel(test_config, &opts);

	if (!skel) {
		fprintf(stderr, "cannot load floodgate: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static int destroy_skel(void **state)
{
	release_skel(*state);
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
	struct floodgate_bpf *skel = prepare_tuned(config, &opts, fail_inserts, max_bans);

	assert_non_null(skel);
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
