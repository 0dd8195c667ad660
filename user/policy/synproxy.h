/* SPDX-License-Identifier: GPL-2.0-only */
/* [synproxy] compiled into the datapath's rodata (include/floodgate_synproxy.h). */
#ifndef FG_POLICY_SYNPROXY_H
#define FG_POLICY_SYNPROXY_H

#include "config/config.h"

/* Fills *out from `conf`; a conf without [synproxy] leaves the proxy off. */
int fg_synproxy_compile(const struct fg_synproxy_conf *conf, struct fg_synproxy_params *out);

/* The proxied ports of `params` as the config writes them ("22, 8000-8080")
 * into buf, cut to fit. */
void fg_synproxy_ports_text(const struct fg_synproxy_params *params, char *buf, size_t size);

#endif /* FG_POLICY_SYNPROXY_H */
