// SPDX-License-Identifier: GPL-2.0-only
/* floodgate: command dispatch and argument parsing. */
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "filemode.h"
#include "flood.h"
#include "floodgate.h"
#include "loader.h"
#include "log.h"
#include "top.h"

#ifndef FG_VERSION
#define FG_VERSION "0.1.0"
#endif

static const char usage_text[] =
	"Usage: floodgate [-v] COMMAND [ARGS]\n"
	"\n"
	"  load IFACE [-c FILE] [--hook xdp|tc] [--mode native|generic]\n"
	"                          attach to IFACE with FILE's policy (default: built in)\n"
	"  reload IFACE -c FILE    replace the policy live; per-source state is kept\n"
	"  unload IFACE            detach and remove every pin\n"
	"  status [IFACE]          where attached, mode, policies, table occupancy\n"
	"  stats IFACE [--json]    per-policy and global counters\n"
	"  check -c FILE           validate a config and exit\n"
	"  ban IFACE ADDR[/LEN] [--for DURATION]\n"
	"                          drop a source or prefix (until unbanned, by default)\n"
	"  unban IFACE ADDR[/LEN]  lift a ban\n"
	"  bans IFACE              list bans with their remaining time\n"
	"  top IFACE [-n N] [--policy NAME] [--json]\n"
	"                          the sources with the most drops, and their state\n"
	"  run IFACE [-c FILE] [--metrics ADDR:PORT] [--keep]\n"
	"                          load or adopt, stay in the foreground: SIGHUP reloads,\n"
	"                          SIGTERM unloads (not with --keep); for systemd\n"
	"  flood --dev IFACE ...   traffic generator for tests and benchmarks (flood --help)\n"
	"  help, --version\n"
	"\n"
	"  -v                      more logging (repeat for libbpf/libxdp debug output)\n"
	"  --insecure-config       accept a config writable by group/others (load, reload,\n"
	"                          check, run)\n"
	"\n"
	"Exit codes: 0 ok, 1 kernel or library failure, 2 bad usage, 3 invalid config,\n"
	"4 environment (not root, unknown interface, no BTF/XDP), 5 already/not loaded.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "Error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'floodgate help' for usage.\n");
	return FG_EXIT_USAGE;
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

/* top -n: 1..FG_TOP_MAX_ROWS, or 0 when invalid. */
static unsigned int parse_count(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	return *s >= '0' && *s <= '9' && !*end && n >= 1 && n <= FG_TOP_MAX_ROWS ? n : 0;
}

struct cmd_args {
	const char *ifname;
	const char *config;
	const char *target;   /* ban/unban: ADDR[/LEN] */
	const char *duration; /* ban --for */
	const char *policy;   /* top --policy */
	const char *metrics;  /* run --metrics ADDR:PORT */
	unsigned int count;   /* top -n */
	bool keep;	      /* run --keep */
	int hook;
	int mode;
	bool json;
};

/* Parses the options shared by the commands; `allowed` lists the long
 * options this command takes, and IFACE is the only positional argument. */
static int parse_cmd_args(int argc, char **argv, const char *allowed, bool want_iface,
			  struct cmd_args *a)
{
	static const struct option options[] = {
		{"config", required_argument, NULL, 'c'},
		{"hook", required_argument, NULL, 'H'},
		{"mode", required_argument, NULL, 'm'},
		{"for", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"policy", required_argument, NULL, 'P'},
		{"metrics", required_argument, NULL, 'M'},
		{"keep", no_argument, NULL, 'K'},
		{"insecure-config", no_argument, NULL, 'I'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	*a = (struct cmd_args){.hook = -1, .mode = -1, .count = 20};
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:n:", options, NULL)) != -1) {
		const char *name = opt == 'c'	? "config"
				   : opt == 'H' ? "hook"
				   : opt == 'm' ? "mode"
				   : opt == 'j' ? "json"
				   : opt == 'f' ? "for"
				   : opt == 'n' ? "count"
				   : opt == 'P' ? "policy"
				   : opt == 'M' ? "metrics"
				   : opt == 'K' ? "keep"
				   : opt == 'I' ? "config" /* every command that reads one */
						: NULL;

		if (opt == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		if (!name || !strstr(allowed, name))
			return usage_error("unknown option '%s'", argv[optind - 1]);
		switch (opt) {
		case 'c':
			a->config = optarg;
			break;
		case 'H':
			a->hook = parse_hook(optarg);
			if (a->hook < 0)
				return usage_error("--hook must be xdp or tc, not '%s'", optarg);
			break;
		case 'm':
			a->mode = parse_mode(optarg);
			if (a->mode < 0)
				return usage_error("--mode must be native or generic, not '%s'",
						   optarg);
			break;
		case 'j':
			a->json = true;
			break;
		case 'f':
			a->duration = optarg;
			break;
		case 'n':
			a->count = parse_count(optarg);
			if (!a->count)
				return usage_error("-n must be 1..10000, not '%s'", optarg);
			break;
		case 'P':
			a->policy = optarg;
			break;
		case 'M':
			a->metrics = optarg;
			break;
		case 'K':
			a->keep = true;
			break;
		case 'I':
			fg_insecure_config = true;
			break;
		}
	}
	if (optind < argc && want_iface)
		a->ifname = argv[optind++];
	if (optind < argc && strstr(allowed, "target"))
		a->target = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (a->ifname && strlen(a->ifname) >= IF_NAMESIZE)
		return usage_error("interface name '%s' is too long", a->ifname);
	if (a->ifname && (strchr(a->ifname, '/') || a->ifname[0] == '.'))
		return usage_error("invalid interface name '%s'", a->ifname);
	return FG_EXIT_OK;
}

/* Every command that reads or changes the pinned maps: the pin folder is
 * root's (0700, pins 0600), so without root they could only fail later
 * with a misleading "not loaded". */
static int require_root(const char *cmd)
{
	static const char *const root_commands[] = {"load", "reload", "unload", "status", "stats",
						    "top",  "ban",    "unban",	"bans",	  "run"};
	size_t i;

	for (i = 0; i < sizeof(root_commands) / sizeof(root_commands[0]); i++) {
		if (strcmp(cmd, root_commands[i]))
			continue;
		if (geteuid() == 0)
			return FG_EXIT_OK;
		fprintf(stderr,
			"Error: floodgate %s must run as root (floodgate's BPF maps and "
			"pins are root's alone)\n",
			cmd);
		return FG_EXIT_ENV;
	}
	return FG_EXIT_OK;
}

static int require(const char *value, const char *what, const char *cmd)
{
	if (value)
		return FG_EXIT_OK;
	fprintf(stderr, "Error: '%s' needs %s\nRun 'floodgate help' for usage.\n", cmd, what);
	return FG_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct cmd_args a;
	const char *cmd;
	int ret;

	while (argc > 1 && !strcmp(argv[1], "-v")) {
		fg_log_level++;
		argc--;
		argv++;
	}
	fg_log_setup_libs();
	if (argc < 2) {
		fputs(usage_text, stderr);
		return FG_EXIT_USAGE;
	}
	cmd = argv[1];
	argc--;
	argv++;

	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage_text, stdout);
		return FG_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("floodgate %s\n", FG_VERSION);
		return FG_EXIT_OK;
	}
	if (!strcmp(cmd, "flood"))
		return fg_cmd_flood(argc, argv);
	ret = require_root(cmd);
	if (ret)
		return ret;

	if (!strcmp(cmd, "load")) {
		struct fg_load_opts opts;

		ret = parse_cmd_args(argc, argv, "config hook mode", true, &a);
		if (ret)
			return ret;
		opts = (struct fg_load_opts){.ifname = a.ifname,
					     .config_path = a.config,
					     .hook = a.hook,
					     .xdp_mode = a.mode};
		return fg_cmd_load(&opts);
	}
	if (!strcmp(cmd, "reload")) {
		ret = parse_cmd_args(argc, argv, "config", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		if (!ret)
			ret = require(a.config, "-c FILE", cmd);
		return ret ? ret : fg_cmd_reload(a.ifname, a.config);
	}
	if (!strcmp(cmd, "unload")) {
		ret = parse_cmd_args(argc, argv, "", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		return ret ? ret : fg_cmd_unload(a.ifname);
	}
	if (!strcmp(cmd, "status")) {
		ret = parse_cmd_args(argc, argv, "", true, &a);
		return ret ? ret : fg_cmd_status(a.ifname);
	}
	if (!strcmp(cmd, "stats")) {
		ret = parse_cmd_args(argc, argv, "json", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		return ret ? ret : fg_cmd_stats(a.ifname, a.json);
	}
	if (!strcmp(cmd, "ban") || !strcmp(cmd, "unban")) {
		bool ban = cmd[0] == 'b';

		ret = parse_cmd_args(argc, argv, ban ? "target for" : "target", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		if (!ret)
			ret = require(a.target, "an address, ADDR[/LEN]", cmd);
		if (ret)
			return ret;
		return ban ? fg_cmd_ban(a.ifname, a.target, a.duration)
			   : fg_cmd_unban(a.ifname, a.target);
	}
	if (!strcmp(cmd, "bans")) {
		ret = parse_cmd_args(argc, argv, "", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		return ret ? ret : fg_cmd_bans(a.ifname);
	}
	if (!strcmp(cmd, "run")) {
		struct fg_run_opts opts;

		ret = parse_cmd_args(argc, argv, "config metrics keep", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		if (ret)
			return ret;
		opts = (struct fg_run_opts){.ifname = a.ifname,
					    .config_path = a.config,
					    .metrics_addr = a.metrics,
					    .keep = a.keep};
		return fg_cmd_run(&opts);
	}
	if (!strcmp(cmd, "top")) {
		ret = parse_cmd_args(argc, argv, "count policy json", true, &a);
		if (!ret)
			ret = require(a.ifname, "an interface", cmd);
		return ret ? ret : fg_cmd_top(a.ifname, a.count, a.policy, a.json);
	}
	if (!strcmp(cmd, "check")) {
		ret = parse_cmd_args(argc, argv, "config", false, &a);
		if (!ret)
			ret = require(a.config, "-c FILE", cmd);
		return ret ? ret : fg_cmd_check(a.config);
	}
	return usage_error("unknown command '%s'", cmd);
}
