/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every map of the datapath, in one place. Their names, types, flags and
 * key and value types are the pinned layout that `reload` and `upgrade`
 * check against the maps already pinned (user/maps/pinned.c,
 * user/ops/upgrade.c): change them only together with that layout.
 * The key and value types are include/floodgate.h's; the SYN proxy's
 * maps, which hold a parsed packet, are in fg_synproxy.h. Part of
 * bpf/floodgate.bpf.c, the one file that includes it.
 */
#ifndef FG_MAPS_H
#define FG_MAPS_H

/* IPv4 keys of local one-word policies: 96 bytes an entry, not 104
 * (include/floodgate_state.h, struct fg_source4_key). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES); /* resized from max_sources */
	__type(key, struct fg_source4_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sources4 SEC(".maps");

/* Every other key of a local one-word policy: IPv6, global, overflow. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES / 4); /* resized from max_sources_ipv6 */
	__type(key, struct fg_source_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sources SEC(".maps");

/* scope = host: the per-source state of host-scoped policies, one map for
 * every interface of the host (include/floodgate_state.h). Sized at load time,
 * 1 entry when no policy is host-scoped; a load that finds the host's map
 * already made reuses it, whatever its size. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_PORT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sport_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_ACCESS_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} access_lists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_DEFAULT_MAX_BANS); /* resized from max_bans */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, struct fg_ban);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bans SEC(".maps");

/* The host's own addresses (include/floodgate_lists.h): never banned. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_MAX_OWN_ADDRS);
	__type(key, struct fg_own_addr_key);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} own_addrs SEC(".maps");

/* sliding_window state; sized at load time, 1 entry when no policy uses it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_window_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} windows SEC(".maps");

/* sliding_log state (about 1 KiB an entry); sized like `windows`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_LOG_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_log_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} logs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_STATE_LOCKS);
	__type(key, __u32);
	__type(value, struct fg_state_lock);
} state_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_budget);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} new_source_budget SEC(".maps");

/* The coarse clock as this CPU last read it, and the jiffy it was read in
 * (bpf/fg_clock.h, fg_coarse_cached); not pinned: a load starts it empty,
 * and an entry serves only within the jiffy it was written in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_coarse_reading);
} coarse_readings SEC(".maps");

/* Unknown sources recently turned away by the budget, per CPU; not pinned:
 * it is a short memory that a restart may lose. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_recent_sources);
} recent_sources SEC(".maps");

/* Sources each CPU has just refused (fg_refusal), FG_REFUSAL_SETS two-way
 * sets a CPU, CPU by CPU (fg_refusal_index); not pinned: a cache that a
 * restart may lose. A plain array, sized for the possible CPUs at open
 * (user/maps/skeleton.c), not a per-CPU one, so that an entry is found
 * without the per-CPU array's pointer per entry; and mmapable, which is
 * what puts its values at a page boundary: a plain array's start 312
 * bytes into its allocation on 6.18 (after struct bpf_array's header, 56
 * mod 64), so that every 64-byte set straddled two cache lines.
 * Nothing maps it but a test (tests/prog/refusal_cache.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_REFUSAL_SETS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fg_refusal_set);
} refusals SEC(".maps");

/* A zeroed fg_log_entry to create `logs` entries from. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_log_entry);
} log_template SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_policy_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_PORT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} dport_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_SRC_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} src_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_runtime);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} runtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct fg_policy_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_global_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} global_stats SEC(".maps");

/* Events for `floodgate events`: struct fg_event records, at most what
 * the per-CPU `event_budget` GCRA allows (config key `events`). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FG_EVENTS_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_budget);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} event_budget SEC(".maps");
/* scope = fleet (include/floodgate_fleet.h): admissions per key and epoch, read
 * and deleted by `floodgate run`; sized at load time, 1 entry when no
 * policy is fleet-scoped. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_fleet_key);
	__type(value, struct fg_fleet_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_counts SEC(".maps");

/* The keys the fleet holds, written by `floodgate run`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_fleet_hold);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_holds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_fleet_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_state SEC(".maps");

/* Fragmented datagrams by their reassembly key, written by the first
 * fragment with what it carries (its protocol and ports), read by the later
 * ones, which match and are charged as the first was (bpf/fg_fragments.h).
 * Private to the datapath and not pinned: a short memory, which a restart
 * may lose. */
struct fg_fragment_key {
	__u8 family;
	__u8 proto; /* IPv4's protocol; 0 for IPv6, whose reassembly ignores it */
	__u16 pad;
	__u32 id;
	__u8 saddr[16];
	__u8 daddr[16];
};

struct fg_fragment_flow {
	__u16 dport; /* host order */
	__u16 sport;
	__u8 proto;
	__u8 has_ports;
	__u16 pad;
};

/* Datagrams in reassembly at once: the kernel holds at most 4 MiB of
 * fragments per network namespace (ipfrag_high_thresh). */
#define FG_FRAGMENT_FLOWS 8192

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_FRAGMENT_FLOWS);
	__type(key, struct fg_fragment_key);
	__type(value, struct fg_fragment_flow);
} fragment_flows SEC(".maps");

/* Where a fragment's key is built: map memory, not the stack, whose every
 * write the verifier tracks through the parser's paths (with the key on
 * the stack, fg_xdp took 161k instructions to verify, not 118k). */
struct fg_fragment_scratch {
	struct fg_fragment_key key;
	struct fg_fragment_flow flow;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_fragment_scratch);
} fragment_scratch SEC(".maps");

/* The events a policy layer owes, per CPU, until fg_apply_layer emits them
 * at its end (bpf/fg_events.h, fg_owe_event); not pinned. A layer
 * owes at most two: its new-source budget's `budget_exhausted` for the
 * packet's source, then `refusing` or `table_full` for the overflow key
 * the packet is charged to instead. */
#define FG_OWED_EVENTS 2

struct fg_owed_event {
	__u32 type;
	__u32 pad;
	__u64 now;
	struct fg_source_key key;
};

struct fg_owed_events {
	__u32 count; /* of event[] in use */
	__u32 lost;  /* owed past FG_OWED_EVENTS: counted as suppressed */
	struct fg_owed_event event[FG_OWED_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_owed_events);
} owed_events SEC(".maps");

/* The sightings the new-source reserve asks for now (fg_reserve_guard),
 * per CPU; not pinned: a restart starts again from the minimum. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_reserve_guard);
} reserve_guard SEC(".maps");

/* Each address's share of the new-source budget under per = src/N+dport
 * (fg_address_share), per CPU; not pinned, like `recent_sources`. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_ADDRESS_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_address_share);
} address_shares SEC(".maps");

/* IPv4 sources known for a while (FG_KNOWN_AFTER), moved out of
 * `sources4`: only such moves insert here, so a flood of new sources, which
 * turns `sources4` over, cannot evict them (include/floodgate_state.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES / 2); /* resized from max_sources */
	__type(key, struct fg_source4_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} known4 SEC(".maps");
/* The presence filter of `sources4` and `known4`, its two levels
 * (include/floodgate_state.h, FG_PRESENCE_WORDS_LOG2): one fixed size
 * whatever the tables', so that a reload that resizes them keeps it;
 * pinned, so that a new program keeps what the old one noted. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_PRESENCE_FIRST_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} presence4_first SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_PRESENCE_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} presence4 SEC(".maps");

/* The strikes of policy bans (include/floodgate_lists.h): apart from the
 * trie of bans, and reclaimed on their own. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_MAX_BAN_STRIKES);
	__type(key, struct fg_src_lpm_key);
	__type(value, struct fg_ban_strike);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ban_strikes SEC(".maps");

/* How many bans of `bans` policies made; mmapable so that `unban` can take
 * one atomically. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fg_ban_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ban_count SEC(".maps");

#endif /* FG_MAPS_H */
