/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The commands of the CLI. Each command is one row of the table in
 * user/cli/commands.c (name, options, arguments, root, help) and one
 * function here, which calls the operations or read models below and alone
 * decides what is printed and which exit code the process returns.
 */
#ifndef FG_COMMANDS_H
#define FG_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"

/* What a command line said: the option rows of the table fill it. */
struct fg_cli_args {
	const char *ifname;   /* IFACE */
	const char *config;   /* -c FILE */
	const char *target;   /* ban/unban: ADDR[/LEN]; replay: the capture */
	const char *duration; /* ban --for */
	unsigned long count;  /* replay, top: -n (its row's default when not given) */
	const char *policy;   /* top --policy */
	const char *metrics;  /* run --metrics ADDR:PORT */
	bool keep;	      /* run --keep */
	bool force;	      /* ban --force: a /0 too */
	bool insecure_config; /* --insecure-config */
	int hook;	      /* enum fg_hook, or -1: the config's */
	int mode;	      /* enum fg_xdp_mode, or -1: the config's */
	bool json;	      /* --json */
};

/* What a command takes in the IFACE position. */
enum fg_cli_iface {
	FG_CLI_NO_IFACE,
	FG_CLI_IFACE_OPTIONAL,
	FG_CLI_IFACE_REQUIRED,
};

/* One command: everything the command line, the usage texts, `help --list`
 * and the checks before it runs know of it. */
struct fg_cli_command {
	const char *name;
	int (*run)(const struct fg_cli_args *a);
	const struct fg_cli_option *options; /* its own (not -h, -v); ends with {NULL} */
	enum fg_cli_iface iface;	     /* fills .ifname */
	const char *arg;		     /* the argument after IFACE ("CAPTURE"), or NULL */
	const char *arg_what;		     /* what it is: "'replay' needs a capture file" */
	const char *root;		     /* why it must run as root, or NULL: it need not */
	const char *help;		     /* one line */
};

extern const struct fg_cli_command fg_cli_commands[];
extern const size_t fg_cli_command_count;

/* The command called `name`, or NULL. */
const struct fg_cli_command *fg_cli_find_command(const char *name);

/* Commands that change the system (user/cli/cmd_state.c). Each returns the
 * process's exit code (user/cli/exit.h). */
int fg_cli_load(const struct fg_cli_args *a);
int fg_cli_reload(const struct fg_cli_args *a);
int fg_cli_unload(const struct fg_cli_args *a);
int fg_cli_check(const struct fg_cli_args *a);
int fg_cli_ban(const struct fg_cli_args *a);
int fg_cli_unban(const struct fg_cli_args *a);
int fg_cli_run(const struct fg_cli_args *a);

/* Commands that read (user/cli/cmd_read.c). */
int fg_cli_status(const struct fg_cli_args *a);
int fg_cli_stats(const struct fg_cli_args *a);
int fg_cli_top(const struct fg_cli_args *a);
int fg_cli_events(const struct fg_cli_args *a);
int fg_cli_replay(const struct fg_cli_args *a);
int fg_cli_bans(const struct fg_cli_args *a);

#endif /* FG_COMMANDS_H */
