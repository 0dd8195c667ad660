/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one writer of every --json output (docs/json.md has the schemas).
 * The printers build jansson values and hand them to fg_json_print, which
 * writes them in one style: compact (no spaces, one line), keys in the
 * order they were added, then a newline.
 */
#ifndef FG_CLI_JSON_H
#define FG_CLI_JSON_H

#include <jansson.h>
#include <linux/types.h>

/* Writes `value` on stdout as one line and releases it (NULL: out of
 * memory while building it). Returns 0, or -1 after saying why on stderr. */
int fg_json_print(json_t *value);

/* A string of any bytes: an interface or file name need not be UTF-8, so
 * a byte that is not part of valid UTF-8 becomes U+FFFD. NULL gives null. */
json_t *fg_json_text(const char *s);

/* An unsigned counter. JSON integers here are 64-bit signed (jansson's):
 * counts above 2^63 - 1 are written as 2^63 - 1. */
json_t *fg_json_u64(__u64 value);

/* A number rounded to `decimals` places (times, rates). */
json_t *fg_json_real(double value, int decimals);

/* Sets object[key] = value, dropping the reference: the printers' one way
 * to fill an object. */
void fg_json_set(json_t *object, const char *key, json_t *value);

#endif /* FG_CLI_JSON_H */
