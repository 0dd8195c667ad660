/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Charging a packet to its key's rate-limit state, per algorithm: the
 * policy's key of the packet's source; the one-word states by
 * compare-and-swap (sources4, sources, host_sources), sliding_window and
 * sliding_log under a lock stripe; the per-source drop count and refusal
 * episodes; the overflow key past the new-source budget. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_globals.h, fg_maps.h,
 * fg_parse.h, fg_events.h, fg_budget.h and fg_refusal.h.
 */
#ifndef FG_CHARGE_H
#define FG_CHARGE_H

/* The errors of bpf_map_update_elem() that charging tells apart; a BPF
 * program has no <errno.h>. */
#define ENOMEM	       12
#define EEXIST	       17
#define FG_CAS_RETRIES 8

/* The key the policy charges for the packet: its id, and unless the policy
 * has one global bucket, the source masked to the policy's prefix (and the
 * destination port under per = src/N+dport). */
static __always_inline void fg_make_key(const struct fg_policy *policy, const struct fg_packet *pkt,
					struct fg_source_key *key)
{
	__u64 *addr = (__u64 *)key->addr;

	key->policy_id = policy->id;
	if (policy->key_kind == FG_KEY_GLOBAL)
		return;
	if (policy->flags & FG_POLICY_KEY_DPORT)
		key->dport = pkt->dport;
	key->family = pkt->family;
	if (pkt->family == FG_FAMILY_IPV4) {
		__u32 saddr;

		__builtin_memcpy(&saddr, pkt->saddr, 4);
		saddr &= policy->mask_v4_be;
		__builtin_memcpy(key->addr, &saddr, 4);
		key->prefix_len = policy->prefix_v4;
	} else {
		__u64 saddr[2];

		__builtin_memcpy(saddr, pkt->saddr, 16);
		addr[0] = saddr[0] & policy->mask_v6_be[0];
		addr[1] = saddr[1] & policy->mask_v6_be[1];
		key->prefix_len = policy->prefix_v6;
	}
}

/* The decision for the algorithms whose whole state is one __u64 in
 * `sources4` or `sources`: token_bucket and leaky_bucket (a TAT),
 * fixed_window (a packed window index and count). */
static __always_inline int fg_decide_word(const struct fg_policy *policy, __u64 state, __u64 now,
					  __u64 cost, __u64 *new_state)
{
	const struct fg_gcra_params *gcra;

	if (policy->algorithm == FG_ALG_FIXED_WINDOW)
		return fg_fixed_window_admit(&policy->params.fixed_window, state, now, cost,
					     new_state);
	/* leaky_bucket is GCRA too (fg_leaky_bucket_admit is fg_gcra_admit);
	 * both params sit at the same address, so this select costs nothing. */
	gcra = policy->algorithm == FG_ALG_LEAKY_BUCKET ? &policy->params.leaky_bucket.gcra
							: &policy->params.token_bucket;
	return fg_gcra_admit(gcra, state, now, cost, new_state);
}

/* Creates a key's state. The tables are LRU maps: when full they evict the
 * least recently used entry, so this fails only when the kernel cannot get
 * an element at all, and then on_insert_failure decides. An int, not a
 * long: pre-6.4 JITs do not sign-extend the helper's error (bcc #4571). */
static __always_inline int fg_insert_state(void *map, const void *key, const void *fresh)
{
	if (fg_test_fail_inserts)
		return -ENOMEM;
	return bpf_map_update_elem(map, key, fresh, BPF_NOEXIST);
}

/* Returned by a charge when the key has no state and the new-source budget
 * is spent: the caller charges the policy's overflow key instead. */
#define FG_NO_BUDGET -2

/* The per-source drop count is sampled: one refusal in FG_DROP_SAMPLE adds
 * FG_DROP_SAMPLE. A refused packet then usually only reads its source's
 * state, so an abuser flooding from several CPUs does not bounce that cache
 * line between them. The exact counts are in the per-CPU policy_stats.
 *
 * The draw is this CPU's packet count through MurmurHash3's 64-bit
 * finalizer, not bpf_get_prandom_u32(): a helper call costs a refusal
 * more than the mix's few instructions (measured: docs/benchmarks.md,
 * "Figures behind the code's comments"). Its top bits have no period
 * that a round-robin of sources could fall in step with, so each source's
 * refusals are sampled one in 64 whatever the order of arrival. */
#define FG_DROP_SAMPLE 64
static __always_inline bool fg_drop_sampled(const struct fg_global_stats *gstats)
{
	__u64 draw = gstats->packets;

	_Static_assert(FG_DROP_SAMPLE == 1 << 6, "the draw's top 6 bits");
	draw ^= draw >> 33;
	draw *= 0xff51afd7ed558ccdULL;
	draw ^= draw >> 33;
	draw *= 0xc4ceb9fe1a85ec53ULL;
	draw ^= draw >> 33;
	return !(draw >> 58);
}

static __always_inline void fg_count_drop(__u32 *dropped, const struct fg_global_stats *gstats)
{
	if (fg_drop_sampled(gstats))
		*dropped += FG_DROP_SAMPLE;
}

/* A refusal of a source with state: counts it, and on the first refusal
 * after an admission sets FG_DROPPED_REFUSING and owes a `refusing`
 * event. Later refusals only read the flag, in the line the decision has
 * just read, so the refusal path writes nothing more than before. The
 * fetch-or makes one CPU the one that reports a transition. */
static __always_inline void fg_refused(__u32 *dropped, const struct fg_source_key *key,
				       struct fg_clock *clock, __u64 now,
				       const struct fg_global_stats *gstats)
{
	fg_count_drop(dropped, gstats);
	if (*dropped & FG_DROPPED_REFUSING)
		return;
	if (__sync_fetch_and_or(dropped, FG_DROPPED_REFUSING) & FG_DROPPED_REFUSING)
		return;
	fg_owe_event(clock, FG_EVENT_REFUSING, key, now);
}

/* An admission ends a refusal episode; written only at that transition. */
static __always_inline void fg_admitted(__u32 *dropped)
{
	if (*dropped & FG_DROPPED_REFUSING)
		__sync_fetch_and_and(dropped, ~FG_DROPPED_REFUSING);
}

static __always_inline void fg_touch(__u64 *last_seen_ns, __u64 now)
{
	if (now > *last_seen_ns && now - *last_seen_ns >= FG_LAST_SEEN_GRAIN_NS)
		*last_seen_ns = now;
}

/* Whether the policy's one-word state is a GCRA TAT, whose refusals hold
 * at any earlier time (fixed_window's do not: its window may turn). */
static __always_inline bool fg_gcra_word(const struct fg_policy *policy)
{
	return policy->algorithm == FG_ALG_TOKEN_BUCKET || policy->algorithm == FG_ALG_LEAKY_BUCKET;
}

/* Charges `cost` to a one-word state that exists, with compare-and-swap.
 * Returns 1 if admitted, 0 if refused. A GCRA that refuses at the latest
 * time the packet can have refuses it without the precise clock
 * (bpf/fg_clock.h); the refusal writes nothing but the sampled count. */
static __always_inline int fg_charge_state(struct fg_source_state *state,
					   const struct fg_policy *policy,
					   const struct fg_source_key *key, struct fg_clock *clock,
					   __u64 cost, struct fg_global_stats *gstats,
					   __u64 *refused_state)
{
	__u64 now = fg_clock_earliest(clock), new_state = 0;
	int i;

	/* Written only when it changes, about once a second. */
	if (state->last_seen != (__u32)(now >> FG_LAST_SEEN_SHIFT))
		state->last_seen = now >> FG_LAST_SEEN_SHIFT;
	if (!clock->now && fg_gcra_word(policy) && !fg_test_naive_update) {
		__u64 old = *(volatile __u64 *)&state->tat_ns;

		if (!fg_decide_word(policy, old, fg_clock_latest(clock), cost, &new_state)) {
			fg_refused(&state->dropped, key, clock, now, gstats);
			*refused_state = old;
			return 0;
		}
	}
	now = fg_clock_now(clock);

	if (fg_test_naive_update) {
		/* Deliberately racy, to prove the concurrency tests can fail. */
		if (!fg_decide_word(policy, state->tat_ns, now, cost, &new_state)) {
			fg_refused(&state->dropped, key, clock, now, gstats);
			return 0;
		}
		state->tat_ns = new_state;
		fg_admitted(&state->dropped);
		return 1;
	}

	for (i = 0; i < FG_CAS_RETRIES; i++) {
		__u64 old = *(volatile __u64 *)&state->tat_ns;

		if (!fg_decide_word(policy, old, now, cost, &new_state)) {
			fg_refused(&state->dropped, key, clock, now, gstats);
			*refused_state = old;
			return 0;
		}
		if (__sync_val_compare_and_swap(&state->tat_ns, old, new_state) == old) {
			fg_admitted(&state->dropped);
			return 1;
		}
	}
	/* Refusing is the safe side: admitting here could exceed the limit. */
	gstats->cas_exhausted++;
	fg_refused(&state->dropped, key, clock, now, gstats);
	return 0;
}

/* Returned by fg_find_or_create when the key has state: *found points to
 * it, and the caller charges it. */
#define FG_FOUND 2

/* Finds a key's one-word state in `map` (sources4, sources or
 * host_sources), or creates it and charges the packet to it. `map_key` is
 * the key in the map's own layout; `key` the full one, for the budget and
 * events. Returns FG_FOUND, or for a key that had no state 1 if admitted, 0
 * if refused, FG_NO_BUDGET, and -1 if no state could be created (table
 * full). `unnoted` (sources4 only): the presence filter has no note of the
 * key, so the budget is asked first, and only if it lets the key by are
 * `unnoted` (known4) and `map` looked in, before a state is made. Inlined
 * at each call site with a constant map, so each lookup stays one the
 * verifier can inline: a map chosen at run time would cost every policy a
 * helper call. */
static __always_inline int
fg_find_or_create(void *map, const void *map_key, const struct fg_policy *policy, int budgeted,
		  const struct fg_source_key *key, struct fg_clock *clock, __u64 cost,
		  struct fg_global_stats *gstats, struct fg_source_state **found, void *unnoted)
{
	struct fg_source_state fresh = {};
	__u64 new_state = 0, now;
	int admitted;
	int err; /* int: see fg_ban */

	*found = unnoted ? NULL : bpf_map_lookup_elem(map, map_key);
	if (*found)
		return FG_FOUND;
	if (budgeted && !fg_budget_allows(key, policy->flags & FG_POLICY_KEY_DPORT, clock)) {
		if (unnoted && fg_test_clock)
			fg_test_presence_refusals++;
		return FG_NO_BUDGET;
	}
	if (unnoted && ((*found = bpf_map_lookup_elem(unnoted, map_key)) ||
			(*found = bpf_map_lookup_elem(map, map_key))))
		return FG_FOUND;
	now = fg_clock_now(clock);
	fresh.last_seen = now >> FG_LAST_SEEN_SHIFT;
	fresh.dropped = fg_born_bits(now);
	admitted = fg_decide_word(policy, 0, now, cost, &new_state);
	if (admitted)
		fresh.tat_ns = new_state;
	else
		fresh.dropped |= FG_DROPPED_REFUSING;
	err = fg_insert_state(map, map_key, &fresh);
	if (!err) {
		gstats->sources_created++;
		if (!admitted)
			fg_owe_event(clock, FG_EVENT_REFUSING, key, now);
		return admitted;
	}
	/* Another CPU created it first: charge the state it made. */
	if (err != -EEXIST || !(*found = bpf_map_lookup_elem(map, map_key))) {
		gstats->insert_failed++;
		fg_owe_event(clock, FG_EVENT_TABLE_FULL, key, now);
		return -1;
	}
	return FG_FOUND;
}

/* Charges `cost` to a one-word state in `map`, created if need be: 1 if
 * admitted, 0 if refused, FG_NO_BUDGET or -1 (fg_find_or_create). */
static __always_inline int fg_charge_word(void *map, const void *map_key,
					  const struct fg_policy *policy, int budgeted,
					  const struct fg_source_key *key, struct fg_clock *clock,
					  __u64 cost, struct fg_global_stats *gstats,
					  __u64 *refused_state)
{
	struct fg_source_state *state;
	int found = fg_find_or_create(map, map_key, policy, budgeted, key, clock, cost, gstats,
				      &state, NULL);

	if (found != FG_FOUND || !state)
		return found;
	return fg_charge_state(state, policy, key, clock, cost, gstats, refused_state);
}

/* The lock stripe that guards a key's multi-word state. The verifier lets
 * a program touch other map values while it holds a lock, so one array of
 * locks serves the LRU maps, which cannot hold a lock themselves. */
static __always_inline struct bpf_spin_lock *fg_lock_for(const struct fg_source_key *key)
{
	const __u32 *words = (const __u32 *)key;
	__u32 hash = key->policy_id, i;
	struct fg_state_lock *stripe;

#pragma unroll
	for (i = 2; i < sizeof(*key) / 4; i++)
		hash = (hash ^ words[i]) * 0x9e3779b1;
	hash &= FG_STATE_LOCKS - 1;
	stripe = bpf_map_lookup_elem(&state_locks, &hash);
	return stripe ? &stripe->lock : NULL;
}

/* sliding_window: two counters and a window start, under a lock stripe. */
static __always_inline int fg_charge_window(const struct fg_policy *policy, int budgeted,
					    const struct fg_source_key *key, struct fg_clock *clock,
					    __u64 cost, struct fg_global_stats *gstats)
{
	const __u64 now = fg_clock_now(clock);
	const struct fg_sliding_window_params *params = &policy->params.sliding_window;
	struct fg_window_entry *entry = bpf_map_lookup_elem(&windows, key);
	struct bpf_spin_lock *lock;
	int admitted;

	if (!entry) {
		struct fg_window_entry fresh = {.last_seen_ns = now};
		int err; /* int: see fg_ban */

		if (budgeted && !fg_budget_allows(key, policy->flags & FG_POLICY_KEY_DPORT, clock))
			return FG_NO_BUDGET;
		err = fg_insert_state(&windows, key, &fresh);
		if (!err)
			gstats->sources_created++;
		entry = bpf_map_lookup_elem(&windows, key);
		if ((err && err != -EEXIST) || !entry) {
			gstats->insert_failed++;
			fg_owe_event(clock, FG_EVENT_TABLE_FULL, key, now);
			return -1;
		}
	}
	fg_touch(&entry->last_seen_ns, now);
	lock = fg_test_naive_update ? NULL : fg_lock_for(key);
	if (lock) {
		bpf_spin_lock(lock);
		admitted = fg_sliding_window_admit(params, &entry->state, now, cost, &entry->state);
		bpf_spin_unlock(lock);
	} else {
		admitted = fg_sliding_window_admit(params, &entry->state, now, cost, &entry->state);
	}
	if (admitted)
		fg_admitted(&entry->dropped);
	else
		fg_refused(&entry->dropped, key, clock, now, gstats);
	return admitted;
}

/* sliding_log: a ring of the last COUNT admissions, under the entry's lock.
 * The entry is too large for the BPF stack, so a new one is copied from a
 * zeroed per-CPU template. */
static __always_inline int fg_charge_log(const struct fg_policy *policy, int budgeted,
					 const struct fg_source_key *key, struct fg_clock *clock,
					 __u64 cost, struct fg_global_stats *gstats)
{
	const __u64 now = fg_clock_now(clock);
	const struct fg_sliding_log_params *params = &policy->params.sliding_log;
	struct fg_log_entry *entry = bpf_map_lookup_elem(&logs, key);
	struct bpf_spin_lock *lock;
	__u32 zero = 0;
	int admitted;

	if (!entry) {
		struct fg_log_entry *fresh = bpf_map_lookup_elem(&log_template, &zero);
		int err; /* int: see fg_ban */

		if (!fresh)
			return -1;
		if (budgeted && !fg_budget_allows(key, policy->flags & FG_POLICY_KEY_DPORT, clock))
			return FG_NO_BUDGET;
		err = fg_insert_state(&logs, key, fresh);
		if (!err)
			gstats->sources_created++;
		entry = bpf_map_lookup_elem(&logs, key);
		if ((err && err != -EEXIST) || !entry) {
			gstats->insert_failed++;
			fg_owe_event(clock, FG_EVENT_TABLE_FULL, key, now);
			return -1;
		}
	}
	fg_touch(&entry->last_seen_ns, now);
	lock = fg_test_naive_update ? NULL : fg_lock_for(key);
	if (lock) {
		bpf_spin_lock(lock);
		admitted = fg_sliding_log_admit(params, &entry->state, now, cost);
		bpf_spin_unlock(lock);
	} else {
		admitted = fg_sliding_log_admit(params, &entry->state, now, cost);
	}
	if (admitted)
		fg_admitted(&entry->dropped);
	else
		fg_refused(&entry->dropped, key, clock, now, gstats);
	return admitted;
}

/* Whether the `refusals` cache may answer this policy's refusals: a GCRA
 * state (fixed_window's refusals do not hold at a later time), a cache
 * that is on, and not the tests' racy update. */
static __always_inline bool fg_refusal_serves(const struct fg_policy *policy)
{
	return fg_gcra_word(policy) && fg_refusal_churn_limit && !fg_test_naive_update;
}

/* Moves a source known long enough from `sources4` to `known4`, with its
 * state: there a flood that turns `sources4` over cannot evict it, nor hand
 * it a fresh burst. A charge another CPU makes to the old copy while it
 * moves is lost: at most one packet a CPU, once in a source's life. */
static __always_inline void fg_promote(const struct fg_source4_key *key4,
				       const struct fg_source_state *state,
				       struct fg_global_stats *gstats)
{
	struct fg_source_state copy = *state;
	int err = bpf_map_update_elem(&known4, key4, &copy, BPF_NOEXIST); /* int: see fg_ban */

	if (err && err != -EEXIST)
		return;
	bpf_map_delete_elem(&sources4, key4);
	if (!err)
		gstats->sources_promoted++;
}

/* An IPv4 source's one-word state: in `known4` once the source has been
 * known for FG_KNOWN_AFTER, else in `sources4` (one lookup more for them,
 * none for a known source). A token_bucket or leaky_bucket source that
 * this CPU has just refused is refused again from the `refusals` cache,
 * without the table lookups (what that saves a refusal:
 * docs/benchmarks.md, "Figures behind the code's comments"), except for
 * the one refusal in FG_DROP_SAMPLE that the per-source count samples:
 * that one, and any after FG_REFUSAL_REFRESH_NS, looks the state up, which
 * keeps its drop count, last_seen and LRU recency, and refreshes the
 * cache. At XDP the walk has asked the cache for the packet's first layer
 * already (fg_cached_refusal): after its miss, this charge does not ask
 * again. A source the presence filter has not noted lately is put to the
 * new-source budget first, and refused without either lookup if it finds
 * the budget spent: that is a spoofed flood's every packet. */
static __always_inline int fg_charge_source4(const struct fg_policy *policy, int budgeted,
					     const struct fg_source_key *key,
					     struct fg_clock *clock, __u64 cost,
					     struct fg_global_stats *gstats, __u32 generation)
{
	/* leaky_bucket's params are token_bucket's (fg_decide_word) */
	const struct fg_gcra_params *gcra = &policy->params.token_bucket;
	const bool cached = fg_refusal_serves(policy);
	struct fg_source4_key key4 = fg_source4_key_of(key);
	struct fg_source_state *state = NULL;
	__u64 refused_state = 0;
	void *unnoted = NULL;
	int admitted;

	if (cached && !clock->refusal_asked && !fg_drop_sampled(gstats) &&
	    fg_refusal_cached(&key4, clock, cost, gcra, gstats, generation))
		return 0;
	clock->refusal_asked = 0; /* the walk's mark is the first layer's only */
	if (fg_budget_in_force() && !fg_presence_maybe(&key4, fg_presence_gen_at(clock)))
		unnoted = &known4;
	else
		state = bpf_map_lookup_elem(&known4, &key4);
	if (state) {
		if (fg_presence_lapsing(state->last_seen, clock))
			fg_presence_note(&key4, fg_presence_gen_at(clock));
		admitted = fg_charge_state(state, policy, key, clock, cost, gstats, &refused_state);
	} else {
		admitted = fg_find_or_create(&sources4, &key4, policy, budgeted, key, clock, cost,
					     gstats, &state, unnoted);
		if (admitted != FG_FOUND || !state) {
			if ((admitted == 0 || admitted == 1) && fg_budget_in_force())
				fg_presence_note(&key4, fg_presence_gen_at(clock)); /* made */
			return admitted;
		}
		/* Each note is made where it is decided: a flag live across the
		 * charge took fg_tc's deepest call chain past its stack
		 * (bpf/fg_clock.h). */
		if (unnoted || fg_presence_lapsing(state->last_seen, clock))
			fg_presence_note(&key4, fg_presence_gen_at(clock));
		admitted = fg_charge_state(state, policy, key, clock, cost, gstats, &refused_state);
		if (fg_known_long_enough(state->dropped, fg_clock_earliest(clock)))
			fg_promote(&key4, state, gstats);
	}
	if (cached && admitted == 0 && refused_state)
		fg_refusal_note(&key4, refused_state, fg_clock_earliest(clock), generation);
	return admitted;
}

/* The policy's overflow key, which every unknown source past the budget is
 * charged to: refused from the `refusals` cache as an IPv4 source is
 * (fg_charge_source4), under a key of its own there (its family is
 * FG_FAMILY_OVERFLOW), so that a spoofed flood's packet does not look the
 * key up in `sources` either. */
static __always_inline int fg_charge_overflow(const struct fg_policy *policy,
					      const struct fg_source_key *key,
					      struct fg_clock *clock, __u64 cost,
					      struct fg_global_stats *gstats, __u32 generation)
{
	const bool cached = fg_refusal_serves(policy);
	struct fg_source4_key key4 = fg_source4_key_of(key);
	__u64 refused_state = 0;
	int admitted;

	if (cached && !fg_drop_sampled(gstats) &&
	    fg_refusal_cached(&key4, clock, cost, &policy->params.token_bucket, gstats, generation))
		return 0;
	admitted =
		fg_charge_word(&sources, key, policy, 0, key, clock, cost, gstats, &refused_state);
	if (cached && admitted == 0 && refused_state)
		fg_refusal_note(&key4, refused_state, fg_clock_earliest(clock), generation);
	return admitted;
}

static __always_inline int fg_charge_key(const struct fg_policy *policy, int budgeted,
					 const struct fg_source_key *key, struct fg_clock *clock,
					 __u64 cost, struct fg_global_stats *gstats,
					 __u32 generation)
{
	__u64 refused_state;

	switch (policy->algorithm) {
	case FG_ALG_SLIDING_WINDOW:
		return fg_charge_window(policy, budgeted, key, clock, cost, gstats);
	case FG_ALG_SLIDING_LOG:
		return fg_charge_log(policy, budgeted, key, clock, cost, gstats);
	default:
		/* scope = host: the host's shared table (the same GCRA, CAS
		 * and budget; only the map differs). Inlined, not a global
		 * function: a fourth frame (fg_xdp, fg_apply_layer, it,
		 * fg_presence_note) takes the call chain past the verifier's
		 * 512-byte stack. */
		if (policy->flags & FG_POLICY_HOST)
			return fg_charge_word(&host_sources, key, policy, budgeted, key, clock,
					      cost, gstats, &refused_state);
		/* The one branch the 96-byte IPv4 table costs a packet: the
		 * family was settled by the parser and fg_make_key. The
		 * overflow key (the one charge not budgeted) is never IPv4:
		 * its copy of this function has no IPv4 path to verify. */
		if (budgeted && key->family == FG_FAMILY_IPV4)
			return fg_charge_source4(policy, budgeted, key, clock, cost, gstats,
						 generation);
		if (!budgeted)
			return fg_charge_overflow(policy, key, clock, cost, gstats, generation);
		return fg_charge_word(&sources, key, policy, budgeted, key, clock, cost, gstats,
				      &refused_state);
	}
}

/* Charges the packet's own key; an unknown source past the new-source
 * budget is charged to the policy's shared overflow key instead (and
 * *key becomes that key), unless the fleet holds that key: the caller
 * checked the hold of the packet's own key only (`fleet`: NULL unless
 * scope = fleet). `generation` is the policy's set's tag (the refusal
 * cache's). */
static __always_inline int fg_charge(const struct fg_policy *policy, struct fg_source_key *key,
				     struct fg_clock *clock, __u64 cost,
				     const struct fg_fleet_state *fleet,
				     struct fg_global_stats *gstats, __u32 generation)
{
	int admitted = fg_charge_key(policy, 1, key, clock, cost, gstats, generation);

	if (admitted != FG_NO_BUDGET)
		return admitted;
	gstats->budget_overflow++;
	__builtin_memset(key, 0, sizeof(*key));
	key->policy_id = policy->id;
	key->family = FG_FAMILY_OVERFLOW;
	if (fleet && fg_fleet_held(fleet, key, fg_clock_now(clock))) {
		gstats->fleet_held++; /* not charged locally, as in fg_apply */
		return 0;
	}
	return fg_charge_key(policy, 0, key, clock, cost, gstats, generation);
}

#endif /* FG_CHARGE_H */
