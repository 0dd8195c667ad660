// SPDX-License-Identifier: GPL-2.0-only
/* `reload`: a new policy into the idle slot of the running floodgate, then
 * one flip; per-source state is kept. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "attach/attachment.h"
#include "base/log.h"
#include "base/sys.h"
#include "config/config.h"
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "ops/hostscope.h"
#include "ops/loader.h"
#include "ops/ownaddrs.h"
#include "ops/steps.h"
#include "ops/upgrade.h"
#include "policy/access.h"
#include "policy/policy.h"

/* Every map the config sizes must be large enough already: maps are sized
 * once, at load. */
static int check_maps_fit(struct fg_pinned *pinned, const char *path, const struct fg_config *cfg,
			  struct fg_err *err)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];
		struct bpf_map_info info = {};
		__u32 len = sizeof(info), need;

		if (!row->entries)
			continue;
		need = row->entries(cfg);
		if (bpf_obj_get_info_by_fd(*fg_pinned_fd(pinned, row), &info, &len))
			return fg_fail(err, FG_ERR_SYSTEM, "cannot inspect the pinned map %s: %s",
				       row->name, strerror(errno));
		if (info.max_entries < need) {
			return fg_fail_at(
				err, FG_ERR_CONFIG,
				"%s: the policies need %u entries in the `%s` table (%s), "
				"which was created with %u at load time (unload and load to "
				"grow it)",
				path ? path : "<default>", need, row->name, row->status_note,
				info.max_entries);
		}
	}
	return 0;
}

/* max_sources_ipv6 sizes `sources` once, at load, as max_sources sizes
 * sources4 (checked against the runtime record): a reload that asks for
 * another size would report a change nothing applies. */
static int check_ipv6_table(const struct fg_pinned *pinned, const char *path,
			    const struct fg_config *cfg, struct fg_err *err)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(pinned->sources, &info, &len))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot inspect the pinned map sources: %s",
			       strerror(errno));
	if (info.max_entries == cfg->max_sources_ipv6)
		return 0;
	return fg_fail_at(err, FG_ERR_CONFIG,
			  "%s: max_sources_ipv6 = %u cannot change by reload: it sizes the table "
			  "(loaded with %u; unset, it is max_sources / 4, at least %u); unload and "
			  "load",
			  path ? path : "<default>", cfg->max_sources_ipv6, info.max_entries,
			  FG_MIN_SOURCES_IPV6);
}

/* The new lists are written beside those in force, which stay until the
 * flip: both must fit in the room the load made. Refused before anything
 * is written, with the way to grow it. */
static int check_access_room(const struct fg_pinned *pinned, const char *ifname, const char *path,
			     const struct fg_compiled *compiled, struct fg_err *err)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	__u32 active = pinned->rt.active_slot, len = sizeof(struct bpf_map_info), in_force;
	struct bpf_map_info info = {};
	__u64 need;

	if (!set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the policy in force");
	if (bpf_map_lookup_elem(pinned->maps.policy_sets, &active, set) ||
	    bpf_obj_get_info_by_fd(pinned->maps.access_lists, &info, &len)) {
		free(set);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot inspect the pinned lists: %s",
			       strerror(errno));
	}
	in_force = set->access_prefixes;
	free(set);
	need = (__u64)in_force + compiled->access.n;
	if (need <= info.max_entries)
		return 0;
	return fg_fail_at(err, FG_ERR_CONFIG,
			  "%s: the [allow] and [deny] lists hold %u prefixes; beside the %u in "
			  "force until the switch they need %llu entries of `access_lists`, which "
			  "the load sized for %u (twice its lists, plus a quarter); nothing was "
			  "changed. Grow it: floodgate unload %s && floodgate load %s -c %s",
			  path ? path : "<default>", compiled->access.n, in_force,
			  (unsigned long long)need, info.max_entries, ifname, ifname,
			  path ? path : "CONFIG");
}

/* A reload into pins no program uses would report a change nothing
 * enforces: refuse it. */
static int check_program_runs(const char *ifname, struct fg_err *err)
{
	char pin_dir[PATH_MAX];
	struct fg_pin_ids ids;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (fg_pin_ids_read(pin_dir, &ids))
		ids.n = 0;
	fg_xdp_clear_stale_dispatchers(&ids);
	if (ids.n && fg_pins_in_use(&ids))
		return 0;
	return fg_fail(
		err, FG_ERR_STATE,
		"no program uses the maps pinned in %s any more (the interface lost it, or "
		"it was detached): nothing to reload; 'floodgate load %s' replaces the stale "
		"pins",
		pin_dir, ifname);
}

/* After the flip no packet is judged by the old policies any more: deletes
 * the state the new policy does not keep (in the host's table, only what
 * no other interface's policies still use). */
static void reclaim_state(const char *ifname, const struct fg_pinned *pinned,
			  const struct fg_policy_set *old, const struct fg_policy_set *next)
{
	long reclaimed = fg_pinned_reclaim_state(pinned, old, next);

	if (reclaimed >= 0) {
		long host = fg_host_reclaim(ifname, pinned, old, next);

		reclaimed = host < 0 ? host : reclaimed + host;
	}
	if (reclaimed < 0)
		pr_warn("Warning: the new policy is active, but the state of removed policies "
			"was not all reclaimed (the LRU ages it out): %s\n",
			strerror((int)-reclaimed));
	else if (reclaimed)
		pr_info("reclaimed %ld entries of removed or reset policies\n", reclaimed);
}

/* The keys of the lists in force, collected by a thread of their own from
 * the start of the reload until the flip, beside the compile and the write,
 * so that the old slot is reclaimed after the flip without a walk of its
 * own. The write meanwhile (the reload holds the lock: no other) touches
 * only the other slot: it adds keys there, and first deletes any a failed
 * reclaim left there. The trie hands its keys out in post-order, all of
 * slot 0 before any of slot 1 (fg_access_collect_slot), so the walk meets
 * every key of its slot once; a walk whose last key is deleted under it
 * starts over, which only a walk still in slot 0, before it has kept any
 * key of slot 1, can meet. */
struct old_lists {
	pthread_t thread;
	bool started;
	int fd;
	__u32 slot;
	int err;
	struct fg_access_keys keys;
};

static void *collect_old_lists(void *arg)
{
	struct old_lists *old = arg;

	old->err = fg_access_collect_slot(old->fd, old->slot, &old->keys);
	return NULL;
}

static void start_collecting(struct old_lists *old, const struct fg_pinned *pinned)
{
	old->fd = pinned->maps.access_lists;
	old->slot = pinned->rt.active_slot;
	old->started = !pthread_create(&old->thread, NULL, collect_old_lists, old);
}

/* The collected keys, or NULL: reclaim walks the slot itself. */
static const struct fg_access_keys *collected(struct old_lists *old)
{
	if (!old->started)
		return NULL;
	pthread_join(old->thread, NULL);
	old->started = false;
	return old->err ? NULL : &old->keys;
}

/* After the flip no packet reads the old slot's lists: they go, so that
 * the next reload has the room. */
static void reclaim_lists(const struct fg_pinned *pinned, __u32 old_slot, struct old_lists *old)
{
	long reclaimed = fg_policy_reclaim_access(&pinned->maps, old_slot, collected(old));

	if (reclaimed < 0)
		pr_warn("Warning: the new lists are active, but the old ones were not all "
			"deleted (the next reload deletes them first): %s\n",
			strerror((int)-reclaimed));
}

/* Writes the new policy into the idle slot, carries the counters, flips
 * the slot, then reclaims. */
static int push_reload(const char *ifname, struct fg_pinned *pinned,
		       const struct fg_compiled *compiled, struct old_lists *old_lists,
		       struct fg_err *err)
{
	__u32 old_slot = pinned->rt.active_slot, next_slot = !old_slot;
	struct fg_policy_set *old = malloc(sizeof(*old));
	int ret = old ? 0 : -ENOMEM;

	if (!ret && bpf_map_lookup_elem(pinned->maps.policy_sets, &old_slot, old))
		ret = -errno;
	if (!ret)
		ret = fg_policy_write_slot(&pinned->maps, next_slot, compiled);
	if (!ret)
		ret = fg_policy_carry_stats(&pinned->maps, old_slot, next_slot);
	fg_test_stop_at("reload-carried");
	if (!ret)
		ret = fg_policy_activate(&pinned->maps, next_slot);
	/* A policy's ban made while the runtime record was rewritten, or a
	 * ban written with bpftool. */
	if (!ret)
		ret = fg_runtime_mark_bans_if_any(pinned->maps.runtime, pinned->bans);
	if (!ret)
		reclaim_state(ifname, pinned, old, &compiled->set);
	if (!ret)
		reclaim_lists(pinned, old_slot, old_lists);
	free(old);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot write the new policy: %s",
			       strerror(-ret));
	return 0;
}

/* The host's addresses may have changed since the load; the new policy
 * is in force whatever comes of their sync. */
static void refresh_own_addrs(const char *pin_dir)
{
	struct fg_err err = {0};

	if (fg_own_addrs_sync_dir(pin_dir, &err))
		pr_warn("Warning: %s\n", err.msg);
}

/* Is a SYN proxy in the running program's prog array? */
static bool synproxy_running(const struct fg_pinned *pinned)
{
	int array = pinned->rt.hook == FG_HOOK_XDP ? pinned->synproxy_xdp : pinned->synproxy_tc;
	__u32 zero = 0, prog_id;

	return !bpf_map_lookup_elem(array, &zero, &prog_id);
}

/*
 * [synproxy] is compiled into the programs' read-only data, which only a
 * new program changes: a reload that has the proxy before or after puts
 * a new program in the old one's place in one attach, as an upgrade does
 * (per-source state shared, counters carried), with the nftables table
 * following (fg_step_synproxy_before_swap).
 */
static int reload_by_swap(const char *ifname, const char *path, struct fg_config *cfg,
			  struct fg_compiled **compiled, struct fg_err *err)
{
	char pin_dir[PATH_MAX];

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (fg_step_compile(cfg, path, 0, compiled, err) ||
	    fg_host_check_peers(ifname, path, cfg, *compiled, err) ||
	    fg_step_synproxy_before_swap(ifname, cfg, err) ||
	    fg_upgrade(ifname, pin_dir, cfg, *compiled, err))
		return -1;
	return fg_step_synproxy_after_swap(ifname, cfg, err);
}

/* The checks and the push, on the pins of this build's layout. */
static int reload_loaded(const char *ifname, const char *path, struct fg_config *cfg,
			 struct fg_compiled **compiled, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct old_lists old = {0};
	int ret = -1;

	if (fg_open_loaded(ifname, &pinned, err) || check_program_runs(ifname, err))
		goto out;
	if (fg_runtime_check_reload(&pinned.rt, ifname, path ? path : "<default>", cfg, err))
		goto out;
	if (check_ipv6_table(&pinned, path, cfg, err) || check_maps_fit(&pinned, path, cfg, err))
		goto out;
	if (cfg->synproxy.enabled || synproxy_running(&pinned)) {
		fg_pinned_close(&pinned);
		return reload_by_swap(ifname, path, cfg, compiled, err);
	}
	start_collecting(&old, &pinned);
	if (fg_step_compile(cfg, path, !pinned.rt.active_slot, compiled, err) ||
	    check_access_room(&pinned, ifname, path, *compiled, err) ||
	    fg_host_check_peers(ifname, path, cfg, *compiled, err))
		goto out;
	ret = push_reload(ifname, &pinned, *compiled, &old, err);
out:
	collected(&old);
	fg_access_keys_free(&old.keys);
	fg_pinned_close(&pinned);
	return ret;
}

int fg_reload(const char *ifname, const char *config_path, struct fg_reload_result *res,
	      struct fg_err *err)
{
	struct fg_compiled *compiled = NULL;
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	char pin_dir[PATH_MAX];
	unsigned int ifindex;
	int lock_fd = -1, ret = -1;

	memset(res, 0, sizeof(*res));
	if (!cfg)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
	if (fg_step_parse_config(config_path, cfg, err) ||
	    fg_step_check_environment(ifname, cfg, &ifindex, err))
		goto out;
	lock_fd = fg_step_lock(err);
	if (lock_fd < 0)
		goto out;
	res->n_policies = cfg->n_policies;
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!access(pin_dir, F_OK) && fg_upgrade_needed(pin_dir, cfg)) {
		/* Another build's layout: take over from it (ops/upgrade.c). */
		res->upgraded = true;
		ret = fg_step_compile(cfg, config_path, 0, &compiled, err);
		if (!ret)
			ret = fg_upgrade(ifname, pin_dir, cfg, compiled, err);
	} else {
		ret = reload_loaded(ifname, config_path, cfg, &compiled, err);
	}
	if (!ret)
		refresh_own_addrs(pin_dir);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	fg_compiled_free(compiled);
	free(cfg);
	return ret;
}
