/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate bans`: the entries of the `bans` trie, with their state now. */
#ifndef FG_VIEWS_BANS_H
#define FG_VIEWS_BANS_H

#include <arpa/inet.h>
#include <stddef.h>

#include "base/err.h"
#include "floodgate.h"
#include "policy/policy.h"

enum fg_ban_state {
	FG_BAN_ACTIVE,
	FG_BAN_EXPIRED, /* kept to escalate a repeat offence (ban_factor) */
	FG_BAN_UNTIL_UNBANNED,
};

struct fg_ban_entry {
	char prefix[INET6_ADDRSTRLEN + 8]; /* ADDR/LEN */
	__u8 family;			   /* FG_FAMILY_IPV4 or IPV6 */
	enum fg_ban_state state;
	double remaining_s; /* FG_BAN_ACTIVE only */
	double duration_s;  /* as banned; 0 until unbanned */
	__u32 strikes;
	bool by_hand;	    /* `floodgate ban`, not action = ban */
	const char *policy; /* the banning policy; NULL by hand or when removed */
	/* Where a ban no policy made came from: "fleet", "crowdsec:ORIGIN"
	 * (the origin of its CrowdSec decision); "" otherwise. */
	char origin[24];
};

struct fg_ban_list {
	struct fg_ban_entry *entries;
	size_t count;
	struct fg_policy_set *set; /* the active policies, which entries name */
};

/* Reads every entry of the bans trie of the floodgate loaded on `ifname`.
 * Returns 0, or -1 with `err` saying why; release with fg_bans_free
 * either way. */
int fg_bans_read(const char *ifname, struct fg_ban_list *list, struct fg_err *err);
void fg_bans_free(struct fg_ban_list *list);

#endif /* FG_VIEWS_BANS_H */
