/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The events ring (`floodgate events`), rate-capped per CPU. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_maps.h and fg_clock.h.
 */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

/* Emits one event about `key` if this CPU's event budget allows it, else
 * counts it in events_suppressed (as when the ring is full: nobody reads
 * it). */
static __always_inline int fg_emit(__u32 type, const struct fg_source_key *key, __u64 expires_ns,
				   __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_budget *limit;
	struct fg_event *event;
	__u32 zero = 0;
	__u64 tat;

	limit = bpf_map_lookup_elem(&event_budget, &zero);
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	if (!key || !limit || !gstats || !limit->gcra.interval_fp)
		return 0;
	if (!fg_gcra_admit(&limit->gcra, limit->tat_ns, now, 1, &tat)) {
		gstats->events_suppressed++;
		return 0;
	}
	limit->tat_ns = tat;
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		gstats->events_suppressed++;
		return 0;
	}
	event->time_ns = now;
	event->expires_ns = expires_ns;
	event->type = type;
	event->policy_id = key->policy_id;
	event->family = key->family;
	event->prefix_len = key->prefix_len;
	event->dport = key->dport;
	event->pad = 0;
	__builtin_memcpy(event->addr, key->addr, sizeof(event->addr));
	bpf_ringbuf_submit(event, 0);
	return 1;
}

/* fg_emit for a ban (fg_ban_layer). Global, so the verifier checks it once;
 * it is only called when an event is due, never on the ordinary refusal
 * path. */
__noinline int fg_emit_event(__u32 type, const struct fg_source_key *key, __u64 expires_ns,
			     __u64 now)
{
	return fg_emit(type, key, expires_ns, now);
}

/*
 * A policy layer owes its events instead of emitting them on the spot:
 * fg_apply_layer emits them (fg_emit_owed) as it returns, from one call
 * at the end of its paths. Before 6.4, the verifier's precision tracking
 * gives up where a path crossed a call to another BPF function and marks
 * every scalar precise, so states stop matching; calls to fg_emit_event
 * in the middle of fg_apply_layer's paths cost 6.1 about 200k
 * instructions of fg_xdp's verification (docs/kernels.md, "The verifier
 * on 6.1"). A map lookup is a helper call, which it tracks. The packet's
 * clock carries the word that says so, since the layer's end can test it
 * in the line of the times it has read (bpf/fg_clock.h).
 */
static __always_inline void fg_owe_event(struct fg_clock *clock, __u32 type,
					 const struct fg_source_key *key, __u64 now)
{
	__u32 zero = 0;
	struct fg_owed_events *owed = bpf_map_lookup_elem(&owed_events, &zero);
	struct fg_owed_event *event;
	__u32 count;

	if (!owed)
		return;
	clock->owes_events = 1;
	count = owed->count;
	if (count >= FG_OWED_EVENTS) {
		owed->lost++;
		return;
	}
	event = &owed->event[count];
	event->type = type;
	event->now = now;
	event->key = *key;
	owed->count = count + 1;
}

/* Emits what the layer owes, in order, and clears it. Global, so the
 * verifier checks it once; the emission is inlined in it, since a call
 * more would take fg_tc's deepest call chain past 6.1's 512 stack bytes. */
__noinline int fg_emit_owed(void)
{
	__u32 i, zero = 0;
	struct fg_owed_events *owed = bpf_map_lookup_elem(&owed_events, &zero);
	struct fg_global_stats *gstats = bpf_map_lookup_elem(&global_stats, &zero);

	if (!owed || !gstats)
		return 0;
	for (i = 0; i < FG_OWED_EVENTS; i++) {
		if (i >= owed->count)
			break;
		fg_emit(owed->event[i].type, &owed->event[i].key, 0, owed->event[i].now);
	}
	gstats->events_suppressed += owed->lost;
	owed->count = 0;
	owed->lost = 0;
	return 0;
}

#endif /* FG_EVENTS_H */
