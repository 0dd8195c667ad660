/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SYN proxy's nftables half ([synproxy], docs/config.md): the datapath
 * answers SYNs with cookies, and nftables' `synproxy` statement checks the
 * client's ACK (the kernel's own cookie) and opens the connection to the
 * listener. Each interface has a table of its own,
 * `inet floodgate_synproxy_IFACE`, whose rules match only its traffic.
 *
 * The statement sees that ACK only when conntrack refuses to pick up a
 * connection mid-stream (net.netfilter.nf_conntrack_tcp_loose = 0), a
 * setting of the whole network namespace: it is set while any of
 * floodgate's tables is there, and the value it replaced is kept in
 * FG_SYNPROXY_STATE_DIR until the last table goes, so that a second
 * interface or a crash does not lose it.
 */
#ifndef FG_ATTACH_SYNPROXY_NFT_H
#define FG_ATTACH_SYNPROXY_NFT_H

#include <stdbool.h>

#include "base/err.h"
#include "config/config.h"

#define FG_SYNPROXY_TABLE_PREFIX "floodgate_synproxy_"
#define FG_SYNPROXY_STATE_DIR	 "/run/floodgate"

/* Installs IFACE's table, or replaces it in one transaction, then makes
 * TCP pick-up strict. Returns 0 or -1 with `err` set. */
int fg_synproxy_nft_install(const char *ifname, const struct fg_synproxy_conf *conf,
			    struct fg_err *err);

/* Removes IFACE's table if there is one; when no floodgate table is left,
 * restores the saved nf_conntrack_tcp_loose. Returns 0 or -1 with `err`
 * set. */
int fg_synproxy_nft_remove(const char *ifname, struct fg_err *err);

/* Is IFACE's table in this network namespace's ruleset? */
bool fg_synproxy_nft_installed(const char *ifname);

/* Can nftables name the interface's table (FG_SYNPROXY_TABLE_PREFIX +
 * `ifname`)? Only letters, digits, '_', '-' and '.' are allowed in its
 * names; Linux allows almost any character in an interface's. */
bool fg_synproxy_nft_name_ok(const char *ifname);

#endif /* FG_ATTACH_SYNPROXY_NFT_H */
