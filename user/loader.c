// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "config.h"
#include "filemode.h"
#include "floodgate.skel.h"
#include "loader.h"
#include "log.h"
#include "pinned.h"
#include "policy.h"
#include "skeleton.h"
#include "upgrade.h"
#include "xdp_ext.h"

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

static int ensure_bpffs(void)
{
	struct statfs fs;

	if (statfs("/sys/fs/bpf", &fs) || fs.f_type != BPF_FS_MAGIC) {
		pr_info("mounting bpffs at /sys/fs/bpf\n");
		if (mkdir("/sys/fs/bpf", 0755) && errno != EEXIST)
			return -errno;
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
			return -errno;
	}
	if (mkdir(FG_PIN_BASE, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Serialises every state-changing command on the pin folder, as xdp-tools
 * does. The lock goes when the process exits. */
static int take_lock(void)
{
	int fd = open(FG_PIN_BASE, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		pr_warn("Error: cannot lock %s: %s\n", FG_PIN_BASE, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int prepare_state_change(const char *ifname, unsigned int *ifindex, int *lock_fd)
{
	int ret = check_environment(ifname, ifindex);
	int err;

	if (ret)
		return ret;
	err = ensure_bpffs();
	if (err) {
		pr_warn("Error: cannot mount bpffs at /sys/fs/bpf: %s\n", strerror(-err));
		return FG_EXIT_ENV;
	}
	*lock_fd = take_lock();
	return *lock_fd < 0 ? FG_EXIT_FAILURE : FG_EXIT_OK;
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
	if (!*out)
		return FG_EXIT_FAILURE;
	err = fg_policy_compile(cfg, slot, *out);
	if (err == -E2BIG) {
		pr_warn("%s: the policies' source CIDRs need more than %d trie entries\n",
			path ? path : "<default>", FG_MAX_SRC_PREFIXES);
		return FG_EXIT_CONFIG;
	}
	return err ? FG_EXIT_FAILURE : FG_EXIT_OK;
}

/*
 * Creates and pins the maps and fills them before any program is attached,
 * so the first packet already meets the configured policy. The programs are
 * loaded afterwards by a second open that reuses the pinned maps.
 */
static int create_maps(const char *pin_dir, const struct fg_config *cfg,
		       const struct fg_compiled *compiled, const struct fg_runtime *rt)
{
	const struct fg_skel_opts opts = {.pin_dir = pin_dir, .progs = FG_SKEL_MAPS_ONLY};
	struct floodgate_bpf *skel;
	int err = fg_skel_prepare(cfg, &opts, compiled, rt, &skel);

	if (err)
		pr_warn("Error: cannot create the maps and write the policy: %s\n", strerror(-err));
	floodgate_bpf__destroy(skel);
	return err;
}

static int attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xdp_opts, .obj = skel->obj, .prog_name = "fg_xdp");
	struct xdp_program *prog;
	int err;

	/* Without EXT, libxdp's dispatcher attempt can only fail, noisily. */
	if (!fg_xdp_ext_allowed())
		return fg_xdp_attach_alone(skel->obj, skel->progs.fg_xdp, ifindex,
					   mode == FG_XDP_GENERIC, prog_id);
	prog = xdp_program__create(&xdp_opts);
	err = libxdp_get_error(prog);
	if (err) {
		pr_warn("Error: libxdp cannot use the XDP program: %s\n", strerror(-err));
		return err;
	}
	err = xdp_program__attach(prog, ifindex,
				  mode == FG_XDP_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (err) {
		if (err == -EOPNOTSUPP)
			pr_warn("Error: the interface has no native XDP support "
				"(try --mode generic or --hook tc)\n");
		else
			pr_warn("Error: cannot attach XDP: %s\n", strerror(-err));
	} else {
		*prog_id = xdp_program__id(prog);
	}
	xdp_program__close(prog);
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

static void detach_xdp(unsigned int ifindex, __u32 prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *prog;

	if (libxdp_get_error(mp))
		return;
	if (xdp_multiprog__is_legacy(mp)) {
		prog = xdp_multiprog__main_prog(mp);
		if (prog && xdp_program__id(prog) == prog_id)
			xdp_multiprog__detach(mp);
		goto out;
	}
	for (prog = xdp_multiprog__next_prog(NULL, mp); prog;
	     prog = xdp_multiprog__next_prog(prog, mp)) {
		if (xdp_program__id(prog) != prog_id)
			continue;
		if (xdp_program__detach(prog, ifindex, xdp_multiprog__attach_mode(mp), 0))
			pr_warn("Warning: cannot detach XDP program %u\n", prog_id);
		break;
	}
out:
	xdp_multiprog__close(mp);
}

static void detach_tc(unsigned int ifindex, const struct fg_runtime *rt)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = rt->tc_handle, .priority = rt->tc_priority);

	if (rt->tc_owns_qdisc) {
		/* Removing our clsact removes our filter with it. */
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
		return;
	}
	bpf_tc_detach(&hook, &opts);
}

int fg_cmd_load(const struct fg_load_opts *opts)
{
	struct fg_compiled *compiled = NULL;
	struct floodgate_bpf *skel = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_runtime rt = {};
	char pin_dir[PATH_MAX];
	const char *ifname;
	unsigned int ifindex;
	int lock_fd = -1, ret, err;

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
	rt.hook = opts->hook >= 0 ? opts->hook : cfg->hook;
	rt.xdp_mode = opts->xdp_mode >= 0 ? opts->xdp_mode : cfg->xdp_mode;
	rt.max_sources = cfg->max_sources;
	rt.config_hook = cfg->hook;
	rt.config_xdp_mode = cfg->xdp_mode;
	rt.coarse_clock = cfg->coarse_clock;
	rt.loaded_at = time(NULL);
	ret = compile_config(cfg, opts->config_path, 0, &compiled);
	if (ret)
		goto out;
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
	if (!access(pin_dir, F_OK)) {
		pr_warn("Error: floodgate is already loaded on %s "
			"(use 'floodgate reload' to change its policy, or unload it first)\n",
			ifname);
		ret = FG_EXIT_STATE;
		goto out;
	}
	if (mkdir(pin_dir, 0700)) {
		pr_warn("Error: cannot create %s: %s\n", pin_dir, strerror(errno));
		ret = FG_EXIT_FAILURE;
		goto out;
	}

	ret = FG_EXIT_FAILURE;
	if (create_maps(pin_dir, cfg, compiled, &rt))
		goto undo;
	skel = fg_skel_open(cfg, &(struct fg_skel_opts){.pin_dir = pin_dir, .progs = rt.hook});
	if (!skel) {
		pr_warn("Error: cannot open the BPF object: %s\n", strerror(errno));
		goto undo;
	}
	if (rt.hook == FG_HOOK_XDP)
		err = attach_xdp(skel, ifindex, rt.xdp_mode, &rt.prog_id);
	else
		err = attach_tc(skel, ifindex, &rt);
	if (err) {
		if (err == -EOPNOTSUPP)
			ret = FG_EXIT_ENV;
		goto undo;
	}
	err = fg_pinned_update_runtime(pin_dir, &rt);
	if (err) {
		pr_warn("Error: cannot record the attachment: %s\n", strerror(-err));
		if (rt.hook == FG_HOOK_XDP)
			detach_xdp(ifindex, rt.prog_id);
		else
			detach_tc(ifindex, &rt);
		goto undo;
	}
	printf("floodgate loaded on %s (%s%s), %u policies\n", ifname,
	       rt.hook == FG_HOOK_XDP ? "xdp" : "tc",
	       rt.hook == FG_HOOK_XDP ? (rt.xdp_mode == FG_XDP_GENERIC ? " generic" : " native")
				      : " ingress",
	       cfg->n_policies);
	ret = FG_EXIT_OK;
	goto out;
undo:
	fg_pinned_remove(pin_dir);
out:
	floodgate_bpf__destroy(skel);
	if (lock_fd >= 0)
		close(lock_fd);
	free(compiled);
	free(cfg);
	return ret;
}

int fg_open_loaded(const char *ifname, struct fg_pinned *pinned)
{
	char pin_dir[PATH_MAX];
	int err;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (access(pin_dir, F_OK)) {
		pr_warn("Error: floodgate is not loaded on %s\n", ifname);
		return FG_EXIT_STATE;
	}
	err = fg_pinned_open(pin_dir, pinned);
	if (err) {
		pr_warn("Error: cannot open the maps pinned in %s: %s\n", pin_dir, strerror(-err));
		return FG_EXIT_FAILURE;
	}
	return FG_EXIT_OK;
}

int fg_cmd_unload(const char *ifname)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	char pin_dir[PATH_MAX];
	unsigned int ifindex;
	int lock_fd = -1, ret;

	if (geteuid() != 0) {
		pr_warn("Error: floodgate must run as root (it loads BPF programs)\n");
		return FG_EXIT_ENV;
	}
	if (ensure_bpffs() || (lock_fd = take_lock()) < 0)
		return FG_EXIT_FAILURE;
	ret = fg_open_loaded(ifname, &pinned);
	if (ret)
		goto out;
	/* An interface that is gone took our program with it; the pins
	 * remain to be removed. */
	ifindex = if_nametoindex(ifname);
	if (ifindex && ifindex == pinned.rt.ifindex) {
		if (pinned.rt.hook == FG_HOOK_XDP)
			detach_xdp(ifindex, pinned.rt.prog_id);
		else
			detach_tc(ifindex, &pinned.rt);
	}
	fg_pinned_close(&pinned);
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (fg_pinned_remove(pin_dir)) {
		pr_warn("Error: cannot remove %s: %s\n", pin_dir, strerror(errno));
		ret = FG_EXIT_FAILURE;
		goto out;
	}
	printf("floodgate unloaded from %s\n", ifname);
out:
	fg_pinned_close(&pinned);
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}

static const char *hook_name(__u32 hook)
{
	return hook == FG_HOOK_XDP ? "xdp" : "tc";
}

static const char *xdp_mode_name(__u32 mode)
{
	return mode == FG_XDP_GENERIC ? "generic" : "native";
}

/*
 * Refuses a reload that asks for what only a load can set: the program's
 * hook and mode, its clock, the table sizes, the interface. The hook and
 * mode may be what the running program uses or what the load's config said
 * (a --hook or --mode on the command line overrides the config).
 */
static int check_fixed_keys(const char *ifname, const char *path, const struct fg_config *cfg,
			    const struct fg_runtime *rt)
{
	const char *name = path ? path : "<default>";

	if (cfg->interface[0] && strcmp(cfg->interface, ifname)) {
		pr_warn("%s: interface = %s cannot change by reload (loaded on %s)\n", name,
			cfg->interface, ifname);
		return FG_EXIT_CONFIG;
	}
	if (cfg->hook != rt->hook && cfg->hook != rt->config_hook) {
		pr_warn("%s: hook = %s cannot change by reload (loaded at %s); unload and load\n",
			name, hook_name(cfg->hook), hook_name(rt->hook));
		return FG_EXIT_CONFIG;
	}
	if (rt->hook == FG_HOOK_XDP && cfg->xdp_mode != rt->xdp_mode &&
	    cfg->xdp_mode != rt->config_xdp_mode) {
		pr_warn("%s: xdp_mode = %s cannot change by reload (loaded %s); unload and load\n",
			name, xdp_mode_name(cfg->xdp_mode), xdp_mode_name(rt->xdp_mode));
		return FG_EXIT_CONFIG;
	}
	if ((__u32)cfg->coarse_clock != rt->coarse_clock) {
		pr_warn("%s: clock = %s cannot change by reload (it is compiled into the loaded "
			"program); unload and load\n",
			name, cfg->coarse_clock ? "coarse" : "precise");
		return FG_EXIT_CONFIG;
	}
	if (cfg->max_sources != rt->max_sources) {
		pr_warn("%s: max_sources changes the table size, which needs an unload and "
			"load (loaded with %llu)\n",
			name, (unsigned long long)rt->max_sources);
		return FG_EXIT_CONFIG;
	}
	return FG_EXIT_OK;
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

/* Writes the new policy into the idle slot, carries the counters, flips
 * the slot, then reclaims the state the new policy does not keep. */
static int push_reload(struct fg_pinned *pinned, const struct fg_compiled *compiled)
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
	ret = fg_open_loaded(ifname, &pinned);
	if (!ret)
		ret = check_fixed_keys(ifname, config_path, cfg, &pinned.rt);
	if (!ret)
		ret = check_maps_fit(&pinned, config_path, cfg);
	if (!ret)
		ret = compile_config(cfg, config_path, !pinned.rt.active_slot, &compiled);
	if (!ret)
		ret = push_reload(&pinned, compiled);
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
