/* SPDX-License-Identifier: GPL-2.0-only */
/* The checks across keys (config/validate.c), for the grammar. */
#ifndef FG_CONFIG_VALIDATE_H
#define FG_CONFIG_VALIDATE_H

#include "config/parser.h"

/* The policy being read has ended: checks it, gives it the defaults that
 * depend on its other keys, and counts it. No policy: 0. */
int fg_cfg_finish_policy(struct fg_parser *p);

/* The file has ended: [fleet] and the policies of scope = fleet. */
int fg_cfg_check_fleet(struct fg_parser *p);

/* The file has ended: [crowdsec] has its url and api_key_file. */
int fg_cfg_check_crowdsec(struct fg_parser *p);

/* The file has ended: [synproxy] names its ports. */
int fg_cfg_check_synproxy(struct fg_parser *p);

#endif /* FG_CONFIG_VALIDATE_H */
