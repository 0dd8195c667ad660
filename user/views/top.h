/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate top`: the tracked sources with the most drops, read from the
 * per-source tables with batch lookups. */
#ifndef FG_TOP_H
#define FG_TOP_H

#include <arpa/inet.h>
#include <stdbool.h>

#include "base/err.h"
#include "floodgate.h"
#include "policy/policy.h"

/* -n is capped so that the kept rows (about 1 KiB each) stay small. */
#define FG_TOP_MAX_ROWS 10000

/* Which table a row came from; each holds one algorithm family's state. */
enum fg_top_table {
	FG_TOP_SOURCES = 0, /* token_bucket, leaky_bucket, fixed_window */
	FG_TOP_WINDOWS = 1, /* sliding_window */
	FG_TOP_LOGS = 2,    /* sliding_log */
};

struct fg_top_row {
	struct fg_source_key key;
	__u8 table; /* enum fg_top_table */
	__u64 dropped;
	__u64 last_seen_ns; /* bpf_ktime_get_ns() scale */
	union {
		__u64 word; /* fg_source_state.tat_ns */
		struct fg_sliding_window_state window;
		struct fg_sliding_log_state log;
	} state;
};

/* The per-source tables to read; -1 skips one. */
struct fg_top_maps {
	/* IPv4 keys of local one-word policies (struct fg_source4_key,
	 * shown as fg_source_key rows); 0 or -1 skips it. */
	int sources4;
	int sources;
	int windows;
	int logs;
	/* scope = host: the host's table, whose keys of `host_ids` (this
	 * interface's host-scoped policies) are read, in the sources rows;
	 * 0 or -1 skips it (as when it is not set). */
	int host_sources;
	const __u32 *host_ids;
	unsigned int n_host_ids;
	/* IPv4 sources known for a while (as sources4); 0 or -1 skips it. */
	int known4;
};

struct fg_top {
	struct fg_top_row *rows; /* after fg_top_collect: `count` rows, most drops first */
	unsigned int count;
	unsigned long long scanned; /* entries read from the tables */
};

/* Reads every entry of the tables in batches and keeps the `limit` with
 * the highest (sampled) drop count, ties broken by the most recent. With
 * `filter`, only the entries of policy `policy_id`. Returns 0 or a negative
 * errno; free with fg_top_free. */
int fg_top_collect(const struct fg_top_maps *maps, bool filter, __u32 policy_id, unsigned int limit,
		   struct fg_top *top);
void fg_top_free(struct fg_top *top);

/* One row and what it means now, for the printers. */
struct fg_top_entry {
	const struct fg_top_row *row;
	char source[INET6_ADDRSTRLEN + 16]; /* ADDR/LEN, without the port */
	const char *policy;		    /* "(removed)" when a reload removed it */
	const char *unit;		    /* "packets" or "bytes" */
	double last_seen_s;		    /* seconds ago */
	__u64 allowance;		    /* units admitted now */
	__u64 next_ns;			    /* until one unit is admitted; ~0: unknown */
	bool banned, ban_forever;
	double ban_left_s;
	__u32 strikes;
};

struct fg_top_view {
	struct fg_top top;
	struct fg_top_entry *entries; /* top.count, in the same order */
	struct fg_policy_set *set;    /* the active policies, which entries name */
};

/* `floodgate top`: the `limit` sources of `ifname` with the most drops
 * (of policy `policy` only, unless NULL). Returns 0, or -1 with `err`
 * saying why (FG_ERR_USAGE: no such policy); release with
 * fg_top_view_free either way. */
int fg_top_read(const char *ifname, unsigned int limit, const char *policy,
		struct fg_top_view *view, struct fg_err *err);
void fg_top_view_free(struct fg_top_view *view);

#endif /* FG_TOP_H */
