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

static struct floodgate_bpf *open_skeleton(const char *pin_dir, const struct fg_config *cfg,
					   int hook)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .pin_root_path = pin_dir);
	struct floodgate_bpf *skel = floodgate_bpf__open_opts(&open_opts);

	if (!skel) {
		pr_warn("Error: cannot open the BPF object: %s\n", strerror(errno));
		return NULL;
	}
	bpf_map__set_max_entries(skel->maps.sources, cfg->max_sources);
	skel->rodata->fg_coarse_clock = cfg->coarse_clock;
	bpf_map__set_max_entries(skel->maps.windows, fg_windows_entries(cfg));
	bpf_map__set_max_entries(skel->maps.logs, fg_logs_entries(cfg));
	bpf_program__set_autoload(skel->progs.fg_xdp, hook == FG_HOOK_XDP);
	bpf_program__set_autoload(skel->progs.fg_tc, hook == FG_HOOK_TC);
	return skel;
}

/*
 * Creates and pins the maps and fills them before any program is attached,
 * so the first packet already meets the configured policy. The programs are
 * loaded afterwards by a second open that reuses the pinned maps.
 */
static int create_maps(const char *pin_dir, const struct fg_config *cfg,
		       const struct fg_compiled *compiled, const struct fg_runtime *rt)
{
	struct floodgate_bpf *skel = open_skeleton(pin_dir, cfg, -1);
	struct fg_policy_maps maps;
	__u32 zero = 0;
	int err;

	if (!skel)
		return -errno;
	err = floodgate_bpf__load(skel);
	if (err) {
		pr_warn("Error: cannot create the maps: %s\n", strerror(-err));
		goto out;
	}
	fg_policy_maps_from_skel(skel, &maps);
	if (bpf_map_update_elem(maps.runtime, &zero, rt, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	err = fg_policy_write_slot(&maps, 0, compiled);
	if (!err)
		err = fg_policy_activate(&maps, 0);
	if (err)
		pr_warn("Error: cannot write the policy: %s\n", strerror(-err));
out:
	floodgate_bpf__destroy(skel);
	return err;
}

static int attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xdp_opts, .obj = skel->obj, .prog_name = "fg_xdp");
	struct xdp_program *prog = xdp_program__create(&xdp_opts);
	int err = libxdp_get_error(prog);

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
	rt.loaded_at = time(NULL);
	ret = compile_config(cfg, opts->config_path, 0, &compiled);
	if (ret)
		goto out;
	ret = prepare_state_change(ifname, &ifindex, &lock_fd);
	if (ret)
		goto out;
	rt.ifindex = ifindex;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
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
	skel = open_skeleton(pin_dir, cfg, rt.hook);
	if (!skel)
		goto undo;
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

/* Is the map at least `entries` large? */
static bool map_fits(int fd, __u32 entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) && info.max_entries >= entries;
}

int fg_cmd_reload(const char *ifname, const char *config_path)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	unsigned int ifindex;
	__u32 next_slot;
	int lock_fd = -1, ret, err;

	if (!cfg)
		return FG_EXIT_FAILURE;
	ret = parse_config(config_path, cfg);
	if (ret)
		goto out;
	ret = prepare_state_change(ifname, &ifindex, &lock_fd);
	if (ret)
		goto out;
	ret = fg_open_loaded(ifname, &pinned);
	if (ret)
		goto out;
	if (cfg->max_sources != pinned.rt.max_sources) {
		pr_warn("%s: max_sources changes the table size, which needs an unload and "
			"load (loaded with %llu)\n",
			config_path ? config_path : "<default>",
			(unsigned long long)pinned.rt.max_sources);
		ret = FG_EXIT_CONFIG;
		goto out;
	}
	if (!map_fits(pinned.windows, fg_windows_entries(cfg)) ||
	    !map_fits(pinned.logs, fg_logs_entries(cfg))) {
		pr_warn("%s: a sliding_window or sliding_log policy needs a state table that "
			"was not created at load time (unload and load to add one)\n",
			config_path ? config_path : "<default>");
		ret = FG_EXIT_CONFIG;
		goto out;
	}
	next_slot = !pinned.rt.active_slot;
	ret = compile_config(cfg, config_path, next_slot, &compiled);
	if (ret)
		goto out;
	ret = FG_EXIT_FAILURE;
	err = fg_policy_write_slot(&pinned.maps, next_slot, compiled);
	if (!err)
		err = fg_policy_carry_stats(&pinned.maps, pinned.rt.active_slot, next_slot);
	if (!err)
		err = fg_policy_activate(&pinned.maps, next_slot);
	if (err) {
		pr_warn("Error: cannot write the new policy: %s\n", strerror(-err));
		goto out;
	}
	printf("floodgate policy on %s reloaded: %u policies\n", ifname, cfg->n_policies);
	ret = FG_EXIT_OK;
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
