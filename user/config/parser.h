/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parser's state while it reads one config, shared by the grammar
 * (grammar.c), the value handlers of keys (handlers.c, match.c) and the
 * checks across keys (validate.c). Not for use outside config/.
 */
#ifndef FG_CONFIG_PARSER_H
#define FG_CONFIG_PARSER_H

#include <stdbool.h>
#include <stdio.h>

#include "config/config.h"
#include "config/key.h"

#define FG_LIST_SEPS ", \t"

struct fg_parser {
	const char *source;
	FILE *err;
	struct fg_config *cfg;
	int line;
	unsigned int section; /* enum fg_section of the lines being read */
	/* Where each row of the key table was set in its section, 0 = not yet. */
	int key_line[FG_MAX_KEYS];

	/* The policy being read; NULL outside [policy NAME]. */
	struct fg_policy_conf *pol;
	/* In an [allow] or [deny] section: where its prefixes go. */
	struct fg_cidr *access;
	unsigned int *n_access;
	const char *access_name;
	struct fg_feed_files *files;
	/* Where the list's file_errors was set (0 = not set): one setting a
	 * list, in any of its sections. errors_line points at one of the two. */
	int allow_errors_line, deny_errors_line, *errors_line;
	/* While a section's start applies a key's default, not a line. */
	bool applying_default;
	int first_fleet_scope; /* line of the first scope = fleet, 0 = none */
	const char *rate_text; /* rate as written, once the policy has one */
	/* burst as written, until the rate says packets or bytes */
	const char *burst_text;
	int burst_line;
	struct fg_amount burst; /* bytes when burst.bytes */
};

/* Prints "SOURCE:LINE: " and the message to the parser's stream; returns
 * -EINVAL. */
int fg_cfg_fail(struct fg_parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* `s` without the blanks around it (changed in place). */
char *fg_cfg_trim(char *s);

/* The next token of `*cursor` between separators, as a pointer and length. */
bool fg_cfg_next_token(const char **cursor, const char *seps, const char **tok, int *len);

bool fg_cfg_token_is(const char *tok, int len, const char *word);

#endif /* FG_CONFIG_PARSER_H */
