/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-source rate-limit state (include/floodgate.h's part): the keys and
 * values of the per-source tables, the lock stripes of the multi-word
 * states, and what guards their creation in a flood: the new-source
 * budget, the recently seen sources and the refusal cache.
 */
#ifndef FLOODGATE_STATE_H
#define FLOODGATE_STATE_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */

#include "floodgate_policy.h"

#define FG_DEFAULT_MAX_SOURCES	   262144
#define FG_DEFAULT_MAX_LOG_SOURCES 16384 /* sliding_log entries are ~1 KiB */

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
 * (user/ops/hostscope.c).
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
			  * policy_stats. Bit 0 is FG_DROPPED_REFUSING, bits
			  * 1-5 the creation time (FG_DROPPED_BORN_MASK). */
};

/* Bit 0 of every sampled `dropped` count (which only ever grows by 64): the
 * source's last packet was refused. Set on the first refusal after an
 * admission, which is when a `refusing` event is due, and cleared by the
 * next admission; readers mask it with FG_DROPPED_COUNT. */
#define FG_DROPPED_REFUSING 1U
#define FG_DROPPED_COUNT    (~63U)
#define FG_LAST_SEEN_SHIFT  30

/* Bits 1-5 of `dropped` in `sources4`: the time unit (now >>
 * FG_LAST_SEEN_SHIFT, ~1.07 s) the entry was created in, mod 32. A source
 * that meets its entry FG_KNOWN_AFTER units or more after that moves to
 * `known4`, where a flood that turns `sources4` over cannot evict it; an
 * age past 31 reads mod 32, which only delays the move. Kept in `dropped`
 * so that the entry stays 16 bytes (96 B a tracked IPv4 source). */
#define FG_DROPPED_BORN_SHIFT 1
#define FG_DROPPED_BORN_MASK  (31U << FG_DROPPED_BORN_SHIFT)
#define FG_KNOWN_AFTER	      2

static inline __u32 fg_born_bits(__u64 now)
{
	return ((__u32)(now >> FG_LAST_SEEN_SHIFT) << FG_DROPPED_BORN_SHIFT) & FG_DROPPED_BORN_MASK;
}

static inline int fg_known_long_enough(__u32 dropped, __u64 now)
{
	__u32 born = (dropped & FG_DROPPED_BORN_MASK) >> FG_DROPPED_BORN_SHIFT;

	return (((__u32)(now >> FG_LAST_SEEN_SHIFT) - born) & 31) >= FG_KNOWN_AFTER;
}

#define FG_LAST_SEEN_GRAIN_NS 1000000ULL

/*
 * The presence filter (`presence4_first` and `presence4`): which IPv4 keys
 * may have state in `sources4` or `known4`. A key whose bit is clear has
 * none there that touched it lately, so while the new-source budget
 * refuses it, it is refused without the two tables' lookups: the spoofed
 * flood's packet costs one or two reads instead of four or more memory
 * misses (each lookup of an absent key reads a bucket, then an element).
 * A set bit only means "look": a key whose bit is clear but which has
 * state (it idled past two generations) is found as soon as the budget
 * lets it be looked up, as a source the table had evicted would be.
 *
 * Two levels, each a filter on its own, and a key is noted in both: the
 * first (512 KiB, small enough to stay in a core's cache) is read first,
 * and the second (4 MiB, a memory miss) only when the first has the bit
 * set. A spoofed key is looked up only if both have its bit; while the
 * first is sparse, the flood's packet never reads the second. Their slots
 * come from one hash, through different bits, so that keys that share a
 * word in one seldom share one in the other.
 *
 * Each 64-bit word holds a generation (8 bits) and two sets of
 * FG_PRESENCE_BITS bits: the keys noted in that generation (low bits) and
 * in the one before. A generation is 2^FG_PRESENCE_GEN_SHIFT ns (~69 s),
 * so a key's bit lasts 69 to 137 s after the last packet that noted it; a
 * key is noted when its state is made, and again by its first packet of
 * each generation. A word untouched for 256 generations (~5 hours) may
 * read as holding stale keys: a lookup more, never one fewer.
 */
#define FG_PRESENCE_FIRST_WORDS_LOG2 16
#define FG_PRESENCE_FIRST_WORDS	     (1U << FG_PRESENCE_FIRST_WORDS_LOG2) /* 512 KiB */
#define FG_PRESENCE_WORDS_LOG2	     19
#define FG_PRESENCE_WORDS	     (1U << FG_PRESENCE_WORDS_LOG2) /* 4 MiB */
#define FG_PRESENCE_BITS	     28
#define FG_PRESENCE_SET		     ((1ULL << FG_PRESENCE_BITS) - 1)
#define FG_PRESENCE_GEN_SHIFT	     36

static inline __u32 fg_presence_hash(const struct fg_source4_key *key4)
{
	const __u32 *words = (const __u32 *)key4;

	return ((words[0] * 0x85ebca6b ^ words[1]) * 0xc2b2ae35 ^ words[2]) * 0x9e3779b1;
}

/* The key's word (*word) and bit (the return value) in `presence4`: the
 * hash's top bits pick the word, its low 13 the bit. */
static inline __u32 fg_presence_slot(const struct fg_source4_key *key4, __u32 *word)
{
	__u32 hash = fg_presence_hash(key4);

	*word = hash >> (32 - FG_PRESENCE_WORDS_LOG2);
	return ((hash & 0x1fff) * FG_PRESENCE_BITS) >> 13;
}

/* ... and in `presence4_first`: from the hash times a 64-bit constant, whose
 * top 32 bits each depend on every bit of the hash, so a word of
 * `presence4` spreads over many words here. */
static inline __u32 fg_presence_first_slot(const struct fg_source4_key *key4, __u32 *word)
{
	__u64 mix = (__u64)fg_presence_hash(key4) * 0x9e3779b97f4a7c15ULL;

	*word = (__u32)(mix >> (64 - FG_PRESENCE_FIRST_WORDS_LOG2));
	return (((__u32)(mix >> 32) & 0x1fff) * FG_PRESENCE_BITS) >> 13;
}

static inline __u32 fg_presence_gen(__u64 now)
{
	return (__u32)(now >> FG_PRESENCE_GEN_SHIFT) & 0xff;
}

/* Is the bit set in generation `gen`, or in the one before? */
static inline int fg_presence_has(__u64 word, __u32 gen, __u32 bit)
{
	__u32 word_gen = word >> 56;
	__u64 noted = word & FG_PRESENCE_SET; /* in word_gen */

	if (word_gen == gen)
		noted |= (word >> FG_PRESENCE_BITS) & FG_PRESENCE_SET;
	else if (word_gen != ((gen - 1) & 0xff))
		return 0;
	return (noted >> bit) & 1;
}

/* The word with the bit noted in generation `gen`: a word of the
 * generation before keeps its bits as the older set, an older one drops
 * them. */
static inline __u64 fg_presence_with(__u64 word, __u32 gen, __u32 bit)
{
	__u32 word_gen = word >> 56;
	__u64 older = 0;

	if (word_gen == gen)
		return word | 1ULL << bit;
	if (word_gen == ((gen - 1) & 0xff))
		older = word & FG_PRESENCE_SET;
	return (__u64)gen << 56 | older << FG_PRESENCE_BITS | 1ULL << bit;
}

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

/* Value of the one-entry per-CPU `coarse_readings` array: the coarse clock
 * as this CPU last read it, and jiffies when it did (bpf/fg_clock.h). */
struct fg_coarse_reading {
	__u64 jiffies;
	__u64 coarse_ns;
};

/* Value of the one-entry per-CPU `recent_sources` array: the unknown
 * sources the new-source budget recently turned away, in 2-way sets (the
 * more recently seen in way 0), each a tag (the key's hash less its low
 * bits) and how many times it was turned away, 1..FG_SIGHTINGS_MAX. A
 * source seen often enough (struct fg_reserve_guard) may spend the half of
 * the budget that sources seen once may not: random spoofed sources almost
 * never come back, a real one does at once. */
#define FG_RECENT_SETS	  4096
#define FG_SIGHTINGS_MASK 7U
#define FG_SIGHTINGS_MAX  FG_SIGHTINGS_MASK
struct fg_recent_sources {
	__u32 hash[FG_RECENT_SETS][2]; /* tag | sightings; 0 = empty */
};

/* Value of the one-entry per-CPU `reserve_guard` array: how many sightings
 * a source needs to spend the reserve. It starts at FG_SIGHTINGS_MIN and
 * rises by one each time a source with exactly that many finds the reserve
 * spent: spoofed sources each sent k times then all arrive at k, and are
 * shut out once the bar is k + 1, while a real client that keeps sending
 * passes every level on its way up. It falls back by one for every
 * FG_RESERVE_CONTEST_NS without such a refusal. */
#define FG_SIGHTINGS_MIN      2
#define FG_RESERVE_CONTEST_NS (1ULL << 30)
struct fg_reserve_guard {
	__u64 raised_ns; /* when the bar last moved */
	__u32 sightings; /* the bar; 0 until first raised, read as FG_SIGHTINGS_MIN */
	__u32 pad;
};

/* Entry of the per-CPU `address_shares` array, direct-mapped by a hash of
 * the source address: under per = src/N+dport each port of an address is
 * a key of its own, so one address may create keys only within its share
 * of the new-source budget (1 / 2^FG_ADDRESS_SHARE_SHIFT of its rate and
 * burst, at least one key). An address that takes the slot of another
 * starts with a full share: the two are then two of many addresses, which
 * the budget itself bounds. */
#define FG_ADDRESS_SHARE_SHIFT 4
#define FG_ADDRESS_SLOTS       1024
struct fg_address_share {
	__u32 tag; /* the address hash, | 1; 0 = empty */
	__u32 pad;
	__u64 tat_ns;
};

/* Entry of `refusals`, a two-way cache for each CPU (bpf/fg_maps.h) of
 * IPv4 sources the CPU has just refused (token_bucket and leaky_bucket in
 * `sources4`), and of overflow keys (in `sources`, as fg_source4_key with
 * family FG_FAMILY_OVERFLOW and address 0): the key, and the TAT its state
 * had then. A TAT only ever grows, so while the GCRA refuses the packet
 * against that older TAT it would refuse it against the state's own, and
 * the packet is refused without the table's lookup. An entry serves only
 * under the policy set it was written under (fg_policy_set.generation), for
 * at most FG_REFUSAL_REFRESH_NS, and while this CPU has created fewer than
 * (sources4's entries >> FG_REFUSAL_CHURN_SHIFT) entries since: the lookups it
 * saves are what mark the source's entry used, and a table turning over
 * must not evict a refused source that keeps sending. */
/* 2^11 sets a CPU of two entries each, a set to a cache line: a source's
 * entry is in either way of its set, so two sources that share a set both
 * keep their entries, and the second way costs no other line. */
#define FG_REFUSAL_SET_BITS	 11
#define FG_REFUSAL_SETS		 (1U << FG_REFUSAL_SET_BITS)
#define FG_REFUSAL_WAYS		 2
#define FG_REFUSAL_REFRESH_NS	 (1ULL << 30)
#define FG_REFUSAL_CHURN_SHIFT	 8
/* 32 bytes, so that no entry straddles two cache lines (at 40, half of
 * them did: a refusal from the cache then read two), in a map whose values
 * start at a page (bpf/fg_maps.h). `written` and
 * `created` keep the low 32 bits, compared by wrapping subtraction; an
 * entry that a wrap (73 min, 2^32 creations) made look fresh again still
 * refuses only what its state would: its TAT is that old too, and a GCRA
 * admits against a TAT in the past. */
#define FG_REFUSAL_TICK_SHIFT	 10 /* `written`'s unit: 1,024 ns */
#define FG_REFUSAL_REFRESH_TICKS (FG_REFUSAL_REFRESH_NS >> FG_REFUSAL_TICK_SHIFT)
struct fg_refusal {
	struct fg_source4_key key;
	__u32 generation; /* the set's fg_policy_set.generation */
	__u64 tat_ns;	  /* the state's TAT at the refusal */
	__u32 written;	  /* when, in ticks of 2^FG_REFUSAL_TICK_SHIFT ns */
	__u32 created;	  /* this CPU's global_stats.sources_created then */
};

/* Value of `refusals`: one set, one cache line. */
struct fg_refusal_set {
	struct fg_refusal way[FG_REFUSAL_WAYS];
};

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
_Static_assert(sizeof(struct fg_budget) == 32, "fg_budget");
_Static_assert(sizeof(struct fg_recent_sources) <= 32768,
	       "fg_recent_sources: the kernel's largest per-CPU value");
_Static_assert(sizeof(struct fg_refusal) == 32, "fg_refusal: two to a cache line");
_Static_assert(sizeof(struct fg_refusal_set) == 64, "fg_refusal_set: one cache line");
_Static_assert(sizeof(struct fg_reserve_guard) == 16, "fg_reserve_guard");
_Static_assert(sizeof(struct fg_address_share) == 16, "fg_address_share");

#endif /* FLOODGATE_STATE_H */
