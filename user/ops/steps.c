// SPDX-License-Identifier: GPL-2.0-only
/* The steps load, reload and unload share (see steps.h). */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "attach/features.h"
#include "attach/synproxy_nft.h"
#include "attach/synproxy_support.h"
#include "base/log.h"
#include "config/feedfile.h"
#include "config/filemode.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"
#include "ops/steps.h"

#define FG_TC_HANDLE   0xf100
#define FG_TC_PRIORITY 1

int fg_step_parse_config(const char *path, struct fg_config *cfg, struct fg_err *err)
{
	return fg_config_read(path, cfg, err);
}

/* What reading a list's feed files found, on stderr (check, load, reload):
 * skipped and normalised lines always, the counts with -v. */
static void report_feeds(const char *list, const struct fg_feed_files *files,
			 const struct fg_feed_list *read, unsigned int kept)
{
	if (!files->n)
		return;
	if (read->skipped || read->normalised)
		pr_warn("[%s] feed files: %zu bad lines skipped (file_errors = skip), %zu "
			"prefixes with host bits set normalised\n",
			list, read->skipped, read->normalised);
	pr_info("[%s]: %zu prefixes from %u feed file%s, %u in the list without duplicates\n", list,
		read->n, files->n, files->n == 1 ? "" : "s", kept);
}

int fg_step_compile(struct fg_config *cfg, const char *path, __u32 slot, struct fg_compiled **out,
		    struct fg_err *err)
{
	const char *name = path ? path : "<default>";
	struct fg_feeds feeds;
	int ret;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory compiling the policies");
	if (fg_feeds_read(name, cfg, &feeds, err))
		return -1;
	ret = fg_policy_compile_feeds(cfg, &feeds, slot, *out);
	if (!ret) {
		cfg->access_prefixes = (*out)->access.n;
		report_feeds("allow", &cfg->allow_files, &feeds.allow, (*out)->access.n_allow);
		report_feeds("deny", &cfg->deny_files, &feeds.deny,
			     (*out)->access.n - (*out)->access.n_allow);
	}
	fg_feeds_free(&feeds);
	if (ret == -ENOMEM)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory compiling the policies");
	if (ret == -E2BIG) {
		return fg_fail_at(err, FG_ERR_CONFIG,
				  "%s: the policies' source CIDRs need more than %d trie entries",
				  name, FG_MAX_SRC_PREFIXES);
	}
	/* The parser bounds every value, so this is a rate, burst or ban the
	 * parser let through and the algorithm's params cannot hold. */
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "%s: cannot compile the policies into the datapath's parameters: "
			       "%s (please report this with the config)",
			       name, strerror(-ret));
	return 0;
}

int fg_step_check_environment(const char *ifname, const struct fg_config *cfg,
			      unsigned int *ifindex, struct fg_err *err)
{
	struct fg_synproxy_support support;

	if (!fg_kernel_has_btf())
		return fg_fail(err, FG_ERR_ENV,
			       "this kernel has no BTF (" FG_KERNEL_BTF_PATH "); floodgate needs "
			       "CONFIG_DEBUG_INFO_BTF=y and Linux >= 5.15");
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex)
		return fg_fail(err, FG_ERR_ENV, "unknown interface '%s'", ifname);
	/* Before anything changes: a kernel without them would otherwise
	 * refuse the proxy's program with a verifier log, or nftables its
	 * table, half-way through the load. */
	if (cfg->synproxy.enabled) {
		fg_synproxy_probe(&support);
		if (fg_synproxy_check_support(&support, err))
			return -1;
		if (!fg_synproxy_nft_name_ok(ifname))
			return fg_fail(err, FG_ERR_ENV,
				       "[synproxy] cannot protect '%s': nftables cannot name its "
				       "table after it (an interface name of letters, digits, '_', "
				       "'-' and '.' only)",
				       ifname);
	}
	return 0;
}

int fg_step_lock(struct fg_err *err)
{
	if (fg_pinfolder_prepare(err))
		return -1;
	return fg_pinfolder_lock(err);
}

struct fg_tc_place fg_step_tc_place(const struct fg_runtime *rt)
{
	struct fg_tc_place tc = {.handle = FG_TC_HANDLE, .priority = FG_TC_PRIORITY};

	if (rt && rt->tc_handle) {
		tc.handle = rt->tc_handle;
		tc.priority = rt->tc_priority;
		tc.owns_qdisc = rt->tc_owns_qdisc;
	}
	return tc;
}

/* A tc filter releases its program after an RCU grace period, so a program
 * just detached may linger for a moment: wait for it, within a bound. Our
 * own process holds no skeleton here, so a program fd libxdp left open in
 * it is closed. */
__u32 fg_step_pins_user(const struct fg_pin_ids *ids)
{
	const struct timespec pause = fg_timespec_of(20 * FG_NS_PER_MS);
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

int fg_step_clear_staging(const char *ifname, unsigned int ifindex, const struct fg_runtime *rt,
			  bool *found, struct fg_err *err)
{
	const struct fg_tc_place tc = fg_step_tc_place(rt);
	char stage[PATH_MAX];
	struct fg_pin_ids ids;
	__u32 user;

	fg_stage_dir(ifname, stage, sizeof(stage));
	*found = !access(stage, F_OK);
	if (!*found)
		return 0;
	if (fg_pinfolder_check_owned(stage, err))
		return -1;
	if (fg_pin_ids_read(stage, &ids))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read %s: %s", stage, strerror(errno));
	if (ifindex && ids.n && fg_detach_ours(ifindex, &ids, &tc, err) < 0)
		return -1;
	fg_pinned_empty_prog_arrays(stage);
	user = fg_step_pins_user(&ids);
	if (user)
		return fg_fail(
			err, FG_ERR_STATE,
			"%s, left by an interrupted load, is in use by BPF program %u, which "
			"is not attached to %s here (a load in another network namespace?): "
			"run 'floodgate unload %s' there",
			stage, user, ifname, ifname);
	if (fg_pinned_remove(stage))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot remove %s: %s", stage, strerror(errno));
	/* The load may have installed the SYN proxy's table before it
	 * stopped. */
	if (fg_synproxy_nft_remove(ifname, err))
		return -1;
	pr_info("removed %s, left by an interrupted load\n", stage);
	return 0;
}

int fg_step_inspect_pins(const char *pin_dir, struct fg_pin_ids *ids, struct fg_tc_place *tc,
			 struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_err open_err = {0};
	int ret;

	if (fg_pinfolder_check_owned(pin_dir, err))
		return -1;
	ret = fg_pinned_open(pin_dir, &pinned, &open_err);
	fg_pinned_close(&pinned);
	if (ret == -EXDEV) {
		*err = open_err;
		return -1;
	}
	*tc = fg_step_tc_place(ret ? NULL : &pinned.rt);
	if (fg_pin_ids_read(pin_dir, ids))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read %s: %s", pin_dir, strerror(errno));
	return 0;
}

int fg_step_synproxy_before_swap(const char *ifname, const struct fg_config *cfg,
				 struct fg_err *err)
{
	if (!cfg->synproxy.enabled)
		return 0;
	return fg_synproxy_nft_install(ifname, &cfg->synproxy, err);
}

int fg_step_synproxy_after_swap(const char *ifname, const struct fg_config *cfg, struct fg_err *err)
{
	if (cfg->synproxy.enabled)
		return 0;
	return fg_synproxy_nft_remove(ifname, err);
}
