// SPDX-License-Identifier: GPL-2.0-only
/* What every part of the config parser uses: FILE:LINE messages and tokens. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "config/parser.h"

int fg_cfg_fail(struct fg_parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	if (!p->err)
		return -EINVAL;
	fprintf(p->err, "%s:%d: ", p->source, line);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
	return -EINVAL;
}

char *fg_cfg_trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

bool fg_cfg_next_token(const char **cursor, const char *seps, const char **tok, int *len)
{
	const char *s = *cursor + strspn(*cursor, seps);
	size_t n = strcspn(s, seps);

	*cursor = s + n;
	*tok = s;
	*len = (int)n;
	return n > 0;
}

bool fg_cfg_token_is(const char *tok, int len, const char *word)
{
	return (size_t)len == strlen(word) && memcmp(tok, word, len) == 0;
}
