/* SPDX-License-Identifier: GPL-2.0-only */
/* `ban` and `unban`: the `bans` trie by hand. Each returns 0, or -1 with
 * `err`; *shown is the prefix as given, or the IPv4 prefix an IPv4-mapped
 * address stands for. */
#ifndef FG_BANS_H
#define FG_BANS_H

#include <stdbool.h>
#include <arpa/inet.h>

#include "base/err.h"

struct fg_ban_prefix {
	char text[INET6_ADDRSTRLEN + 8]; /* ADDR or ADDR/LEN */
};

/* Bans TARGET (ADDR[/LEN]) on IFACE for `duration` (a config duration,
 * such as 10m), or until unbanned for NULL; a /0 needs `force`. */
int fg_ban(const char *ifname, const char *target, const char *duration, bool force,
	   struct fg_ban_prefix *shown, struct fg_err *err);
int fg_unban(const char *ifname, const char *target, struct fg_ban_prefix *shown,
	     struct fg_err *err);

/* Sets the `ban_count` map `count_fd` to the policies' bans in force in
 * the `bans` map `bans_fd`, and deletes the ended bans there (in a trie of
 * a layout before `ban_strikes`, strike records that could stay for good).
 * For `upgrade`. Returns 0 or a negative errno. */
int fg_bans_recount(int bans_fd, int count_fd);

#endif /* FG_BANS_H */
