// SPDX-License-Identifier: GPL-2.0-only
/* The usage texts and `help --list`, all read from the command table. */
#include <stdarg.h>
#include <string.h>

#include "cli/exit.h"
#include "cli/usage.h"

/* Appends to buf, which holds n chars; returns the new length. */
__attribute__((format(printf, 4, 5))) static size_t append(char *buf, size_t size, size_t n,
							   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return n < size ? n : size - 1;
}

/* "Exit codes: 0 ok, 1 ...", from the table in cli/exit.h, wrapped
 * before column 80. */
static void print_exit_codes(FILE *out)
{
#define FG_EXIT_BRIEF(name, code, brief, sentence) " " #code " " brief ","
	char text[] = "Exit codes:" FG_EXIT_CODES(FG_EXIT_BRIEF);
#undef FG_EXIT_BRIEF
	size_t column = 0, len;
	char *word;

	text[strlen(text) - 1] = '.';
	for (word = strtok(text, " "); word; word = strtok(NULL, " ")) {
		len = strlen(word);
		if (column && column + 1 + len >= 80) {
			fputc('\n', out);
			column = 0;
		}
		column += (size_t)fprintf(out, "%s%s", column ? " " : "", word);
	}
	fputc('\n', out);
}

/* An option as a synopsis shows it: "-c FILE", "--hook xdp|tc", "--json". */
static size_t append_option(char *buf, size_t size, size_t n, const struct fg_cli_option *o)
{
	char label[32], value[64];

	fg_cli_option_label(o, label, sizeof(label));
	fg_cli_option_value(o, value, sizeof(value));
	return append(buf, size, n, " %s%s%s%s%s", o->required ? "" : "[", label, *value ? " " : "",
		      value, o->required ? "" : "]");
}

/* "reload IFACE -c FILE [--insecure-config]": IFACE, the required options,
 * the argument after IFACE, then the other options in the row's order. */
static const char *synopsis(const struct fg_cli_command *cmd, char *buf, size_t size)
{
	const struct fg_cli_option *o;
	size_t n = append(buf, size, 0, "%s", cmd->name);

	if (cmd->iface != FG_CLI_NO_IFACE)
		n = append(buf, size, n, " %s",
			   cmd->iface == FG_CLI_IFACE_REQUIRED ? "IFACE" : "[IFACE]");
	for (o = cmd->options; o->name; o++)
		if (o->required)
			n = append_option(buf, size, n, o);
	if (cmd->arg)
		n = append(buf, size, n, " %s", cmd->arg);
	for (o = cmd->options; o->name; o++)
		if (!o->required)
			n = append_option(buf, size, n, o);
	return buf;
}

/* "  TERM                    HELP", HELP on a line of its own after a TERM
 * that would touch it. */
static void print_entry(FILE *out, const char *term, const char *help)
{
	if (strlen(term) < 23)
		fprintf(out, "  %-24s%s\n", term, help);
	else
		fprintf(out, "  %s\n  %-24s%s\n", term, "", help);
}

void fg_cli_print_usage(FILE *out)
{
	char line[256];
	size_t i;

	fputs("Usage: floodgate [-v] COMMAND [ARGS]\n\n", out);
	for (i = 0; i < fg_cli_command_count; i++)
		print_entry(out, synopsis(&fg_cli_commands[i], line, sizeof(line)),
			    fg_cli_commands[i].help);
	print_entry(out, "help [COMMAND]", "this text, or one command's options");
	print_entry(out, "help --list", "every command and its options, one line each");
	print_entry(out, "--version", "the version, build, libraries and kernel features");
	fputc('\n', out);
	print_entry(out, "-v, -vv", "more logging; -vv adds libbpf/libxdp debug output");
	fputc('\n', out);
	print_exit_codes(out);
	fprintf(out, "Run 'floodgate COMMAND --help' for one command's options.\n");
}

void fg_cli_print_command_usage(const struct fg_cli_command *cmd, FILE *out)
{
	const struct fg_cli_option *o;
	char line[256], help[256];
	size_t i;

	fprintf(out, "Usage: floodgate [-v] %s\n\n  %s\n\nOptions:\n",
		synopsis(cmd, line, sizeof(line)), cmd->help);
	for (i = 0; (o = fg_cli_option_at(cmd->options, i)); i++)
		print_entry(out, fg_cli_option_term(o, line, sizeof(line)),
			    fg_cli_option_help(o, help, sizeof(help)));
	fputc('\n', out);
	print_exit_codes(out);
}

/* "--config,-c=FILE!": the long name, the letter, the value, ! if required. */
static void print_list_option(const struct fg_cli_option *o, bool first, FILE *out)
{
	char value[64];

	fprintf(out, "%s--%s", first ? "" : " ", o->name);
	if (o->letter)
		fprintf(out, ",-%c", o->letter);
	if (*fg_cli_option_value(o, value, sizeof(value)))
		fprintf(out, "=%s", value);
	if (o->required)
		fputc('!', out);
}

void fg_cli_print_list(FILE *out)
{
	const struct fg_cli_command *cmd;
	const struct fg_cli_option *o;
	size_t c, i;

	for (c = 0; c < fg_cli_command_count; c++) {
		cmd = &fg_cli_commands[c];
		fprintf(out, "%s\t", cmd->name);
		if (cmd->iface != FG_CLI_NO_IFACE)
			fputs(cmd->iface == FG_CLI_IFACE_REQUIRED ? "IFACE" : "IFACE?", out);
		if (cmd->arg)
			fprintf(out, "%s%s", cmd->iface != FG_CLI_NO_IFACE ? " " : "", cmd->arg);
		if (cmd->iface == FG_CLI_NO_IFACE && !cmd->arg)
			fputc('-', out);
		fprintf(out, "\t%s\t", cmd->root ? "root" : "-");
		for (i = 0; (o = fg_cli_option_at(cmd->options, i)); i++)
			print_list_option(o, i == 0, out);
		fprintf(out, "\t%s\n", cmd->help);
	}
}
