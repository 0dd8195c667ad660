/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate run`: the long-running service mode (service/daemon.c). */
#ifndef FG_DAEMON_H
#define FG_DAEMON_H

#include <stdbool.h>

#include "base/err.h"

struct fg_run_opts {
	const char *ifname;
	const char *config_path;  /* NULL: the built-in policy */
	const char *metrics_addr; /* ADDR:PORT or [ADDR6]:PORT; NULL: no endpoint */
	bool keep;		  /* leave floodgate loaded on SIGTERM/SIGINT */
};

/* Loads floodgate on the interface, or adopts the instance already there,
 * then serves signals until SIGTERM or SIGINT; what it does goes to the
 * log (stderr), nothing to stdout. Returns 0, or -1 with `err` when it
 * could not start or the final unload failed. */
int fg_run(const struct fg_run_opts *opts, struct fg_err *err);

#endif /* FG_DAEMON_H */
