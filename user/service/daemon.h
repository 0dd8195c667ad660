/* SPDX-License-Identifier: GPL-2.0-only */
/* `floodgate run`: the long-running service mode (user/daemon.c). */
#ifndef FG_DAEMON_H
#define FG_DAEMON_H

#include <stdbool.h>

struct fg_run_opts {
	const char *ifname;
	const char *config_path;  /* NULL: the built-in policy */
	const char *metrics_addr; /* ADDR:PORT or [ADDR6]:PORT; NULL: no endpoint */
	bool keep;		  /* leave floodgate loaded on SIGTERM/SIGINT */
};

/* Loads floodgate on the interface, or adopts the instance already there,
 * then serves signals until SIGTERM or SIGINT. Returns an exit code. */
int fg_cmd_run(const struct fg_run_opts *opts);

#endif /* FG_DAEMON_H */
