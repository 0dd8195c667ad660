// SPDX-License-Identifier: GPL-2.0-only
/*
 * The man pages, floodgate(8) and floodgate.conf(5), in mdoc: the prose is
 * a template (docs/man/, one .in file per page), and every list in them is written here from
 * the tables it documents: the commands and options (cli/commands.c,
 * cli/options.c), the exit codes (cli/exit.h) and the config keys
 * (config/keys.c). A new row is on the page without a second list.
 */
#include <string.h>

#include "base/util.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "cli/manpage.h"
#include "config/handlers.h"
#include "config/keys.h"

/* A line of running text: mdoc reads a leading '.' or '\'' as a macro and
 * '\' as an escape. A sentence ends with a full stop. */
static void put_sentence(FILE *out, const char *text)
{
	size_t len = strlen(text), i;

	if (text[0] == '.' || text[0] == '\'')
		fputs("\\&", out);
	for (i = 0; i < len; i++) {
		if (text[i] == '\\')
			fputs("\\e", out);
		else
			fputc(text[i], out);
	}
	/* text[len - 1], the sentence's last character: the loop above
	 * once walked the pointer to the end, and this read past the string. */
	fputs(len && text[len - 1] == '.' ? "\n" : ".\n", out);
}

/* "Fl c Ar FILE", "Fl \-hook Ar xdp|tc", "Fl \-json": an option's words on
 * a macro line (its letter if it has one). */
static void put_option_words(FILE *out, const struct fg_cli_option *o, bool long_too)
{
	char value[64];

	if (o->letter)
		fprintf(out, "Fl %c", o->letter);
	if (o->letter && long_too)
		fputs(" , ", out);
	if (!o->letter || long_too)
		fprintf(out, "Fl \\-%s", o->name);
	if (*fg_cli_option_value(o, value, sizeof(value)))
		fprintf(out, " Ar %s", value);
}

/* One synopsis line per command: ".Nm", ".Cm load", ".Op Ar IFACE", ... in
 * the order of `floodgate help`. */
static void put_synopsis(FILE *out)
{
	const struct fg_cli_command *cmd;
	const struct fg_cli_option *o;
	size_t c;

	for (c = 0; c < fg_cli_command_count; c++) {
		cmd = &fg_cli_commands[c];
		fprintf(out, ".Nm\n.Op Fl v\n.Cm %s\n", cmd->name);
		if (cmd->iface != FG_CLI_NO_IFACE)
			fprintf(out, ".%sAr IFACE\n",
				cmd->iface == FG_CLI_IFACE_REQUIRED ? "" : "Op ");
		for (o = cmd->options; o->name; o++) {
			if (!o->required)
				continue;
			fputc('.', out);
			put_option_words(out, o, false);
			fputc('\n', out);
		}
		if (cmd->arg)
			fprintf(out, ".Ar %s\n", cmd->arg);
		for (o = cmd->options; o->name; o++) {
			if (o->required)
				continue;
			fputs(".Op ", out);
			put_option_words(out, o, false);
			fputc('\n', out);
		}
	}
}

/* A tagged list of options: the term, then its help (with a number's range
 * and default) and whether the command needs it. */
static void put_options(FILE *out, const struct fg_cli_option *o)
{
	char help[256];

	fputs(".Bl -tag -width Ds\n", out);
	for (; o->name; o++) {
		fputs(".It ", out);
		put_option_words(out, o, true);
		fputc('\n', out);
		put_sentence(out, fg_cli_option_help(o, help, sizeof(help)));
		if (o->required)
			fputs("Required.\n", out);
	}
	fputs(".El\n", out);
}

static void put_commands(FILE *out)
{
	const struct fg_cli_command *cmd;
	size_t c;

	fputs(".Bl -tag -width Ds\n", out);
	for (c = 0; c < fg_cli_command_count; c++) {
		cmd = &fg_cli_commands[c];
		fprintf(out, ".It Cm %s\n", cmd->name);
		put_sentence(out, cmd->help);
		if (cmd->root)
			fprintf(out, "It needs root: %s.\n", cmd->root);
		if (cmd->options[0].name)
			put_options(out, cmd->options);
	}
	fputs(".El\n", out);
}

static void put_exit_status(FILE *out)
{
	fputs(".Bl -tag -width Ds\n", out);
#define FG_EXIT_ITEM(name, code, brief, sentence) fputs(".It " #code "\n" sentence "\n", out);
	FG_EXIT_CODES(FG_EXIT_ITEM)
#undef FG_EXIT_ITEM
	fputs(".El\n", out);
}

/* The sections of a config, in the order of the page. */
static const struct {
	unsigned int bit;
	const char *heading;
} sections[] = {
	{FG_IN_GLOBAL, "Global keys (before the first section)"},
	{FG_IN_POLICY, "[policy NAME]"},
	{FG_IN_ACCESS, "[allow] and [deny]"},
	{FG_IN_FLEET, "[fleet]"},
	{FG_IN_CROWDSEC, "[crowdsec]"},
	{FG_IN_SYNPROXY, "[synproxy]"},
};

/* "Value: WORD, one of xdp, tc." and the like: the type's syntax with the
 * words, range or durations its row allows. */
static void put_key_value(FILE *out, const struct fg_key *key)
{
	const struct fg_choice *choice = key->arg;
	const struct fg_uint_range *range = key->arg;
	const struct fg_duration_range *durations = key->arg;
	size_t i;

	fprintf(out, "Value:\n%s", key->type->syntax);
	if (key->type == &fg_type_choice || key->type == &fg_type_flags) {
		fputs(", one of", out);
		for (i = 0; choice->names[i]; i++)
			fprintf(out, "%s %s", i ? "," : "", choice->names[i]);
	} else if (key->type == &fg_type_uint) {
		fprintf(out, " of %llu..%llu", (unsigned long long)range->min,
			(unsigned long long)range->max);
	} else if (key->type == &fg_type_duration) {
		fprintf(out, " (%s)", durations->expected);
	}
	fputs(".\n", out);
}

/* Whether a reload applies the key, from its row's fixed-at-load entry. */
static const char *reload_text(const struct fg_key *key)
{
	if (!key->fixed)
		return "a reload applies it.";
	if (key->fixed->kind == FG_FIXED_TABLE)
		return "it sizes a table: load and reload compare it with the loaded table's size.";
	return "fixed at load: a reload that changes it is refused (unload and load).";
}

static void put_key(FILE *out, const struct fg_key *key)
{
	fprintf(out, ".It Ic %s\n", key->name);
	put_key_value(out, key);
	if (key->default_value)
		fprintf(out, "Default:\n%s.\n", key->default_value);
	else if (key->default_doc)
		fprintf(out, "Default:\n%s.\n", key->default_doc);
	else
		fputs("Required.\n", out);
	if (key->repeatable)
		fputs("It may be given more than once.\n", out);
	fprintf(out, "Reload:\n%s\n", reload_text(key));
}

static void put_keys(FILE *out)
{
	size_t s, k;

	for (s = 0; s < ARRAY_SIZE(sections); s++) {
		fprintf(out, ".Ss %s\n.Bl -tag -width Ds\n", sections[s].heading);
		for (k = 0; k < fg_key_count; k++)
			if (fg_keys[k].sections & sections[s].bit)
				put_key(out, &fg_keys[k]);
		fputs(".El\n", out);
	}
}

static void put_common_options(FILE *out)
{
	put_options(out, fg_cli_common_options);
}

static const struct {
	const char *marker;
	void (*put)(FILE *out);
} parts[] = {
	{"@SYNOPSIS@", put_synopsis},
	{"@COMMANDS@", put_commands},
	{"@COMMON_OPTIONS@", put_common_options},
	{"@EXIT_STATUS@", put_exit_status},
	{"@KEYS@", put_keys},
};

int fg_cli_print_man(FILE *template, FILE *out)
{
	char line[1024];
	size_t i;

	while (fgets(line, sizeof(line), template)) {
		if (line[0] != '@') {
			fputs(line, out);
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		for (i = 0; i < ARRAY_SIZE(parts); i++)
			if (!strcmp(line, parts[i].marker))
				break;
		if (i == ARRAY_SIZE(parts)) {
			fprintf(stderr, "Error: unknown part '%s' in the man page template\n",
				line);
			return -1;
		}
		parts[i].put(out);
	}
	return 0;
}
