/* SPDX-License-Identifier: GPL-2.0-only */
/* The process's exit codes (documented in `floodgate help` and the manual),
 * and how each kind of failure maps to one. Only the CLI chooses them. */
#ifndef FG_EXIT_H
#define FG_EXIT_H

#include <stdio.h>

#include "base/err.h"

enum fg_exit {
	FG_EXIT_OK = 0,
	FG_EXIT_FAILURE = 1, /* the kernel or a library refused */
	FG_EXIT_USAGE = 2,   /* bad command line */
	FG_EXIT_CONFIG = 3,  /* the config is invalid */
	FG_EXIT_ENV = 4,     /* not root, unknown interface, no BTF or XDP */
	FG_EXIT_STATE = 5,   /* already loaded, or not loaded */
};

static inline int fg_exit_code(enum fg_err_kind kind)
{
	switch (kind) {
	case FG_ERR_NONE:
		return FG_EXIT_OK;
	case FG_ERR_USAGE:
		return FG_EXIT_USAGE;
	case FG_ERR_CONFIG:
		return FG_EXIT_CONFIG;
	case FG_ERR_ENV:
		return FG_EXIT_ENV;
	case FG_ERR_STATE:
		return FG_EXIT_STATE;
	case FG_ERR_SYSTEM:
		break;
	}
	return FG_EXIT_FAILURE;
}

/* Prints the failure on stderr ("Error: " before its first line, unless
 * it names its own place: "FILE:LINE: ...") and returns its exit code. */
static inline int fg_exit_report(const struct fg_err *err)
{
	if (err->msg[0])
		fprintf(stderr, "%s%s\n", err->located ? "" : "Error: ", err->msg);
	return fg_exit_code(err->kind);
}

#endif /* FG_EXIT_H */
