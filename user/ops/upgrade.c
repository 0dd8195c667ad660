// SPDX-License-Identifier: GPL-2.0-only
/*
 * Upgrades across map layouts. A build that changed a pinned map's key or
 * value cannot open the pins of another (the kernel would reject every
 * lookup with a size mismatch), and unload + load leaves the interface
 * unprotected and every source with a fresh burst. Instead:
 *
 *   1. the old pins are opened as they are, and their runtime record read
 *      by its prefix (fields are only ever appended to kernel structs);
 *   2. the new maps and program are created in FG_PIN_BASE/IFACE:upgrade:
 *      a per-source table or the bans whose layout and size are unchanged
 *      is *shared* (the new program uses the old map itself, so no state is
 *      lost or frozen); the policy maps are written from the config; the
 *      counters and a changed `bans` are converted (a struct that grew by
 *      appended fields keeps its prefix); the rest starts empty;
 *   3. the new program replaces the old in one attach (XDP_FLAGS_REPLACE
 *      with the old program's fd; tc BPF_TC_F_REPLACE of the same filter),
 *      so every packet meets one or the other;
 *   4. the folders are swapped and the old pins removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "policy/readback.h"
#include "maps/batch.h"
#include "attach/hook.h"
#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "ops/bans.h"
#include "ops/hostscope.h"
#include "base/clock.h"
#include "base/log.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "maps/skeleton.h"
#include "ops/upgrade.h"
#include "attach/xdp_ext.h"

#define NOTE_LENGTH 512

struct upgrade {
	const char *ifname;
	const char *pin_dir;
	char staging[PATH_MAX];
	struct fg_old_map *old; /* one per fg_pinned_maps[] row */
	struct fg_runtime rt;	/* the old record's prefix, then the new record */
	struct floodgate_bpf *skel;
	char shared[NOTE_LENGTH], converted[NOTE_LENGTH], reset[NOTE_LENGTH];
};

/* A step failed with `err`: says why, before the failure of the whole
 * upgrade that follows, and returns `ret` (a negative errno). */
static int logged(const struct fg_err *err, int ret)
{
	if (err->msg[0])
		pr_warn("Error: %s\n", err->msg);
	return ret;
}

static struct fg_old_map *old_of(struct upgrade *u, const char *name)
{
	return &u->old[fg_pinned_find(name) - fg_pinned_maps];
}

static void note(char *list, const char *what)
{
	size_t len = strlen(list);

	snprintf(list + len, NOTE_LENGTH - len, "%s%s", len ? ", " : "", what);
}

/* Reads the old runtime record: where the old program is attached. */
static int read_old_runtime(struct upgrade *u)
{
	struct fg_old_map *old = old_of(u, "runtime");
	__u32 zero = 0;

	if (old->fd < 0 || old->info.value_size < offsetof(struct fg_runtime, loaded_at))
		return -EPROTO;
	return fg_old_read_prefix(old, &zero, &u->rt, sizeof(u->rt), false);
}

/* The bans and what goes with them: their count and their strikes. */
static bool ban_map(const struct fg_pinned_map *row)
{
	return !strcmp(row->name, "bans") || !strcmp(row->name, "ban_count") ||
	       !strcmp(row->name, "ban_strikes");
}

/* A per-source table or a ban map is shared when the new program can use
 * the old map as it is: same layout, and the size the config asks for. */
static bool shareable(const struct fg_pinned_map *row, const struct fg_old_map *old,
		      const struct fg_config *cfg)
{
	if (!row->policy_state && !ban_map(row))
		return false;
	if (!fg_same_layout(row, old))
		return false;
	return !row->entries || old->info.max_entries == row->entries(cfg);
}

/* Pins from before `sources4` hold IPv4 keys in `sources`: that table is
 * split by carry_sources(), never shared, or its IPv4 state would be
 * stranded where the new program no longer looks. */
static bool before_sources4(struct upgrade *u)
{
	return old_of(u, "sources4")->fd < 0;
}

/* Opens the new object in the staging folder, sharing what can be shared,
 * and loads it. host_sources is the old one when it can be shared, else
 * the host's table `host_fd` (scope = host) when there is one. */
static int open_new(struct upgrade *u, const struct fg_config *cfg, int host_fd)
{
	const struct fg_skel_opts opts = {
		.pin_dir = u->staging,
		.progs = (int)u->rt.hook,
		.host_fd = host_fd > 0 ? host_fd : 0,
	};
	size_t i;
	int err;

	u->skel = fg_skel_open(cfg, &opts);
	if (!u->skel)
		return -errno;
	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];

		if (!shareable(row, &u->old[i], cfg))
			continue;
		if (!strcmp(row->name, "sources") && before_sources4(u))
			continue;
		err = bpf_map__reuse_fd(bpf_object__find_map_by_name(u->skel->obj, row->name),
					u->old[i].fd);
		if (err)
			return err;
		note(u->shared, row->name);
		u->old[i].kept = true;
	}
	return floodgate_bpf__load(u->skel);
}

/* The new runtime record: where the old program is, what the config says. */
static int write_runtime(struct upgrade *u, const struct fg_config *cfg)
{
	__u32 zero = 0;

	u->rt.active_slot = 0;
	fg_runtime_record_config(&u->rt, cfg);
	if (bpf_map_update_elem(bpf_map__fd(u->skel->maps.runtime), &zero, &u->rt, BPF_ANY))
		return -errno;
	return 0;
}

/* One entry of a (per-CPU) counter map, converted by its prefix. */
static int carry_entry(const struct fg_old_map *old, __u32 old_key, int new_fd, __u32 new_key,
		       __u32 value_size)
{
	int ncpus = libbpf_num_possible_cpus();
	void *value = calloc(ncpus, (value_size + 7) & ~7U);
	int err = value ? fg_old_read_prefix(old, &old_key, value, value_size, true) : -ENOMEM;

	if (!err && bpf_map_update_elem(new_fd, &new_key, value, BPF_ANY))
		err = -errno;
	free(value);
	return err;
}

/* The global counters, and each policy's by name from the old active slot
 * (which needs the old policy set in a layout this build reads). */
static int carry_counters(struct upgrade *u, const struct fg_policy_set *set)
{
	struct fg_old_map *old_sets = old_of(u, "policy_sets"),
			  *old_stats = old_of(u, "policy_stats");
	struct fg_policy_set *old_set = NULL;
	__u32 slot = u->rt.active_slot & (FG_POLICY_SLOTS - 1), i;
	int err;

	err = old_of(u, "global_stats")->fd < 0
		      ? 0
		      : carry_entry(old_of(u, "global_stats"), 0,
				    bpf_map__fd(u->skel->maps.global_stats), 0,
				    sizeof(struct fg_global_stats));
	if (err)
		return err;
	note(old_of(u, "global_stats")->fd < 0 ? u->reset : u->converted, "global counters");
	if (!fg_same_layout(fg_pinned_find("policy_sets"), old_sets) || old_stats->fd < 0) {
		note(u->reset, "policy counters (the old policy set is unreadable)");
		return 0;
	}
	old_set = malloc(sizeof(*old_set));
	if (!old_set || bpf_map_lookup_elem(old_sets->fd, &slot, old_set)) {
		free(old_set);
		return -ENOMEM;
	}
	for (i = 0; !err && i < set->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = fg_find_policy(old_set, set->policies[i].name);

		if (p)
			err = carry_entry(old_stats,
					  slot * FG_MAX_POLICIES + (__u32)(p - old_set->policies),
					  bpf_map__fd(u->skel->maps.policy_stats), i,
					  sizeof(struct fg_policy_stats));
	}
	free(old_set);
	note(u->converted, "policy counters by name");
	return err;
}

struct ban_copy {
	const struct fg_old_map *old;
	int new_fd;
	__u64 now;
	long copied;
};

/* Copies a ban still in force. An expired record (before `ban_strikes`, a
 * strike record kept in the trie) is not carried: its strike is lost. */
static int copy_ban(const void *key, void *ctx)
{
	struct ban_copy *c = ctx;
	struct fg_ban ban;

	if (fg_old_read_prefix(c->old, key, &ban, sizeof(ban), false))
		return 0; /* unbanned meanwhile */
	if (ban.expires_ns <= c->now)
		return 0;
	if (bpf_map_update_elem(c->new_fd, key, &ban, BPF_ANY))
		return -errno;
	c->copied++;
	return 0;
}

/* A count of policy bans that could not be shared is counted anew from the
 * new program's bans. (Shared bans that an old program without a count adds
 * meanwhile are not in it: the count then errs low by those few.) */
static int recount_policy_bans(struct upgrade *u, bool bans_copied)
{
	int err;

	if (old_of(u, "ban_count")->kept && !bans_copied)
		return 0;
	err = fg_bans_recount(bpf_map__fd(u->skel->maps.bans),
			      bpf_map__fd(u->skel->maps.ban_count));
	if (!err)
		note(u->converted, "the count of policy bans (recounted)");
	return err;
}

/* Bans that could not be shared: the ones in force copied entry by entry,
 * each record converted by its prefix, when the key is unchanged. */
static int carry_bans(struct upgrade *u, const struct fg_config *cfg)
{
	const struct fg_pinned_map *row = fg_pinned_find("bans");
	struct ban_copy c = {.old = old_of(u, "bans"),
			     .new_fd = bpf_map__fd(u->skel->maps.bans),
			     .now = fg_monotonic_ns()};
	char what[64];
	int err;

	if (shareable(row, c.old, cfg))
		return recount_policy_bans(u, false);
	if (c.old->fd < 0 || c.old->info.type != row->type ||
	    c.old->info.key_size != row->key_size) {
		note(u->reset, "bans (their key changed)");
		return recount_policy_bans(u, true);
	}
	err = fg_map_for_each_key(c.old->fd, sizeof(struct fg_src_lpm_key), copy_ban, &c);
	if (err == -E2BIG || err == -ENOSPC) {
		pr_warn("Error: max_bans = %u holds fewer than the bans in force in %s (%u "
			"entries): lift some with 'floodgate unban', or keep a larger max_bans\n",
			cfg->max_bans, u->pin_dir, c.old->info.max_entries);
		return -ENOSPC;
	}
	if (err)
		return err;
	snprintf(what, sizeof(what), "%ld bans in force (into a table of %u)", c.copied,
		 cfg->max_bans);
	note(u->converted, what);
	return recount_policy_bans(u, true);
}

struct split {
	int sources4_fd, sources_fd;
	long copied;
};

static int split_entry(const void *key, const void *value, void *ctx)
{
	const struct fg_source_key *full = key;
	struct split *split = ctx;
	struct fg_source4_key key4 = fg_source4_key_of(full);
	int err = full->family == FG_FAMILY_IPV4
			  ? bpf_map_update_elem(split->sources4_fd, &key4, value, BPF_ANY)
			  : bpf_map_update_elem(split->sources_fd, full, value, BPF_ANY);

	if (err)
		return -errno;
	split->copied++;
	return 0;
}

/* In batches, by the kernel's bucket cursor: a walk by get_next_key would
 * start over each time the old program evicts the key it stands on. */
long fg_upgrade_split_sources(int old_fd, int sources4_fd, int sources_fd)
{
	struct split split = {.sources4_fd = sources4_fd, .sources_fd = sources_fd};
	int err = fg_map_for_each_batch(old_fd, sizeof(struct fg_source_key),
					sizeof(struct fg_source_state), 4096, split_entry, &split);

	return err ? err : split.copied;
}

/* The per-source state of a layout before `sources4`, copied into both
 * new tables. A copy, not a share: what the old program changes in the
 * time the copy takes (about a second per million sources) is not carried. */
static int carry_sources(struct upgrade *u)
{
	struct fg_old_map *old = old_of(u, "sources");
	char what[96];
	long n;

	if (!before_sources4(u))
		return 0; /* shared, or reset like any other table */
	if (!fg_same_layout(fg_pinned_find("sources"), old))
		return 0; /* its key or value changed too: reset */
	n = fg_upgrade_split_sources(old->fd, bpf_map__fd(u->skel->maps.sources4),
				     bpf_map__fd(u->skel->maps.sources));
	if (n < 0)
		return (int)n;
	old_of(u, "sources4")->kept = true;
	old->kept = true;
	snprintf(what, sizeof(what), "%ld sources (IPv4 keys into sources4)", n);
	note(u->converted, what);
	return 0;
}

/* The XDP program attached to ifindex in any mode, 0 for none. */
static __u32 xdp_attached(unsigned int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);

	if (bpf_xdp_query((int)ifindex, 0, &query))
		return 0;
	return query.drv_prog_id ? query.drv_prog_id
				 : (query.skb_prog_id ? query.skb_prog_id : query.hw_prog_id);
}

/*
 * Through libxdp's dispatcher (kernels that allow EXT programs) there is no
 * one-attach replacement of a component: the new program is added beside
 * the old (libxdp swaps in a dispatcher running both, in one attach), then
 * the old is detached (another swap). In between, a packet meets both
 * programs, which share the state maps: it may be charged twice, never
 * unlimited. The new program is a second load of the object, as EXT,
 * from the staging folder's pins.
 */
static int attach_beside_in_dispatcher(struct upgrade *u, const struct fg_config *cfg)
{
	const struct fg_skel_opts opts = {.pin_dir = u->staging, .progs = (int)u->rt.hook};
	struct floodgate_bpf *skel = fg_skel_open(cfg, &opts);
	struct fg_err attach_err = {0};
	__u32 new_id = 0;
	int err;

	if (!skel)
		return -errno;
	err = fg_attach_xdp(skel, u->rt.ifindex, u->rt.xdp_mode, &new_id, &attach_err);
	/* This load's own proxy, not the first load's: the proxy reads what
	 * fg_xdp left in its load's scratch map, which is not pinned. Until
	 * it is in, the staging prog array is empty and a SYN goes on to
	 * nftables' synproxy, installed before the swap. */
	if (!err) {
		err = fg_skel_link_synproxy(skel);
		if (err)
			fg_xdp_detach_component(u->rt.ifindex, new_id);
	}
	floodgate_bpf__destroy(skel);
	if (err)
		return logged(&attach_err, err);
	err = fg_xdp_detach_component(u->rt.ifindex, u->rt.prog_id);
	if (err) {
		/* Both run; take the new one out again, leaving the old. */
		fg_xdp_detach_component(u->rt.ifindex, new_id);
		return err;
	}
	u->rt.prog_id = new_id;
	return 0;
}

/* Puts the new program in the old one's place in one operation, so that
 * every packet meets one of the two. */
static int attach_over(struct upgrade *u, const struct fg_config *cfg)
{
	bool xdp = u->rt.hook == FG_HOOK_XDP;
	int fd = bpf_program__fd(xdp ? u->skel->progs.fg_xdp : u->skel->progs.fg_tc);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err, old_fd;

	if (xdp && fg_xdp_is_dispatcher(xdp_attached(u->rt.ifindex)))
		return attach_beside_in_dispatcher(u, cfg);
	/* Before the attach: the new program hands over to its proxy from
	 * its first packet. */
	err = fg_skel_link_synproxy(u->skel);
	if (err)
		return err;
	if (xdp) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
		__u32 mode =
			u->rt.xdp_mode == FG_XDP_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;

		old_fd = bpf_prog_get_fd_by_id(u->rt.prog_id);
		if (old_fd < 0)
			return -errno;
		opts.old_prog_fd = old_fd;
		err = bpf_xdp_attach(u->rt.ifindex, fd, mode | XDP_FLAGS_REPLACE, &opts);
		close(old_fd);
	} else {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = u->rt.ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = u->rt.tc_handle,
			    .priority = u->rt.tc_priority, .prog_fd = fd,
			    .flags = BPF_TC_F_REPLACE);

		err = bpf_tc_attach(&hook, &opts);
	}
	if (err)
		return err;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	u->rt.prog_id = info.id;
	return 0;
}

/* The staging folder becomes IFACE's; the old pins go. Shared maps stay
 * alive through their new pins. */
static int swap_folders(struct upgrade *u)
{
	char retired[PATH_MAX];

	snprintf(retired, sizeof(retired), "%s:retired", u->pin_dir);
	fg_pinned_remove(retired);
	if (rename(u->pin_dir, retired))
		return -errno;
	if (rename(u->staging, u->pin_dir)) {
		int err = -errno;

		rename(retired, u->pin_dir);
		return err;
	}
	if (fg_pinned_remove(retired))
		pr_warn("Warning: cannot remove the old pins in %s: %s\n", retired,
			strerror(errno));
	return 0;
}

/* Everything before the switch; nothing here touches the running program. */
static int prepare(struct upgrade *u, const struct fg_config *cfg,
		   const struct fg_compiled *compiled)
{
	struct fg_pinned maps;
	int host_fd = -1, err;

	struct fg_err host_err = {0};

	fg_pinned_remove(u->staging);
	if (mkdir(u->staging, 0700))
		return -errno;
	if (fg_host_prepare(u->ifname, NULL, cfg, compiled, &host_fd, &host_err))
		return logged(&host_err, -EINVAL);
	err = open_new(u, cfg, host_fd);
	if (host_fd >= 0)
		close(host_fd);
	if (!err && fg_host_publish(u->staging, cfg, &host_err))
		err = logged(&host_err, -EINVAL);
	if (!err)
		err = write_runtime(u, cfg);
	if (!err)
		err = fg_pinned_from_object(u->skel->obj, &maps);
	if (!err)
		err = fg_skel_push(&maps.maps, cfg, compiled, 0);
	if (!err)
		err = carry_counters(u, &compiled->set);
	if (!err)
		err = carry_bans(u, cfg);
	if (!err)
		err = fg_runtime_mark_bans_if_any(bpf_map__fd(u->skel->maps.runtime),
						  bpf_map__fd(u->skel->maps.bans));
	if (!err)
		err = carry_sources(u);
	return err;
}

static void log_outcome(const struct upgrade *u, __u32 old_layout)
{
	char reset[NOTE_LENGTH];
	size_t i;

	snprintf(reset, sizeof(reset), "%s", u->reset);
	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];

		/* A table the old layout did not have (such as known4) starts
		 * empty, and loses nothing. */
		if (row->policy_state && !u->old[i].kept && u->old[i].fd >= 0)
			note(reset, row->name);
	}
	/* The same layout: a reload that changed what is compiled into the
	 * program ([synproxy]) or the size of a table (max_bans), not an
	 * upgrade; what it carried over is still worth saying. */
	if (old_layout == fg_layout_hash())
		pr_warn("floodgate on %s: program %u replaced (shared: %s; converted: %s; reset: "
			"%s)\n",
			u->ifname, u->rt.prog_id, u->shared[0] ? u->shared : "nothing",
			u->converted[0] ? u->converted : "nothing", reset[0] ? reset : "nothing");
	else
		pr_warn("floodgate on %s upgraded from map layout %08x to %08x (program %u): "
			"shared: %s; converted: %s; rebuilt from the config: the policies; reset: "
			"%s\n",
			u->ifname, old_layout, fg_layout_hash(), u->rt.prog_id,
			u->shared[0] ? u->shared : "nothing",
			u->converted[0] ? u->converted : "nothing", reset[0] ? reset : "nothing");
}

/* Switches to the prepared program and folder. */
static int take_over(struct upgrade *u, const struct fg_config *cfg, struct fg_err *err)
{
	int ret = attach_over(u, cfg);

	if (ret) {
		fg_pinned_remove(u->staging);
		return fg_fail(err, FG_ERR_SYSTEM,
			       "cannot put the new program in place of program %u on %s: %s (the "
			       "running floodgate is untouched)",
			       u->rt.prog_id, u->ifname, strerror(-ret));
	}
	ret = fg_pinned_update_runtime(u->staging, &u->rt);
	/* Bans the old program put in a shared trie since carry_bans. */
	if (!ret)
		ret = fg_runtime_mark_bans_if_any(bpf_map__fd(u->skel->maps.runtime),
						  bpf_map__fd(u->skel->maps.bans));
	if (!ret)
		ret = swap_folders(u);
	/* The new program runs; only its record or pins are off. */
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "the new program %u runs on %s, but its pins could not replace the "
			       "old ones: %s",
			       u->rt.prog_id, u->ifname, strerror(-ret));
	return 0;
}

int fg_upgrade(const char *ifname, const char *pin_dir, const struct fg_config *cfg,
	       const struct fg_compiled *compiled, struct fg_err *err)
{
	struct upgrade u = {.ifname = ifname, .pin_dir = pin_dir};
	__u32 old_layout;
	int ret = -1;

	u.old = calloc(fg_pinned_map_count, sizeof(*u.old));
	if (!u.old)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the old pins");
	fg_open_old_maps(pin_dir, u.old);
	old_layout = fg_old_layout_hash(u.old);
	/* A colon is in no interface's name, so this folder cannot be one's. */
	snprintf(u.staging, sizeof(u.staging), "%s:upgrade", pin_dir);
	if (read_old_runtime(&u) || u.rt.ifindex != if_nametoindex(ifname) ||
	    !fg_still_attached(&u.rt)) {
		fg_fail(err, FG_ERR_STATE,
			"the maps pinned in %s have another layout (%08x, this build's is %08x) "
			"and "
			"no program of theirs is attached to %s to take over from: remove them "
			"(rm -r %s) and load again",
			pin_dir, old_layout, fg_layout_hash(), ifname, pin_dir);
		goto out;
	}
	ret = prepare(&u, cfg, compiled);
	if (ret) {
		fg_pinned_remove(u.staging);
		fg_fail(err, FG_ERR_SYSTEM,
			"cannot prepare the new maps in %s: %s (the running floodgate is "
			"untouched)",
			u.staging, strerror(-ret));
		goto out;
	}
	ret = take_over(&u, cfg, err);
	if (!ret)
		log_outcome(&u, old_layout);
out:
	floodgate_bpf__destroy(u.skel);
	fg_close_old_maps(u.old);
	free(u.old);
	return ret ? -1 : 0;
}
