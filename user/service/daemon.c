// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate run`: floodgate as a service. It loads (or adopts the instance
 * already pinned on the interface), then waits for signals in the
 * foreground: SIGHUP reloads the config live, SIGTERM and SIGINT end it and
 * unload unless --keep. Meanwhile it keeps `own_addrs` current as the
 * host's addresses change (service/addrwatch.c). The datapath never
 * depends on this process: if it dies, the pinned program keeps enforcing
 * the last policy, and the next `run` adopts it. Readiness and the
 * watchdog go through sd_notify(3).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "attach/hook.h"
#include "base/clock.h"
#include "base/log.h"
#include "config/config.h"
#include "config/filemode.h"
#include "config/values.h"
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "ops/loader.h"
#include "policy/readback.h"
#include "service/addrwatch.h"
#include "service/daemon.h"
#include "service/crowdsec.h"
#include "service/fleet.h"
#include "service/metrics.h"

/* How often the loop wakes without a signal: to check that floodgate is
 * still loaded, and to feed the watchdog (at least twice per period). */
#define POLL_NS FG_NS_PER_S

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

/* Copies the active policy set. Returns 0, or -ENOENT when there is no
 * floodgate of this build's layout loaded (nothing to adopt or compare:
 * not an error of `run`'s), or the kernel's negative errno. */
static int open_policies(const char *ifname, struct fg_policy_set *set, struct fg_runtime *rt)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_err e = {0};
	int err = fg_open_loaded(ifname, &pinned, &e) ? -ENOENT : 0;

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

/* Logs a failed operation's message as the CLI shows it ("Error: ", but
 * for a config refusal, which names its FILE:LINE). */
static void log_failure(const struct fg_err *err)
{
	if (err->msg[0])
		pr_warn("%s%s\n", err->located ? "" : "Error: ", err->msg);
}

/* Reloads the config live and says what changed. On failure the running
 * policy stays, and the reason is logged (FILE:LINE: for a bad file). */
static int reload(const struct fg_run_opts *opts, struct fg_err *err)
{
	struct fg_policy_set *before = malloc(sizeof(*before));
	struct fg_policy_set *after = malloc(sizeof(*after));
	const char *path = opts->config_path ? opts->config_path : "the built-in policy";
	struct fg_reload_result res;
	bool known;
	int ret = -1;

	if (!before || !after) {
		fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the policies");
		goto out;
	}
	known = read_policies(opts->ifname, before, NULL);
	pr_warn("reloading %s on %s\n", path, opts->ifname);
	ret = fg_reload(opts->ifname, opts->config_path, &res, err);
	if (ret) {
		log_failure(err);
		pr_warn("reload of %s %s: the running policy stays\n", path,
			err->kind == FG_ERR_CONFIG ? "refused" : "failed");
		goto out;
	}
	if (!res.upgraded)
		pr_warn("floodgate policy on %s reloaded: %u policies\n", opts->ifname,
			res.n_policies);
	if (known && read_policies(opts->ifname, after, NULL))
		log_changes(before, after);
out:
	free(before);
	free(after);
	return ret;
}

static int load(const struct fg_run_opts *opts, struct fg_err *err)
{
	const struct fg_load_opts load = {.ifname = opts->ifname,
					  .config_path = opts->config_path,
					  .hook = -1,
					  .xdp_mode = -1};
	struct fg_load_result res;

	if (fg_load(&load, &res, err))
		return -1;
	if (!res.upgraded)
		pr_warn("floodgate loaded on %s (%s), %u policies\n", res.ifname,
			fg_hook_text(res.hook, res.xdp_mode), res.n_policies);
	return 0;
}

static int unload(const struct fg_run_opts *opts, struct fg_err *err)
{
	enum fg_unloaded how;

	if (fg_unload(opts->ifname, &how, err))
		return -1;
	pr_warn("floodgate unloaded from %s%s\n", opts->ifname, fg_unloaded_note(how));
	return 0;
}

/* Loads, or adopts a floodgate that is already attached to the interface
 * (after a crash, a kill -9 or an upgrade) and brings it to the config. */
static int load_or_adopt(const struct fg_run_opts *opts, struct fg_err *err)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_runtime rt;
	int ret = set ? open_policies(opts->ifname, set, &rt) : -ENOMEM;

	free(set);
	if (!ret && fg_still_attached(&rt)) {
		pr_warn("adopting floodgate already loaded on %s (program id %u, generation "
			"%llu)\n",
			opts->ifname, rt.prog_id, (unsigned long long)rt.generation);
		if (!reload(opts, err))
			return 0;
		err->msg[0] = '\0'; /* logged by reload(): the kind alone remains */
		return -1;
	}
	if (!ret) {
		/* Pins without a program (the interface was recreated):
		 * start over. */
		pr_warn("floodgate's pins on %s have no attached program: loading afresh\n",
			opts->ifname);
		if (unload(opts, err))
			return -1;
	} else if (ret == -EPROTO) {
		/* Another build's layout: load takes over from it. */
		pr_warn("floodgate on %s has another map layout: upgrading it\n", opts->ifname);
	} else if (ret != -ENOENT) {
		return fg_fail(err, FG_ERR_SYSTEM, "the maps pinned for %s cannot be adopted (%s)",
			       opts->ifname, strerror(-ret));
	}
	return load(opts, err);
}

/* Starts the fleet sync when the config has a [fleet] section, and the
 * CrowdSec bouncer when it has a [crowdsec] one; each stays NULL
 * otherwise. The config has been checked by the load or reload that
 * precedes this. */
static void start_syncs(const struct fg_run_opts *opts, struct fg_fleet **fleet,
			struct fg_crowdsec **crowdsec)
{
	struct fg_config *cfg = malloc(sizeof(*cfg));
	struct fg_err why;
	int err;

	*fleet = NULL;
	*crowdsec = NULL;
	fg_fleet_disown(opts->ifname); /* what a killed `run` left; a [fleet] sets it again */
	/* Read as trusted, like every config: the name may point elsewhere by now. */
	if (!cfg || !opts->config_path || fg_config_read(opts->config_path, cfg, &why)) {
		free(cfg);
		return;
	}
	err = cfg->fleet.enabled ? fg_fleet_start(opts->ifname, &cfg->fleet, fleet) : 0;
	if (err)
		pr_warn("Error: cannot start the fleet sync on %s: %s (the local limits hold)\n",
			opts->ifname, strerror(-err));
	err = cfg->crowdsec.enabled ? fg_crowdsec_start(opts->ifname, &cfg->crowdsec, crowdsec) : 0;
	if (err)
		pr_warn("Error: cannot start the CrowdSec bouncer on %s: %s\n", opts->ifname,
			strerror(-err));
	free(cfg);
}

static void stop_syncs(struct fg_fleet *fleet, struct fg_crowdsec *crowdsec)
{
	fg_fleet_stop(fleet);
	fg_crowdsec_stop(crowdsec);
}

static bool still_loaded(const char *ifname)
{
	char pin_dir[PATH_MAX];

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	return !access(pin_dir, F_OK);
}

enum fg_run_end {
	FG_RUN_STOPPED,	 /* SIGTERM or SIGINT */
	FG_RUN_UNLOADED, /* floodgate was unloaded by someone else */
};

/* Waits up to `timeout_ms` for a signal (read from `sig_fd`, a signalfd
 * of the blocked ones), following the host's addresses meanwhile. Returns
 * the signal, or 0. */
static int wait_signal(int sig_fd, struct fg_addr_watch *addrs, int timeout_ms)
{
	struct pollfd fds[2] = {{.fd = sig_fd, .events = POLLIN},
				{.fd = fg_addr_watch_fd(addrs), .events = POLLIN}};
	struct signalfd_siginfo info;

	if (poll(fds, 2, timeout_ms) <= 0)
		return 0;
	if (fds[1].revents)
		fg_addr_watch_drain(addrs);
	if ((fds[0].revents & POLLIN) && read(sig_fd, &info, sizeof(info)) == sizeof(info))
		return (int)info.ssi_signo;
	return 0;
}

/* Waits for signals; returns when told to stop, or when floodgate was
 * unloaded behind our back (then there is nothing left to serve). A
 * reload that fails leaves the running policy, and the service, as they
 * were. */
static enum fg_run_end serve(const struct fg_run_opts *opts, int sig_fd,
			     struct fg_addr_watch *addrs, struct fg_fleet **fleet,
			     struct fg_crowdsec **crowdsec)
{
	uint64_t poll_ns = POLL_NS, watchdog_usec = 0;

	if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec / 2 * 1000 < POLL_NS)
		poll_ns = watchdog_usec / 2 * FG_NS_PER_US;
	for (;;) {
		int sig = wait_signal(sig_fd, addrs, (int)(poll_ns / FG_NS_PER_MS));
		struct fg_err err = {0};

		if (sig == SIGTERM || sig == SIGINT) {
			pr_warn("%s received: stopping\n", strsignal(sig));
			return FG_RUN_STOPPED;
		}
		if (sig == SIGHUP) {
			sd_notify(0, "RELOADING=1");
			if (!reload(opts, &err)) {
				/* [fleet] and [crowdsec] may have changed with the rest. */
				stop_syncs(*fleet, *crowdsec);
				start_syncs(opts, fleet, crowdsec);
			}
			sd_notifyf(0, "READY=1\nSTATUS=enforcing on %s", opts->ifname);
		}
		if (!still_loaded(opts->ifname)) {
			pr_warn("floodgate was unloaded from %s by someone else: exiting\n",
				opts->ifname);
			return FG_RUN_UNLOADED;
		}
		sd_notify(0, "WATCHDOG=1");
	}
}

/* Blocked from the start: a signal during the load waits for serve().
 * SIGPIPE is ignored: hiredis 0.14 writes to Redis with plain write(), and
 * a Redis that restarts would otherwise kill the service with its first
 * write to the dead connection; the write fails with EPIPE instead, and
 * the fleet sync reconnects. The metrics server's sockets are covered too. */
static void block_signals(sigset_t *signals)
{
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(signals);
	sigaddset(signals, SIGHUP);
	sigaddset(signals, SIGTERM);
	sigaddset(signals, SIGINT);
	sigprocmask(SIG_BLOCK, signals, NULL);
}

int fg_run(const struct fg_run_opts *opts, struct fg_err *err)
{
	struct fg_metrics *metrics = NULL;
	struct fg_addr_watch *addrs = NULL;
	struct fg_fleet *fleet = NULL;
	struct fg_crowdsec *crowdsec = NULL;
	struct fg_err watch_err = {0};
	enum fg_run_end end;
	sigset_t signals;
	int sig_fd;

	fg_log_journal = stderr_is_journal();
	block_signals(&signals);
	sig_fd = signalfd(-1, &signals, SFD_CLOEXEC);
	if (sig_fd < 0)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot wait for signals: %s", strerror(errno));
	/* The endpoint first: an address in use must fail before anything
	 * on the system changes. */
	if (opts->metrics_addr &&
	    fg_metrics_start(opts->metrics_addr, opts->ifname, &metrics, err)) {
		close(sig_fd);
		return -1;
	}
	if (load_or_adopt(opts, err)) {
		sd_notifyf(0, "STATUS=cannot load on %s", opts->ifname);
		fg_metrics_stop(metrics);
		close(sig_fd);
		return -1;
	}
	if (fg_addr_watch_start(opts->ifname, &addrs, &watch_err))
		pr_warn("Error: %s (own_addrs keeps the addresses of the load)\n", watch_err.msg);
	pr_warn("enforcing on %s%s%s\n", opts->ifname, metrics ? ", metrics on " : "",
		metrics ? opts->metrics_addr : "");
	sd_notifyf(0, "READY=1\nSTATUS=enforcing on %s\nMAINPID=%lu", opts->ifname,
		   (unsigned long)getpid());

	start_syncs(opts, &fleet, &crowdsec);
	end = serve(opts, sig_fd, addrs, &fleet, &crowdsec);
	sd_notify(0, "STOPPING=1");
	close(sig_fd);
	fg_addr_watch_stop(addrs);
	stop_syncs(fleet, crowdsec);
	fg_metrics_stop(metrics);
	if (end == FG_RUN_UNLOADED)
		return 0; /* an explicit `floodgate unload` is a clean end */
	if (opts->keep) {
		pr_warn("--keep: floodgate stays loaded on %s ('floodgate unload %s' removes it)\n",
			opts->ifname, opts->ifname);
		return 0;
	}
	return unload(opts, err);
}
