/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one way to prepare floodgate's BPF object: open, size the maps from
 * the config, set rodata, load, compile the config, write slot 0 and
 * activate it. The loader, the BPF_PROG_TEST_RUN suite and the benchmark
 * all use it, so what they test is what production loads.
 */
#ifndef FG_SKELETON_H
#define FG_SKELETON_H

#include <stdbool.h>

#include "config/config.h"
#include "policy/policy.h"

struct floodgate_bpf;

/* Which programs an opened skeleton loads. */
enum fg_skel_progs {
	FG_SKEL_MAPS_ONLY = -1, /* create (and pin) the maps, load no program */
	FG_SKEL_XDP = FG_HOOK_XDP,
	FG_SKEL_TC = FG_HOOK_TC,
	FG_SKEL_EVERY_PROG = 2, /* tests: both programs */
};

struct fg_skel_opts {
	const char *pin_dir; /* NULL: private maps, nothing pinned (tests, bench) */
	int progs;	     /* enum fg_skel_progs */
	/* scope = host: a map fd (> 0) that host_sources reuses instead of
	 * creating its own, the host's table (user/ops/hostscope.c); 0: none. */
	int host_fd;
	/* Tests and the benchmark only (production leaves them 0). */
	bool test_clock;	 /* the datapath reads fg_test_now_ns */
	bool naive_update;	 /* racy read-modify-write, to show CAS matters */
	__u32 bench_source_mask; /* rewrite sources per packet */
	__u32 sources_entries;	 /* sources4's; 0: the config's max_sources */
	__u32 windows_entries;	 /* 0: what the config needs */
	__u32 sources_map_type;	 /* sources4 and sources; 0: as declared (LRU hash) */
	__u32 sources_map_flags; /* sources4 and sources; 0: as declared */
};

/* The most bpf_ktime_get_coarse_ns() lags bpf_ktime_get_ns() on this host,
 * in ns (skeleton.c). */
__u64 fg_coarse_lag_ns(void);

/* The most the datapath's reading of the coarse clock, reused within a
 * jiffy, lags bpf_ktime_get_ns(): the datapath's fg_coarse_lag_ns. */
__u64 fg_coarse_reading_lag_ns(void);

/* Opens the object and sets sizes and rodata; nothing is loaded. Returns
 * NULL with errno set. */
struct floodgate_bpf *fg_skel_open(const struct fg_config *cfg, const struct fg_skel_opts *opts);

/* Puts the loaded SYN proxy programs in their hooks' prog arrays, where
 * the entry programs' tail calls find them; a program not loaded is left
 * out. Returns 0 or a negative errno. */
int fg_skel_link_synproxy(struct floodgate_bpf *skel);

/* The [synproxy] settings program `prog_id` was loaded with (its
 * read-only data). Returns 0 or a negative errno. */
int fg_skel_read_synproxy(__u32 prog_id, struct fg_synproxy_params *out);

/* Compiles `cfg` (unless `compiled` is given), writes it into `slot` and
 * makes the slot active. Returns 0, -E2BIG when the policies' source CIDRs
 * do not fit, or a negative errno. */
int fg_skel_push(const struct fg_policy_maps *maps, const struct fg_config *cfg,
		 const struct fg_compiled *compiled, __u32 slot);

/* Loads `skel`, fresh from fg_skel_open(), and prepares it as
 * fg_skel_prepare does; on failure `skel` is destroyed. Returns 0 or a
 * negative errno (-E2BIG as fg_skel_push). */
int fg_skel_load_opened(struct floodgate_bpf *skel, const struct fg_config *cfg,
			const struct fg_compiled *compiled, const struct fg_runtime *rt);

/* fg_skel_open, load, write `rt` (when given) into `runtime`, then
 * fg_skel_push into slot 0. On success *out is the loaded skeleton. Returns
 * 0 or a negative errno (-E2BIG as fg_skel_push). */
int fg_skel_prepare(const struct fg_config *cfg, const struct fg_skel_opts *opts,
		    const struct fg_compiled *compiled, const struct fg_runtime *rt,
		    struct floodgate_bpf **out);

/* Parses `text` as a config and fg_skel_prepare()s a private skeleton with
 * `opts` (NULL: every program, production rodata). For tests and the
 * benchmark. Returns 0 or a negative errno. */
int fg_skel_prepare_text(const char *text, const struct fg_skel_opts *opts,
			 struct floodgate_bpf **out);

#endif /* FG_SKELETON_H */
