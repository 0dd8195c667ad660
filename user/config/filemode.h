/* SPDX-License-Identifier: GPL-2.0-only */
/* Refuses config files that someone other than root or the caller could
 * have written, as sshd's StrictModes does. */
#ifndef FG_FILEMODE_H
#define FG_FILEMODE_H

#include <stdbool.h>

/* Set by --insecure-config: skip the check. */
extern bool fg_insecure_config;

/* Returns 0 when `path` may be trusted (or cannot be read: the parser says
 * so), else prints "PATH: why" and returns -EPERM. */
int fg_config_check_owner(const char *path);

#endif /* FG_FILEMODE_H */
