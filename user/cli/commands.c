// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command table: one row per command, with the rows of the options it
 * takes. Parsing, the checks before a command runs, `floodgate help`, each
 * `COMMAND --help` and `help --list` are all derived from it: adding a
 * command or an option is adding a row here.
 */
#include <string.h>

#include "base/util.h"
#include "cli/commands.h"
#include "floodgate.h"
#include "views/top.h"

#define FIELD(name)  offsetof(struct fg_cli_args, name)
#define OPTIONS(...) ((const struct fg_cli_option[]){__VA_ARGS__, {.name = NULL}})

/* The options, each written once; a command names the ones it takes. */
#define CONFIG(is_required)                                                                        \
	{                                                                                          \
		.name = "config", .letter = 'c', .kind = FG_OPT_STRING, .field = FIELD(config),    \
		.metavar = "FILE", .help = "the config file", .required = is_required              \
	}
#define INSECURE_CONFIG                                                                            \
	{                                                                                          \
		.name = "insecure-config", .kind = FG_OPT_FLAG, .field = FIELD(insecure_config),   \
		.help = "accept a config file that group or others could write"                    \
	}
#define HOOK                                                                                       \
	{                                                                                          \
		.name = "hook", .kind = FG_OPT_ENUM, .field = FIELD(hook), .def = -1,              \
		.words = (const struct fg_cli_word[]){{"xdp", FG_HOOK_XDP},                        \
						      {"tc", FG_HOOK_TC},                          \
						      {NULL, 0}},                                  \
		.help = "where to attach (default: the config's, else xdp)"                        \
	}
#define MODE                                                                                       \
	{                                                                                          \
		.name = "mode", .kind = FG_OPT_ENUM, .field = FIELD(mode), .def = -1,              \
		.words = (const struct fg_cli_word[]){{"native", FG_XDP_NATIVE},                   \
						      {"generic", FG_XDP_GENERIC},                 \
						      {NULL, 0}},                                  \
		.help = "XDP mode (default: the config's, else native)"                            \
	}
#define JSON                                                                                       \
	{                                                                                          \
		.name = "json", .kind = FG_OPT_FLAG, .field = FIELD(json), .help = "print JSON"    \
	}
#define COUNT(lowest, highest, fallback, text)                                                     \
	{                                                                                          \
		.name = "count", .letter = 'n', .kind = FG_OPT_UINT, .field = FIELD(count),        \
		.metavar = "N", .min = lowest, .max = highest, .def = fallback,                    \
		.what = "a number of sources", .help = text                                        \
	}
#define POLICY                                                                                     \
	{                                                                                          \
		.name = "policy", .kind = FG_OPT_STRING, .field = FIELD(policy),                   \
		.metavar = "NAME", .help = "only the sources of policy NAME"                       \
	}
#define FOR                                                                                        \
	{                                                                                          \
		.name = "for", .kind = FG_OPT_STRING, .field = FIELD(duration),                    \
		.metavar = "DURATION", .help = "ban for 1ms..30d, such as 90s, 10m, 24h"           \
	}
#define FORCE                                                                                      \
	{                                                                                          \
		.name = "force", .kind = FG_OPT_FLAG, .field = FIELD(force),                       \
		.help = "ban 0.0.0.0/0 or ::/0 (every source of the family) too"                   \
	}
#define METRICS                                                                                    \
	{                                                                                          \
		.name = "metrics", .kind = FG_OPT_STRING, .field = FIELD(metrics),                 \
		.metavar = "ADDR:PORT",                                                            \
		.help = "serve Prometheus metrics at /metrics ([ADDR6]:PORT)"                      \
	}
#define KEEP                                                                                       \
	{                                                                                          \
		.name = "keep", .kind = FG_OPT_FLAG, .field = FIELD(keep),                         \
		.help = "leave floodgate loaded on SIGTERM/SIGINT"                                 \
	}
#define NO_OPTIONS ((const struct fg_cli_option[]){{.name = NULL}})

/* The pin folder is root's (0700, pins 0600): without root a command could
 * only fail later with a misleading "not loaded". */
#define PINS_ARE_ROOTS "its BPF maps and pins are root's alone"

const struct fg_cli_command fg_cli_commands[] = {
	{.name = "load",
	 .run = fg_cli_load,
	 .options = OPTIONS(CONFIG(false), HOOK, MODE, INSECURE_CONFIG),
	 .iface = FG_CLI_IFACE_OPTIONAL,
	 .root = PINS_ARE_ROOTS,
	 .help = "attach to IFACE with FILE's policy (default: built in)"},
	{.name = "reload",
	 .run = fg_cli_reload,
	 .options = OPTIONS(CONFIG(true), INSECURE_CONFIG),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "replace the policy live; per-source state is kept"},
	{.name = "unload",
	 .run = fg_cli_unload,
	 .options = NO_OPTIONS,
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "detach and remove every pin"},
	{.name = "status",
	 .run = fg_cli_status,
	 .options = OPTIONS(JSON),
	 .iface = FG_CLI_IFACE_OPTIONAL,
	 .root = PINS_ARE_ROOTS,
	 .help = "where attached, mode, policies, table occupancy"},
	{.name = "stats",
	 .run = fg_cli_stats,
	 .options = OPTIONS(JSON),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "per-policy and global counters"},
	{.name = "top",
	 .run = fg_cli_top,
	 .options = OPTIONS(COUNT(1, FG_TOP_MAX_ROWS, 20, "list the N sources with the most drops"),
			    POLICY, JSON),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "the sources with the most drops, and their state"},
	{.name = "events",
	 .run = fg_cli_events,
	 .options = OPTIONS(JSON),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "stream events (refusals starting, bans and their end, full tables) until "
		 "stopped"},
	{.name = "run",
	 .run = fg_cli_run,
	 .options = OPTIONS(CONFIG(false), METRICS, KEEP, INSECURE_CONFIG),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "load or adopt, stay in the foreground: SIGHUP reloads, SIGTERM unloads"},
	{.name = "check",
	 .run = fg_cli_check,
	 .options = OPTIONS(CONFIG(true), INSECURE_CONFIG),
	 .iface = FG_CLI_NO_IFACE,
	 .help = "validate a config and exit"},
	{.name = "replay",
	 .run = fg_cli_replay,
	 .options = OPTIONS(CONFIG(true), JSON,
			    COUNT(0, 0, 10, "list the N sources with the most drops, 0 for none")),
	 .iface = FG_CLI_NO_IFACE,
	 .arg = "CAPTURE",
	 .arg_what = "a capture file",
	 .root = "replay loads the BPF program",
	 .help = "run FILE's policy over a pcap/pcapng capture, offline, on its timestamps"},
	{.name = "ban",
	 .run = fg_cli_ban,
	 .options = OPTIONS(FOR, FORCE),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .arg = "ADDR[/LEN]",
	 .arg_what = "an address, ADDR[/LEN]",
	 .root = PINS_ARE_ROOTS,
	 .help = "drop a source or prefix (until unbanned, by default)"},
	{.name = "unban",
	 .run = fg_cli_unban,
	 .options = NO_OPTIONS,
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .arg = "ADDR[/LEN]",
	 .arg_what = "an address, ADDR[/LEN]",
	 .root = PINS_ARE_ROOTS,
	 .help = "lift a ban"},
	{.name = "bans",
	 .run = fg_cli_bans,
	 .options = OPTIONS(JSON),
	 .iface = FG_CLI_IFACE_REQUIRED,
	 .root = PINS_ARE_ROOTS,
	 .help = "list bans with their remaining time"},
};

const size_t fg_cli_command_count = ARRAY_SIZE(fg_cli_commands);

const struct fg_cli_command *fg_cli_find_command(const char *name)
{
	size_t i;

	for (i = 0; i < fg_cli_command_count; i++)
		if (!strcmp(fg_cli_commands[i].name, name))
			return &fg_cli_commands[i];
	return NULL;
}
