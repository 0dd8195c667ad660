/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policies read back from the datapath's own encoding: the rate a person
 * wrote, recovered from the algorithm's params, and lookups in a policy
 * set read from the maps. Pure functions over include/floodgate.h's types.
 */
#ifndef FG_READBACK_H
#define FG_READBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "floodgate.h"

/* A policy's rate as a person reads it, derived from its params. */
struct fg_readback_rate {
	__u64 count;	 /* COUNT of COUNT/PERIOD, packets or bytes */
	__u64 period_ns; /* PERIOD */
	__u64 burst;
};

/*
 * Reads COUNT/PERIOD and burst back from a compiled policy's params. The
 * window algorithms keep them as they are. A GCRA (token_bucket,
 * leaky_bucket) keeps only T = PERIOD/COUNT and tau, so what comes back is
 * an equal rate, not the config's text: the first of PERIOD = 1s, 1min, 1h,
 * 1ms, then N ms/s/min/h, whose COUNT compiles to the same params, with
 * the roundest such COUNT (1000000000B/s, not the 1000000007B/s that compiles
 * the same), and the roundest burst that does. 5/10s reads 30/min; 7/3s,
 * 140/min. Returns 0, or -1 when no such period exists (a rate not from a
 * validated config): *out then holds COUNT/PERIOD of T alone (1/T ns).
 */
int fg_policy_rate(const struct fg_policy *p, struct fg_readback_rate *out);

/* COUNT/PERIOD in the config's vocabulary: 100/s, 30/min, 5/10s, 1000B/ms;
 * a PERIOD of no whole ms as N ns. */
void fg_format_count_period(__u64 count, __u64 period_ns, bool bytes, char *buf, size_t size);

/* Formats a policy's rate in the config's vocabulary (fg_policy_rate()
 * says how it is read back from the params); returns its burst. */
__u64 fg_format_rate(const struct fg_policy *p, char *buf, size_t size);

/* The policy of the set named `name`, or NULL. */
const struct fg_policy *fg_find_policy(const struct fg_policy_set *set, const char *name);

/* A key's source as ADDR/LEN, or "overflow" (the new-source budget's shared
 * key) or "global" (per = global). buf holds INET6_ADDRSTRLEN + 8. */
void fg_format_key(const struct fg_source_key *key, char *buf, size_t size);

/* The policy of the set whose id (fg_source_key.policy_id) is `id`, or NULL. */
const struct fg_policy *fg_policy_by_id(const struct fg_policy_set *set, __u32 id);

#endif /* FG_READBACK_H */
