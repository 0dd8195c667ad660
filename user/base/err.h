/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What went wrong, for the caller to act on. Operations and read models
 * return a negative number on failure and fill a struct fg_err: what kind
 * of failure it was and a message a person understands. They print
 * nothing to stdout and choose no exit code: the CLI turns the kind into
 * the process's exit code (user/cli/), `floodgate run` logs the message
 * and reacts to the kind.
 */
#ifndef FG_ERR_H
#define FG_ERR_H

#include <stdbool.h>
#include <stddef.h>

enum fg_err_kind {
	FG_ERR_NONE = 0,
	FG_ERR_SYSTEM, /* the kernel or a library refused */
	FG_ERR_USAGE,  /* a bad argument from the caller */
	FG_ERR_CONFIG, /* the config (or a capture, for replay) is invalid */
	FG_ERR_ENV,    /* not root, unknown interface, no BTF, XDP, bpffs or synproxy */
	FG_ERR_STATE,  /* already loaded, or not loaded */
};

#define FG_ERR_MSG_LEN 2048

struct fg_err {
	enum fg_err_kind kind;
	/* The message begins with its own place, "FILE:LINE: ..." (a config
	 * refusal), and is shown as it is, not after "Error: ". */
	bool located;
	char msg[FG_ERR_MSG_LEN]; /* one or more lines, without "Error: " */
};

/*
 * Records a failure of `kind` and returns -1, so a caller can write
 * `return fg_fail(err, FG_ERR_STATE, "not loaded on %s", ifname);`. A
 * second call adds a line to the message (a hint after the error).
 */
int fg_fail(struct fg_err *err, enum fg_err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same, for a message that names its own place: "FILE:LINE: ...". */
int fg_fail_at(struct fg_err *err, enum fg_err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds a line (a hint) to a recorded failure; the kind is unchanged. */
void fg_err_hint(struct fg_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void fg_err_clear(struct fg_err *err)
{
	err->kind = FG_ERR_NONE;
	err->located = false;
	err->msg[0] = '\0';
}

#endif /* FG_ERR_H */
