/* SPDX-License-Identifier: GPL-2.0-only */
/* An interface floodgate is loaded on, as its pins show it. */
#ifndef FG_LOADED_H
#define FG_LOADED_H

#include "base/err.h"
#include "maps/pinned.h"

/* Opens the pinned maps of a loaded interface. Returns 0, or -1 with `err`
 * saying why: FG_ERR_STATE (not loaded here), FG_ERR_ENV (a pin folder
 * floodgate does not trust) or FG_ERR_SYSTEM. */
int fg_open_loaded(const char *ifname, struct fg_pinned *pinned, struct fg_err *err);

/* Reads the policy set the datapath uses now. Returns 0 or a negative errno. */
int fg_read_active_set(const struct fg_pinned *pinned, struct fg_policy_set *set);

#endif /* FG_LOADED_H */
