/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Conntrack entries for the TCP connections already open on the SYN
 * proxy's ports. With strict pick-up (nf_conntrack_tcp_loose = 0) a
 * connection conntrack never saw, such as the operator's SSH when
 * conntrack was not in use before, turns invalid: the proxy drops its
 * packets as ACKs without a cookie, and nftables' synproxy rule as well.
 * Each one found in /proc/net/tcp{,6} is inserted as established
 * (ctnetlink), with window tracking off, since its windows and scaling
 * were never seen.
 */
#ifndef FG_ATTACH_CT_SEED_H
#define FG_ATTACH_CT_SEED_H

#include "base/err.h"
#include "config/config.h"

/* Inserts an entry for every established TCP socket whose local port is
 * one of `conf`'s; one conntrack has already is left as it is. Returns
 * how many were inserted, or -1 with `err` set. */
int fg_ct_seed_established(const struct fg_synproxy_conf *conf, struct fg_err *err);

#endif /* FG_ATTACH_CT_SEED_H */
