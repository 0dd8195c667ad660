/* SPDX-License-Identifier: GPL-2.0-only */
/* `ban` and `unban`: the `bans` trie by hand. Each returns 0, or -1 with
 * `err`; *shown is the prefix as given, or the IPv4 prefix an IPv4-mapped
 * address stands for. */
#ifndef FG_BANS_H
#define FG_BANS_H

#include <errno.h>
#include <stdbool.h>
#include <arpa/inet.h>

#include "base/err.h"
#include "config/config.h"
#include "maps/pinned.h"

struct fg_ban_prefix {
	char text[INET6_ADDRSTRLEN + 8]; /* ADDR or ADDR/LEN */
};

/* Bans TARGET (ADDR[/LEN]) on IFACE for `duration` (a config duration,
 * such as 10m), or until unbanned for NULL; a /0 needs `force`. */
int fg_ban(const char *ifname, const char *target, const char *duration, bool force,
	   struct fg_ban_prefix *shown, struct fg_err *err);
int fg_unban(const char *ifname, const char *target, struct fg_ban_prefix *shown,
	     struct fg_err *err);

/* fg_bans_put's answer when `bans` is full. */
#define FG_BANS_FULL (-ENOSPC)

/* Puts `ban` (a record with policy_id 0 by hand, FG_FLEET_BAN_POLICY_ID
 * from the fleet, or another inserter's) at `cidr` in the pinned `bans`,
 * replacing what is there; a policy's ban it replaces leaves the policies'
 * share. The one way user space inserts a ban. Returns 0, FG_BANS_FULL
 * when the trie is full (counted in `ban_count`'s outside_refused), or
 * another negative errno. Validation (own and allowed addresses, prefix
 * bounds) is the caller's. */
int fg_bans_put(const struct fg_pinned *pinned, const struct fg_cidr *cidr,
		const struct fg_ban *ban);

/* The entries `bans` holds (max_bans at load), 0 if unreadable. */
__u32 fg_bans_capacity(const struct fg_pinned *pinned);

/* Sets the `ban_count` map `count_fd` to the policies' bans in force in
 * the `bans` map `bans_fd`, and deletes the ended bans there (in a trie of
 * a layout before `ban_strikes`, strike records that could stay for good).
 * For `upgrade`. Returns 0 or a negative errno. */
int fg_bans_recount(int bans_fd, int count_fd);

#endif /* FG_BANS_H */
