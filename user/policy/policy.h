/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compiles a validated config into the datapath's tables (a policy set, the
 * destination-port masks and the source-prefix trie) and pushes them into the
 * maps of one slot. All per-packet work that can be done here, is.
 */
#ifndef FG_POLICY_H
#define FG_POLICY_H

#include "config/config.h"
#include "config/feedfile.h"
#include "policy/access.h"

/* Stable policy id: 32-bit FNV-1a of the name. */
__u32 fg_policy_id(const char *name);

struct fg_src_entry {
	struct fg_src_lpm_key key;
	__u64 mask;
};

struct fg_compiled {
	struct fg_policy_set set;
	__u64 dport_mask[FG_PORT_SLOTS];
	__u64 sport_mask[FG_PORT_SLOTS];
	unsigned int n_src;
	struct fg_src_entry src[FG_MAX_SRC_PREFIXES];
	struct fg_budget budget;       /* per CPU; tat_ns is 0 */
	struct fg_budget event_budget; /* per CPU; interval_fp 0 = events off */
	/* The [allow]/[deny] prefixes (policy/access.c), on the heap: feed
	 * files make them millions. */
	struct fg_access_list access;
};

/* The map fds the compiled tables go into. */
struct fg_policy_maps {
	int policy_sets;
	int dport_match;
	int sport_match;
	int src_match;
	int access_lists;
	int new_source_budget;
	int event_budget;
	int policy_stats;
	int runtime;
};

/* The CPUs that are online now, which share the new-source budget (a
 * budget split over the possible CPUs would shrink wherever more CPUs are
 * possible than online). At least 1. */
int fg_online_cpus(void);

/* A per-CPU bucket of `burst` at COUNT/PERIOD for the whole machine (the
 * new-source budget, the event budget, [synproxy]'s synacks): each online CPU gets rate/ncpus
 * with burst/ncpus, its interval being ncpus times the configured one and
 * its tolerance (burst x interval) unchanged. CPUs brought online later get
 * a share too (the per-CPU map has every possible CPU), until the next
 * reload splits the budget again. COUNT 0 leaves it off. */
int fg_budget_compile(__u64 count, __u64 period_ns, __u64 burst, struct fg_budget *budget);

/* Fills `out` for `slot`. Returns 0 or -E2BIG when the source prefixes do not
 * fit in the trie. Release it with fg_compiled_free. */
int fg_policy_compile(const struct fg_config *cfg, __u32 slot, struct fg_compiled *out);

/* The same, with the prefixes of the feed files read into `feeds`. */
int fg_policy_compile_feeds(const struct fg_config *cfg, const struct fg_feeds *feeds, __u32 slot,
			    struct fg_compiled *out);

/* Frees a compiled policy from malloc and what it holds (NULL: nothing). */
void fg_compiled_free(struct fg_compiled *compiled);

/* Writes `compiled` into `slot` of the maps: the set, the port masks, the
 * trie entries (replacing the slot's old ones) and zeroed counters. Does not
 * make the slot active. Returns 0 or a negative errno. */
int fg_policy_write_slot(const struct fg_policy_maps *maps, __u32 slot,
			 const struct fg_compiled *compiled);

/* Copies each policy's counters from `from_slot` to the policy of the same
 * name in `to_slot` so that a reload keeps the totals. */
int fg_policy_carry_stats(const struct fg_policy_maps *maps, __u32 from_slot, __u32 to_slot);

/* After the flip: deletes the [allow]/[deny] prefixes of `slot`, the old
 * one, by batch: `keys` when they were collected before (a reload does it
 * while it compiles), else the slot's, found by a walk. Returns how many,
 * or a negative errno. */
long fg_policy_reclaim_access(const struct fg_policy_maps *maps, __u32 slot,
			      const struct fg_access_keys *keys);

/* Makes `slot` the one the datapath reads, in one map update. */
int fg_policy_activate(const struct fg_policy_maps *maps, __u32 slot);

/* Does any policy use `algorithm`? */
bool fg_config_uses(const struct fg_config *cfg, __u8 algorithm);

/* Entries of the `windows` and `logs` maps a config needs: a single entry
 * when no policy uses the algorithm (they are preallocated), else
 * max_sources (capped at FG_DEFAULT_MAX_LOG_SOURCES for the ~1 KiB logs). */
__u32 fg_windows_entries(const struct fg_config *cfg);
__u32 fg_logs_entries(const struct fg_config *cfg);
/* Entries of `fleet_counts` and `fleet_holds`: max_sources, at most
 * FG_MAX_FLEET_KEYS, when a policy is fleet-scoped, else 1. */
__u32 fg_fleet_entries(const struct fg_config *cfg);
/* Is any policy scope = host? */
bool fg_config_has_host(const struct fg_config *cfg);
/* Entries of `host_sources` a load creates when no interface made the
 * host's table yet: max_sources when a policy is host-scoped, else 1 (a
 * private map nobody shares). */
__u32 fg_host_entries(const struct fg_config *cfg);

#endif /* FG_POLICY_H */
