/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a ban from outside (the fleet's Redis, CrowdSec's Local API) must
 * be to be applied (docs/fleet.md, "What the fleet may ban"): at least
 * min_prefix4 (min_prefix6) long, and covering neither an [allow] prefix
 * of the policy in force nor one of the host's own addresses. One check
 * for every source of bans; each keeps a guard of its own.
 */
#ifndef FG_BANGUARD_H
#define FG_BANGUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "config/values.h"
#include "maps/pinned.h"

/* A prefix floodgate never lets a ban from outside cover. */
struct fg_guarded_prefix {
	__u8 family, len, own;
	__u8 addr[16];
};

struct fg_ban_guard {
	const char *who;		    /* for the log: "fleet", "crowdsec" */
	__u8 min_prefix4;		    /* the shortest IPv4 ban applied: min_ban_prefix */
	__u8 min_prefix6;		    /* and IPv6: min_ban_prefix6 */
	struct fg_guarded_prefix *prefixes; /* sorted */
	size_t n_prefixes;
	__u64 read_ns; /* when the prefixes were read; read again after a second */
};

/* Why a ban of `cidr` may not be applied, or NULL. The [allow] list of
 * the active slot and `own_addrs` of `pinned` are read at most once a
 * second. */
const char *fg_ban_guard_refusal(struct fg_ban_guard *guard, const struct fg_pinned *pinned,
				 const struct fg_cidr *cidr);
void fg_ban_guard_free(struct fg_ban_guard *guard);

#endif /* FG_BANGUARD_H */
