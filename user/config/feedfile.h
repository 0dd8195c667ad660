/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Feed files: `file = PATH` in [allow] and [deny]. One address or CIDR a
 * line, IPv4 and IPv6 mixed; blank lines, `#` comments and anything after
 * `;` are ignored, so FireHOL .netset and Spamhaus DROP files load as
 * published. Host bits are cleared and counted; a bad line fails with
 * FILE:LINE:, or is counted and skipped under `file_errors = skip`.
 */
#ifndef FG_FEEDFILE_H
#define FG_FEEDFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "config/config.h"
#include "config/key.h"

/* A line longer than this is bad: no address or CIDR is that long, and
 * the reader's memory stays bounded whatever the file holds. */
#define FG_FEED_LINE_MAX 256

/* The most bytes a feed file is read for: FG_MAX_FEED_PREFIXES lines of
 * 64 bytes. What holds more (a device, or a file growing as it is read,
 * under --insecure-config) fails in bounded time. */
#define FG_FEED_MAX_BYTES (1ULL << 30)

/* What one line of a feed is. */
enum fg_feed_line {
	FG_FEED_EMPTY,	   /* blank, or a comment */
	FG_FEED_PREFIX,	   /* *out holds it */
	FG_FEED_HOST_BITS, /* *out holds it, host bits cleared */
	FG_FEED_BAD,	   /* *why says what is wrong */
};

/* Reads one line (`len` bytes, without its newline; it may hold NUL bytes
 * and a trailing CR). */
enum fg_feed_line fg_feed_parse_line(const char *line, size_t len, struct fg_cidr *out,
				     const char **why);

/* A list's prefixes from its feed files (heap), and what reading found. */
struct fg_feed_list {
	struct fg_cidr *cidrs;
	size_t n, cap;
	size_t skipped;	   /* bad lines, under file_errors = skip */
	size_t normalised; /* prefixes written with host bits set */
};

/* Both lists' feed files, read. */
struct fg_feeds {
	struct fg_feed_list allow, deny;
};

/* Appends the prefixes of the feed `f`, named `name` in messages. A bad
 * line, or more than FG_FEED_MAX_BYTES: -1 with "NAME:LINE: ..." in `err`
 * (FG_ERR_CONFIG), unless `skip_errors` (for a bad line). A read error:
 * -1 with "feed file NAME: why" (FG_ERR_CONFIG), ferror(f) set. */
int fg_feed_read_stream(const char *name, FILE *f, bool skip_errors, struct fg_feed_list *list,
			struct fg_err *err);

/* Reads every feed file of `cfg`'s [allow] and [deny], each through
 * fg_trusted_open as the config is. Returns 0, or -1 with `err`; `feeds`
 * is released either way on failure. A file that cannot be opened or read
 * fails as "CONFIG:LINE: feed file PATH: why", CONFIG naming the config
 * and LINE its `file =`. */
int fg_feeds_read(const char *config, const struct fg_config *cfg, struct fg_feeds *feeds,
		  struct fg_err *err);

void fg_feeds_free(struct fg_feeds *feeds);

/* The keys of config/keys.c: `file = PATH` and `file_errors = fail|skip`. */
extern const struct fg_key_type fg_type_feed_file;
extern const struct fg_key_type fg_type_file_errors;

#endif /* FG_FEEDFILE_H */
