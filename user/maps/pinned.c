// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/sys.h"
#include "base/log.h"
#include "maps/pinned.h"

#define FD_OF(field) offsetof(struct fg_pinned, field)

static __u32 sources4_entries(const struct fg_config *cfg)
{
	return cfg->max_sources;
}

/* Half the table: room for the sources known for a while, which a flood
 * cannot evict, besides the max_sources that it churns. */
static __u32 known4_entries(const struct fg_config *cfg)
{
	return cfg->max_sources / 2 ? cfg->max_sources / 2 : 1;
}

static __u32 sources_entries(const struct fg_config *cfg)
{
	return cfg->max_sources_ipv6;
}

static __u32 bans_entries(const struct fg_config *cfg)
{
	return cfg->max_bans;
}

/* clang-format off */
const struct fg_pinned_map fg_pinned_maps[] = {
	/* name, type, key, value, fd, entries, policy_state, status_note */
	{"policy_sets", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct fg_policy_set),
	 FD_OF(maps.policy_sets), NULL, false, NULL},
	{"dport_match", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64),
	 FD_OF(maps.dport_match), NULL, false, NULL},
	{"sport_match", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64),
	 FD_OF(maps.sport_match), NULL, false, NULL},
	{"src_match", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct fg_src_lpm_key), sizeof(__u64),
	 FD_OF(maps.src_match), NULL, false, NULL},
	{"access_lists", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct fg_src_lpm_key), sizeof(__u32),
	 FD_OF(maps.access_lists), NULL, false, NULL},
	{"new_source_budget", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct fg_budget),
	 FD_OF(maps.new_source_budget), NULL, false, NULL},
	{"policy_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct fg_policy_stats),
	 FD_OF(maps.policy_stats), NULL, false, NULL},
	{"runtime", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct fg_runtime),
	 FD_OF(maps.runtime), NULL, false, NULL},
	{"sources4", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source4_key),
	 sizeof(struct fg_source_state), FD_OF(sources4), sources4_entries, true,
	 "token_bucket, fixed_window, leaky_bucket: IPv4 keys"},
	{"sources", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
	 sizeof(struct fg_source_state), FD_OF(sources), sources_entries, true,
	 "token_bucket, fixed_window, leaky_bucket: IPv6, global, overflow keys"},
	/* One map for every interface (scope = host): pinned here too, so
	 * a folder holds every map its program uses, and in host:shared/. */
	{"host_sources", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
	 sizeof(struct fg_source_state), FD_OF(host_sources), fg_host_entries, true,
	 "scope = host, shared by every interface"},
	{"windows", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
	 sizeof(struct fg_window_entry), FD_OF(windows), fg_windows_entries, true,
	 "sliding_window"},
	{"logs", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key), sizeof(struct fg_log_entry),
	 FD_OF(logs), fg_logs_entries, true, "sliding_log"},
	{"bans", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct fg_src_lpm_key), sizeof(struct fg_ban),
	 FD_OF(bans), bans_entries, false, "`floodgate bans IFACE` lists them"},
	{"own_addrs", BPF_MAP_TYPE_HASH, sizeof(struct fg_own_addr_key), sizeof(__u8),
	 FD_OF(own_addrs), NULL, false, NULL},
	{"global_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct fg_global_stats),
	 FD_OF(global_stats), NULL, false, NULL},
	{"event_budget", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct fg_budget),
	 FD_OF(maps.event_budget), NULL, false, NULL},
	/* A ring buffer has no key or value: the kernel reports both as 0. */
	{"events", BPF_MAP_TYPE_RINGBUF, 0, 0, FD_OF(events), NULL, false, NULL},
	{"fleet_counts", BPF_MAP_TYPE_LRU_PERCPU_HASH, sizeof(struct fg_fleet_key),
	 sizeof(struct fg_fleet_count), FD_OF(fleet_counts), fg_fleet_entries, false,
	 "scope = fleet admissions not yet synced"},
	{"fleet_holds", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
	 sizeof(struct fg_fleet_hold), FD_OF(fleet_holds), fg_fleet_entries, true,
	 "scope = fleet keys held by the fleet"},
	{"fleet_state", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct fg_fleet_state),
	 FD_OF(fleet_state), NULL, false, NULL},
	{"known4", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source4_key),
	 sizeof(struct fg_source_state), FD_OF(known4), known4_entries, true,
	 "IPv4 keys of sources4 known for a while, out of a flood's reach"},
	{"ban_strikes", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_src_lpm_key),
	 sizeof(struct fg_ban_strike), FD_OF(ban_strikes), NULL, false,
	 "strikes of policy bans (ban_factor)"},
	{"ban_count", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct fg_ban_count),
	 FD_OF(ban_count), NULL, false, NULL},
	/* A filter in two levels, not a table: every word exists, so `status`
	 * counts none. */
	{"presence4_first", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64),
	 FD_OF(presence4_first), NULL, false, NULL},
	{"presence4", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64), FD_OF(presence4), NULL,
	 false, NULL},
	/* Entry 0: the program fg_process hands a proxied port's packets to. */
	{"synproxy_xdp", BPF_MAP_TYPE_PROG_ARRAY, sizeof(__u32), sizeof(__u32),
	 FD_OF(synproxy_xdp), NULL, false, NULL},
	{"synproxy_tc", BPF_MAP_TYPE_PROG_ARRAY, sizeof(__u32), sizeof(__u32),
	 FD_OF(synproxy_tc), NULL, false, NULL},
};
/* clang-format on */
const size_t fg_pinned_map_count = sizeof(fg_pinned_maps) / sizeof(fg_pinned_maps[0]);

const struct fg_pinned_map *fg_pinned_find(const char *name)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++)
		if (!strcmp(fg_pinned_maps[i].name, name))
			return &fg_pinned_maps[i];
	return NULL;
}

int *fg_pinned_fd(struct fg_pinned *pinned, const struct fg_pinned_map *map)
{
	return (int *)((char *)pinned + map->fd_offset);
}

void fg_pinned_init(struct fg_pinned *pinned)
{
	size_t i;

	memset(pinned, 0, sizeof(*pinned));
	for (i = 0; i < fg_pinned_map_count; i++)
		*fg_pinned_fd(pinned, &fg_pinned_maps[i]) = -1;
}

static void swap_char(const char *from, char *buf, size_t size, char was, char now)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; from[i] && i + 1 < size; i++)
		buf[i] = from[i] == was ? now : from[i];
	buf[i] = '\0';
}

void fg_pin_name(const char *ifname, char *buf, size_t size)
{
	swap_char(ifname, buf, size, '.', '%');
}

void fg_ifname_of_pin(const char *pin_name, char *buf, size_t size)
{
	swap_char(pin_name, buf, size, '%', '.');
}

void fg_pin_dir(const char *ifname, char *buf, size_t size)
{
	char name[IF_NAMESIZE];

	fg_pin_name(ifname, name, sizeof(name));
	snprintf(buf, size, "%s/%s", FG_PIN_BASE, name);
}

void fg_stage_dir(const char *ifname, char *buf, size_t size)
{
	char name[IF_NAMESIZE];

	fg_pin_name(ifname, name, sizeof(name));
	snprintf(buf, size, "%s/%s" FG_STAGE_SUFFIX, FG_PIN_BASE, name);
}

/* Opens one pinned map and refuses it unless it is the map this build
 * expects: a stale pin from another version must not be written to. */
static int open_map(const char *pin_dir, const struct fg_pinned_map *map, struct fg_err *e)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", pin_dir, map->name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		/* The folder is there without this map: the pins of another
		 * map layout, such as a floodgate from before `sources4`,
		 * which keeps running. */
		if (err == -ENOENT && !access(pin_dir, F_OK))
			fg_fail(e, FG_ERR_SYSTEM,
				"cannot open the pinned map %s: not among the pins of the loaded "
				"floodgate, which uses another map layout (an older or newer "
				"version?); `floodgate load` or `reload` with this binary upgrades "
				"it in place",
				path);
		else
			fg_fail(e, FG_ERR_SYSTEM, "cannot open the pinned map %s: %s", path,
				strerror(-err));
		return err;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		err = -errno;
		fg_fail(e, FG_ERR_SYSTEM, "cannot inspect the pinned map %s: %s", path,
			strerror(-err));
		close(fd);
		return err;
	}
	if (info.type != map->type || info.key_size != map->key_size ||
	    info.value_size != map->value_size) {
		fg_fail(e, FG_ERR_SYSTEM,
			"the pinned map %s is not the one this floodgate uses (map type %u, "
			"key %u bytes, value %u bytes; expected type %u, key %u, value %u): "
			"left by another version? unload and load again",
			path, info.type, info.key_size, info.value_size, map->type, map->key_size,
			map->value_size);
		close(fd);
		return -EPROTO;
	}
	return fd;
}

static int read_runtime(struct fg_pinned *p)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(p->maps.runtime, &zero, &p->rt) ? -errno : 0;
}

/* Pins are keyed by interface name only: those of the same name in
 * another network namespace are not ours to act on. */
static int check_netns(const char *pin_dir, const struct fg_runtime *rt, struct fg_err *err)
{
	__u64 here = fg_netns_inode();

	if (!rt->netns_ino || !here || rt->netns_ino == here)
		return 0;
	fg_fail(err, FG_ERR_STATE,
		"the floodgate pinned in %s was loaded in network namespace net:[%llu], "
		"not in this one (net:[%llu]); floodgate acts on it only from there, for example "
		"with nsenter --net=/run/netns/NS floodgate ...",
		pin_dir, (unsigned long long)rt->netns_ino, (unsigned long long)here);
	return -EXDEV;
}

int fg_pinned_open(const char *pin_dir, struct fg_pinned *p, struct fg_err *err_out)
{
	size_t i;
	int err;

	fg_pinned_init(p);
	p->owns_fds = true;
	for (i = 0; i < fg_pinned_map_count; i++) {
		int fd = open_map(pin_dir, &fg_pinned_maps[i], err_out);

		if (fd < 0) {
			fg_pinned_close(p);
			return fd;
		}
		*fg_pinned_fd(p, &fg_pinned_maps[i]) = fd;
	}
	err = read_runtime(p);
	if (err)
		fg_fail(err_out, FG_ERR_SYSTEM, "cannot read the runtime record in %s: %s", pin_dir,
			strerror(-err));
	else
		err = check_netns(pin_dir, &p->rt, err_out);
	if (err)
		fg_pinned_close(p);
	return err;
}

void fg_pinned_close(struct fg_pinned *p)
{
	size_t i;

	if (!p->owns_fds)
		return;
	for (i = 0; i < fg_pinned_map_count; i++) {
		int *fd = fg_pinned_fd(p, &fg_pinned_maps[i]);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	p->owns_fds = false;
}

int fg_pinned_from_object(const struct bpf_object *obj, struct fg_pinned *p)
{
	size_t i;

	fg_pinned_init(p);
	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct bpf_map *map =
			bpf_object__find_map_by_name(obj, fg_pinned_maps[i].name);
		int fd = map ? bpf_map__fd(map) : -ENOENT;

		if (fd < 0)
			return fd;
		*fg_pinned_fd(p, &fg_pinned_maps[i]) = fd;
	}
	return read_runtime(p);
}

int fg_pinned_update_runtime(const char *pin_dir, const struct fg_runtime *rt)
{
	struct fg_runtime current;
	__u32 zero = 0;
	struct fg_err open_err = {0};
	int fd = open_map(pin_dir, fg_pinned_find("runtime"), &open_err);
	int err = 0;

	if (fd < 0) {
		pr_warn("Error: %s\n", open_err.msg);
		return fd;
	}
	/* Keep what the policy push set (slot, generation) and what the load
	 * recorded of its config. */
	if (bpf_map_lookup_elem(fd, &zero, &current)) {
		err = -errno;
		goto out;
	}
	current.hook = rt->hook;
	current.xdp_mode = rt->xdp_mode;
	current.ifindex = rt->ifindex;
	current.prog_id = rt->prog_id;
	current.tc_handle = rt->tc_handle;
	current.tc_priority = rt->tc_priority;
	current.tc_owns_qdisc = rt->tc_owns_qdisc;
	current.netns_ino = rt->netns_ino;
	if (bpf_map_update_elem(fd, &zero, &current, BPF_ANY))
		err = -errno;
out:
	close(fd);
	return err;
}

int fg_pinned_empty_prog_arrays(const char *pin_dir)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	size_t i;
	int fd, err = 0;

	for (i = 0; i < fg_pinned_map_count; i++) {
		if (fg_pinned_maps[i].type != BPF_MAP_TYPE_PROG_ARRAY)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, fg_pinned_maps[i].name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue; /* pins of a layout without it */
		if (bpf_map_delete_elem(fd, &zero) && errno != ENOENT)
			err = -errno;
		close(fd);
	}
	return err;
}

int fg_pinned_remove(const char *pin_dir)
{
	DIR *dir = opendir(pin_dir);
	struct dirent *entry;
	char path[PATH_MAX];
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -1;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, entry->d_name);
		if (unlink(path))
			err = -1;
	}
	closedir(dir);
	if (rmdir(pin_dir))
		err = -1;
	return err;
}

/* Does `next` keep the state of old policy `p`? Ids include the algorithm,
 * so an id found means the same name and algorithm. */
static bool state_kept(const struct fg_policy *p, const struct fg_policy_set *next)
{
	__u32 i;

	for (i = 0; i < next->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *q = &next->policies[i];

		if (q->id != p->id)
			continue;
		/* scope local -> host: the state moves to host_sources, and
		 * what p left in this interface's tables is nobody's. */
		if (!(p->flags & FG_POLICY_HOST) && (q->flags & FG_POLICY_HOST))
			return false;
		/* include/fg_algos.h: a sliding_log ring wraps at COUNT. */
		return !(p->algorithm == FG_ALG_SLIDING_LOG &&
			 p->params.sliding_log.count != q->params.sliding_log.count);
	}
	return false;
}

static bool id_in(__u32 id, const __u32 *ids, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

long fg_pinned_reclaim_ids(int fd, const __u32 *ids, unsigned int n)
{
	/* Room for the largest key; sources4's is a prefix of it, with
	 * policy_id at offset 0 as well. */
	struct fg_source_key key, next;
	void *prev = NULL;
	long deleted = 0;

	/* After a delete the walk goes on from the last key kept (from the
	 * start when none was kept yet), which still exists. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (id_in(next.policy_id, ids, n)) {
			if (bpf_map_delete_elem(fd, &next) && errno != ENOENT)
				return -errno;
			deleted++;
			continue;
		}
		key = next;
		prev = &key;
	}
	return deleted;
}

long fg_pinned_reclaim_state(const struct fg_pinned *pinned, const struct fg_policy_set *old,
			     const struct fg_policy_set *next)
{
	__u32 ids[FG_MAX_POLICIES];
	unsigned int n = 0, i;
	long deleted = 0, err;

	for (i = 0; i < old->count && i < FG_MAX_POLICIES; i++)
		if (!state_kept(&old->policies[i], next))
			ids[n++] = old->policies[i].id;
	if (!n)
		return 0;
	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *map = &fg_pinned_maps[i];

		if (!map->policy_state || map->fd_offset == FD_OF(host_sources))
			continue;
		err = fg_pinned_reclaim_ids(*(const int *)((const char *)pinned + map->fd_offset),
					    ids, n);
		if (err < 0)
			return err;
		deleted += err;
	}
	return deleted;
}
