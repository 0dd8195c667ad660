/* SPDX-License-Identifier: GPL-2.0-only */
/* The texts derived from the command table: `floodgate help`, each
 * `COMMAND --help` (and `help COMMAND`), and `help --list`. */
#ifndef FG_CLI_USAGE_H
#define FG_CLI_USAGE_H

#include <stdio.h>

#include "cli/commands.h"

/* Every command, its synopsis and its line of help. */
void fg_cli_print_usage(FILE *out);
/* One command's synopsis, help and options. */
void fg_cli_print_command_usage(const struct fg_cli_command *cmd, FILE *out);
/* One line per command, tab-separated, for scripts (docs/cli.md, CLI reference):
 * NAME, ARGS, root or -, OPTIONS, HELP. */
void fg_cli_print_list(FILE *out);

#endif /* FG_CLI_USAGE_H */
