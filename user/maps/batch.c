// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps/batch.h"

int fg_map_for_each_batch(int fd, __u32 key_size, __u32 value_size, __u32 chunk,
			  int (*fn)(const void *key, const void *value, void *ctx), void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char *keys = malloc((size_t)key_size * chunk);
	char *values = malloc((size_t)value_size * chunk);
	__u64 batch_in = 0, batch_out = 0; /* the kernel's cursor: a bucket index */
	void *in = NULL;
	int err = 0;

	if (!keys || !values) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = chunk, i;
		int ret = bpf_map_lookup_batch(fd, in, &batch_out, keys, values, &count, &opts);

		if (ret && ret != -ENOENT) {
			err = ret;
			break;
		}
		for (i = 0; i < count && !err; i++)
			err = fn(keys + (size_t)i * key_size, values + (size_t)i * value_size, ctx);
		if (ret || err) /* -ENOENT: that was the last chunk */
			break;
		batch_in = batch_out;
		in = &batch_in;
	}
out:
	free(keys);
	free(values);
	return err > 0 ? 0 : err;
}

int fg_sum_percpu(int fd, __u32 index, void *sum, size_t value_size)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *values, *out = sum;
	size_t words = value_size / sizeof(__u64), i;
	int cpu;

	if (ncpus < 0)
		return ncpus;
	values = calloc(ncpus, value_size);
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &index, values)) {
		free(values);
		return -errno;
	}
	memset(sum, 0, value_size);
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < words; i++)
			out[i] += values[cpu * words + i];
	free(values);
	return 0;
}

int fg_map_for_each_key(int fd, __u32 key_size, int (*fn)(const void *key, void *ctx), void *ctx)
{
	char *keys = malloc(2 * (size_t)key_size);
	void *prev = NULL, *next;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	next = keys;
	while (!err && !bpf_map_get_next_key(fd, prev, next)) {
		err = fn(next, ctx);
		/* The key just visited is the cursor of the next call. */
		prev = next;
		next = next == keys ? keys + key_size : keys;
	}
	if (!err && errno != ENOENT)
		err = -errno;
	free(keys);
	return err > 0 ? 0 : err;
}

struct entry_walk {
	int fd;
	void *value;
	int (*fn)(const void *key, const void *value, void *ctx);
	void *ctx;
};

static int visit_entry(const void *key, void *ctx)
{
	struct entry_walk *w = ctx;

	if (bpf_map_lookup_elem(w->fd, key, w->value))
		return 0;
	return w->fn(key, w->value, w->ctx);
}

int fg_map_for_each_entry(int fd, __u32 key_size, __u32 value_size,
			  int (*fn)(const void *key, const void *value, void *ctx), void *ctx)
{
	struct entry_walk w = {.fd = fd, .value = malloc(value_size), .fn = fn, .ctx = ctx};
	int err;

	if (!w.value)
		return -ENOMEM;
	err = fg_map_for_each_key(fd, key_size, visit_entry, &w);
	free(w.value);
	return err;
}
