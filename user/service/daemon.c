// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate run`: floodgate as a service. It loads (or adopts the instance
 * already pinned on the interface), then waits for signals in the
 * foreground: SIGHUP reloads the config live, SIGTERM and SIGINT end it and
 * unload unless --keep. The datapath never depends on this process: if it
 * dies, the pinned program keeps enforcing the last policy, and the next
 * `run` adopts it. Readiness and the watchdog go through sd_notify(3).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "policy/readback.h"
#include "maps/loaded.h"
#include "attach/hook.h"
#include "config/config.h"
#include "service/daemon.h"
#include "service/fleet.h"
#include "ops/loader.h"
#include "base/log.h"
#include "service/metrics.h"
#include "maps/pinned.h"
#include "config/values.h"

/* How often the loop wakes without a signal: to check that floodgate is
 * still loaded, and to feed the watchdog (at least twice per period). */
#define POLL_NS (1000ULL * 1000 * 1000)

/* The journal reads "<N>" priority prefixes from a service's stderr; a
 * person at a terminal should not see them. systemd sets JOURNAL_STREAM to
 * the device and inode of the stream it connected (systemd.exec(5)). */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       st.st_dev == dev && st.st_ino == ino;
}

/* Copies the active policy set. Returns 0, or a negative errno: -ENOENT
 * when floodgate is not loaded, -EPROTO when the pins have a layout this
 * build does not know. */
static int open_policies(const char *ifname, struct fg_policy_set *set, struct fg_runtime *rt)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	char pin_dir[PATH_MAX];
	struct fg_err e = {0};
	int err;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = fg_pinned_open(pin_dir, &pinned, &e);
	if (err)
		pr_warn("Error: %s\n", e.msg);
	if (!err)
		err = fg_read_active_set(&pinned, set);
	if (!err && rt)
		*rt = pinned.rt;
	fg_pinned_close(&pinned);
	return err;
}

static bool read_policies(const char *ifname, struct fg_policy_set *set, struct fg_runtime *rt)
{
	return !open_policies(ifname, set, rt);
}

static void describe(const struct fg_policy *p, char *buf, size_t size)
{
	char rate[64];
	__u64 burst = fg_format_rate(p, rate, sizeof(rate));

	snprintf(buf, size, "rate %s burst %llu %s, action %s", rate, (unsigned long long)burst,
		 fg_algorithm_name(p->algorithm), fg_action_name(p->action));
}

/* Logs what a reload changed, policy by policy. */
static void log_changes(const struct fg_policy_set *before, const struct fg_policy_set *after)
{
	char now[160], was[160];
	unsigned int changes = 0;
	__u32 i;

	for (i = 0; i < after->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &after->policies[i];
		const struct fg_policy *old = fg_find_policy(before, p->name);

		describe(p, now, sizeof(now));
		if (!old) {
			pr_warn("policy %s added: %s\n", p->name, now);
			changes++;
		} else if (memcmp(old, p, sizeof(*p))) {
			describe(old, was, sizeof(was));
			pr_warn("policy %s changed: %s (was %s)\n", p->name, now, was);
			changes++;
		}
	}
	for (i = 0; i < before->count && i < FG_MAX_POLICIES; i++) {
		if (!fg_find_policy(after, before->policies[i].name)) {
			pr_warn("policy %s removed\n", before->policies[i].name);
			changes++;
		}
	}
	if (!changes)
		pr_warn("no policy changed (matches, lists and global keys may have)\n");
}

/* Reloads the config live and says what changed; on failure the running
 * policy stays and the reason has been logged (FILE:LINE: for a bad file). */
static int reload(const struct fg_run_opts *opts)
{
	struct fg_policy_set *before = malloc(sizeof(*before));
	struct fg_policy_set *after = malloc(sizeof(*after));
	const char *path = opts->config_path ? opts->config_path : "the built-in policy";
	bool known;
	int ret = FG_EXIT_FAILURE;

	if (!before || !after)
		goto out;
	known = read_policies(opts->ifname, before, NULL);
	pr_warn("reloading %s on %s\n", path, opts->ifname);
	ret = fg_cmd_reload(opts->ifname, opts->config_path);
	if (ret) {
		pr_warn("reload of %s failed (exit %d): the running policy stays\n", path, ret);
		goto out;
	}
	if (known && read_policies(opts->ifname, after, NULL))
		log_changes(before, after);
out:
	free(before);
	free(after);
	return ret;
}

/* Loads, or adopts a floodgate that is already attached to the interface
 * (after a crash, a kill -9 or an upgrade) and brings it to the config. */
static int load_or_adopt(const struct fg_run_opts *opts)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_load_opts load = {.ifname = opts->ifname,
				    .config_path = opts->config_path,
				    .hook = -1,
				    .xdp_mode = -1};
	struct fg_runtime rt;
	int err = set ? open_policies(opts->ifname, set, &rt) : -ENOMEM;
	int ret = FG_EXIT_OK;

	free(set);
	if (!err && fg_still_attached(&rt)) {
		pr_warn("adopting floodgate already loaded on %s (program id %u, generation "
			"%llu)\n",
			opts->ifname, rt.prog_id, (unsigned long long)rt.generation);
		return reload(opts);
	}
	if (!err) {
		/* Pins without a program (the interface was recreated):
		 * start over. */
		pr_warn("floodgate's pins on %s have no attached program: loading afresh\n",
			opts->ifname);
		ret = fg_cmd_unload(opts->ifname);
	} else if (err == -EPROTO) {
		/* Another build's layout: load takes over from it. */
		pr_warn("floodgate on %s has another map layout: upgrading it\n", opts->ifname);
	} else if (err != -ENOENT) {
		pr_warn("Error: the maps pinned for %s cannot be adopted (%s)\n", opts->ifname,
			strerror(-err));
		return FG_EXIT_FAILURE;
	}
	return ret ? ret : fg_cmd_load(&load);
}

/* Starts the fleet sync when the config has a [fleet] section; *fleet
 * stays NULL otherwise. The config has been checked by the load or
 * reload that precedes this. */
static void start_fleet(const struct fg_run_opts *opts, struct fg_fleet **fleet)
{
	struct fg_config *cfg = malloc(sizeof(*cfg));
	int err;

	*fleet = NULL;
	if (!cfg || !opts->config_path || fg_config_parse_file(opts->config_path, cfg, NULL) ||
	    !cfg->fleet.enabled) {
		free(cfg);
		return;
	}
	err = fg_fleet_start(opts->ifname, &cfg->fleet, fleet);
	if (err)
		pr_warn("Error: cannot start the fleet sync on %s: %s (the local limits hold)\n",
			opts->ifname, strerror(-err));
	free(cfg);
}

static bool still_loaded(const char *ifname)
{
	char pin_dir[PATH_MAX];

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	return !access(pin_dir, F_OK);
}

/* Waits for signals; returns when told to stop, or when floodgate was
 * unloaded behind our back (then there is nothing left to serve). */
static int serve(const struct fg_run_opts *opts, const sigset_t *signals, struct fg_fleet **fleet)
{
	struct timespec poll = {.tv_sec = POLL_NS / 1000000000ULL,
				.tv_nsec = POLL_NS % 1000000000ULL};
	uint64_t watchdog_usec = 0;
	siginfo_t info;

	if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec / 2 * 1000 < POLL_NS) {
		poll.tv_sec = watchdog_usec / 2 / 1000000;
		poll.tv_nsec = watchdog_usec / 2 % 1000000 * 1000;
	}
	for (;;) {
		int sig = sigtimedwait(signals, &info, &poll);

		if (sig == SIGTERM || sig == SIGINT) {
			pr_warn("%s received: stopping\n", strsignal(sig));
			return FG_EXIT_OK;
		}
		if (sig == SIGHUP) {
			sd_notify(0, "RELOADING=1");
			if (reload(opts) == FG_EXIT_OK) {
				/* [fleet] may have changed with the rest. */
				fg_fleet_stop(*fleet);
				start_fleet(opts, fleet);
			}
			sd_notifyf(0, "READY=1\nSTATUS=enforcing on %s", opts->ifname);
		}
		if (!still_loaded(opts->ifname)) {
			pr_warn("floodgate was unloaded from %s by someone else: exiting\n",
				opts->ifname);
			return FG_EXIT_STATE;
		}
		sd_notify(0, "WATCHDOG=1");
	}
}

int fg_cmd_run(const struct fg_run_opts *opts)
{
	struct fg_metrics *metrics = NULL;
	struct fg_fleet *fleet = NULL;
	sigset_t signals;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fg_log_journal = stderr_is_journal();
	if (geteuid() != 0) {
		pr_warn("Error: floodgate must run as root (it loads BPF programs)\n");
		return FG_EXIT_ENV;
	}
	/* Blocked from the start: a signal during the load waits for serve(). */
	sigemptyset(&signals);
	sigaddset(&signals, SIGHUP);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigprocmask(SIG_BLOCK, &signals, NULL);

	/* The endpoint first: an address in use must fail before anything
	 * on the system changes. */
	if (opts->metrics_addr) {
		struct fg_err err = {0};

		if (fg_metrics_start(opts->metrics_addr, opts->ifname, &metrics, &err))
			return fg_exit_report(&err);
	}
	ret = load_or_adopt(opts);
	if (ret) {
		sd_notifyf(0, "STATUS=cannot load on %s (exit %d)", opts->ifname, ret);
		fg_metrics_stop(metrics);
		return ret;
	}
	pr_warn("enforcing on %s%s%s\n", opts->ifname, metrics ? ", metrics on " : "",
		metrics ? opts->metrics_addr : "");
	sd_notifyf(0, "READY=1\nSTATUS=enforcing on %s\nMAINPID=%lu", opts->ifname,
		   (unsigned long)getpid());

	start_fleet(opts, &fleet);
	ret = serve(opts, &signals, &fleet);
	sd_notify(0, "STOPPING=1");
	fg_fleet_stop(fleet);
	fg_metrics_stop(metrics);
	if (ret == FG_EXIT_STATE)
		return FG_EXIT_OK; /* an explicit `floodgate unload` is a clean end */
	if (opts->keep) {
		pr_warn("--keep: floodgate stays loaded on %s ('floodgate unload %s' removes it)\n",
			opts->ifname, opts->ifname);
		return FG_EXIT_OK;
	}
	return fg_cmd_unload(opts->ifname);
}
