// SPDX-License-Identifier: GPL-2.0-only
/* The commands that change the system: load, reload, unload, check, ban,
 * unban and run. */
#include "cli/commands.h"
#include "cli/exit.h"
#include "config/filemode.h"
#include "ops/loader.h"
#include "service/daemon.h"

int fg_cli_load(const struct fg_cli_args *a)
{
	struct fg_load_opts opts = {.ifname = a->ifname,
				    .config_path = a->config,
				    .hook = a->hook,
				    .xdp_mode = a->mode};

	fg_insecure_config = a->insecure_config;
	return fg_cmd_load(&opts);
}

int fg_cli_reload(const struct fg_cli_args *a)
{
	fg_insecure_config = a->insecure_config;
	return fg_cmd_reload(a->ifname, a->config);
}

int fg_cli_unload(const struct fg_cli_args *a)
{
	return fg_cmd_unload(a->ifname);
}

int fg_cli_check(const struct fg_cli_args *a)
{
	fg_insecure_config = a->insecure_config;
	return fg_cmd_check(a->config);
}

int fg_cli_ban(const struct fg_cli_args *a)
{
	return fg_cmd_ban(a->ifname, a->target, a->duration, a->force);
}

int fg_cli_unban(const struct fg_cli_args *a)
{
	return fg_cmd_unban(a->ifname, a->target);
}

int fg_cli_run(const struct fg_cli_args *a)
{
	const struct fg_run_opts opts = {.ifname = a->ifname,
					 .config_path = a->config,
					 .metrics_addr = a->metrics,
					 .keep = a->keep};

	fg_insecure_config = a->insecure_config;
	return fg_cmd_run(&opts);
}
