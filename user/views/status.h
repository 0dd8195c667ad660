/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate status`: where floodgate is loaded, how it is attached, its
 * tables' occupancy, the fleet sync and the policies in force. */
#ifndef FG_STATUS_H
#define FG_STATUS_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>

#include "base/err.h"
#include "floodgate.h"
#include "policy/policy.h"

#define FG_STATUS_MAX_TABLES 16

/* A table whose occupancy status shows (fg_pinned_maps' status_note). */
struct fg_status_table {
	const char *name;
	const char *note;
	__u64 entries;
	__u32 capacity;
};

/* One [allow] or [deny] list in force: its prefixes and its share of the
 * `access_lists` trie's memory (the kernel's fdinfo memlock, split by
 * prefixes: every entry has the same size). A reload holds the old lists
 * beside the new ones until the switch: reload_peak_bytes. */
struct fg_status_list {
	__u32 prefixes;
	__u64 memory_bytes;
	__u64 reload_peak_bytes;
};

/* [synproxy] as the running program has it (docs/config.md). */
struct fg_status_synproxy {
	bool enabled;	 /* a SYN proxy in the hook's prog array */
	__u32 prog_id;	 /* that program */
	char ports[160]; /* "22, 8000-8080" */
	__u16 mss, mss6; /* what its SYN-ACKs advertise */
	__u8 wscale;
	bool sack, timestamps;
	char synacks[32];   /* the cap on SYN-ACKs as configured, or "off" */
	bool nft_installed; /* its nftables table is in place */
	char nft_table[64]; /* that table's name */
};

struct fg_status {
	char pin_dir[PATH_MAX];
	struct fg_runtime rt; /* hook, xdp_mode, prog_id, generation */
	bool attached;	      /* the program still holds the interface */
	char sharing[160];    /* XDP: how it shares the interface (libxdp) */
	struct fg_status_table tables[FG_STATUS_MAX_TABLES];
	unsigned int n_tables;
	struct fg_ban_count ban_count; /* policies' bans, bans from outside refused */
	__u32 policy_ban_cap;	       /* the policies' share of `bans` */
	bool fleet_known;	       /* a `run` syncs this interface or did */
	struct fg_fleet_state fleet;
	__u64 now_real_ns; /* CLOCK_REALTIME when read, for fleet.last_sync_ns */
	struct fg_policy_set *set;
	struct fg_status_list allow, deny;
	__u32 lists_capacity; /* entries of access_lists, both slots */
	__u64 lists_memlock;  /* its memlock, as /proc's fdinfo says */
	struct fg_status_synproxy synproxy;
};

/*
 * Calls `fn` with the name of each interface floodgate is loaded on, or
 * only `ifname` when given (which must be loaded). Returns how many names
 * it passed, or -1 with `err` saying why; stops at fn's first non-zero
 * return and returns it.
 */
int fg_status_interfaces(const char *ifname, int (*fn)(const char *ifname, void *ctx), void *ctx,
			 struct fg_err *err);

/* Reads the status of `ifname`. Returns 0, or -1 with `err` saying why
 * (FG_ERR_STATE: pins of another network namespace); release with
 * fg_status_free either way. */
int fg_status_read(const char *ifname, struct fg_status *status, struct fg_err *err);
void fg_status_free(struct fg_status *status);

#endif /* FG_STATUS_H */
