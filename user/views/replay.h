/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `floodgate replay`: runs a config over a packet capture, offline, through
 * the real fg_xdp program (BPF_PROG_TEST_RUN) on the capture's own clock.
 */
#ifndef FG_REPLAY_H
#define FG_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "floodgate.h"

/* The longest frame handed to one test run. A longer frame is run with its
 * first FG_REPLAY_MAX_RUN_BYTES (the datapath reads only headers) and its
 * wire length, like a frame the capture truncated. */
#define FG_REPLAY_MAX_RUN_BYTES 3072

struct fg_replay_source {
	__u8 family; /* FG_FAMILY_IPV4/IPV6; 0 = an empty slot */
	__u8 addr[16];
	__u64 passed;
	__u64 dropped;
};

struct fg_replay_result {
	int linktype;		   /* DLT_* of the capture */
	const char *linktype_name; /* libpcap's name of it, or "?" */
	__u64 frames;		   /* records read from the capture */
	__u64 run;		   /* frames run through fg_xdp */
	__u64 passed;		   /* XDP_PASS verdicts */
	__u64 dropped;		   /* XDP_DROP verdicts */
	__u64 answered;		   /* XDP_TX verdicts: SYNs [synproxy] answered */
	__u64 outgoing_skipped;	   /* SLL/SLL2 packet type "outgoing": not run */
	__u64 runt_skipped;	   /* shorter than an Ethernet (or SLL) header: not run */
	__u64 truncated;	   /* captured with fewer bytes than on the wire (snaplen) */
	__u64 clipped;		   /* longer than FG_REPLAY_MAX_RUN_BYTES: run clipped */
	__u64 backwards;	   /* timestamps earlier than one seen before */
	__u64 wire_bytes;	   /* wire length of the frames run */
	bool cut_short;		   /* the file ends inside a record */
	__u64 first_ns;		   /* timestamp of the first record */
	__u64 last_ns;		   /* the latest timestamp seen */
	__u64 elapsed_ns;	   /* how long the replay took */
	struct fg_global_stats global;
	struct fg_policy_set *set; /* the compiled policies, for their names */
	struct fg_policy_stats policies[FG_MAX_POLICIES];
	/* Per-source verdicts, counted in userspace: an open-addressing table. */
	struct fg_replay_source *sources;
	size_t sources_size; /* slots, a power of two */
	size_t sources_used;
};

struct fg_replay_opts {
	const char *config_path;
	const char *capture_path;
	bool progress; /* a progress line on stderr, once a second */
};

/* Replays the capture. Returns 0 and fills *result, to be released with
 * fg_replay_result_free(); or -1 with `err` saying why (FG_ERR_CONFIG: the
 * config or the capture is invalid; a config's faults are on stderr). */
int fg_replay(const struct fg_replay_opts *opts, struct fg_replay_result *result,
	      struct fg_err *err);
void fg_replay_result_free(struct fg_replay_result *result);

/* The result's sources, most drops first (then most passed, then by
 * address); *n is how many of them to show, at most top_n. NULL when out
 * of memory; free() the array. */
const struct fg_replay_source **fg_replay_top_sources(const struct fg_replay_result *result,
						      size_t top_n, size_t *n);

#endif /* FG_REPLAY_H */
