/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The [allow]/[deny] lists in `access_lists`: compiled from the config's
 * inline prefixes and its feed files into one sorted run per slot (one
 * entry a prefix; on the very same prefix in both lists, allow wins),
 * written by batch into the idle slot and reclaimed from the old slot after
 * the flip. The trie is sized at load for both slots with headroom.
 */
#ifndef FG_POLICY_ACCESS_H
#define FG_POLICY_ACCESS_H

#include <linux/types.h>

#include "config/config.h"
#include "config/feedfile.h"

/* The [allow]/[deny] prefixes of one slot, compiled: one entry a prefix,
 * sorted (heap). */
struct fg_access_list {
	unsigned int n;
	unsigned int n_allow; /* of n; the rest are [deny]'s */
	struct fg_src_lpm_key *keys;
	__u32 *values; /* enum fg_access */
};

/* The size of `access_lists` for lists of `prefixes` prefixes: two slots
 * (a reload writes the new lists beside the old ones), each with a
 * quarter more than the load's lists as headroom, and never below
 * FG_MAX_ACCESS_PREFIXES. */
__u32 fg_access_lists_entries(__u32 prefixes);

/* Compiles the inline lists of `cfg` and `feeds` (NULL: none) for `slot`
 * into `out`. Returns 0 or -ENOMEM. */
int fg_access_compile(const struct fg_config *cfg, const struct fg_feeds *feeds, __u32 slot,
		      struct fg_access_list *out);

/* Writes the compiled lists into their slot by batch, after removing what
 * an earlier, failed write left there (`leftover`: the slot's recorded
 * count). Returns 0 or a negative errno. */
int fg_access_write(int fd, const struct fg_access_list *list, __u32 slot, __u32 leftover);

/* Deletes every entry of `slot`: the number deleted, or a negative errno. */
long fg_access_clear_slot(int fd, __u32 slot);

/* The keys of one slot, collected (heap). */
struct fg_access_keys {
	struct fg_src_lpm_key *keys;
	size_t n;
};

/* Collects every key of `slot` into `out`: 0 or a negative errno. */
int fg_access_collect_slot(int fd, __u32 slot, struct fg_access_keys *out);
/* Deletes them by batch: 0 or a negative errno. */
int fg_access_delete(int fd, const struct fg_access_keys *keys);
void fg_access_keys_free(struct fg_access_keys *keys);

#endif /* FG_POLICY_ACCESS_H */
