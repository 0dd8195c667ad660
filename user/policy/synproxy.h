/* SPDX-License-Identifier: GPL-2.0-only */
/* [synproxy] compiled into the datapath's rodata (include/floodgate_synproxy.h). */
#ifndef FG_POLICY_SYNPROXY_H
#define FG_POLICY_SYNPROXY_H

#include "config/config.h"

/* Fills *out from `conf`; a conf without [synproxy] leaves the proxy off. */
void fg_synproxy_compile(const struct fg_synproxy_conf *conf, struct fg_synproxy_params *out);

#endif /* FG_POLICY_SYNPROXY_H */
