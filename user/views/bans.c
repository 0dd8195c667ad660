// SPDX-License-Identifier: GPL-2.0-only
/* `bans`: the bans trie as a list. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "policy/readback.h"
#include "views/bans.h"

#define FG_BAN_FOREVER (~0ULL)

struct ban_walk {
	int fd;
	__u64 now;
	struct fg_ban_list *list;
	size_t cap;
};

static void describe(const struct fg_src_lpm_key *key, const struct fg_ban *ban,
		     const struct fg_policy_set *set, __u64 now, struct fg_ban_entry *e)
{
	const struct fg_policy *p =
		fg_ban_by_policy(ban->policy_id) ? fg_policy_by_id(set, ban->policy_id) : NULL;
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(key->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, key->addr, addr,
		  sizeof(addr));
	snprintf(e->prefix, sizeof(e->prefix), "%s/%u", addr,
		 key->prefixlen - FG_SRC_LPM_HEADER_BITS);
	e->family = key->family;
	e->state = ban->expires_ns == FG_BAN_FOREVER ? FG_BAN_UNTIL_UNBANNED
		   : ban->expires_ns <= now	     ? FG_BAN_EXPIRED
						     : FG_BAN_ACTIVE;
	e->remaining_s = e->state == FG_BAN_ACTIVE ? (ban->expires_ns - now) / 1e9 : 0;
	e->duration_s = ban->duration_ns / 1e9;
	e->strikes = ban->strikes;
	e->by_hand = !ban->policy_id;
	e->policy = p ? p->name : NULL;
	e->origin[0] = '\0';
	if (FG_IS_CROWDSEC_BAN_ID(ban->policy_id))
		snprintf(e->origin, sizeof(e->origin), "crowdsec:%s",
			 fg_crowdsec_origin_name(ban->policy_id - FG_CROWDSEC_BAN_ID_FIRST));
	else if (ban->policy_id == FG_FLEET_BAN_POLICY_ID)
		snprintf(e->origin, sizeof(e->origin), "fleet");
}

static int add_entry(const void *key, void *ctx)
{
	struct ban_walk *walk = ctx;
	struct fg_ban_list *list = walk->list;
	struct fg_ban ban;

	if (bpf_map_lookup_elem(walk->fd, key, &ban))
		return 0; /* deleted meanwhile */
	if (list->count == walk->cap) {
		size_t cap = walk->cap ? 2 * walk->cap : 64;
		struct fg_ban_entry *grown = realloc(list->entries, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		list->entries = grown;
		walk->cap = cap;
	}
	describe(key, &ban, list->set, walk->now, &list->entries[list->count++]);
	return 0;
}

int fg_bans_read(const char *ifname, struct fg_ban_list *list, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct ban_walk walk = {.list = list};
	int rc;

	*list = (struct fg_ban_list){0};
	list->set = calloc(1, sizeof(*list->set));
	if (!list->set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory (the policy set needs %zu bytes)",
			       sizeof(*list->set));
	if (fg_open_loaded(ifname, &pinned, err))
		return -1;
	/* Without the policies, bans are listed all the same, unnamed. */
	if (fg_read_active_set(&pinned, list->set))
		memset(list->set, 0, sizeof(*list->set));
	walk.fd = pinned.bans;
	walk.now = fg_monotonic_ns();
	rc = fg_map_for_each_key(pinned.bans, sizeof(struct fg_src_lpm_key), add_entry, &walk);
	fg_pinned_close(&pinned);
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the bans of %s: %s", ifname,
			       strerror(-rc));
	return 0;
}

void fg_bans_free(struct fg_ban_list *list)
{
	free(list->entries);
	free(list->set);
	*list = (struct fg_ban_list){0};
}
