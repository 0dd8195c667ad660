// SPDX-License-Identifier: GPL-2.0-only
/* The --json writer: jansson values, dumped in one style. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json.h"

/* Compact, in insertion order. 15 significant digits print a value rounded
 * to a few decimals as written (0.1, not 0.10000000000000001). */
#define FG_JSON_STYLE (JSON_COMPACT | JSON_REAL_PRECISION(15))

int fg_json_print(json_t *value)
{
	int rc = value ? json_dumpf(value, stdout, FG_JSON_STYLE) : -1;

	json_decref(value);
	if (rc) {
		fprintf(stderr, "Error: cannot write the JSON output (out of memory)\n");
		return -1;
	}
	putchar('\n');
	fflush(stdout);
	return 0;
}

/* The length of the valid UTF-8 character at `s`, or 0 when its first byte
 * does not start one (overlong forms and surrogates included). */
static size_t utf8_length(const unsigned char *s)
{
	unsigned int code, c = s[0];
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, code = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, code = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, code = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the terminating NUL stops here too */
			return 0;
		code = code << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
	    (n == 4 && (code < 0x10000 || code > 0x10ffff)))
		return 0;
	return n;
}

json_t *fg_json_text(const char *s)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *p = (const unsigned char *)s;
	json_t *value;
	char *clean, *out;

	if (!s)
		return json_null();
	value = json_string(s);
	if (value)
		return value;
	clean = malloc(strlen(s) * 3 + 1); /* every byte may become 3 */
	if (!clean)
		return NULL;
	for (out = clean; *p;) {
		size_t n = utf8_length(p);

		if (n) {
			memcpy(out, p, n);
			out += n;
			p += n;
		} else {
			memcpy(out, replacement, 3);
			out += 3;
			p++;
		}
	}
	*out = '\0';
	value = json_string(clean);
	free(clean);
	return value;
}

json_t *fg_json_u64(__u64 value)
{
	return json_integer(value > INT64_MAX ? INT64_MAX : (json_int_t)value);
}

json_t *fg_json_real(double value, int decimals)
{
	double scale = pow(10, decimals);

	return json_real(round(value * scale) / scale);
}

void fg_json_set(json_t *object, const char *key, json_t *value)
{
	json_object_set_new(object, key, value);
}
