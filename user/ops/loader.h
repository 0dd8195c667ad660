/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The operations that load, reload, check and remove floodgate on an
 * interface (ops/loader.c, reload.c, unload.c). Each returns 0, or -1
 * with `err` (base/err.h), and prints nothing on stdout: what it did is in
 * its result, for the CLI to print and `floodgate run` to log.
 */
#ifndef FG_LOADER_H
#define FG_LOADER_H

#include <stdbool.h>
#include <net/if.h>
#include <linux/types.h>

#include "base/err.h"

struct fg_load_opts {
	const char *ifname;	 /* NULL: the config's `interface` */
	const char *config_path; /* NULL: the embedded default policy */
	int hook;		 /* enum fg_hook, or -1 for the config's */
	int xdp_mode;		 /* enum fg_xdp_mode, or -1 for the config's */
};

struct fg_load_result {
	char ifname[IF_NAMESIZE]; /* the interface: given, or the config's */
	__u32 hook;		  /* enum fg_hook */
	__u32 xdp_mode;		  /* enum fg_xdp_mode */
	unsigned int n_policies;
	/* Took over from a floodgate of another map layout (ops/upgrade.c),
	 * whose log line said what was kept. */
	bool upgraded;
};

struct fg_reload_result {
	unsigned int n_policies;
	bool upgraded; /* as fg_load_result's */
};

/* How an unload found the interface. */
enum fg_unloaded {
	FG_UNLOADED,	       /* detached the program, removed the pins */
	FG_UNLOADED_PINS_ONLY, /* the program was gone: the pins removed */
	FG_UNLOADED_STAGING,   /* what an interrupted load left */
	FG_UNLOADED_ORPHAN,    /* a floodgate program whose pins were gone */
};

int fg_load(const struct fg_load_opts *opts, struct fg_load_result *res, struct fg_err *err);
int fg_reload(const char *ifname, const char *config_path, struct fg_reload_result *res,
	      struct fg_err *err);
int fg_unload(const char *ifname, enum fg_unloaded *how, struct fg_err *err);
/* Parses and compiles the config (NULL: the built-in one) without loading
 * it: *n_policies. */
int fg_check_config(const char *config_path, unsigned int *n_policies, struct fg_err *err);

/* Where a load attached: "xdp native", "xdp generic" or "tc ingress". */
const char *fg_hook_text(__u32 hook, __u32 xdp_mode);
/* What to add to "floodgate unloaded from IFACE": "" or " (why)". */
const char *fg_unloaded_note(enum fg_unloaded how);

#endif /* FG_LOADER_H */
