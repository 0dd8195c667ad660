// SPDX-License-Identifier: GPL-2.0-only
/* The commands that change the system: load, reload, unload, check, ban,
 * unban and run. Each calls its operation, prints what it did on stdout
 * and turns a failure into the process's exit code. */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/exit.h"
#include "config/filemode.h"
#include "ops/bans.h"
#include "ops/loader.h"
#include "service/daemon.h"

int fg_cli_load(const struct fg_cli_args *a)
{
	const struct fg_load_opts opts = {.ifname = a->ifname,
					  .config_path = a->config,
					  .hook = a->hook,
					  .xdp_mode = a->mode};
	struct fg_load_result res;
	struct fg_err err = {0};

	fg_insecure_config = a->insecure_config;
	if (fg_load(&opts, &res, &err))
		return fg_exit_report(&err);
	if (!res.upgraded) /* an upgrade logs what it kept instead */
		printf("floodgate loaded on %s (%s), %u policies\n", res.ifname,
		       fg_hook_text(res.hook, res.xdp_mode), res.n_policies);
	return FG_EXIT_OK;
}

int fg_cli_reload(const struct fg_cli_args *a)
{
	struct fg_reload_result res;
	struct fg_err err = {0};

	fg_insecure_config = a->insecure_config;
	if (fg_reload(a->ifname, a->config, &res, &err))
		return fg_exit_report(&err);
	if (!res.upgraded)
		printf("floodgate policy on %s reloaded: %u policies\n", a->ifname, res.n_policies);
	return FG_EXIT_OK;
}

int fg_cli_unload(const struct fg_cli_args *a)
{
	enum fg_unloaded how;
	struct fg_err err = {0};

	if (fg_unload(a->ifname, &how, &err))
		return fg_exit_report(&err);
	printf("floodgate unloaded from %s%s\n", a->ifname, fg_unloaded_note(how));
	return FG_EXIT_OK;
}

int fg_cli_check(const struct fg_cli_args *a)
{
	unsigned int n_policies;
	struct fg_err err = {0};

	fg_insecure_config = a->insecure_config;
	if (fg_check_config(a->config, &n_policies, &err))
		return fg_exit_report(&err);
	printf("%s: ok, %u policies\n", a->config ? a->config : "<default>", n_policies);
	return FG_EXIT_OK;
}

int fg_cli_ban(const struct fg_cli_args *a)
{
	struct fg_ban_prefix shown;
	struct fg_err err = {0};

	if (fg_ban(a->ifname, a->target, a->duration, a->force, &shown, &err))
		return fg_exit_report(&err);
	printf("banned %s on %s %s%s\n", shown.text, a->ifname,
	       a->duration ? "for " : "until unbanned", a->duration ? a->duration : "");
	return FG_EXIT_OK;
}

int fg_cli_unban(const struct fg_cli_args *a)
{
	struct fg_ban_prefix shown;
	struct fg_err err = {0};

	if (fg_unban(a->ifname, a->target, &shown, &err))
		return fg_exit_report(&err);
	printf("unbanned %s on %s\n", shown.text, a->ifname);
	return FG_EXIT_OK;
}

int fg_cli_run(const struct fg_cli_args *a)
{
	const struct fg_run_opts opts = {.ifname = a->ifname,
					 .config_path = a->config,
					 .metrics_addr = a->metrics,
					 .keep = a->keep};
	struct fg_err err = {0};

	fg_insecure_config = a->insecure_config;
	return fg_run(&opts, &err) ? fg_exit_report(&err) : FG_EXIT_OK;
}
