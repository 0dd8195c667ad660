// SPDX-License-Identifier: GPL-2.0-only
/* The [allow]/[deny] lists in `access_lists` (see access.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "policy/access.h"

/* Entries read a system call when a slot is cleared. */
#define CLEAR_CHUNK 65536

__u32 fg_access_lists_entries(__u32 prefixes)
{
	__u64 room = 2 * ((__u64)prefixes + prefixes / 4);

	return room > FG_MAX_ACCESS_PREFIXES ? (__u32)room : FG_MAX_ACCESS_PREFIXES;
}

struct access_entry {
	struct fg_src_lpm_key key;
	__u32 access; /* FG_ACCESS_ALLOW < FG_ACCESS_DENY: allow sorts first */
};

/* Any total order that groups equal keys, allow first. */
static int compare_entries(const void *a, const void *b)
{
	const struct access_entry *x = a, *y = b;
	int order = memcmp(&x->key, &y->key, sizeof(x->key));

	if (order)
		return order;
	return (x->access > y->access) - (x->access < y->access);
}

static void add_cidrs(struct access_entry *entries, size_t *n, const struct fg_cidr *cidrs,
		      size_t count, __u32 slot, __u32 access)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct access_entry *e = &entries[(*n)++];

		memset(e, 0, sizeof(*e));
		e->key.prefixlen = FG_SRC_LPM_HEADER_BITS + cidrs[i].prefix_len;
		e->key.slot = slot;
		e->key.family = cidrs[i].family;
		memcpy(e->key.addr, cidrs[i].addr, 16);
		e->access = access;
	}
}

/* Sorted, one entry a prefix (the first, allow, of equal ones), split into
 * the key and value arrays a batch update takes. */
static int keep_unique(struct access_entry *entries, size_t n, struct fg_access_list *out)
{
	size_t i, kept = 0;

	qsort(entries, n, sizeof(*entries), compare_entries);
	out->keys = malloc((n ? n : 1) * sizeof(*out->keys));
	out->values = malloc((n ? n : 1) * sizeof(*out->values));
	if (!out->keys || !out->values)
		return -ENOMEM;
	out->n_allow = 0;
	for (i = 0; i < n; i++) {
		if (kept && !memcmp(&out->keys[kept - 1], &entries[i].key, sizeof(entries[i].key)))
			continue;
		out->keys[kept] = entries[i].key;
		out->values[kept++] = entries[i].access;
		out->n_allow += entries[i].access == FG_ACCESS_ALLOW;
	}
	out->n = (unsigned int)kept;
	return 0;
}

int fg_access_compile(const struct fg_config *cfg, const struct fg_feeds *feeds, __u32 slot,
		      struct fg_access_list *out)
{
	size_t n = cfg->n_allow + cfg->n_deny, used = 0;
	struct access_entry *entries;
	int ret;

	if (feeds)
		n += feeds->allow.n + feeds->deny.n;
	out->keys = NULL;
	out->values = NULL;
	out->n = out->n_allow = 0;
	entries = malloc((n ? n : 1) * sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	add_cidrs(entries, &used, cfg->allow, cfg->n_allow, slot, FG_ACCESS_ALLOW);
	add_cidrs(entries, &used, cfg->deny, cfg->n_deny, slot, FG_ACCESS_DENY);
	if (feeds) {
		add_cidrs(entries, &used, feeds->allow.cidrs, feeds->allow.n, slot,
			  FG_ACCESS_ALLOW);
		add_cidrs(entries, &used, feeds->deny.cidrs, feeds->deny.n, slot, FG_ACCESS_DENY);
	}
	ret = keep_unique(entries, used, out);
	free(entries);
	return ret;
}

static int keep_key(struct fg_access_keys *out, size_t *cap, const struct fg_src_lpm_key *key)
{
	if (out->n == *cap) {
		size_t bigger_cap = *cap ? *cap * 2 : CLEAR_CHUNK;
		struct fg_src_lpm_key *bigger = realloc(out->keys, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		out->keys = bigger;
		*cap = bigger_cap;
	}
	out->keys[out->n++] = *key;
	return 0;
}

/*
 * The trie hands its keys out in post-order, and every key's first byte
 * after the prefix length is its slot: all of slot 0 comes before any of
 * slot 1. A walk for slot 0 stops at the first key of slot 1.
 */
int fg_access_collect_slot(int fd, __u32 slot, struct fg_access_keys *out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct fg_src_lpm_key *keys = malloc(CLEAR_CHUNK * sizeof(*keys)), cursor;
	__u32 *values = malloc(CLEAR_CHUNK * sizeof(*values));
	bool past = false;
	void *in = NULL;
	size_t cap = 0;
	int ret = keys && values ? 0 : -ENOMEM;

	memset(out, 0, sizeof(*out));
	while (!ret && !past) {
		__u32 count = CLEAR_CHUNK, i;
		int err = bpf_map_lookup_batch(fd, in, &cursor, keys, values, &count, &opts);

		if (err && err != -ENOENT) {
			ret = err;
			break;
		}
		for (i = 0; i < count && !ret; i++) {
			past = past || keys[i].slot > slot;
			if (keys[i].slot == slot)
				ret = keep_key(out, &cap, &keys[i]);
		}
		if (err) /* -ENOENT: the last chunk */
			break;
		in = &cursor;
	}
	free(keys);
	free(values);
	if (ret)
		fg_access_keys_free(out);
	return ret;
}

int fg_access_delete(int fd, const struct fg_access_keys *keys)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = (__u32)keys->n;

	if (keys->n && bpf_map_delete_batch(fd, keys->keys, &count, &opts))
		return -errno;
	return 0;
}

void fg_access_keys_free(struct fg_access_keys *keys)
{
	free(keys->keys);
	memset(keys, 0, sizeof(*keys));
}

long fg_access_clear_slot(int fd, __u32 slot)
{
	struct fg_access_keys doomed;
	int ret = fg_access_collect_slot(fd, slot, &doomed);
	long n = (long)doomed.n;

	/* Collected first, deleted after: a delete in the walk restarts it. */
	if (!ret)
		ret = fg_access_delete(fd, &doomed);
	fg_access_keys_free(&doomed);
	return ret ? ret : n;
}

int fg_access_write(int fd, const struct fg_access_list *list, __u32 slot, __u32 leftover)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = list->n;
	long cleared;

	if (leftover) {
		cleared = fg_access_clear_slot(fd, slot);
		if (cleared < 0)
			return (int)cleared;
	}
	if (!count)
		return 0;
	if (bpf_map_update_batch(fd, list->keys, list->values, &count, &opts))
		return -errno;
	return 0;
}
