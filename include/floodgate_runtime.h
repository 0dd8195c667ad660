/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The load (include/floodgate.h's part): the hook and XDP mode, and the
 * `runtime` record of what was loaded where.
 */
#ifndef FLOODGATE_RUNTIME_H
#define FLOODGATE_RUNTIME_H

#include <linux/types.h>

enum fg_hook {
	FG_HOOK_XDP = 0,
	FG_HOOK_TC = 1,
};

enum fg_xdp_mode {
	FG_XDP_NATIVE = 0,
	FG_XDP_GENERIC = 1,
};

/* Value of the one-entry `runtime` array. */
struct fg_runtime {
	__u32 active_slot;
	__u32 hook;	/* enum fg_hook */
	__u32 xdp_mode; /* enum fg_xdp_mode */
	__u32 ifindex;
	__u32 prog_id; /* the attached program, for status and unload */
	__u32 tc_handle;
	__u32 tc_priority;
	__u32 tc_owns_qdisc; /* floodgate created clsact and removes it */
	__u64 loaded_at;     /* wall-clock seconds (time(2)) of the load */
	__u64 generation;    /* bumped by every policy push */
	__u64 max_sources;
	/* What the load's config said of the keys a reload cannot change (the
	 * CLI may override hook and xdp_mode: both values are accepted). */
	__u32 config_hook;     /* enum fg_hook */
	__u32 config_xdp_mode; /* enum fg_xdp_mode */
	__u32 coarse_clock;    /* clock = coarse */
	/* Nonzero once anything may have put a ban in `bans`: until then the
	 * datapath skips the trie's lookup. Set before every insert, by the
	 * datapath's own bans and by every writer of userspace
	 * (user/maps/runtime.c, fg_runtime_mark_bans); never cleared while
	 * loaded. A ban written by hand (bpftool) needs it too: a load and a
	 * reload set it when the trie holds anything. */
	__u32 bans_may_exist;
	/* The network namespace of the load (the inode of /proc/self/ns/net):
	 * commands from another namespace refuse the pins. */
	__u64 netns_ino;
};

_Static_assert(sizeof(struct fg_runtime) == 80, "fg_runtime");

#endif /* FLOODGATE_RUNTIME_H */
