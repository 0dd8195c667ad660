// SPDX-License-Identifier: GPL-2.0-only
/* Feed files (see feedfile.h): the line grammar, the reader and the two
 * keys of [allow] and [deny] that name them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/feedfile.h"
#include "config/filemode.h"
#include "config/key.h"
#include "config/parser.h"

/* The prefixes one list may hold: the trie holds both lists twice (a
 * reload's double buffering) with headroom, within its 32-bit size. */
#define FG_MAX_FEED_PREFIXES (1U << 24)

#define STR_(x) #x
#define STR(x)	STR_(x)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void clear_host_bits(struct fg_cidr *c)
{
	unsigned int i, bytes = c->family == FG_FAMILY_IPV4 ? 4 : 16;

	for (i = 0; i < bytes; i++) {
		unsigned int bits = c->prefix_len > i * 8 ? c->prefix_len - i * 8 : 0;

		c->addr[i] &= bits >= 8 ? 0xff : (__u8)(0xff << (8 - bits));
	}
}

enum fg_feed_line fg_feed_parse_line(const char *line, size_t len, struct fg_cidr *out,
				     const char **why)
{
	struct fg_value_error verr;
	size_t start = 0, end, i;

	if (memchr(line, '\0', len)) {
		*why = "NUL byte";
		return FG_FEED_BAD;
	}
	for (end = 0; end < len && line[end] != '#' && line[end] != ';'; end++)
		;
	while (start < end && is_blank(line[start]))
		start++;
	while (end > start && is_blank(line[end - 1]))
		end--;
	if (start == end)
		return FG_FEED_EMPTY;
	for (i = start; i < end; i++)
		if (is_blank(line[i])) {
			*why = "more than one word";
			return FG_FEED_BAD;
		}
	if (!fg_parse_cidr_len(line + start, end - start, out, &verr))
		return FG_FEED_PREFIX;
	switch (verr.fault) {
	case FG_HOST_BITS:
		clear_host_bits(out);
		return FG_FEED_HOST_BITS;
	case FG_PREFIX_RANGE:
		*why = out->family == FG_FAMILY_IPV4 ? "prefix length past /32"
						     : "prefix length past /128";
		return FG_FEED_BAD;
	case FG_BAD_PREFIX:
		*why = "the prefix length is not a number";
		return FG_FEED_BAD;
	default:
		*why = "not an IPv4 or IPv6 address";
		return FG_FEED_BAD;
	}
}

static int list_append(struct fg_feed_list *list, const struct fg_cidr *c)
{
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 4096;
		struct fg_cidr *bigger = realloc(list->cidrs, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		list->cidrs = bigger;
		list->cap = cap;
	}
	list->cidrs[list->n++] = *c;
	return 0;
}

/* The next line of `f` into `buf` (at most FG_FEED_LINE_MAX bytes kept):
 * its length, -1 at the end, or -2 once the file has given more than
 * *left bytes, which counts down. *too_long when it did not fit. */
static long next_line(FILE *f, char *buf, bool *too_long, size_t *left)
{
	size_t len = 0;
	int c;

	*too_long = false;
	while ((c = getc_unlocked(f)) != EOF) {
		if (!*left)
			return -2;
		--*left;
		if (c == '\n')
			break;
		if (len < FG_FEED_LINE_MAX)
			buf[len++] = (char)c;
		else
			*too_long = true;
	}
	if (c == EOF && !len && !*too_long)
		return -1;
	return (long)len;
}

/* Shows a bad line in a message: printable bytes, at most 64. */
static void shown_line(const char *line, size_t len, char *out, size_t size)
{
	size_t i, n = 0;

	for (i = 0; i < len && n + 1 < size && i < 64; i++)
		out[n++] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
	out[n] = '\0';
}

int fg_feed_read_stream(const char *name, FILE *f, bool skip_errors, struct fg_feed_list *list,
			struct fg_err *err)
{
	char buf[FG_FEED_LINE_MAX], shown[72];
	size_t left = FG_FEED_MAX_BYTES;
	unsigned long line_no = 0;
	const char *why = NULL;
	struct fg_cidr cidr;
	bool too_long;
	long len;

	/* A line cut short by a read error is not judged as a line. */
	while ((len = next_line(f, buf, &too_long, &left)) >= 0 && !ferror(f)) {
		enum fg_feed_line kind = FG_FEED_BAD;

		line_no++;
		if (too_long)
			why = "line too long (expected at most " STR(FG_FEED_LINE_MAX) " bytes)";
		else
			kind = fg_feed_parse_line(buf, (size_t)len, &cidr, &why);
		if (kind == FG_FEED_EMPTY)
			continue;
		if (kind == FG_FEED_BAD) {
			if (skip_errors) {
				list->skipped++;
				continue;
			}
			shown_line(buf, (size_t)len, shown, sizeof(shown));
			return fg_fail_at(err, FG_ERR_CONFIG,
					  "%s:%lu: bad line '%s%s': %s (expected one address or "
					  "CIDR a line; file_errors = skip skips bad lines)",
					  name, line_no, shown, too_long ? "..." : "", why);
		}
		list->normalised += kind == FG_FEED_HOST_BITS;
		if (list->n == FG_MAX_FEED_PREFIXES)
			return fg_fail_at(err, FG_ERR_CONFIG,
					  "%s:%lu: too many prefixes (expected at most %u a list)",
					  name, line_no, FG_MAX_FEED_PREFIXES);
		if (list_append(list, &cidr))
			return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading %s", name);
	}
	if (len == -2)
		return fg_fail_at(err, FG_ERR_CONFIG,
				  "%s:%lu: larger than %llu MiB, more than any list "
				  "of prefixes needs (expected a feed of at most that)",
				  name, line_no + 1, FG_FEED_MAX_BYTES >> 20);
	if (ferror(f))
		return fg_fail_at(err, FG_ERR_CONFIG, "feed file %s: %s", name, strerror(errno));
	return 0;
}

/* A feed file that cannot be opened or read: the config's FILE:LINE: of
 * its `file =` before what went wrong, as every config error has. */
static int feed_failed(const char *config, int line, struct fg_err *err)
{
	char what[FG_ERR_MSG_LEN];

	snprintf(what, sizeof(what), "%s", err->msg);
	fg_err_clear(err);
	return fg_fail_at(err, FG_ERR_CONFIG, "%s:%d: %s", config, line, what);
}

static int read_files(const char *config, const struct fg_feed_files *files,
		      struct fg_feed_list *list, struct fg_err *err)
{
	unsigned int i;
	int ret;

	for (i = 0; i < files->n; i++) {
		int fd = fg_trusted_open(files->path[i], "feed file", err);
		bool unreadable;
		FILE *f;

		if (fd < 0)
			return feed_failed(config, files->line[i], err);
		f = fdopen(fd, "r");
		if (!f) {
			close(fd);
			return fg_fail(err, FG_ERR_SYSTEM, "cannot read %s: %s", files->path[i],
				       strerror(errno));
		}
		ret = fg_feed_read_stream(files->path[i], f, files->skip_errors, list, err);
		/* A bad line names its own place, FEED:LINE:; a file that
		 * cannot be read (a folder) is named from the config. */
		unreadable = ret && ferror(f);
		fclose(f);
		if (unreadable)
			return feed_failed(config, files->line[i], err);
		if (ret)
			return -1;
	}
	return 0;
}

int fg_feeds_read(const char *config, const struct fg_config *cfg, struct fg_feeds *feeds,
		  struct fg_err *err)
{
	memset(feeds, 0, sizeof(*feeds));
	if (read_files(config, &cfg->allow_files, &feeds->allow, err) ||
	    read_files(config, &cfg->deny_files, &feeds->deny, err)) {
		fg_feeds_free(feeds);
		return -1;
	}
	return 0;
}

void fg_feeds_free(struct fg_feeds *feeds)
{
	free(feeds->allow.cidrs);
	free(feeds->deny.cidrs);
	memset(feeds, 0, sizeof(*feeds));
}

/* --- the keys -------------------------------------------------------------- */

/* `file = PATH` in [allow] or [deny]: read when the policy is compiled. */
static int parse_feed_file(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_feed_files *files = p->files;

	(void)key;
	(void)base;
	if (v[0] != '/')
		return fg_cfg_fail(p, p->line,
				   "feed file '%s' is not an absolute path (expected "
				   "file = /PATH)",
				   v);
	if (strlen(v) >= FG_FEED_PATH_LEN)
		return fg_cfg_fail(p, p->line,
				   "feed file path too long (expected at most %d "
				   "bytes)",
				   FG_FEED_PATH_LEN - 1);
	if (files->n == FG_MAX_FEED_FILES)
		return fg_cfg_fail(p, p->line, "too many feed files in [%s] (expected at most %d)",
				   p->access_name, FG_MAX_FEED_FILES);
	strcpy(files->path[files->n], v);
	files->line[files->n++] = p->line;
	return 0;
}

/* `file_errors = fail | skip`: what a bad line of the list's feeds does,
 * for all of them, whichever of the list's sections sets it. Each
 * [allow] or [deny] section applies the default as it starts: it keeps
 * what an earlier section of the list set, and a second setting is an
 * error rather than a silent change of the first's files. */
static int parse_file_errors(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_feed_files *files = p->files;
	bool by_default = p->applying_default;

	(void)key;
	(void)base;
	if (strcmp(v, "fail") && strcmp(v, "skip"))
		return fg_cfg_fail(p, p->line, "bad file_errors '%s' (expected fail or skip)", v);
	if (*p->errors_line && by_default)
		return 0;
	if (*p->errors_line)
		return fg_cfg_fail(
			p, p->line,
			"file_errors set twice for [%s] (expected it once: it applies to "
			"all the list's files; first set at line %d)",
			p->access_name, *p->errors_line);
	files->skip_errors = v[0] == 's';
	if (!by_default)
		*p->errors_line = p->line;
	return 0;
}

const struct fg_key_type fg_type_feed_file = {.parse = parse_feed_file, .syntax = "FILE"};
const struct fg_key_type fg_type_file_errors = {.parse = parse_file_errors,
						.syntax = "fail | skip"};
