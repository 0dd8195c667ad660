/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef FG_CLI_VERSION_H
#define FG_CLI_VERSION_H

#include <stdio.h>

/* The version, the git revision when built from git, the libbpf and libxdp
 * versions and the kernel's features, one line each. */
void fg_cli_print_version(FILE *out);

#endif /* FG_CLI_VERSION_H */
