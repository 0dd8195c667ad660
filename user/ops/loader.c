// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "attach/attachment.h"
#include "attach/hook.h"
#include "base/sys.h"
#include "maps/loaded.h"
#include "config/config.h"
#include "config/filemode.h"
#include "floodgate.skel.h"
#include "ops/hostscope.h"
#include "ops/loader.h"
#include "base/log.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "policy/policy.h"
#include "maps/skeleton.h"
#include "ops/upgrade.h"
#include "attach/xdp_ext.h"

#define FG_TC_HANDLE   0xf100
#define FG_TC_PRIORITY 1

static int check_environment(const char *ifname, unsigned int *ifindex)
{
	if (geteuid() != 0) {
		pr_warn("Error: floodgate must run as root (it loads BPF programs)\n");
		return FG_EXIT_ENV;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_warn("Error: this kernel has no BTF (/sys/kernel/btf/vmlinux); "
			"floodgate needs CONFIG_DEBUG_INFO_BTF=y and Linux >= 5.15\n");
		return FG_EXIT_ENV;
	}
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		pr_warn("Error: unknown interface '%s'\n", ifname);
		return FG_EXIT_ENV;
	}
	return FG_EXIT_OK;
}

static int prepare_state_change(const char *ifname, unsigned int *ifindex, int *lock_fd)
{
	int ret = check_environment(ifname, ifindex);
	struct fg_err err = {0};

	if (ret)
		return ret;
	if (fg_pinfolder_prepare(&err))
		return fg_exit_report(&err);
	*lock_fd = fg_pinfolder_lock(&err);
	return *lock_fd < 0 ? fg_exit_report(&err) : FG_EXIT_OK;
}

static int parse_config(const char *path, struct fg_config *cfg)
{
	int err;

	if (path && fg_config_check_owner(path))
		return FG_EXIT_CONFIG;
	err = path ? fg_config_parse_file(path, cfg, stderr)
		   : fg_config_parse_string("<default>", fg_default_config, cfg, stderr);

	return err ? FG_EXIT_CONFIG : FG_EXIT_OK;
}

static int compile_config(const struct fg_config *cfg, const char *path, __u32 slot,
			  struct fg_compiled **out)
{
	int err;

	*out = malloc(sizeof(**out));
	if (!*out) {
		pr_warn("Error: out of memory compiling the policies\n");
		return FG_EXIT_FAILURE;
	}
	err = fg_policy_compile(cfg, slot, *out);
	if (err == -E2BIG) {
		pr_warn("%s: the policies' source CIDRs need more than %d trie entries\n",
			path ? path : "<default>", FG_MAX_SRC_PREFIXES);
		return FG_EXIT_CONFIG;
	}
	/* The parser bounds every value, so this is a rate, burst or ban the
	 * parser let through and the algorithm's params cannot hold. */
	if (err)
		pr_warn("Error: %s: cannot compile the policies into the datapath's parameters: "
			"%s (please report this with the config)\n",
			path ? path : "<default>", strerror(-err));
	return err ? FG_EXIT_FAILURE : FG_EXIT_OK;
}

/*
 * Creates and pins the maps and fills them before any program is attached,
 * so the first packet already meets the configured policy. The programs are
 * loaded afterwards by a second open that reuses the pinned maps.
 */
static int create_maps(const char *pin_dir, const struct fg_config *cfg,
		       const struct fg_compiled *compiled, const struct fg_runtime *rt, int host_fd)
{
	const struct fg_skel_opts opts = {
		.pin_dir = pin_dir,
		.progs = FG_SKEL_MAPS_ONLY,
		.host_fd = host_fd > 0 ? host_fd : 0,
	};
	struct floodgate_bpf *skel;
	int err = fg_skel_prepare(cfg, &opts, compiled, rt, &skel);

	if (err)
		pr_warn("Error: cannot create the maps and write the policy: %s\n", strerror(-err));
	floodgate_bpf__destroy(skel);
	return err;
}

static int attach_tc(struct floodgate_bpf *skel, unsigned int ifindex, struct fg_runtime *rt)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = FG_TC_HANDLE, .priority = FG_TC_PRIORITY);
	int err = floodgate_bpf__load(skel);

	if (err) {
		pr_warn("Error: cannot load the tc program: %s\n", strerror(-err));
		return err;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_warn("Error: cannot create the clsact qdisc: %s\n", strerror(-err));
		return err;
	}
	rt->tc_owns_qdisc = !err;
	opts.prog_fd = bpf_program__fd(skel->progs.fg_tc);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_warn("Error: cannot attach to tc ingress: %s\n", strerror(-err));
		if (rt->tc_owns_qdisc)
			bpf_tc_hook_destroy(&hook);
		return err;
	}
	rt->prog_id = opts.prog_id;
	rt->tc_handle = FG_TC_HANDLE;
	rt->tc_priority = FG_TC_PRIORITY;
	return 0;
}

/* Where floodgate's tc filter is: as recorded, or where it always goes. */
static struct fg_tc_place tc_place_of(const struct fg_runtime *rt)
{
	struct fg_tc_place tc = {.handle = FG_TC_HANDLE, .priority = FG_TC_PRIORITY};

	if (rt && rt->tc_handle) {
		tc.handle = rt->tc_handle;
		tc.priority = rt->tc_priority;
		tc.owns_qdisc = rt->tc_owns_qdisc;
	}
	return tc;
}

/* The program, if any, that still uses the pins. A tc filter releases its
 * program after an RCU grace period, so a program just detached may linger
 * for a moment: wait for it, within a bound. Our own process holds no
 * skeleton here, so a program fd libxdp left open in it is closed. */
static __u32 pins_user_after_detach(const struct fg_pin_ids *ids)
{
	const struct timespec pause = {.tv_nsec = 20 * 1000 * 1000};
	__u32 user;
	int tries;

	fg_xdp_clear_stale_dispatchers(ids);
	user = fg_pins_in_use(ids);

	for (tries = 0; user && tries < 100; tries++) {
		fg_close_own_prog_fds(user);
		nanosleep(&pause, NULL);
		user = fg_pins_in_use(ids);
	}
	return user;
}

/*
 * Removes what an interrupted load left in the staging folder: the program
 * that uses its maps, if it got attached (at any step), then the pins.
 * `rt`, when known, says where a tc filter went. *found says whether there
 * was anything. Returns an exit code.
 */
static int clear_staging(const char *ifname, unsigned int ifindex, const struct fg_runtime *rt,
			 bool *found)
{
	const struct fg_tc_place tc = tc_place_of(rt);
	char stage[PATH_MAX];
	struct fg_pin_ids ids;
	struct fg_err err = {0};
	__u32 user;

	fg_stage_dir(ifname, stage, sizeof(stage));
	*found = !access(stage, F_OK);
	if (!*found)
		return FG_EXIT_OK;
	if (fg_pinfolder_check_owned(stage, &err))
		return fg_exit_report(&err);
	if (fg_pin_ids_read(stage, &ids)) {
		pr_warn("Error: cannot read %s: %s\n", stage, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	if (ifindex && ids.n && fg_detach_ours(ifindex, &ids, &tc) < 0)
		return FG_EXIT_FAILURE;
	user = pins_user_after_detach(&ids);
	if (user) {
		pr_warn("Error: %s, left by an interrupted load, is in use by BPF program %u, "
			"which is not attached to %s here (a load in another network "
			"namespace?): run 'floodgate unload %s' there\n",
			stage, user, ifname, ifname);
		return FG_EXIT_STATE;
	}
	if (fg_pinned_remove(stage)) {
		pr_warn("Error: cannot remove %s: %s\n", stage, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	pr_info("removed %s, left by an interrupted load\n", stage);
	return FG_EXIT_OK;
}

/* What a complete pin folder holds: the ids of its maps and where its tc
 * filter would be. Refuses a folder another user could have made, and pins
 * of another network namespace. Returns an exit code. */
static int inspect_pins(const char *pin_dir, struct fg_pin_ids *ids, struct fg_tc_place *tc)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_err open_err = {0};
	int err;

	if (fg_pinfolder_check_owned(pin_dir, &open_err))
		return fg_exit_report(&open_err);
	err = fg_pinned_open(pin_dir, &pinned, &open_err);
	fg_pinned_close(&pinned);
	if (err == -EXDEV)
		return fg_exit_report(&open_err);
	*tc = tc_place_of(err ? NULL : &pinned.rt);
	if (fg_pin_ids_read(pin_dir, ids)) {
		pr_warn("Error: cannot read %s: %s\n", pin_dir, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	return FG_EXIT_OK;
}

/*
 * A complete pin folder met by `load`: floodgate is already loaded when a
 * program uses its maps (here or in another network namespace); otherwise
 * the pins are stale (the program went with its interface, or an unload
 * died half-way) and are removed.
 */
static int check_existing(const char *ifname, unsigned int ifindex, const char *pin_dir)
{
	struct fg_pin_ids ids;
	struct fg_tc_place tc;
	int ret = inspect_pins(pin_dir, &ids, &tc);
	__u32 user;

	if (ret)
		return ret;
	fg_xdp_clear_stale_dispatchers(&ids);
	user = fg_pins_in_use(&ids);
	if (user && fg_find_attached(ifindex, &ids, &tc)) {
		pr_warn("Error: floodgate is already loaded on %s "
			"(use 'floodgate reload' to change its policy, or unload it first)\n",
			ifname);
		return FG_EXIT_STATE;
	}
	if (user) {
		pr_warn("Error: the maps pinned in %s are in use by BPF program %u, which is not "
			"attached to %s here; left in place\n",
			pin_dir, user, ifname);
		return FG_EXIT_STATE;
	}
	pr_warn("Note: removing stale pins in %s: no program uses them any more\n", pin_dir);
	if (fg_pinned_remove(pin_dir)) {
		pr_warn("Error: cannot remove %s: %s\n", pin_dir, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	return FG_EXIT_OK;
}

/*
 * Builds the pins in the staging folder, attaches, records the attachment,
 * then renames the folder into place: whatever step a crash interrupts,
 * the folder at fg_pin_dir() is either absent or complete, and a staging
 * folder is an interrupted load's (clear_staging). FG_TEST_DIE_AT names
 * the steps for the tests. scope = host: host_sources is the host's table
 * `host_fd` when there is one, else the new one is pinned as the host's
 * before anything is attached (a crash leaves it to fg_host_collect).
 */
static int stage_and_attach(const char *ifname, const struct fg_config *cfg,
			    const struct fg_compiled *compiled, struct fg_runtime *rt, int host_fd)
{
	char stage[PATH_MAX], pin_dir[PATH_MAX];
	struct floodgate_bpf *skel;
	int err;

	fg_stage_dir(ifname, stage, sizeof(stage));
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (mkdir(stage, 0700)) {
		pr_warn("Error: cannot create %s: %s\n", stage, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	fg_test_die_at("staged");
	if (create_maps(stage, cfg, compiled, rt, host_fd) || fg_host_publish(stage, cfg))
		return FG_EXIT_FAILURE;
	fg_test_die_at("maps");
	skel = fg_skel_open(cfg, &(struct fg_skel_opts){.pin_dir = stage, .progs = rt->hook});
	if (!skel) {
		pr_warn("Error: cannot open the BPF object: %s\n", strerror(errno));
		return FG_EXIT_FAILURE;
	}
	if (rt->hook == FG_HOOK_XDP)
		err = fg_attach_xdp(skel, rt->ifindex, rt->xdp_mode, &rt->prog_id);
	else
		err = attach_tc(skel, rt->ifindex, rt);
	floodgate_bpf__destroy(skel);
	if (err)
		return err == -EOPNOTSUPP ? FG_EXIT_ENV : FG_EXIT_FAILURE;
	fg_test_die_at("attached");
	err = fg_pinned_update_runtime(stage, rt);
	if (err) {
		pr_warn("Error: cannot record the attachment: %s\n", strerror(-err));
		return FG_EXIT_FAILURE;
	}
	fg_test_die_at("recorded");
	if (rename(stage, pin_dir)) {
		pr_warn("Error: cannot rename %s to %s: %s\n", stage, pin_dir, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	fg_test_die_at("renamed");
	return FG_EXIT_OK;
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
		       const struct fg_compiled *compiled, struct fg_runtime *rt)
{
	char pin_dir[PATH_MAX];
	int host_fd = -1;
	bool found;
	int ret = clear_staging(ifname, rt->ifindex, NULL, &found);

	if (ret)
		return ret;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK)) {
		ret = check_existing(ifname, rt->ifindex, pin_dir);
		if (ret)
			return ret;
	}
	/* What a crash or the removals above left unused goes first. */
	fg_host_collect();
	ret = fg_host_prepare(ifname, path, cfg, compiled, &host_fd);
	if (ret)
		return ret;
	ret = stage_and_attach(ifname, cfg, compiled, rt, host_fd);
	if (ret) {
		clear_staging(ifname, rt->ifindex, rt, &found);
		fg_host_collect();
	}
	if (host_fd >= 0)
		close(host_fd);
	return ret;
}

int fg_cmd_load(const struct fg_load_opts *opts)
{
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	char pin_dir[PATH_MAX];
	struct fg_runtime rt;
	const char *ifname;
	unsigned int ifindex;
	int lock_fd = -1, ret;

	if (!cfg)
		return FG_EXIT_FAILURE;
	ret = parse_config(opts->config_path, cfg);
	if (ret)
		goto out;
	ifname = opts->ifname ? opts->ifname : cfg->interface;
	if (!ifname[0]) {
		pr_warn("Error: no interface given, and the config sets none\n");
		ret = FG_EXIT_USAGE;
		goto out;
	}
	load_runtime(opts, cfg, &rt);
	ret = compile_config(cfg, opts->config_path, 0, &compiled);
	if (!ret)
		ret = prepare_state_change(ifname, &ifindex, &lock_fd);
	if (ret)
		goto out;
	rt.ifindex = ifindex;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK) && fg_upgrade_needed(pin_dir)) {
		/* Another build's layout: take over from it (user/upgrade.c). */
		ret = fg_upgrade(ifname, pin_dir, cfg, compiled);
		goto out;
	}
	ret = load_locked(ifname, opts->config_path, cfg, compiled, &rt);
	if (!ret)
		printf("floodgate loaded on %s (%s%s), %u policies\n", ifname,
		       rt.hook == FG_HOOK_XDP ? "xdp" : "tc",
		       rt.hook == FG_HOOK_XDP
			       ? (rt.xdp_mode == FG_XDP_GENERIC ? " generic" : " native")
			       : " ingress",
		       cfg->n_policies);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	free(compiled);
	free(cfg);
	return ret;
}

/*
 * Detaches the program that uses the folder's maps (found by what it is,
 * whatever the record says), then removes the pins. Refuses pins of
 * another network namespace, and pins still in use by a program that is
 * not attached here.
 */
static int unload_pins(const char *ifname, unsigned int ifindex, const char *pin_dir)
{
	struct fg_pin_ids ids;
	struct fg_tc_place tc;
	int ret = inspect_pins(pin_dir, &ids, &tc), detached = 0;
	__u32 user;

	if (ret)
		return ret;
	/* An interface that is gone took our program with it. */
	if (ifindex && ids.n)
		detached = fg_detach_ours(ifindex, &ids, &tc);
	if (detached < 0)
		return FG_EXIT_FAILURE;
	user = pins_user_after_detach(&ids);
	if (user) {
		pr_warn("Error: BPF program %u still uses the maps pinned in %s but is not "
			"attached to %s here: nothing unloaded\n",
			user, pin_dir, ifname);
		return FG_EXIT_STATE;
	}
	fg_test_die_at("unload-detached");
	if (fg_pinned_remove(pin_dir)) {
		pr_warn("Error: cannot remove %s: %s\n", pin_dir, strerror(errno));
		return FG_EXIT_FAILURE;
	}
	printf("floodgate unloaded from %s%s\n", ifname,
	       detached ? "" : " (its program was no longer attached: pins removed)");
	return FG_EXIT_OK;
}

/* No pins: detaches a floodgate program whose pins were lost (an orphan),
 * found by its name. */
static int unload_orphan(const char *ifname, unsigned int ifindex)
{
	const struct fg_pin_ids by_name = {.n = 0};
	const struct fg_tc_place tc = tc_place_of(NULL);
	int detached = ifindex ? fg_detach_ours(ifindex, &by_name, &tc) : 0;

	if (detached < 0)
		return FG_EXIT_FAILURE;
	if (!detached) {
		struct fg_err err = {0};

		fg_fail(&err, FG_ERR_STATE, "floodgate is not loaded on %s", ifname);
		fg_pinfolder_explain_missing(&err);
		return fg_exit_report(&err);
	}
	printf("floodgate unloaded from %s (an orphaned floodgate program, whose pins were "
	       "gone)\n",
	       ifname);
	return FG_EXIT_OK;
}

int fg_cmd_unload(const char *ifname)
{
	unsigned int ifindex = if_nametoindex(ifname);
	char pin_dir[PATH_MAX];
	struct fg_err err = {0};
	int lock_fd, ret;
	bool cleared;

	if (geteuid() != 0) {
		pr_warn("Error: floodgate must run as root (it loads BPF programs)\n");
		return FG_EXIT_ENV;
	}
	if (fg_pinfolder_prepare(&err))
		return fg_exit_report(&err);
	lock_fd = fg_pinfolder_lock(&err);
	if (lock_fd < 0)
		return fg_exit_report(&err);
	ret = clear_staging(ifname, ifindex, NULL, &cleared);
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!ret && !access(pin_dir, F_OK))
		ret = unload_pins(ifname, ifindex, pin_dir);
	else if (!ret && cleared)
		printf("floodgate unloaded from %s (what an interrupted load left)\n", ifname);
	else if (!ret)
		ret = unload_orphan(ifname, ifindex);
	/* The last interface of scope = host takes the host's table along. */
	fg_host_collect();
	close(lock_fd);
	return ret;
}

/* Refuses a reload that asks for what only a load can set (maps/runtime.c). */
static int check_fixed_keys(const char *ifname, const char *path, const struct fg_config *cfg,
			    const struct fg_runtime *rt)
{
	struct fg_err err = {0};

	if (!fg_runtime_check_reload(rt, ifname, path ? path : "<default>", cfg, &err))
		return FG_EXIT_OK;
	pr_warn("%s\n", err.msg);
	return fg_exit_code(err.kind);
}

/* Every map the config sizes must be large enough already: maps are sized
 * once, at load. */
static int check_maps_fit(struct fg_pinned *pinned, const char *path, const struct fg_config *cfg)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];
		struct bpf_map_info info = {};
		__u32 len = sizeof(info), need;

		if (!row->entries)
			continue;
		need = row->entries(cfg);
		if (bpf_obj_get_info_by_fd(*fg_pinned_fd(pinned, row), &info, &len)) {
			pr_warn("Error: cannot inspect the pinned map %s: %s\n", row->name,
				strerror(errno));
			return FG_EXIT_FAILURE;
		}
		if (info.max_entries < need) {
			pr_warn("%s: the policies need %u entries in the `%s` table (%s), which "
				"was "
				"created with %u at load time (unload and load to grow it)\n",
				path ? path : "<default>", need, row->name, row->status_note,
				info.max_entries);
			return FG_EXIT_CONFIG;
		}
	}
	return FG_EXIT_OK;
}

/* max_sources_ipv6 sizes `sources` once, at load, as max_sources sizes
 * sources4 (checked against the runtime record): a reload that asks for
 * another size would report a change nothing applies. */
static int check_ipv6_table(const struct fg_pinned *pinned, const char *path,
			    const struct fg_config *cfg)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(pinned->sources, &info, &len)) {
		pr_warn("Error: cannot inspect the pinned map sources: %s\n", strerror(errno));
		return FG_EXIT_FAILURE;
	}
	if (info.max_entries == cfg->max_sources_ipv6)
		return FG_EXIT_OK;
	pr_warn("%s: max_sources_ipv6 = %u cannot change by reload: it sizes the table "
		"(loaded with %u; unset, it is max_sources / 4, at least %u); unload and load\n",
		path ? path : "<default>", cfg->max_sources_ipv6, info.max_entries,
		FG_MIN_SOURCES_IPV6);
	return FG_EXIT_CONFIG;
}

/* A reload into pins no program uses would report a change nothing
 * enforces: refuse it. */
static int check_program_runs(const char *ifname)
{
	char pin_dir[PATH_MAX];
	struct fg_pin_ids ids;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (fg_pin_ids_read(pin_dir, &ids))
		ids.n = 0;
	fg_xdp_clear_stale_dispatchers(&ids);
	if (ids.n && fg_pins_in_use(&ids))
		return FG_EXIT_OK;
	pr_warn("Error: no program uses the maps pinned in %s any more (the interface lost "
		"it, or it was detached): nothing to reload; 'floodgate load %s' replaces the "
		"stale pins\n",
		pin_dir, ifname);
	return FG_EXIT_STATE;
}

/* Writes the new policy into the idle slot, carries the counters, flips
 * the slot, then reclaims the state the new policy does not keep (in the
 * host's table, only what no other interface's policies still use). */
static int push_reload(const char *ifname, struct fg_pinned *pinned,
		       const struct fg_compiled *compiled)
{
	__u32 old_slot = pinned->rt.active_slot, next_slot = !old_slot;
	struct fg_policy_set *old = malloc(sizeof(*old));
	long reclaimed;
	int err = old ? 0 : -ENOMEM;

	if (!err && bpf_map_lookup_elem(pinned->maps.policy_sets, &old_slot, old))
		err = -errno;
	if (!err)
		err = fg_policy_write_slot(&pinned->maps, next_slot, compiled);
	if (!err)
		err = fg_policy_carry_stats(&pinned->maps, old_slot, next_slot);
	if (!err)
		err = fg_policy_activate(&pinned->maps, next_slot);
	if (err) {
		pr_warn("Error: cannot write the new policy: %s\n", strerror(-err));
		free(old);
		return FG_EXIT_FAILURE;
	}
	/* After the flip no packet is judged by the old policies any more. */
	reclaimed = fg_pinned_reclaim_state(pinned, old, &compiled->set);
	if (reclaimed >= 0) {
		long host = fg_host_reclaim(ifname, pinned, old, &compiled->set);

		reclaimed = host < 0 ? host : reclaimed + host;
	}
	free(old);
	if (reclaimed < 0) {
		pr_warn("Warning: the new policy is active, but the state of removed policies "
			"was not all reclaimed (the LRU ages it out): %s\n",
			strerror((int)-reclaimed));
		return FG_EXIT_OK;
	}
	if (reclaimed)
		pr_info("reclaimed %ld entries of removed or reset policies\n", reclaimed);
	return FG_EXIT_OK;
}

int fg_cmd_reload(const char *ifname, const char *config_path)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	char pin_dir[PATH_MAX];
	struct fg_err open_err = {0};
	unsigned int ifindex;
	int lock_fd = -1, ret;

	if (!cfg)
		return FG_EXIT_FAILURE;
	ret = parse_config(config_path, cfg);
	if (ret)
		goto out;
	ret = prepare_state_change(ifname, &ifindex, &lock_fd);
	if (ret)
		goto out;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK) && fg_upgrade_needed(pin_dir)) {
		/* Another build's layout: take over from it (user/upgrade.c). */
		ret = compile_config(cfg, config_path, 0, &compiled);
		if (!ret)
			ret = fg_upgrade(ifname, pin_dir, cfg, compiled);
		goto out;
	}
	ret = fg_open_loaded(ifname, &pinned, &open_err) ? fg_exit_report(&open_err) : FG_EXIT_OK;
	if (!ret)
		ret = check_program_runs(ifname);
	if (!ret)
		ret = check_fixed_keys(ifname, config_path, cfg, &pinned.rt);
	if (!ret)
		ret = check_ipv6_table(&pinned, config_path, cfg);
	if (!ret)
		ret = check_maps_fit(&pinned, config_path, cfg);
	if (!ret)
		ret = compile_config(cfg, config_path, !pinned.rt.active_slot, &compiled);
	if (!ret)
		ret = fg_host_check_peers(ifname, config_path, cfg, compiled);
	if (!ret)
		ret = push_reload(ifname, &pinned, compiled);
	if (!ret)
		printf("floodgate policy on %s reloaded: %u policies\n", ifname, cfg->n_policies);
out:
	fg_pinned_close(&pinned);
	if (lock_fd >= 0)
		close(lock_fd);
	free(compiled);
	free(cfg);
	return ret;
}

int fg_cmd_check(const char *config_path)
{
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	int ret;

	if (!cfg)
		return FG_EXIT_FAILURE;
	ret = parse_config(config_path, cfg);
	if (!ret)
		ret = compile_config(cfg, config_path, 0, &compiled);
	if (!ret)
		printf("%s: ok, %u policies\n", config_path ? config_path : "<default>",
		       cfg->n_policies);
	free(compiled);
	free(cfg);
	return ret;
}
