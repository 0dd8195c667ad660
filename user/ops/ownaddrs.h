/* SPDX-License-Identifier: GPL-2.0-only */
/* `own_addrs`: the addresses on the interfaces of floodgate's network
 * namespace, which are never banned. `load` and `reload` write them,
 * `floodgate run` keeps them current (service/addrwatch.c). */
#ifndef FG_OWNADDRS_H
#define FG_OWNADDRS_H

#include "base/err.h"

/* Makes the map `own_addrs_fd` hold exactly the namespace's addresses
 * (getifaddrs(3)): IPv4 and IPv6, link-local included; stale ones go.
 * Returns 0, or -1 with `err`. */
int fg_own_addrs_sync(int own_addrs_fd, struct fg_err *err);

/* The same on the maps pinned in `pin_dir`. */
int fg_own_addrs_sync_dir(const char *pin_dir, struct fg_err *err);

#endif /* FG_OWNADDRS_H */
