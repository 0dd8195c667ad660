// SPDX-License-Identifier: GPL-2.0-only
/* The commands that read: status, stats, top, events, replay and bans.
 * Each asks its read model (user/views/) for data, prints it as text or
 * JSON (user/cli/print.h) and maps a failure to an exit code. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/exit.h"
#include "cli/print.h"
#include "config/filemode.h"
#include "maps/pinfolder.h"

/* Prints a read model's JSON value, or says it could not. */
static int print_json(json_t *value)
{
	return fg_json_print(value) ? FG_EXIT_FAILURE : FG_EXIT_OK;
}

struct status_walk {
	bool json;
	json_t *interfaces; /* --json: one object per interface */
	int shown;
	int ret;
};

/* One interface of `status`. A failure to read outranks NOT ATTACHED. */
static int show_status(const char *ifname, void *ctx)
{
	struct status_walk *w = ctx;
	struct fg_err err = {0};
	struct fg_status status;
	int code = FG_EXIT_OK;

	if (!w->json && w->shown)
		printf("\n");
	w->shown++;
	if (fg_status_read(ifname, &status, &err)) {
		code = fg_exit_report(&err);
		if (w->json) /* keeps the array whole: bpftool's {"error": ...} */
			json_array_append_new(w->interfaces, fg_status_error_json(ifname, &err));
	} else {
		if (w->json)
			json_array_append_new(w->interfaces, fg_status_json(ifname, &status));
		else
			fg_print_status_text(ifname, &status);
		code = status.attached ? FG_EXIT_OK : FG_EXIT_STATE;
	}
	fg_status_free(&status);
	if (code && w->ret != FG_EXIT_FAILURE)
		w->ret = code;
	return 0;
}

int fg_cli_status(const struct fg_cli_args *a)
{
	struct status_walk w = {.json = a->json, .interfaces = json_array()};
	struct fg_err err = {0};
	json_t *out;

	if (fg_status_interfaces(a->ifname, show_status, &w, &err) < 0) {
		json_decref(w.interfaces);
		return fg_exit_report(&err);
	}
	if (a->json) {
		out = json_object();
		fg_json_set(out, "interfaces", w.interfaces);
		return print_json(out) ? FG_EXIT_FAILURE : w.ret;
	}
	json_decref(w.interfaces);
	if (!w.shown) {
		printf("floodgate is not loaded on any interface\n");
		fg_pinfolder_explain_missing(&err);
		if (err.msg[0])
			fprintf(stderr, "%s\n", err.msg);
	}
	return w.ret;
}

int fg_cli_stats(const struct fg_cli_args *a)
{
	struct fg_err err = {0};
	struct fg_stats stats;
	int ret = FG_EXIT_OK;

	if (fg_stats_read(a->ifname, &stats, &err))
		ret = fg_exit_report(&err);
	else if (a->json)
		ret = print_json(fg_stats_json(a->ifname, &stats));
	else
		fg_print_stats_text(a->ifname, &stats);
	fg_stats_free(&stats);
	return ret;
}

int fg_cli_top(const struct fg_cli_args *a)
{
	unsigned int limit = (unsigned int)a->count;
	struct fg_top_view view;
	struct fg_err err = {0};
	int ret = FG_EXIT_OK;

	if (fg_top_read(a->ifname, limit, a->policy, &view, &err))
		ret = fg_exit_report(&err);
	else if (a->json)
		ret = print_json(fg_top_json(&view));
	else
		fg_print_top_text(&view);
	fg_top_view_free(&view);
	return ret;
}

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void catch_stop_signals(void)
{
	struct sigaction sa = {.sa_handler = request_stop}; /* no SA_RESTART: poll returns */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

struct event_printer {
	bool json;
	bool failed;
};

/* One line an event: text, or one JSON object (JSON lines). */
static int print_event(const struct fg_event_view *event, void *ctx)
{
	struct event_printer *printer = ctx;

	if (!printer->json) {
		fg_print_event_text(event);
		return 0;
	}
	printer->failed = fg_json_print(fg_event_json(event));
	return printer->failed;
}

int fg_cli_events(const struct fg_cli_args *a)
{
	struct event_printer printer = {.json = a->json};
	struct fg_err err = {0};

	catch_stop_signals();
	if (fg_events_stream(a->ifname, &stop_requested, print_event, &printer, &err))
		return fg_exit_report(&err);
	return printer.failed ? FG_EXIT_FAILURE : FG_EXIT_OK;
}

int fg_cli_replay(const struct fg_cli_args *a)
{
	struct fg_replay_opts opts = {.config_path = a->config,
				      .capture_path = a->target,
				      .progress = isatty(STDERR_FILENO)};
	size_t top_n = a->count, n_top;
	const struct fg_replay_source **top;
	struct fg_replay_result result;
	struct fg_err err = {0};
	int ret = FG_EXIT_OK;

	fg_insecure_config = a->insecure_config;
	if (fg_replay(&opts, &result, &err))
		return fg_exit_report(&err);
	top = fg_replay_top_sources(&result, top_n, &n_top);
	if (!top) {
		fg_fail(&err, FG_ERR_SYSTEM, "out of memory listing the sources");
		ret = fg_exit_report(&err);
	} else if (a->json)
		ret = print_json(fg_replay_json(a->target, &result, top, n_top));
	else
		fg_print_replay_text(a->target, &result, top, n_top);
	free(top);
	fg_replay_result_free(&result);
	return ret;
}

int fg_cli_bans(const struct fg_cli_args *a)
{
	struct fg_ban_list list;
	struct fg_err err = {0};
	int ret = FG_EXIT_OK;

	if (fg_bans_read(a->ifname, &list, &err))
		ret = fg_exit_report(&err);
	else if (a->json)
		ret = print_json(fg_bans_json(a->ifname, &list));
	else
		fg_print_bans_text(&list);
	fg_bans_free(&list);
	return ret;
}
