/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading whole maps: batched iteration of hash maps and sums of per-CPU
 * arrays. Every reader of a table (top, metrics, upgrade, the host table)
 * walks it through here. */
#ifndef FG_BATCH_H
#define FG_BATCH_H

#include <stddef.h>
#include <linux/types.h>

/* Calls `fn` for every entry of a hash map, read `chunk` entries a system
 * call with bpf_map_lookup_batch. Stops early when `fn` returns non-zero.
 * Returns 0 or a negative errno. */
int fg_map_for_each_batch(int fd, __u32 key_size, __u32 value_size, __u32 chunk,
			  int (*fn)(const void *key, const void *value, void *ctx), void *ctx);

/* Calls `fn` for every key of a map that has no batch lookup (an LPM
 * trie), with bpf_map_get_next_key. Stops early when `fn` returns
 * non-zero; a key deleted during the walk may restart it (the kernel's
 * order). Returns 0 or a negative errno (fn's, or the kernel's). */
int fg_map_for_each_key(int fd, __u32 key_size, int (*fn)(const void *key, void *ctx), void *ctx);

/* The same, with each key's value (value_size bytes; an entry deleted
 * between the key and its lookup is skipped). */
int fg_map_for_each_entry(int fd, __u32 key_size, __u32 value_size,
			  int (*fn)(const void *key, const void *value, void *ctx), void *ctx);

/* Sums entry `index` of a per-CPU array over every possible CPU into `sum`
 * (value_size bytes of __u64 counters). Returns 0 or a negative errno. */
int fg_sum_percpu(int fd, __u32 index, void *sum, size_t value_size);

#endif /* FG_BATCH_H */
