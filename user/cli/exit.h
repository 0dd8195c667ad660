/* SPDX-License-Identifier: GPL-2.0-only */
/* The process's exit codes (documented in `floodgate help` and the manual),
 * and how each kind of failure maps to one. Only the CLI chooses them. */
#ifndef FG_EXIT_H
#define FG_EXIT_H

#include <stdio.h>

#include "base/err.h"

/* Each exit code: its name, number, the words of `floodgate help` and the
 * sentence of floodgate(8). The enum and both texts derive from it. */
#define FG_EXIT_CODES(X)                                                                           \
	X(OK, 0, "ok", "Success, and help, COMMAND --help, --version.")                            \
	X(FAILURE, 1, "kernel or library failure",                                                 \
	  "The kernel or a library refused (the message says what), or another process held "      \
	  "the pin folder's lock for too long.")                                                   \
	X(USAGE, 2, "bad usage",                                                                   \
	  "Bad command line: no or unknown command, unknown option, "                              \
	  "a missing or bad value or argument.")                                                   \
	X(CONFIG, 3, "invalid config (replay: or capture)",                                        \
	  "Invalid config (FILE:LINE: what is wrong), a reload that changes a key fixed at "       \
	  "load, a config file others could write; replay: a capture it cannot use.")              \
	X(ENV, 4, "environment (not root, unknown interface, no BTF/XDP/synproxy)",                \
	  "Environment: not root, unknown interface, no BTF, no native XDP, no bpffs, a kernel "   \
	  "without what [synproxy] needs, a --metrics address that cannot be bound.")              \
	X(STATE, 5, "already/not loaded",                                                          \
	  "State: already loaded, or not loaded; unban of an address that is not banned; ban on "  \
	  "a full bans table.")

#define FG_EXIT_ENUM(name, code, brief, sentence) FG_EXIT_##name = code,
enum fg_exit { FG_EXIT_CODES(FG_EXIT_ENUM) };
#undef FG_EXIT_ENUM

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
