// SPDX-License-Identifier: GPL-2.0-only
/* `load` (and `check`): builds the pins in a staging folder, attaches,
 * records the attachment and renames the folder into place. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach/attachment.h"
#include "attach/hook.h"
#include "attach/synproxy_nft.h"
#include "attach/xdp_ext.h"
#include "base/log.h"
#include "base/sys.h"
#include "config/config.h"
#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "maps/pinned.h"
#include "maps/skeleton.h"
#include "ops/banstore.h"
#include "ops/hostscope.h"
#include "ops/loader.h"
#include "ops/ownaddrs.h"
#include "ops/steps.h"
#include "maps/runtime.h"
#include "ops/upgrade.h"
#include "policy/policy.h"

/* An attach refused for want of support is the environment's; the rest is
 * the system's. */
static enum fg_err_kind attach_fault(int ret)
{
	return ret == -EOPNOTSUPP ? FG_ERR_ENV : FG_ERR_SYSTEM;
}

/*
 * Creates and pins the maps and fills them before any program is attached,
 * so the first packet already meets the configured policy. The programs are
 * loaded afterwards by a second open that reuses the pinned maps.
 */
static int create_maps(const char *pin_dir, const struct fg_config *cfg,
		       const struct fg_compiled *compiled, const struct fg_runtime *rt, int host_fd,
		       struct fg_err *err)
{
	const struct fg_skel_opts opts = {
		.pin_dir = pin_dir,
		.progs = FG_SKEL_MAPS_ONLY,
		.host_fd = host_fd > 0 ? host_fd : 0,
	};
	struct floodgate_bpf *skel;
	int ret = fg_skel_prepare(cfg, &opts, compiled, rt, &skel);

	floodgate_bpf__destroy(skel);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "cannot create the maps and write the policy: %s", strerror(-ret));
	return 0;
}

static int attach_tc(struct floodgate_bpf *skel, struct fg_runtime *rt, struct fg_err *err)
{
	const struct fg_tc_place place = fg_step_tc_place(NULL);
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = rt->ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = place.handle, .priority = place.priority);
	int ret = floodgate_bpf__load(skel);

	if (ret)
		return fg_fail(err, attach_fault(ret), "cannot load the tc program: %s",
			       strerror(-ret));
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST)
		return fg_fail(err, attach_fault(ret), "cannot create the clsact qdisc: %s",
			       strerror(-ret));
	rt->tc_owns_qdisc = !ret;
	opts.prog_fd = bpf_program__fd(skel->progs.fg_tc);
	ret = bpf_tc_attach(&hook, &opts);
	if (ret) {
		fg_fail(err, attach_fault(ret), "cannot attach to tc ingress: %s", strerror(-ret));
		if (rt->tc_owns_qdisc)
			bpf_tc_hook_destroy(&hook);
		return -1;
	}
	rt->prog_id = opts.prog_id;
	rt->tc_handle = place.handle;
	rt->tc_priority = place.priority;
	return 0;
}

/*
 * A complete pin folder met by `load`: floodgate is already loaded when a
 * program uses its maps (here or in another network namespace); otherwise
 * the pins are stale (the program went with its interface, or an unload
 * died half-way) and are removed.
 */
static int check_existing(const char *ifname, unsigned int ifindex, const char *pin_dir,
			  struct fg_err *err)
{
	struct fg_pin_ids ids;
	struct fg_tc_place tc;
	__u32 user;

	if (fg_step_inspect_pins(pin_dir, &ids, &tc, err))
		return -1;
	fg_xdp_clear_stale_dispatchers(&ids);
	/* Detached, our program leaves its SYN proxy in the prog arrays. */
	if (!fg_find_attached(ifindex, &ids, &tc))
		fg_pinned_empty_prog_arrays(pin_dir);
	user = fg_pins_in_use(&ids);
	if (user && fg_find_attached(ifindex, &ids, &tc))
		return fg_fail(
			err, FG_ERR_STATE,
			"floodgate is already loaded on %s (use 'floodgate reload' to change "
			"its policy, or unload it first)",
			ifname);
	if (user)
		return fg_fail(err, FG_ERR_STATE,
			       "the maps pinned in %s are in use by BPF program %u, which is not "
			       "attached to %s here; left in place",
			       pin_dir, user, ifname);
	pr_warn("Note: removing stale pins in %s: no program uses them any more\n", pin_dir);
	if (fg_pinned_remove(pin_dir))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot remove %s: %s", pin_dir,
			       strerror(errno));
	return 0;
}

/* The host's own state in the maps of `pin_dir`, before the program sees
 * a packet: its addresses (never banned) and the bans by hand of the state
 * file (a bad file fails the load). */
static int restore_host_state(const char *ifname, const char *pin_dir, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	int ret, marked;

	if (fg_pinned_open(pin_dir, &pinned, err))
		return -1;
	ret = fg_own_addrs_sync(pinned.own_addrs, err);
	if (!ret)
		ret = fg_banstore_restore(ifname, pinned.bans, err);
	/* Before the program sees a packet: bans restored or carried. */
	marked = ret ? 0 : fg_runtime_mark_bans_if_any(pinned.maps.runtime, pinned.bans);
	if (marked)
		ret = fg_fail(err, FG_ERR_SYSTEM, "cannot mark the runtime record for bans: %s",
			      strerror(-marked));
	fg_pinned_close(&pinned);
	return ret;
}

/* Opens the object on the staging folder's maps and attaches its program
 * at rt's hook, filling in what rt records of the attachment. */
static int attach_staged(const char *stage, const struct fg_config *cfg, struct fg_runtime *rt,
			 struct fg_err *err)
{
	struct floodgate_bpf *skel;
	int ret;

	skel = fg_skel_open(cfg, &(struct fg_skel_opts){.pin_dir = stage, .progs = rt->hook});
	if (!skel)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot open the BPF object: %s",
			       strerror(errno));
	if (rt->hook == FG_HOOK_XDP)
		ret = fg_attach_xdp(skel, rt->ifindex, rt->xdp_mode, &rt->prog_id, err);
	else
		ret = attach_tc(skel, rt, err);
	/* The object is loaded only by the attach. Until the proxy is in
	 * its prog array, fg_process judges the port's packets itself and
	 * nftables answers their SYNs: nothing is refused meanwhile. */
	if (!ret) {
		ret = fg_skel_link_synproxy(skel);
		if (ret)
			fg_fail(err, FG_ERR_SYSTEM,
				"cannot put the SYN proxy in its prog array: %s", strerror(-ret));
	}
	floodgate_bpf__destroy(skel);
	return ret ? -1 : 0;
}

/*
 * Builds the pins in the staging folder, attaches, records the attachment,
 * then renames the folder into place: whatever step a crash interrupts,
 * the folder at fg_pin_dir() is either absent or complete, and a staging
 * folder is an interrupted load's (fg_step_clear_staging). FG_TEST_DIE_AT
 * names the steps for the tests. scope = host: host_sources is the host's
 * table `host_fd` when there is one, else the new one is pinned as the
 * host's before anything is attached (a crash leaves it to
 * fg_host_collect).
 */
static int stage_and_attach(const char *ifname, const struct fg_config *cfg,
			    const struct fg_compiled *compiled, struct fg_runtime *rt, int host_fd,
			    struct fg_err *err)
{
	char stage[PATH_MAX], pin_dir[PATH_MAX];
	int ret;

	fg_stage_dir(ifname, stage, sizeof(stage));
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (mkdir(stage, 0700))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot create %s: %s", stage, strerror(errno));
	fg_test_die_at("staged");
	if (create_maps(stage, cfg, compiled, rt, host_fd, err) ||
	    fg_host_publish(stage, cfg, err) || restore_host_state(ifname, stage, err))
		return -1;
	fg_test_die_at("maps");
	/* Before the proxy answers a SYN, the rules that complete its
	 * handshakes; a failed or interrupted load takes them away with the
	 * staging folder (fg_step_clear_staging). */
	if (cfg->synproxy.enabled && fg_synproxy_nft_install(ifname, &cfg->synproxy, err))
		return -1;
	fg_test_die_at("nftables");
	if (attach_staged(stage, cfg, rt, err))
		return -1;
	fg_test_die_at("attached");
	ret = fg_pinned_update_runtime(stage, rt);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot record the attachment: %s",
			       strerror(-ret));
	fg_test_die_at("recorded");
	if (rename(stage, pin_dir))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot rename %s to %s: %s", stage, pin_dir,
			       strerror(errno));
	fg_test_die_at("renamed");
	return 0;
}

/* What the load records of its settings and of where it runs. */
static void load_runtime(const struct fg_load_opts *opts, const struct fg_config *cfg,
			 struct fg_runtime *rt)
{
	memset(rt, 0, sizeof(*rt));
	fg_runtime_record_config(rt, cfg);
	rt->hook = opts->hook >= 0 ? opts->hook : cfg->hook;
	rt->xdp_mode = opts->xdp_mode >= 0 ? opts->xdp_mode : cfg->xdp_mode;
	rt->loaded_at = time(NULL);
	rt->netns_ino = fg_netns_inode();
}

/* Under the lock: clears an interrupted load, checks a complete folder,
 * finds the host's table (scope = host), then loads. */
static int load_locked(const char *ifname, const char *path, const struct fg_config *cfg,
		       const struct fg_compiled *compiled, struct fg_runtime *rt,
		       struct fg_err *err)
{
	char pin_dir[PATH_MAX];
	int host_fd = -1, ret;
	bool found;

	if (fg_step_clear_staging(ifname, rt->ifindex, NULL, &found, err))
		return -1;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK) && check_existing(ifname, rt->ifindex, pin_dir, err))
		return -1;
	/* What a crash or the removals above left unused goes first. */
	fg_host_collect();
	if (fg_host_prepare(ifname, path, cfg, compiled, &host_fd, err))
		return -1;
	ret = stage_and_attach(ifname, cfg, compiled, rt, host_fd, err);
	if (ret) {
		struct fg_err ignored = {0};

		fg_step_clear_staging(ifname, rt->ifindex, rt, &found, &ignored);
		fg_host_collect();
	}
	if (host_fd >= 0)
		close(host_fd);
	return ret;
}

/* Parses and compiles the config, then finds the interface and takes the
 * pin folder's lock (*lock_fd). */
static int load_prepare(const struct fg_load_opts *opts, struct fg_config *cfg,
			struct fg_compiled **compiled, struct fg_runtime *rt, int *lock_fd,
			struct fg_load_result *res, struct fg_err *err)
{
	const char *ifname;

	if (fg_step_parse_config(opts->config_path, cfg, err))
		return -1;
	ifname = opts->ifname ? opts->ifname : cfg->interface;
	if (!ifname[0])
		return fg_fail(err, FG_ERR_USAGE, "no interface given, and the config sets none");
	snprintf(res->ifname, sizeof(res->ifname), "%s", ifname);
	load_runtime(opts, cfg, rt);
	if (fg_step_compile(cfg, opts->config_path, 0, compiled, err) ||
	    fg_step_check_environment(ifname, cfg, &rt->ifindex, err))
		return -1;
	*lock_fd = fg_step_lock(err);
	return *lock_fd < 0 ? -1 : 0;
}

int fg_load(const struct fg_load_opts *opts, struct fg_load_result *res, struct fg_err *err)
{
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	char pin_dir[PATH_MAX];
	struct fg_runtime rt;
	int lock_fd = -1, ret = -1;

	memset(res, 0, sizeof(*res));
	if (!cfg)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
	if (load_prepare(opts, cfg, &compiled, &rt, &lock_fd, res, err))
		goto out;
	res->n_policies = cfg->n_policies;
	fg_pin_dir(res->ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK) && fg_upgrade_needed(pin_dir, cfg)) {
		/* Another build's layout: take over from it (ops/upgrade.c). */
		res->upgraded = true;
		ret = fg_step_synproxy_before_swap(res->ifname, cfg, err);
		if (!ret)
			ret = fg_upgrade(res->ifname, pin_dir, cfg, compiled, err);
		if (!ret)
			ret = fg_step_synproxy_after_swap(res->ifname, cfg, err);
		if (!ret)
			ret = restore_host_state(res->ifname, pin_dir, err);
		goto out;
	}
	ret = load_locked(res->ifname, opts->config_path, cfg, compiled, &rt, err);
	res->hook = rt.hook;
	res->xdp_mode = rt.xdp_mode;
out:
	if (lock_fd >= 0)
		close(lock_fd);
	fg_compiled_free(compiled);
	free(cfg);
	return ret;
}

const char *fg_hook_text(__u32 hook, __u32 xdp_mode)
{
	if (hook != FG_HOOK_XDP)
		return "tc ingress";
	return xdp_mode == FG_XDP_GENERIC ? "xdp generic" : "xdp native";
}

int fg_check_config(const char *config_path, unsigned int *n_policies, struct fg_err *err)
{
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	int ret;

	if (!cfg)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
	ret = fg_step_parse_config(config_path, cfg, err);
	if (!ret)
		ret = fg_step_compile(cfg, config_path, 0, &compiled, err);
	*n_policies = cfg->n_policies;
	fg_compiled_free(compiled);
	free(cfg);
	return ret;
}
