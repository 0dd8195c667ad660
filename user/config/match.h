/* SPDX-License-Identifier: GPL-2.0-only */
/* The types of the keys that select traffic (config/keys.c names them). */
#ifndef FG_CONFIG_MATCH_H
#define FG_CONFIG_MATCH_H

#include "config/key.h"

extern const struct fg_key_type fg_type_match;	    /* PROTO [dport LIST] ... */
extern const struct fg_key_type fg_type_src;	    /* a policy's CIDR list */
extern const struct fg_key_type fg_type_per;	    /* src/V4 src/V6, or global */
extern const struct fg_key_type fg_type_access_src; /* [allow] or [deny]: a CIDR list */
/* [synproxy] ports: a list of ports and ranges, as a match's dport LIST */
extern const struct fg_key_type fg_type_synproxy_ports;

#endif /* FG_CONFIG_MATCH_H */
