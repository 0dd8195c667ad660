/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef FG_LOG_H
#define FG_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum fg_log_level {
	FG_LOG_WARN = 0,
	FG_LOG_INFO = 1,
	FG_LOG_DEBUG = 2,
};

/* Raised by each -v; libbpf's and libxdp's own messages follow it too. */
extern int fg_log_level;
/* Prefix each message with its syslog priority, "<4>" and so on, which the
 * journal reads from a service's stderr (set by `run` under systemd). */
extern bool fg_log_journal;

void fg_log(enum fg_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf and libxdp messages through fg_log. */
void fg_log_setup_libs(void);

#define pr_warn(...)  fg_log(FG_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  fg_log(FG_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) fg_log(FG_LOG_DEBUG, __VA_ARGS__)

#endif /* FG_LOG_H */
