/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The events ring (`floodgate events`), rate-capped per CPU. Part of
 * bpf/floodgate.bpf.c, which includes it after fg_maps.h.
 */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

/*
 * Emits one event about `key` if this CPU's event budget allows it, else
 * counts it in events_suppressed (as when the ring is full: nobody reads
 * it). Global, so the verifier checks it once; it is only called when an
 * event is due, never on the ordinary refusal path.
 */
__noinline int fg_emit_event(__u32 type, const struct fg_source_key *key, __u64 expires_ns,
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

#endif /* FG_EVENTS_H */
