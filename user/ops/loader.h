/* SPDX-License-Identifier: GPL-2.0-only */
/* The commands that load, change, inspect and remove floodgate on an
 * interface. Each returns a process exit code (enum fg_exit). */
#ifndef FG_LOADER_H
#define FG_LOADER_H

#include <stdbool.h>
#include <linux/types.h>

#include "cli/exit.h" /* until ops return struct fg_err alone */

struct fg_load_opts {
	const char *ifname;	 /* NULL: the config's `interface` */
	const char *config_path; /* NULL: the embedded default policy */
	int hook;		 /* enum fg_hook, or -1 for the config's */
	int xdp_mode;		 /* enum fg_xdp_mode, or -1 for the config's */
};

int fg_cmd_load(const struct fg_load_opts *opts);
int fg_cmd_reload(const char *ifname, const char *config_path);
int fg_cmd_unload(const char *ifname);
int fg_cmd_status(const char *ifname, bool json);
int fg_cmd_stats(const char *ifname, bool json);
int fg_cmd_check(const char *config_path);

struct fg_pinned;
struct floodgate_bpf;

/* user/bans.c. A ban without a duration lasts until unbanned; a /0 needs
 * `force`. */
int fg_cmd_ban(const char *ifname, const char *target, const char *duration, bool force);
int fg_cmd_unban(const char *ifname, const char *target);
int fg_cmd_bans(const char *ifname, bool json);

#endif /* FG_LOADER_H */
