// SPDX-License-Identifier: GPL-2.0-only
/* The commands that read: status, stats, top, events, replay and bans. */
#include "cli/commands.h"
#include "cli/exit.h"
#include "config/filemode.h"
#include "views/bans.h"
#include "views/events.h"
#include "views/replay.h"
#include "views/report.h"
#include "views/top.h"

int fg_cli_status(const struct fg_cli_args *a)
{
	return fg_cmd_status(a->ifname, a->json);
}

int fg_cli_stats(const struct fg_cli_args *a)
{
	return fg_cmd_stats(a->ifname, a->json);
}

int fg_cli_top(const struct fg_cli_args *a)
{
	return fg_cmd_top(a->ifname, a->count_given ? (unsigned int)a->count : 20, a->policy,
			  a->json);
}

int fg_cli_events(const struct fg_cli_args *a)
{
	return fg_cmd_events(a->ifname, a->json);
}

int fg_cli_replay(const struct fg_cli_args *a)
{
	fg_insecure_config = a->insecure_config;
	return fg_cmd_replay(a->config, a->target, a->json, a->count_given ? (long)a->count : 10);
}

int fg_cli_bans(const struct fg_cli_args *a)
{
	return fg_cmd_bans(a->ifname, a->json);
}
