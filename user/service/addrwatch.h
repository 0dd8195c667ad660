/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate run` follows the host's addresses: an rtnetlink socket on
 * the IPv4 and IPv6 address groups, in the daemon's poll set; each change
 * brings `own_addrs` back to the namespace's addresses (ops/ownaddrs.c). */
#ifndef FG_ADDRWATCH_H
#define FG_ADDRWATCH_H

#include "base/err.h"

struct fg_addr_watch;

/* Subscribes, then syncs once (a change between the load and the
 * subscription is not missed). Returns 0 with *out, or -1 with `err`. */
int fg_addr_watch_start(const char *ifname, struct fg_addr_watch **out, struct fg_err *err);

/* The socket to poll for input; -1 for NULL (poll(2) ignores it). */
int fg_addr_watch_fd(const struct fg_addr_watch *watch);

/* Reads what the socket holds without blocking, logs each address added or
 * removed, and syncs own_addrs when one was (or when messages were lost). */
void fg_addr_watch_drain(struct fg_addr_watch *watch);

void fg_addr_watch_stop(struct fg_addr_watch *watch);

#endif /* FG_ADDRWATCH_H */
