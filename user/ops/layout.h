/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Map layouts, for upgrades: this build's (a hash over every pinned map's
 * name, type, key and value size), and what another build pinned, opened
 * as it is and read by the prefix both layouts share.
 */
#ifndef FG_LAYOUT_H
#define FG_LAYOUT_H

#include <stdbool.h>
#include <bpf/bpf.h>
#include <linux/types.h>

#include "maps/pinned.h"

/* One fg_pinned_maps[] row's map among the pins of another build. */
struct fg_old_map {
	int fd; /* -1: this build's map is not among the old pins */
	struct bpf_map_info info;
	bool kept; /* the row's state survives: shared, or copied */
};

/* This build's layout: FNV-1a over every fg_pinned_maps[] row's name,
 * type, key and value size (sizeof, fixed at build time). */
__u32 fg_layout_hash(void);

/* The same hash over what is pinned (`old`, one per fg_pinned_maps[]
 * row): a missing map hashes as all zeros. */
__u32 fg_old_layout_hash(const struct fg_old_map *old);

/* Does the floodgate pinned in `pin_dir` have another layout: a map whose
 * type or sizes differ from this build's, or one this build pins that is
 * missing? Or, while a program uses the pins, a `bans` trie of another
 * size than cfg's max_bans (resized by the upgrade, bans in force
 * carried)? False when the folder is this build's at that size (or
 * unreadable). */
bool fg_upgrade_needed(const char *pin_dir, const struct fg_config *cfg);

/* Is the old map there, with this build's type, key and value size? */
bool fg_same_layout(const struct fg_pinned_map *row, const struct fg_old_map *old);

/* Opens the map of every fg_pinned_maps[] row in `pin_dir` into `old`
 * (fd -1 for one that is missing or unreadable); closes them. */
void fg_open_old_maps(const char *pin_dir, struct fg_old_map *old);
void fg_close_old_maps(struct fg_old_map *old);

/* Reads one entry of an old map into a zeroed buffer of this build's
 * value size: the prefix both layouts share (per CPU for a per-CPU map).
 * Returns 0 or a negative errno. */
int fg_old_read_prefix(const struct fg_old_map *old, const void *key, void *out, __u32 new_size,
		       bool percpu);

#endif /* FG_LAYOUT_H */
