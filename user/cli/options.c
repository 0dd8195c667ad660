// SPDX-License-Identifier: GPL-2.0-only
/* What the option rows are made into: getopt's arrays, the checks and
 * storing of values, and the lines of --help. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cli/options.h"

const struct fg_cli_option fg_cli_common_options[] = {
	{.name = "help", .letter = 'h', .kind = FG_OPT_HELP, .help = "print this help and exit"},
	{.name = "verbose",
	 .letter = 'v',
	 .kind = FG_OPT_VERBOSE,
	 .help = "more logging; -vv adds libbpf/libxdp debug output"},
	{.name = NULL},
};

const struct fg_cli_option *fg_cli_option_at(const struct fg_cli_option *options, size_t index)
{
	size_t own = 0;

	while (options[own].name)
		own++;
	if (index < own)
		return &options[index];
	index -= own;
	for (own = 0; fg_cli_common_options[own].name; own++)
		if (own == index)
			return &fg_cli_common_options[own];
	return NULL;
}

static bool takes_value(const struct fg_cli_option *o)
{
	return o->kind == FG_OPT_STRING || o->kind == FG_OPT_ENUM || o->kind == FG_OPT_UINT;
}

static int getopt_val(const struct fg_cli_option *o, size_t index)
{
	return o->letter ? o->letter : 256 + (int)index;
}

void fg_cli_getopt_arrays(const struct fg_cli_option *options, struct option *longs, char *shorts)
{
	const struct fg_cli_option *o;
	size_t i, n = 0;

	shorts[n++] = ':'; /* a missing value is ':', not '?' */
	for (i = 0; i < FG_CLI_MAX_OPTIONS && (o = fg_cli_option_at(options, i)); i++) {
		longs[i] =
			(struct option){o->name, takes_value(o) ? required_argument : no_argument,
					NULL, getopt_val(o, i)};
		if (!o->letter)
			continue;
		shorts[n++] = o->letter;
		if (takes_value(o))
			shorts[n++] = ':';
	}
	longs[i] = (struct option){NULL, 0, NULL, 0};
	shorts[n] = '\0';
}

const struct fg_cli_option *fg_cli_option_of(const struct fg_cli_option *options, int val)
{
	const struct fg_cli_option *o;
	size_t i;

	for (i = 0; (o = fg_cli_option_at(options, i)); i++)
		if (getopt_val(o, i) == val)
			return o;
	return NULL;
}

static void *field_of(const struct fg_cli_option *o, void *args)
{
	return (char *)args + o->field;
}

void fg_cli_option_defaults(const struct fg_cli_option *options, void *args)
{
	for (; options->name; options++) {
		if (options->kind == FG_OPT_ENUM)
			*(int *)field_of(options, args) = (int)options->def;
		else if (options->kind == FG_OPT_UINT)
			*(unsigned long *)field_of(options, args) = (unsigned long)options->def;
	}
}

const char *fg_cli_option_label(const struct fg_cli_option *o, char *buf, size_t size)
{
	if (o->letter)
		snprintf(buf, size, "-%c", o->letter);
	else
		snprintf(buf, size, "--%s", o->name);
	return buf;
}

/* The words of an enum, joined: "xdp|tc" with "|", "xdp or tc" with " or ". */
static const char *join_words(const struct fg_cli_word *w, const char *sep, const char *last,
			      char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; w->word && n < size; w++)
		n += snprintf(buf + n, size - n, "%s%s", n ? (w[1].word ? sep : last) : "",
			      w->word);
	return buf;
}

static int apply_enum(const struct fg_cli_option *o, const char *value, int *field)
{
	const struct fg_cli_word *w;
	char label[32], words[96];

	for (w = o->words; w->word; w++) {
		if (!strcmp(w->word, value)) {
			*field = w->value;
			return 0;
		}
	}
	fprintf(stderr, "Error: %s must be %s, not '%s'\n",
		fg_cli_option_label(o, label, sizeof(label)),
		join_words(o->words, ", ", " or ", words, sizeof(words)), value);
	return -1;
}

static int apply_uint(const struct fg_cli_option *o, const char *value, void *args)
{
	unsigned long *field = field_of(o, args);
	char label[32], *end = NULL;

	errno = 0;
	*field = strtoul(value, &end, 10);
	if (*value >= '0' && *value <= '9' && !*end && !errno &&
	    (!o->max || (*field >= o->min && *field <= o->max)))
		return 0;
	fg_cli_option_label(o, label, sizeof(label));
	if (o->max)
		fprintf(stderr, "Error: %s must be %lu..%lu, not '%s'\n", label, o->min, o->max,
			value);
	else
		fprintf(stderr, "Error: %s takes %s, not '%s'\n", label, o->what, value);
	return -1;
}

int fg_cli_option_apply(const struct fg_cli_option *o, const char *value, void *args)
{
	switch (o->kind) {
	case FG_OPT_FLAG:
		*(bool *)field_of(o, args) = true;
		break;
	case FG_OPT_STRING:
		*(const char **)field_of(o, args) = value;
		break;
	case FG_OPT_ENUM:
		return apply_enum(o, value, field_of(o, args));
	case FG_OPT_UINT:
		return apply_uint(o, value, args);
	case FG_OPT_VERBOSE:
		fg_log_level++;
		break;
	case FG_OPT_HELP:
		break;
	}
	return 0;
}

bool fg_cli_option_present(const struct fg_cli_option *o, const void *args)
{
	const char *field = (const char *)args + o->field;

	if (o->kind == FG_OPT_STRING)
		return *(const char *const *)field != NULL;
	if (o->kind == FG_OPT_FLAG)
		return *(const bool *)field;
	return true; /* the others have a default */
}

const char *fg_cli_option_value(const struct fg_cli_option *o, char *buf, size_t size)
{
	if (o->kind == FG_OPT_ENUM)
		return join_words(o->words, "|", "|", buf, size);
	snprintf(buf, size, "%s", takes_value(o) ? o->metavar : "");
	return buf;
}

const char *fg_cli_option_term(const struct fg_cli_option *o, char *buf, size_t size)
{
	char value[64];
	size_t n = 0;

	if (o->letter)
		n = (size_t)snprintf(buf, size, "-%c, ", o->letter);
	fg_cli_option_value(o, value, sizeof(value));
	snprintf(buf + n, size - n, "--%s%s%s", o->name, *value ? " " : "", value);
	return buf;
}

const char *fg_cli_option_help(const struct fg_cli_option *o, char *buf, size_t size)
{
	if (o->kind == FG_OPT_UINT && o->max)
		snprintf(buf, size, "%s (%lu..%lu, default %ld)", o->help, o->min, o->max, o->def);
	else if (o->kind == FG_OPT_UINT)
		snprintf(buf, size, "%s (default %ld)", o->help, o->def);
	else
		snprintf(buf, size, "%s", o->help);
	return buf;
}
