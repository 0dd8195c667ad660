/* SPDX-License-Identifier: GPL-2.0-only */
/* Refuses config files (and other files floodgate trusts) that someone
 * other than root or the caller could have written or swapped, as sshd's
 * StrictModes and safe_path do. */
#ifndef FG_FILEMODE_H
#define FG_FILEMODE_H

#include <stdbool.h>

#include "base/err.h"
#include "config/config.h"

/* Set by --insecure-config: skip the checks. */
extern bool fg_insecure_config;

/*
 * Opens `path` for reading (O_CLOEXEC) when it may be trusted: after links
 * are resolved, a regular file owned by root or the caller and writable by
 * no one else, under folders that are too (sticky ones may be writable by
 * all), from "/" to the file and to the link naming it. The descriptor
 * returned is the one checked: read it, never reopen `path` by name.
 * Returns the descriptor, or -1 with `err` (FG_ERR_CONFIG, located):
 * "[PURPOSE ]PATH: refused: why (fix, or pass --insecure-config)", errno
 * EACCES; or "[PURPOSE ]PATH: reason" when it cannot be opened, errno as
 * the system's (ENOENT: there is no such file). `purpose` (e.g. "password
 * file") may be NULL. With fg_insecure_config, opens `path` unchecked.
 */
int fg_trusted_open(const char *path, const char *purpose, struct fg_err *err);

/* Reads the config at `path` (the built-in one for NULL) into `cfg`:
 * fg_trusted_open, then the parser on that descriptor. Returns 0, or -1 with `err` (FG_ERR_CONFIG,
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
