/* SPDX-License-Identifier: GPL-2.0-only */
/* `bans`: the bans of a loaded interface, as text columns or JSON. */
#ifndef FG_VIEWS_BANS_H
#define FG_VIEWS_BANS_H

#include <stdbool.h>

/* Returns an exit code (cli/exit.h). */
int fg_cmd_bans(const char *ifname, bool json);

#endif /* FG_VIEWS_BANS_H */
