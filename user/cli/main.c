// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate: command dispatch and argument parsing, read from the command
 * table (user/cli/commands.c): the options a command takes, its arguments,
 * the checks before it runs (required options and arguments, interface
 * names, root) and its usage all come from its row.
 */
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "cli/manpage.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "cli/version.h"
#include "floodgate.h"

/* "Run 'floodgate COMMAND --help' for usage.", after an error about the
 * command line of `cmd` (NULL: no command). */
static int usage_hint(const struct fg_cli_command *cmd)
{
	if (cmd)
		fprintf(stderr, "Run 'floodgate %s --help' for usage.\n", cmd->name);
	else
		fprintf(stderr, "Run 'floodgate help' for usage.\n");
	return FG_EXIT_USAGE;
}

__attribute__((format(printf, 2, 3))) static int usage_error(const struct fg_cli_command *cmd,
							     const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "Error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return usage_hint(cmd);
}

/* The option getopt_long refused, as the user wrote it: "-x", "--name"
 * (without any "=VALUE"). */
static const char *refused_option(char **argv, char *buf, size_t size)
{
	const char *word = argv[optind - 1];

	/* A long option is its word; a short one may sit inside "-xy". */
	if (optopt && strncmp(word, "--", 2) != 0) {
		snprintf(buf, size, "-%c", optopt);
		return buf;
	}
	snprintf(buf, size, "%.*s", (int)strcspn(word, "="), word);
	return buf;
}

/* getopt_long's '?': an option the command does not take, or "--flag=VALUE"
 * (a known long option, which getopt names in optopt). */
static int refused(const struct fg_cli_command *cmd, char **argv)
{
	char option[64];
	bool flag_with_value = optopt && !strncmp(argv[optind - 1], "--", 2);

	refused_option(argv, option, sizeof(option));
	if (flag_with_value)
		return usage_error(cmd, "option '%s' takes no value", option);
	return usage_error(cmd, "unknown option '%s'", option);
}

/* Returns -1 for --help, else an exit code. */
static int parse_options(const struct fg_cli_command *cmd, int argc, char **argv,
			 struct fg_cli_args *a)
{
	struct option longs[FG_CLI_MAX_OPTIONS + 1];
	char shorts[2 * FG_CLI_MAX_OPTIONS + 2], option[64];
	const struct fg_cli_option *o;
	int opt;

	fg_cli_getopt_arrays(cmd->options, longs, shorts);
	fg_cli_option_defaults(cmd->options, a);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == ':')
			return usage_error(cmd, "option '%s' needs a value",
					   refused_option(argv, option, sizeof(option)));
		o = opt == '?' ? NULL : fg_cli_option_of(cmd->options, opt);
		if (!o)
			return refused(cmd, argv);
		if (o->kind == FG_OPT_HELP)
			return -1;
		if (fg_cli_option_apply(o, optarg, a))
			return usage_hint(cmd);
	}
	return FG_EXIT_OK;
}

/* What the command needs and did not get: IFACE, its argument, a required
 * option. */
static int check_required(const struct fg_cli_command *cmd, const struct fg_cli_args *a)
{
	const struct fg_cli_option *o;
	char label[32], value[64];

	if (cmd->iface == FG_CLI_IFACE_REQUIRED && !a->ifname)
		return usage_error(cmd, "'%s' needs an interface", cmd->name);
	if (cmd->arg && !a->target)
		return usage_error(cmd, "'%s' needs %s", cmd->name, cmd->arg_what);
	for (o = cmd->options; o->name; o++)
		if (o->required && !fg_cli_option_present(o, a))
			return usage_error(cmd, "'%s' needs %s %s", cmd->name,
					   fg_cli_option_label(o, label, sizeof(label)),
					   fg_cli_option_value(o, value, sizeof(value)));
	return FG_EXIT_OK;
}

static int parse_positionals(const struct fg_cli_command *cmd, int argc, char **argv,
			     struct fg_cli_args *a)
{
	int ret;

	if (optind < argc && cmd->iface != FG_CLI_NO_IFACE)
		a->ifname = argv[optind++];
	if (optind < argc && cmd->arg)
		a->target = argv[optind++];
	if (optind < argc)
		return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	ret = check_required(cmd, a);
	if (ret)
		return ret;
	if (a->ifname && strlen(a->ifname) >= IF_NAMESIZE)
		return usage_error(cmd, "interface name '%s' is too long", a->ifname);
	if (a->ifname && (strchr(a->ifname, '/') || a->ifname[0] == '.'))
		return usage_error(cmd, "invalid interface name '%s'", a->ifname);
	return FG_EXIT_OK;
}

/* argv[0] is the command's name. */
static int run_command(const struct fg_cli_command *cmd, int argc, char **argv)
{
	struct fg_cli_args a = {0};
	int ret = parse_options(cmd, argc, argv, &a);

	if (ret < 0) {
		fg_cli_print_command_usage(cmd, stdout);
		return FG_EXIT_OK;
	}
	if (!ret)
		ret = parse_positionals(cmd, argc, argv, &a);
	if (!ret && cmd->root && !fg_is_root()) {
		fprintf(stderr, "Error: floodgate must run as root (%s)\n", cmd->root);
		ret = FG_EXIT_ENV;
	}
	return ret ? ret : cmd->run(&a);
}

/* -v, -vv, -v -v ... before the command. Returns how many words it took. */
static int leading_verbosity(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--verbose")) {
			fg_log_level++;
			continue;
		}
		if (w[0] != '-' || w[1] != 'v' || w[strspn(w + 1, "v") + 1] != '\0')
			break;
		fg_log_level += (int)strlen(w + 1);
	}
	return i - 1;
}

/* help, help COMMAND, help --list; and help --man, which writes a man page
 * from the template on stdin (not in the usage: the build's). */
static int help(const char *name)
{
	const struct fg_cli_command *cmd = name ? fg_cli_find_command(name) : NULL;

	if (name && !strcmp(name, "--list")) {
		fg_cli_print_list(stdout);
		return FG_EXIT_OK;
	}
	if (name && !strcmp(name, "--man"))
		return fg_cli_print_man(stdin, stdout) ? FG_EXIT_USAGE : FG_EXIT_OK;
	if (name && !cmd)
		return usage_error(NULL, "unknown command '%s'", name);
	if (cmd)
		fg_cli_print_command_usage(cmd, stdout);
	else
		fg_cli_print_usage(stdout);
	return FG_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct fg_cli_command *cmd;
	const char *name;
	int skip = leading_verbosity(argc, argv);

	argc -= skip;
	argv += skip;
	fg_log_setup_libs();
	if (argc < 2) {
		fg_cli_print_usage(stderr);
		return FG_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h"))
		return help(argc > 2 ? argv[2] : NULL);
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		fg_cli_print_version(stdout);
		return FG_EXIT_OK;
	}
	cmd = fg_cli_find_command(name);
	if (!cmd)
		return usage_error(NULL, "unknown command '%s'", name);
	return run_command(cmd, argc - 1, argv + 1);
}
