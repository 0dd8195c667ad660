/* SPDX-License-Identifier: GPL-2.0-only */
/* The commands that load, change, inspect and remove floodgate on an
 * interface. Each returns a process exit code (enum fg_exit). */
#ifndef FG_LOADER_H
#define FG_LOADER_H

#include <stdbool.h>
#include <linux/types.h>

/* Exit codes, documented in the README. */
enum fg_exit {
	FG_EXIT_OK = 0,
	FG_EXIT_FAILURE = 1, /* the kernel or a library refused */
	FG_EXIT_USAGE = 2,   /* bad command line */
	FG_EXIT_CONFIG = 3,  /* the config is invalid */
	FG_EXIT_ENV = 4,     /* not root, unknown interface, no BTF or XDP */
	FG_EXIT_STATE = 5,   /* already loaded, or not loaded */
};

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

/* Attaches the opened (not yet loaded) skeleton's XDP program: through
 * libxdp's dispatcher where the kernel allows EXT programs, else alone.
 * MODE is an enum fg_xdp_mode. */
int fg_attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id);
/* Opens the pinned maps of a loaded interface, or says why not: returns
 * FG_EXIT_OK, FG_EXIT_STATE (not loaded) or FG_EXIT_FAILURE. */
int fg_open_loaded(const char *ifname, struct fg_pinned *pinned);

/* user/bans.c. A ban without a duration lasts until unbanned; a /0 needs
 * `force`. */
int fg_cmd_ban(const char *ifname, const char *target, const char *duration, bool force);
int fg_cmd_unban(const char *ifname, const char *target);
int fg_cmd_bans(const char *ifname, bool json);

#endif /* FG_LOADER_H */
