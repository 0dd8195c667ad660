/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef FG_UTIL_H
#define FG_UTIL_H

#include <stdbool.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* floodgate's pins are root's alone (folder 0700, pins 0600). */
static inline bool fg_is_root(void)
{
	return geteuid() == 0;
}

#endif /* FG_UTIL_H */
