// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate: command dispatch and argument parsing. One table says, for each
 * command, what it accepts and how it is described; parsing, the usage text
 * and each command's --help all read it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "floodgate.h"
#include "views/top.h"

enum positional {
	POS_NONE,
	POS_OPTIONAL,
	POS_REQUIRED,
};

/* getopt_long values of the options; the short ones are their own letter. */
enum option_id {
	OPT_CONFIG = 'c',
	OPT_HELP = 'h',
	OPT_COUNT = 'n',
	OPT_VERBOSE = 'v',
	OPT_HOOK = 256,
	OPT_MODE,
	OPT_FOR,
	OPT_JSON,
	OPT_POLICY,
	OPT_METRICS,
	OPT_KEEP,
	OPT_INSECURE_CONFIG,
	OPT_FORCE,
};

#define OPTION_CONFIG                                                                              \
	{                                                                                          \
		"config", required_argument, NULL, OPT_CONFIG                                      \
	}
#define OPTION_HOOK                                                                                \
	{                                                                                          \
		"hook", required_argument, NULL, OPT_HOOK                                          \
	}
#define OPTION_MODE                                                                                \
	{                                                                                          \
		"mode", required_argument, NULL, OPT_MODE                                          \
	}
#define OPTION_FOR                                                                                 \
	{                                                                                          \
		"for", required_argument, NULL, OPT_FOR                                            \
	}
#define OPTION_JSON                                                                                \
	{                                                                                          \
		"json", no_argument, NULL, OPT_JSON                                                \
	}
#define OPTION_COUNT                                                                               \
	{                                                                                          \
		"count", required_argument, NULL, OPT_COUNT                                        \
	}
#define OPTION_POLICY                                                                              \
	{                                                                                          \
		"policy", required_argument, NULL, OPT_POLICY                                      \
	}
#define OPTION_METRICS                                                                             \
	{                                                                                          \
		"metrics", required_argument, NULL, OPT_METRICS                                    \
	}
#define OPTION_KEEP                                                                                \
	{                                                                                          \
		"keep", no_argument, NULL, OPT_KEEP                                                \
	}
#define OPTION_INSECURE_CONFIG                                                                     \
	{                                                                                          \
		"insecure-config", no_argument, NULL, OPT_INSECURE_CONFIG                          \
	}
#define OPTION_FORCE                                                                               \
	{                                                                                          \
		"force", no_argument, NULL, OPT_FORCE                                              \
	}
#define OPTION_HELP                                                                                \
	{                                                                                          \
		"help", no_argument, NULL, OPT_HELP                                                \
	}
#define OPTION_VERBOSE                                                                             \
	{                                                                                          \
		"verbose", no_argument, NULL, OPT_VERBOSE                                          \
	}
#define OPTIONS_END                                                                                \
	{                                                                                          \
		NULL, 0, NULL, 0                                                                   \
	}

static const struct option load_options[] = {
	OPTION_CONFIG, OPTION_HOOK,    OPTION_MODE, OPTION_INSECURE_CONFIG,
	OPTION_HELP,   OPTION_VERBOSE, OPTIONS_END};
static const struct option config_options[] = {OPTION_CONFIG, OPTION_INSECURE_CONFIG, OPTION_HELP,
					       OPTION_VERBOSE, OPTIONS_END};
static const struct option json_options[] = {OPTION_JSON, OPTION_HELP, OPTION_VERBOSE, OPTIONS_END};
static const struct option ban_options[] = {OPTION_FOR, OPTION_FORCE, OPTION_HELP, OPTION_VERBOSE,
					    OPTIONS_END};
static const struct option replay_options[] = {OPTION_CONFIG, OPTION_JSON,    OPTION_COUNT,
					       OPTION_HELP,   OPTION_VERBOSE, OPTIONS_END};
static const struct option top_options[] = {OPTION_COUNT, OPTION_POLICY,  OPTION_JSON,
					    OPTION_HELP,  OPTION_VERBOSE, OPTIONS_END};
static const struct option run_options[] = {
	OPTION_CONFIG, OPTION_METRICS, OPTION_KEEP, OPTION_INSECURE_CONFIG,
	OPTION_HELP,   OPTION_VERBOSE, OPTIONS_END};
static const struct option plain_options[] = {OPTION_HELP, OPTION_VERBOSE, OPTIONS_END};

/* How each option is shown in a command's --help. */
static const struct {
	int id;
	const char *synopsis;
	const char *help;
} option_help[] = {
	{OPT_CONFIG, "-c, --config FILE", "the config file"},
	{OPT_HOOK, "--hook xdp|tc", "where to attach (default: the config's, else xdp)"},
	{OPT_MODE, "--mode native|generic", "XDP mode (default: the config's, else native)"},
	{OPT_FOR, "--for DURATION", "ban for 1ms..30d, such as 90s, 10m, 24h"},
	{OPT_JSON, "--json", "print JSON"},
	{OPT_COUNT, "-n, --count N",
	 "list the N sources with the most drops (replay: default 10; top: 1..10000, default 20)"},
	{OPT_POLICY, "--policy NAME", "only the sources of policy NAME"},
	{OPT_METRICS, "--metrics ADDR:PORT", "serve Prometheus metrics at /metrics ([ADDR6]:PORT)"},
	{OPT_KEEP, "--keep", "leave floodgate loaded on SIGTERM/SIGINT"},
	{OPT_FORCE, "--force", "ban 0.0.0.0/0 or ::/0 (every source of the family) too"},
	{OPT_INSECURE_CONFIG, "--insecure-config",
	 "accept a config file that group or others could write"},
	{OPT_VERBOSE, "-v, --verbose", "more logging; -vv adds libbpf/libxdp debug output"},
	{OPT_HELP, "-h, --help", "print this help and exit"},
};

struct command {
	const char *name;
	int (*run)(const struct fg_cli_args *a);
	const struct option *options;
	enum positional iface; /* IFACE */
	const char *target;    /* what the argument after IFACE is, or NULL: none */
	bool needs_config;     /* -c FILE is required */
	bool needs_root;       /* reads or changes the pinned maps (root's alone) */
	const char *synopsis;  /* the arguments, after the name */
	const char *help;      /* one line */
};

static const struct command commands[] = {
	{"load", fg_cli_load, load_options, POS_OPTIONAL, NULL, false, true,
	 "IFACE [-c FILE] [--hook xdp|tc] [--mode native|generic]",
	 "attach to IFACE with FILE's policy (default: built in)"},
	{"reload", fg_cli_reload, config_options, POS_REQUIRED, NULL, true, true, "IFACE -c FILE",
	 "replace the policy live; per-source state is kept"},
	{"unload", fg_cli_unload, plain_options, POS_REQUIRED, NULL, false, true, "IFACE",
	 "detach and remove every pin"},
	{"status", fg_cli_status, json_options, POS_OPTIONAL, NULL, false, true, "[IFACE] [--json]",
	 "where attached, mode, policies, table occupancy"},
	{"stats", fg_cli_stats, json_options, POS_REQUIRED, NULL, false, true, "IFACE [--json]",
	 "per-policy and global counters"},
	{"top", fg_cli_top, top_options, POS_REQUIRED, NULL, false, true,
	 "IFACE [-n N] [--policy NAME] [--json]",
	 "the sources with the most drops, and their state"},
	{"events", fg_cli_events, json_options, POS_REQUIRED, NULL, false, true, "IFACE [--json]",
	 "stream events (refusals starting, bans and their end, full tables) until stopped"},
	{"run", fg_cli_run, run_options, POS_REQUIRED, NULL, false, true,
	 "IFACE [-c FILE] [--metrics ADDR:PORT] [--keep]",
	 "load or adopt, stay in the foreground: SIGHUP reloads, SIGTERM unloads"},
	{"check", fg_cli_check, config_options, POS_NONE, NULL, true, false, "-c FILE",
	 "validate a config and exit"},
	{"replay", fg_cli_replay, replay_options, POS_NONE, "a capture file", true, false,
	 "-c FILE CAPTURE [--json] [-n N]",
	 "run FILE's policy over a pcap/pcapng capture, offline, on its timestamps"},
	{"ban", fg_cli_ban, ban_options, POS_REQUIRED, "an address, ADDR[/LEN]", false, true,
	 "IFACE ADDR[/LEN] [--for DURATION] [--force]",
	 "drop a source or prefix (until unbanned, by default)"},
	{"unban", fg_cli_unban, plain_options, POS_REQUIRED, "an address, ADDR[/LEN]", false, true,
	 "IFACE ADDR[/LEN]", "lift a ban"},
	{"bans", fg_cli_bans, json_options, POS_REQUIRED, NULL, false, true, "IFACE [--json]",
	 "list bans with their remaining time"},
};

static const char exit_codes_text[] =
	"Exit codes: 0 ok, 1 kernel or library failure, 2 bad usage, 3 invalid config\n"
	"(replay: or capture), 4 environment (not root, unknown interface, no BTF/XDP),\n"
	"5 already/not loaded.\n";

/* The global usage: one entry per command of the table. */
static void print_usage(FILE *out)
{
	char line[128];
	size_t i;

	fputs("Usage: floodgate [-v] COMMAND [ARGS]\n\n", out);
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		snprintf(line, sizeof(line), "%s %s", commands[i].name, commands[i].synopsis);
		if (strlen(line) < 24)
			fprintf(out, "  %-24s%s\n", line, commands[i].help);
		else
			fprintf(out, "  %s\n  %-24s%s\n", line, "", commands[i].help);
	}
	fprintf(out, "  %-24s%s\n", "help [COMMAND]", "this text, or one command's options");
	fprintf(out, "  %-24s%s\n", "--version", "print the version");
	fprintf(out, "\n  %-24s%s\n\n%s", "-v, -vv",
		"more logging; -vv adds libbpf/libxdp debug output", exit_codes_text);
	fprintf(out, "Run 'floodgate COMMAND --help' for one command's options.\n");
}

static void print_command_usage(const struct command *cmd, FILE *out)
{
	const struct option *o;
	size_t i;

	fprintf(out, "Usage: floodgate [-v] %s %s\n\n  %s\n\nOptions:\n", cmd->name, cmd->synopsis,
		cmd->help);
	for (o = cmd->options; o->name; o++)
		for (i = 0; i < ARRAY_SIZE(option_help); i++)
			if (option_help[i].id == o->val)
				fprintf(out, "  %-24s%s\n", option_help[i].synopsis,
					option_help[i].help);
	fprintf(out, "\n%s", exit_codes_text);
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "Error: ");
	fprintf(stderr, fmt, arg);
	if (cmd)
		fprintf(stderr, "\nRun 'floodgate %s --help' for usage.\n", cmd);
	else
		fprintf(stderr, "\nRun 'floodgate help' for usage.\n");
	return FG_EXIT_USAGE;
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

/* The short options of `options`, in getopt's form: ":c:hv". */
static void short_options(const struct option *options, char *buf, size_t size)
{
	size_t n = 0;

	buf[n++] = ':'; /* a missing value is ':', not '?' */
	for (; options->name && n + 3 < size; options++) {
		if (options->val >= 256)
			continue;
		buf[n++] = (char)options->val;
		if (options->has_arg == required_argument)
			buf[n++] = ':';
	}
	buf[n] = '\0';
}

static int parse_hook(const char *s)
{
	if (!strcmp(s, "xdp"))
		return FG_HOOK_XDP;
	if (!strcmp(s, "tc"))
		return FG_HOOK_TC;
	return -1;
}

static int parse_mode(const char *s)
{
	if (!strcmp(s, "native"))
		return FG_XDP_NATIVE;
	if (!strcmp(s, "generic"))
		return FG_XDP_GENERIC;
	return -1;
}

/* -n N: replay takes any count, top 1..FG_TOP_MAX_ROWS. */
static int parse_count(const struct command *cmd, const char *text, struct fg_cli_args *a)
{
	bool top = cmd->run == fg_cli_top;
	char *end = NULL;

	errno = 0;
	a->count = strtoul(text, &end, 10);
	a->count_given = true;
	if (*text < '0' || *text > '9' || *end || errno ||
	    (top && (a->count < 1 || a->count > FG_TOP_MAX_ROWS))) {
		if (top)
			fprintf(stderr, "Error: -n must be 1..%d, not '%s'\n", FG_TOP_MAX_ROWS,
				text);
		else
			fprintf(stderr, "Error: -n takes a number of sources, not '%s'\n", text);
		fprintf(stderr, "Run 'floodgate %s --help' for usage.\n", cmd->name);
		return FG_EXIT_USAGE;
	}
	return FG_EXIT_OK;
}

/* Applies one recognised option. Returns -1 for --help, else an exit code. */
static int apply_option(const struct command *cmd, int opt, struct fg_cli_args *a)
{
	switch (opt) {
	case OPT_CONFIG:
		a->config = optarg;
		break;
	case OPT_HOOK:
		a->hook = parse_hook(optarg);
		if (a->hook < 0)
			return usage_error(cmd->name, "--hook must be xdp or tc, not '%s'", optarg);
		break;
	case OPT_MODE:
		a->mode = parse_mode(optarg);
		if (a->mode < 0)
			return usage_error(cmd->name, "--mode must be native or generic, not '%s'",
					   optarg);
		break;
	case OPT_FOR:
		a->duration = optarg;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_POLICY:
		a->policy = optarg;
		break;
	case OPT_METRICS:
		a->metrics = optarg;
		break;
	case OPT_KEEP:
		a->keep = true;
		break;
	case OPT_FORCE:
		a->force = true;
		break;
	case OPT_INSECURE_CONFIG:
		a->insecure_config = true;
		break;
	case OPT_COUNT:
		return parse_count(cmd, optarg, a);
	case OPT_VERBOSE:
		fg_log_level++;
		break;
	case OPT_HELP:
		return -1;
	}
	return FG_EXIT_OK;
}

static int parse_options(const struct command *cmd, int argc, char **argv, struct fg_cli_args *a)
{
	char shorts[32], refused[64];
	int opt, ret;

	optind = 1;
	opterr = 0;
	short_options(cmd->options, shorts, sizeof(shorts));
	while ((opt = getopt_long(argc, argv, shorts, cmd->options, NULL)) != -1) {
		if (opt == ':')
			return usage_error(cmd->name, "option '%s' needs a value",
					   refused_option(argv, refused, sizeof(refused)));
		if (opt == '?' && optopt >= OPT_HOOK)
			return usage_error(cmd->name, "option '%s' takes no value",
					   refused_option(argv, refused, sizeof(refused)));
		if (opt == '?')
			return usage_error(cmd->name, "unknown option '%s'",
					   refused_option(argv, refused, sizeof(refused)));
		ret = apply_option(cmd, opt, a);
		if (ret)
			return ret;
	}
	return FG_EXIT_OK;
}

static int parse_positionals(const struct command *cmd, int argc, char **argv,
			     struct fg_cli_args *a)
{
	if (optind < argc && cmd->iface != POS_NONE)
		a->ifname = argv[optind++];
	if (optind < argc && cmd->target)
		a->target = argv[optind++];
	if (optind < argc)
		return usage_error(cmd->name, "unexpected argument '%s'", argv[optind]);
	if (cmd->iface == POS_REQUIRED && !a->ifname)
		return usage_error(cmd->name, "'%s' needs an interface", cmd->name);
	if (cmd->target && !a->target) {
		char missing[96];

		snprintf(missing, sizeof(missing), "'%s' needs %s", cmd->name, cmd->target);
		return usage_error(cmd->name, "%s", missing);
	}
	if (cmd->needs_config && !a->config)
		return usage_error(cmd->name, "'%s' needs -c FILE", cmd->name);
	if (a->ifname && strlen(a->ifname) >= IF_NAMESIZE)
		return usage_error(cmd->name, "interface name '%s' is too long", a->ifname);
	if (a->ifname && (strchr(a->ifname, '/') || a->ifname[0] == '.'))
		return usage_error(cmd->name, "invalid interface name '%s'", a->ifname);
	return FG_EXIT_OK;
}

/* argv[0] is the command's name. */
static int run_command(const struct command *cmd, int argc, char **argv)
{
	struct fg_cli_args a = {.hook = -1, .mode = -1};
	int ret = parse_options(cmd, argc, argv, &a);

	if (ret < 0) {
		print_command_usage(cmd, stdout);
		return FG_EXIT_OK;
	}
	if (!ret)
		ret = parse_positionals(cmd, argc, argv, &a);
	if (!ret && cmd->needs_root && geteuid() != 0) {
		/* The pin folder is root's (0700, pins 0600): without root the
		 * command could only fail later with a misleading "not loaded". */
		fprintf(stderr,
			"Error: floodgate %s must run as root (floodgate's BPF maps and pins are "
			"root's alone)\n",
			cmd->name);
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

static int help(const char *name)
{
	const struct command *cmd = name ? find_command(name) : NULL;

	if (name && !cmd)
		return usage_error(NULL, "unknown command '%s'", name);
	if (cmd)
		print_command_usage(cmd, stdout);
	else
		print_usage(stdout);
	return FG_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	const char *name;
	int skip = leading_verbosity(argc, argv);

	argc -= skip;
	argv += skip;
	fg_log_setup_libs();
	if (argc < 2) {
		print_usage(stderr);
		return FG_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h"))
		return help(argc > 2 ? argv[2] : NULL);
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("floodgate %s\n", FG_VERSION);
		return FG_EXIT_OK;
	}
	cmd = find_command(name);
	if (!cmd)
		return usage_error(NULL, "unknown command '%s'", name);
	return run_command(cmd, argc - 1, argv + 1);
}
