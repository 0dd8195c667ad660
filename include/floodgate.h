/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every structure that crosses the kernel/user boundary, shared byte for
 * byte by the BPF programs (bpf/) and the control plane (user/, tests/).
 *
 * Byte order: fields named *_be and the address bytes are in network byte
 * order, exactly as they appear in the packet; everything else is host order.
 * All structs have explicit padding so BTF, bpftool and both compilers agree.
 */
#ifndef FLOODGATE_H
#define FLOODGATE_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */

#include "fg_counters.h"

#define FG_MAX_POLICIES		   64 /* one bit each in a __u64 match mask */
#define FG_POLICY_NAME_LEN	   32
#define FG_POLICY_SLOTS		   2 /* double-buffered policy sets for live reload */
#define FG_PORT_SLOTS		   65536
#define FG_MAX_SRC_PREFIXES	   4096 /* entries of the src_match LPM trie */
#define FG_DEFAULT_MAX_SOURCES	   262144
#define FG_DEFAULT_MAX_LOG_SOURCES 16384 /* sliding_log entries are ~1 KiB */
/* fleet_counts and fleet_holds hold the fleet-scoped keys active in one
 * sync interval (new sources come at most at the new_sources budget), and
 * fleet_counts is per CPU: capped, whatever max_sources says. */
#define FG_MAX_FLEET_KEYS	   65536

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
	FG_POLICY_BYTES = 1 << 0,     /* cost is the packet length, not 1 */
	FG_POLICY_KEY_DPORT = 1 << 1, /* per = src/N+dport: the port is in the key */
	FG_POLICY_FLEET = 1 << 2,     /* scope = fleet: counted in fleet_counts, held by
				       * fleet_holds */
	FG_POLICY_HOST = 1 << 3,      /* scope = host: state in host_sources, not sources */
};

enum fg_hook {
	FG_HOOK_XDP = 0,
	FG_HOOK_TC = 1,
};

enum fg_xdp_mode {
	FG_XDP_NATIVE = 0,
	FG_XDP_GENERIC = 1,
};

/* Address family tags used in keys; 0 in a global key. */
#define FG_FAMILY_IPV4	   4
#define FG_FAMILY_IPV6	   6
/* The key of a policy's shared bucket for sources that arrive while the
 * new-source budget is spent (see struct fg_budget). */
#define FG_FAMILY_OVERFLOW 0xff

/* Key of the `sources` LRU hash: one rate-limit state per policy and
 * masked source. IPv4 keys of local one-word policies go to `sources4`
 * instead, with the smaller struct fg_source4_key below; `sources` holds
 * the IPv6, global and overflow keys. `host_sources`, `windows`, `logs`
 * and `fleet_holds` keep this key for every family.
 *
 * scope = host: the one-word state of a host-scoped policy (token_bucket,
 * fixed_window, leaky_bucket; the config refuses the others) lives in the
 * `host_sources` LRU hash instead, with this same key and value. That map
 * is one and the same on every interface of the host: the first load that
 * needs it creates it and pins it a second time in
 * FG_PIN_BASE/host:shared/, and every later load reuses it
 * (user/hostscope.c).
 * policy_id is derived from the policy's name and algorithm only (never
 * from its place in the file), so a host-scoped policy of one name names
 * the same state on every interface. */
struct fg_source_key {
	__u32 policy_id; /* fg_policy.id: stable across reloads */
	__u8 family;	 /* FG_FAMILY_IPV4/IPV6, 0 for a global key */
	__u8 prefix_len; /* the mask applied to addr */
	__u16 dport;	 /* host order; 0 unless per = src/N+dport */
	__u8 addr[16];	 /* masked source; IPv4 uses the first 4 bytes */
};

/* Key of the `sources4` LRU hash: the IPv4 keys of the one-word
 * algorithms (token_bucket, fixed_window, leaky_bucket) at local scope,
 * which is where nearly every tracked source of a flood lives. Its size is
 * the point: the kernel's LRU element is a 48-byte header, the key rounded
 * up to 8, the value and a 16-byte bucket, so 12 bytes (16 rounded) make a
 * tracked IPv4 source cost 48 + 16 + 16 + 16 = 96 bytes, against 104 with
 * the 24-byte fg_source_key (build/bench_prog measures both).
 *
 * Its first 8 bytes are laid out as fg_source_key's, family included
 * (always FG_FAMILY_IPV4), so code that reads policy_id at offset 0 or
 * family at offset 4 (reclaim by policy, top) reads either key alike. IPv6
 * keys, global keys (family 0) and overflow keys stay in `sources`. */
struct fg_source4_key {
	__u32 policy_id; /* fg_policy.id, as in fg_source_key */
	__u8 family;	 /* FG_FAMILY_IPV4 */
	__u8 prefix_len; /* the mask applied to addr */
	__u16 dport;	 /* host order; 0 unless per = src/N+dport */
	__u8 addr[4];	 /* masked source, network order */
};

/* The two keys' conversions, shared by the datapath and userspace: the
 * same first 8 bytes, and the 4 of the IPv4 address. */
static inline struct fg_source4_key fg_source4_key_of(const struct fg_source_key *key)
{
	struct fg_source4_key key4;

	__builtin_memcpy(&key4, key, 8);
	__builtin_memcpy(key4.addr, key->addr, 4);
	return key4;
}

static inline struct fg_source_key fg_source_key_of4(const struct fg_source4_key *key4)
{
	struct fg_source_key key = {0};

	__builtin_memcpy(&key, key4, 8);
	__builtin_memcpy(key.addr, key4->addr, 4);
	return key;
}

/* Value of `sources` and `sources4`, kept to 16 bytes: with the kernel's
 * per-element overhead a tracked IPv4 source costs 96 bytes, any other key
 * 104 (make bench measures it). tat_ns is only ever changed by
 * compare-and-swap. */
struct fg_source_state {
	__u64 tat_ns;	 /* the algorithm's one-word state: the TAT of token_bucket,
			  * empty_at of leaky_bucket, or fixed_window's packed
			  * window index and count (fg_algos.h) */
	__u32 last_seen; /* bpf_ktime_get_ns() >> FG_LAST_SEEN_SHIFT: ~1 s units */
	__u32 dropped;	 /* packets refused (would-drop under monitor), sampled:
			  * one refusal in 64 adds 64, so a refusal rarely
			  * writes the shared state; exact counts are in
			  * policy_stats. Bit 0 is FG_DROPPED_REFUSING. */
};

/* Bit 0 of every sampled `dropped` count (which only ever grows by 64): the
 * source's last packet was refused. Set on the first refusal after an
 * admission, which is when a `refusing` event is due, and cleared by the
 * next admission; readers mask it with FG_DROPPED_COUNT. */
#define FG_DROPPED_REFUSING 1U
#define FG_DROPPED_COUNT    (~63U)
#define FG_LAST_SEEN_SHIFT  30

#define FG_LAST_SEEN_GRAIN_NS 1000000ULL

/* sliding_window state (include/fg_algos.h has the algorithm). */
struct fg_sliding_window_state {
	__u64 start_ns; /* start of the current window, a multiple of the period */
	__u32 cur;	/* units admitted in [start_ns, start_ns + period) */
	__u32 prev;	/* units admitted in [start_ns - period, start_ns) */
};

/* Value of the `windows` LRU hash (sliding_window), same key as `sources`.
 * The state is two words, so it is changed under one of the `state_locks`,
 * not by CAS (the kernel allows no bpf_spin_lock in an LRU hash value). */
struct fg_window_entry {
	struct fg_sliding_window_state state;
	__u64 last_seen_ns;
	__u32 dropped; /* sampled, see fg_source_state */
	__u32 pad;
};

/* The cap on COUNT for sliding_log: the ring holds the last COUNT
 * admissions of a key. 128 x 8 bytes keeps an entry near 1 KiB. */
#define FG_SLIDING_LOG_MAX 128

/* Value of the `state_locks` array: the locks that guard `windows` and
 * `logs` entries, striped by a hash of the key. */
#define FG_STATE_LOCKS 1024
struct fg_state_lock {
	struct bpf_spin_lock lock;
};
_Static_assert((FG_SIZE_CLASSES & (FG_SIZE_CLASSES - 1)) == 0,
	       "FG_SIZE_CLASSES must be a power of two (the class is masked)");
_Static_assert((FG_SLIDING_LOG_MAX & (FG_SLIDING_LOG_MAX - 1)) == 0,
	       "FG_SLIDING_LOG_MAX must be a power of two (the ring is masked)");

struct fg_sliding_log_state {
	__u64 ring[FG_SLIDING_LOG_MAX]; /* admission time + 1; 0 = empty */
	__u32 head;			/* next slot to overwrite: the oldest */
	__u32 pad;
};

/* Value of the `logs` LRU hash (sliding_log), same key as `sources`;
 * changed under one of the `state_locks`. */
struct fg_log_entry {
	__u64 last_seen_ns;
	__u32 dropped; /* sampled, see fg_source_state */
	__u32 pad;
	struct fg_sliding_log_state state;
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
 * slot and then flips active_slot. */
struct fg_policy_set {
	__u32 count;
	__u8 malformed_verdict;	 /* enum fg_verdict */
	__u8 table_full_verdict; /* on_insert_failure: no entry could be created */
	__u16 pad;
	__u64 src_restricted;	/* policies that need the src_match lookup */
	__u64 portless_match;	/* policies matching packets without ports */
	__u64 syn_only;		/* policies that match TCP SYN without ACK only */
	__u64 proto_match[256]; /* by IP protocol number */
	struct fg_policy policies[FG_MAX_POLICIES];
	__u64 size_match[FG_SIZE_CLASSES]; /* by frame-length class (FG_SIZE_CLASS_SHIFT) */
	/* [allow]/[deny] prefixes of this slot in `access_lists`: with none,
	 * the datapath skips the LPM walk (11-16 ns a packet, make bench). */
	__u32 access_prefixes;
	__u32 pad2;
};

/* Key of the `src_match` LPM trie. prefixlen counts the slot, family and
 * pad bits (32) plus the address prefix. The value is a __u64 mask of the
 * policies whose source restriction contains the prefix. */
struct fg_src_lpm_key {
	__u32 prefixlen;
	__u8 slot;
	__u8 family;
	__u16 pad;
	__u8 addr[16];
};
#define FG_SRC_LPM_HEADER_BITS 32

/* `dport_match` and `sport_match` are arrays of __u64 masks indexed by
 * slot * FG_PORT_SLOTS + port (host order). */

/* Value of the `access_lists` LPM trie (same key as src_match): the
 * longest matching [allow] or [deny] prefix decides. */
enum fg_access {
	FG_ACCESS_ALLOW = 1, /* bypasses every policy */
	FG_ACCESS_DENY = 2,  /* dropped */
};
#define FG_MAX_ACCESS_PREFIXES 4096

/* Value of the `bans` LPM trie. Its key is a struct fg_src_lpm_key with
 * slot 0: bans outlive reloads. An expired entry is kept so that a repeat
 * offender's next ban is longer (ban_factor). */
struct fg_ban {
	__u64 expires_ns;  /* bpf_ktime_get_ns() scale; ~0 = until unbanned */
	__u64 duration_ns; /* length of the latest ban */
	__u32 strikes;	   /* how many times banned */
	__u32 policy_id;   /* the policy that banned; 0 = by hand */
	__u8 family;
	__u8 prefix_len;
	__u8 pad[6];
#ifdef FG_TEST_LAYOUT_PAD
	/* Tests only (make's layout-b build): another layout of `bans`, for
	 * tests/integration/test_upgrade.sh. */
	__u64 test_layout_pad;
#endif
};
#define FG_MAX_BANS 65536

/* Value of the per-CPU `new_source_budget` array: a GCRA bucket on how fast
 * each CPU may create per-source entries. A spoofed random-source flood
 * would otherwise insert (and evict) one LRU entry per packet; past the
 * budget, an unknown source is charged to its policy's shared overflow key
 * instead, so known sources keep their state (sources seen twice go first:
 * see fg_recent_sources). gcra.interval_fp is the per-CPU interval (the
 * configured one times the CPUs online at load or reload); 0 disables. */
struct fg_budget {
	__u64 tat_ns;
	struct fg_gcra_params gcra;
	__u32 exhausted; /* this CPU's budget refused last time: an event was due */
	__u32 pad;
};

/* The same per-CPU GCRA, in the `event_budget` array, caps the events the
 * datapath emits (config key `events`); interval_fp 0 = events off. */

/* Value of the one-entry per-CPU `recent_sources` array: hashes of the
 * unknown sources the new-source budget recently turned away, in 2-way sets
 * (the newer in way 0). A source found here is seen a second time, and may
 * spend the half of the budget that sources seen once may not: random
 * spoofed sources almost never come back, a real one does at once. */
#define FG_RECENT_SETS 4096
struct fg_recent_sources {
	__u32 hash[FG_RECENT_SETS][2]; /* 0 = empty; a stored hash is odd */
};

/* Entry of the per-CPU `refusals` array, a direct-mapped cache of IPv4
 * sources this CPU has just refused (token_bucket and leaky_bucket in
 * `sources4`): the key, and the TAT its state had then. A TAT only ever
 * grows, so while the GCRA refuses the packet against that older TAT it
 * would refuse it against the state's own, and the packet is refused
 * without the `sources4` lookup. An entry serves only under the policy
 * push it was written under (fg_runtime.generation), for at most
 * FG_REFUSAL_REFRESH_NS, and while this CPU has created fewer than
 * (sources4's entries >> FG_REFUSAL_CHURN_SHIFT) entries since: the lookups it
 * saves are what mark the source's entry used, and a table turning over
 * must not evict a refused source that keeps sending. */
#define FG_REFUSAL_BITS	       12
#define FG_REFUSAL_SLOTS       (1U << FG_REFUSAL_BITS)
#define FG_REFUSAL_REFRESH_NS  (1ULL << 30)
#define FG_REFUSAL_CHURN_SHIFT 8
struct fg_refusal {
	struct fg_source4_key key;
	__u32 generation; /* fg_runtime.generation's low 32 bits */
	__u64 tat_ns;	  /* the state's TAT at the refusal */
	__u64 written_ns; /* when */
	__u64 created;	  /* this CPU's global_stats.sources_created then */
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
	__u32 pad;
	/* The network namespace of the load (the inode of /proc/self/ns/net):
	 * commands from another namespace refuse the pins. */
	__u64 netns_ino;
};

/*
 * scope = fleet. The datapath counts each fleet-scoped key's admissions in
 * the per-CPU `fleet_counts` hash under the current epoch; `floodgate run`
 * flips the epoch every sync interval, then reads and deletes the counts of
 * the previous one, so nothing is counted twice and the datapath never
 * waits. Redis answers which keys are over their fleet-wide limit, and the
 * daemon holds them in `fleet_holds` until their fleet state allows them
 * again. Local policies never touch these maps.
 */
struct fg_fleet_key {
	struct fg_source_key key;
	__u32 epoch; /* fg_fleet_state.epoch when the packet was admitted */
	__u32 pad;
};

/* Value of the per-CPU `fleet_counts` LRU hash. */
struct fg_fleet_count {
	__u64 packets;
	__u64 bytes;
};

/* Value of the `fleet_holds` LRU hash (key: struct fg_source_key). */
struct fg_fleet_hold {
	__u64 until_ns; /* bpf_ktime_get_ns() scale: refused until then */
};

/* Ban records the daemon copied from the fleet carry this policy_id; they
 * are not published again, and they follow the fleet's list. */
#define FG_FLEET_BAN_POLICY_ID 0xffffffffU

/* Value of the one-entry `fleet_state` array: written by `floodgate run`,
 * read by the datapath (epoch, refuse_all) and by status and metrics. */
struct fg_fleet_state {
	__u32 epoch;	       /* the fleet_counts epoch the datapath writes */
	__u32 refuse_all;      /* on_redis_down = closed while Redis is down */
	__u32 syncing;	       /* a `run` with a [fleet] section serves this interface */
	__u32 connected;       /* the last sync reached Redis */
	__u64 last_sync_ns;    /* wall clock (CLOCK_REALTIME) of the last good sync */
	__u64 sync_latency_ns; /* how long the last good sync took */
	__u64 syncs;	       /* good syncs */
	__u64 outages;	       /* times Redis became unreachable */
	__u64 keys_held;       /* fleet_holds entries in force after the last sync */
	__u64 bans_published;  /* local bans sent to the fleet */
	__u64 bans_applied;    /* fleet bans copied into `bans` */
};

/* Per-CPU counters of one policy (`policy_stats`, indexed by
 * slot * FG_MAX_POLICIES + policy index). */
struct fg_policy_stats {
	FG_POLICY_COUNTERS(FG_COUNTER_MEMBER)
};

/* Per-CPU global counters (`global_stats`, one entry). */
struct fg_global_stats {
	FG_GLOBAL_COUNTERS(FG_COUNTER_MEMBER)
};

/* Record of the `events` ring buffer. A ban's expiry is not a record: the
 * datapath has no timer, so `floodgate events` derives it from `bans`. */
enum fg_event_type {
	FG_EVENT_REFUSING = 1,	       /* a source's first refusal after admissions */
	FG_EVENT_BANNED = 2,	       /* action = ban banned the source's prefix */
	FG_EVENT_BUDGET_EXHAUSTED = 3, /* a CPU's new-source budget ran out */
	FG_EVENT_TABLE_FULL = 4,       /* a state table or the bans trie refused an entry */
};

/* The ring's size in bytes: a power of two of pages, ~5000 records. */
#define FG_EVENTS_RING_BYTES (256 * 1024)

struct fg_event {
	__u64 time_ns;	  /* the datapath's clock (monotonic, as bans' expires_ns) */
	__u64 expires_ns; /* FG_EVENT_BANNED: the ban's end; ~0 = never; else 0 */
	__u32 type;	  /* enum fg_event_type */
	__u32 policy_id;  /* fg_policy.id */
	__u8 family;	  /* of the key: FG_FAMILY_*, 0 for a global key */
	__u8 prefix_len;
	__u16 dport; /* host order; per = src/N+dport keys only */
	__u32 pad;
	__u8 addr[16]; /* the masked source, as in fg_source_key */
};

/* How long an expired ban's record is kept to escalate a repeat offence
 * (ban_factor); after that the datapath deletes it when it meets it. */
#define FG_BAN_STRIKE_TTL_NS (24ULL * 3600 * 1000000000ULL)

/*
 * The sizes both compilers must agree on: a change here changes the maps'
 * value sizes, which `reload` checks against the pinned maps.
 */
_Static_assert(sizeof(struct fg_source_key) == 24, "fg_source_key (sources, host_sources)");
_Static_assert(sizeof(struct fg_source4_key) == 12, "fg_source4_key (sources4): 96 B an entry");
_Static_assert(__builtin_offsetof(struct fg_source4_key, policy_id) ==
			       __builtin_offsetof(struct fg_source_key, policy_id) &&
		       __builtin_offsetof(struct fg_source4_key, family) ==
			       __builtin_offsetof(struct fg_source_key, family) &&
		       __builtin_offsetof(struct fg_source4_key, dport) ==
			       __builtin_offsetof(struct fg_source_key, dport),
	       "fg_source4_key shares fg_source_key's first 8 bytes");
_Static_assert(sizeof(struct fg_source_state) == 16, "fg_source_state (sources, host_sources)");
_Static_assert(sizeof(struct fg_sliding_window_state) == 16, "fg_sliding_window_state");
_Static_assert(sizeof(struct fg_window_entry) == 32, "fg_window_entry");
_Static_assert(sizeof(struct fg_state_lock) == 4, "fg_state_lock");
_Static_assert(sizeof(struct fg_sliding_log_state) == 8 * FG_SLIDING_LOG_MAX + 8,
	       "fg_sliding_log_state");
_Static_assert(sizeof(struct fg_log_entry) == 16 + sizeof(struct fg_sliding_log_state),
	       "fg_log_entry");
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
_Static_assert(sizeof(struct fg_src_lpm_key) == 24, "fg_src_lpm_key");
#ifdef FG_TEST_LAYOUT_PAD
_Static_assert(sizeof(struct fg_ban) == 40, "fg_ban, padded for the upgrade test");
#else
_Static_assert(sizeof(struct fg_ban) == 32, "fg_ban");
#endif
_Static_assert(sizeof(struct fg_budget) == 32, "fg_budget");
_Static_assert(sizeof(struct fg_runtime) == 80, "fg_runtime");
_Static_assert(sizeof(struct fg_recent_sources) <= 32768,
	       "fg_recent_sources: the kernel's largest per-CPU value");
_Static_assert(sizeof(struct fg_refusal) == 40, "fg_refusal");
_Static_assert(sizeof(struct fg_policy_stats) == 64, "fg_policy_stats");
_Static_assert(sizeof(struct fg_global_stats) == 152, "fg_global_stats");
_Static_assert(sizeof(struct fg_event) == 48, "fg_event");
_Static_assert(sizeof(struct fg_fleet_key) == 32, "fg_fleet_key");
_Static_assert(sizeof(struct fg_fleet_count) == 16, "fg_fleet_count");
_Static_assert(sizeof(struct fg_fleet_hold) == 8, "fg_fleet_hold");
_Static_assert(sizeof(struct fg_fleet_state) == 72, "fg_fleet_state");

#endif /* FLOODGATE_H */
