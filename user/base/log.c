// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "base/log.h"

int fg_log_level = FG_LOG_WARN;
bool fg_log_journal;

void fg_log(enum fg_log_level level, const char *fmt, ...)
{
	va_list args;

	if ((int)level > fg_log_level)
		return;
	/* sd-daemon(3) priorities: warning, info, debug. */
	if (fg_log_journal)
		fprintf(stderr, "<%d>", level == FG_LOG_WARN ? 4 : level == FG_LOG_INFO ? 6 : 7);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* libbpf's warnings are noise at the default level (for example the
	 * libxdp dispatcher probes); show them from -v on. */
	int ours = level == LIBBPF_WARN ? FG_LOG_INFO : FG_LOG_DEBUG;

	if (ours > fg_log_level)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list args)
{
	int ours = level == LIBXDP_WARN ? FG_LOG_INFO : FG_LOG_DEBUG;

	if (ours > fg_log_level)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void fg_log_setup_libs(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
