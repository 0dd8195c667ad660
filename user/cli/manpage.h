/* SPDX-License-Identifier: GPL-2.0-only */
/* floodgate(8) and floodgate.conf(5), written from a template and the
 * tables: `floodgate help --man <TEMPLATE` (the Makefile's build/man/). */
#ifndef FG_CLI_MANPAGE_H
#define FG_CLI_MANPAGE_H

#include <stdio.h>

/* Copies `template` to `out`, replacing each line that is a part's marker
 * (@SYNOPSIS@, @COMMANDS@, @COMMON_OPTIONS@, @EXIT_STATUS@, @KEYS@) with
 * the part, written from its table. Returns 0, or -1 after printing an
 * error for an unknown marker. */
int fg_cli_print_man(FILE *template, FILE *out);

#endif /* FG_CLI_MANPAGE_H */
