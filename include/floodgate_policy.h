/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The compiled policies (include/floodgate.h's part): limits, verdicts,
 * actions, algorithms and their parameters, struct fg_policy and the
 * `policy_sets` value that the datapath matches packets against.
 */
#ifndef FLOODGATE_POLICY_H
#define FLOODGATE_POLICY_H

#include <linux/types.h>

#define FG_MAX_POLICIES	    64 /* one bit each in a __u64 match mask */
#define FG_POLICY_NAME_LEN  32
#define FG_POLICY_SLOTS	    2 /* double-buffered policy sets for live reload */
#define FG_PORT_SLOTS	    65536
#define FG_MAX_SRC_PREFIXES 4096 /* entries of the src_match LPM trie */

/* `match = ... size LO-HI` works on frame-length classes of
 * FG_SIZE_CLASS_BYTES each: class = length / 64, and the last class holds
 * every frame of FG_SIZE_CLASS_BYTES * (FG_SIZE_CLASSES - 1) bytes or more
 * (1984: beyond any 1500-byte-MTU frame). So a size match costs one array
 * read per packet, fg_policy_set.size_match[class]. */
#define FG_SIZE_CLASSES	    32
#define FG_SIZE_CLASS_SHIFT 6
#define FG_SIZE_CLASS_BYTES (1U << FG_SIZE_CLASS_SHIFT)

/* Fractional bits of fg_gcra_params.interval_fp (ns per unit of cost). */
#define FG_GCRA_FRAC_BITS 16

/* Costs above this are clamped; keeps cost * interval_fp below 2^64. */
#define FG_MAX_COST 65535

enum fg_verdict {
	FG_VERDICT_PASS = 0,
	FG_VERDICT_DROP = 1,
};

enum fg_action {
	FG_ACTION_DROP = 0,
	FG_ACTION_MONITOR = 1, /* dry-run: count would-drops, pass */
	FG_ACTION_BAN = 2,     /* drop, and ban the key's source prefix */
};

enum fg_algorithm {
	FG_ALG_TOKEN_BUCKET = 0,   /* GCRA; state in `sources4` (IPv4) or `sources` */
	FG_ALG_FIXED_WINDOW = 1,   /* state in `sources4` (IPv4) or `sources` */
	FG_ALG_SLIDING_WINDOW = 2, /* state in `windows` */
	FG_ALG_SLIDING_LOG = 3,	   /* state in `logs` */
	FG_ALG_LEAKY_BUCKET = 4,   /* GCRA meter; state in `sources4` or `sources` */
};

enum fg_key_kind {
	FG_KEY_SOURCE = 0, /* source address masked to prefix_v4/prefix_v6 */
	FG_KEY_GLOBAL = 1, /* one shared bucket for every source */
};

enum fg_policy_flags {
	FG_POLICY_BYTES = 1 << 0,	   /* cost is the packet length, not 1 */
	FG_POLICY_KEY_DPORT = 1 << 1,	   /* per = src/N+dport: the port is in the key */
	FG_POLICY_FLEET = 1 << 2,	   /* scope = fleet: counted in fleet_counts, held by
					    * fleet_holds */
	FG_POLICY_HOST = 1 << 3,	   /* scope = host: state in host_sources, not sources */
	FG_POLICY_BAN_UNVERIFIED = 1 << 4, /* ban_unverified = yes: action = ban bans other
					    * protocols than TCP without evidence */
};

/*
 * Each algorithm's parameters, computed once by userspace with the
 * fg_<alg>_params_init() of include/fg_gcra.h and include/fg_algos.h (which
 * also explain them) and read as they are, by pointer, by the datapath.
 */
struct fg_gcra_params {
	__u64 interval_fp;  /* T = PERIOD / COUNT: ns per unit of cost << FG_GCRA_FRAC_BITS */
	__u64 tolerance_ns; /* tau = burst * T, in ns */
};

struct fg_fixed_window_params {
	__u64 count;	 /* COUNT: cost units per window, 1..FG_WINDOW_MAX_COUNT */
	__u64 period_ns; /* PERIOD: window length, >= 1 */
};

struct fg_sliding_window_params {
	__u64 count;	 /* COUNT, 1..FG_WINDOW_MAX_COUNT */
	__u64 period_ns; /* PERIOD, >= 1 */
	__u64 period_q;	 /* period_ns >> shift, >= 1 */
	__u32 shift;	 /* 0 (exact) unless COUNT * (PERIOD + 1) >= 2^64 */
	__u32 pad;
};

struct fg_sliding_log_params {
	__u64 period_ns; /* PERIOD */
	__u32 count;	 /* COUNT, 1..FG_SLIDING_LOG_MAX */
	__u32 pad;
};

/* leaky_bucket is GCRA with its own default depth (see fg_algos.h). */
struct fg_leaky_bucket_params {
	struct fg_gcra_params gcra; /* interval_fp = T, tolerance_ns = burst * T */
};

/* The member named by fg_policy.algorithm is the one in use. */
union fg_rate_params {
	struct fg_gcra_params token_bucket;
	struct fg_fixed_window_params fixed_window;
	struct fg_sliding_window_params sliding_window;
	struct fg_sliding_log_params sliding_log;
	struct fg_leaky_bucket_params leaky_bucket;
};

/* One compiled policy. The match itself is folded into the bitmasks of
 * struct fg_policy_set, dport_match and src_match, so nothing here is
 * parsed or looped over per packet. The rate exists only as `params`:
 * `status` derives what it prints from them. */
struct fg_policy {
	__u32 id; /* FNV-1a of the name, mixed with the algorithm (a reload that
		   * changes the algorithm starts fresh state); the key's policy_id */
	__u8 algorithm;
	__u8 action;
	__u8 key_kind;
	__u8 flags;
	__u8 prefix_v4;
	__u8 prefix_v6;
	__u16 pad;
	__u32 mask_v4_be;    /* prefix_v4 as a netmask */
	__u64 mask_v6_be[2]; /* prefix_v6 as a netmask */
	union fg_rate_params params;
	__u32 ban_factor; /* action = ban: each repeat multiplies the ban */
	__u32 pad2;
	__u64 ban_ns;	  /* action = ban: the first ban's length */
	__u64 ban_max_ns; /* action = ban: the longest ban */
	char name[FG_POLICY_NAME_LEN];
};

/* Value of the `policy_sets` array (FG_POLICY_SLOTS entries). The datapath
 * reads the slot named by fg_runtime.active_slot; reload writes the other
 * slot and then flips active_slot. `generation` is the low 16 bits of the
 * fg_runtime.generation the set was made active under (fg_policy_activate):
 * the refusal cache's tag, read with the set the packet is judged by rather
 * than by a lookup of the runtime record. Two sets active one after the
 * other never share it; a tag comes back after 65,536 pushes, and an entry
 * of the cache serves for at most FG_REFUSAL_REFRESH_NS (~1.07 s), far
 * less than 65,536 pushes take (each writes the 2 x 65,536 port masks). */
struct fg_policy_set {
	__u32 count;
	__u8 malformed_verdict;	 /* enum fg_verdict */
	__u8 table_full_verdict; /* on_insert_failure: no entry could be created */
	__u16 generation;	 /* the refusal cache's tag (above) */
	__u64 src_restricted;	 /* policies that need the src_match lookup */
	__u64 portless_match;	 /* policies matching packets without ports */
	__u64 syn_only;		 /* policies that match TCP SYN without ACK only */
	__u64 proto_match[256];	 /* by IP protocol number */
	struct fg_policy policies[FG_MAX_POLICIES];
	__u64 size_match[FG_SIZE_CLASSES]; /* by frame-length class (FG_SIZE_CLASS_SHIFT) */
	/* [allow]/[deny] prefixes of this slot in `access_lists`: with none,
	 * the datapath skips the LPM walk (its cost: docs/benchmarks.md,
	 * "Figures behind the code's comments"). */
	__u32 access_prefixes;
	__u32 allow_prefixes; /* of access_prefixes; the rest are [deny]'s */
};

/* `dport_match` and `sport_match` are arrays of __u64 masks indexed by
 * slot * FG_PORT_SLOTS + port (host order). */

_Static_assert((FG_SIZE_CLASSES & (FG_SIZE_CLASSES - 1)) == 0,
	       "FG_SIZE_CLASSES must be a power of two (the class is masked)");
_Static_assert(sizeof(struct fg_gcra_params) == 16, "fg_gcra_params");
_Static_assert(sizeof(struct fg_fixed_window_params) == 16, "fg_fixed_window_params");
_Static_assert(sizeof(struct fg_sliding_window_params) == 32, "fg_sliding_window_params");
_Static_assert(sizeof(struct fg_sliding_log_params) == 16, "fg_sliding_log_params");
_Static_assert(sizeof(struct fg_leaky_bucket_params) == 16, "fg_leaky_bucket_params");
_Static_assert(sizeof(union fg_rate_params) == 32, "fg_rate_params");
_Static_assert(sizeof(struct fg_policy) == 120, "fg_policy");
_Static_assert(sizeof(struct fg_policy_set) ==
		       32 + 8 * 256 + 120 * FG_MAX_POLICIES + 8 * FG_SIZE_CLASSES + 8,
	       "fg_policy_set");

#endif /* FLOODGATE_POLICY_H */
