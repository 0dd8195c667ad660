// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

static void append(struct fg_err *err, const char *fmt, va_list ap)
{
	size_t used = strlen(err->msg);

	if (used && used + 1 < sizeof(err->msg) && err->msg[used - 1] != '\n')
		err->msg[used++] = '\n', err->msg[used] = '\0';
	vsnprintf(err->msg + used, sizeof(err->msg) - used, fmt, ap);
}

static int record(struct fg_err *err, enum fg_err_kind kind, bool located, const char *fmt,
		  va_list ap)
{
	if (err->kind == FG_ERR_NONE) {
		err->msg[0] = '\0';
		err->located = located;
	}
	err->kind = kind;
	append(err, fmt, ap);
	return -1;
}

int fg_fail(struct fg_err *err, enum fg_err_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(err, kind, false, fmt, ap);
	va_end(ap);
	return -1;
}

int fg_fail_at(struct fg_err *err, enum fg_err_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(err, kind, true, fmt, ap);
	va_end(ap);
	return -1;
}

void fg_err_hint(struct fg_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(err, fmt, ap);
	va_end(ap);
}
