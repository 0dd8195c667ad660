/* SPDX-License-Identifier: GPL-2.0-only */
/* Refuses config files that someone other than root or the caller could
 * have written, as sshd's StrictModes does. */
#ifndef FG_FILEMODE_H
#define FG_FILEMODE_H

#include <stdbool.h>

#include "base/err.h"
#include "config/config.h"

/* Set by --insecure-config: skip the check. */
extern bool fg_insecure_config;

/* Returns 0 when `path` may be trusted (or cannot be read: the parser says
 * so), else -1 with `err` (FG_ERR_CONFIG, "PATH: refused: why ..."). */
int fg_config_check_owner(const char *path, struct fg_err *err);

/* Reads the config at `path` (the built-in one for NULL) into `cfg`: the
 * owner check, then the parser. Returns 0, or -1 with `err` (FG_ERR_CONFIG,
 * the parser's "FILE:LINE: ..." message). */
int fg_config_read(const char *path, struct fg_config *cfg, struct fg_err *err);

/* The largest secret read from a file, with its newline. */
#define FG_SECRET_MAX 512

/* Reads a secret (the fleet's password_file) into `buf`: a regular file,
 * not a symbolic link, trusted as a config is and readable by its owner
 * alone; its first line, not empty. Returns its length, or -1 with `err`
 * (FG_ERR_CONFIG, "WHERE PATH: why"; the secret is never in it). */
int fg_secret_read(const char *path, const char *where, char *buf, size_t size, struct fg_err *err);

#endif /* FG_FILEMODE_H */
