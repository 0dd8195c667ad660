// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floodgate.skel.h"
#include "loader.h"
#include "pinned.h"

void fg_pin_dir(const char *ifname, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", FG_PIN_BASE, ifname);
}

/* Opens one pinned map and refuses it unless it is the map this build
 * expects: a stale pin from another version must not be written to. */
static int open_map(const char *pin_dir, const char *name, __u32 type, __u32 key_size,
		    __u32 value_size)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pin_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		close(fd);
		return -errno;
	}
	if (info.type != type || info.key_size != key_size || info.value_size != value_size) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

int fg_pinned_open(const char *pin_dir, struct fg_pinned *p)
{
	const struct {
		int *fd;
		const char *name;
		__u32 type, key_size, value_size;
	} maps[] = {
		{&p->maps.policy_sets, "policy_sets", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		 sizeof(struct fg_policy_set)},
		{&p->maps.dport_match, "dport_match", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		 sizeof(__u64)},
		{&p->maps.src_match, "src_match", BPF_MAP_TYPE_LPM_TRIE,
		 sizeof(struct fg_src_lpm_key), sizeof(__u64)},
		{&p->maps.sport_match, "sport_match", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		 sizeof(__u64)},
		{&p->maps.access_lists, "access_lists", BPF_MAP_TYPE_LPM_TRIE,
		 sizeof(struct fg_src_lpm_key), sizeof(__u32)},
		{&p->maps.new_source_budget, "new_source_budget", BPF_MAP_TYPE_PERCPU_ARRAY,
		 sizeof(__u32), sizeof(struct fg_budget)},
		{&p->bans, "bans", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct fg_src_lpm_key),
		 sizeof(struct fg_ban)},
		{&p->maps.policy_stats, "policy_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		 sizeof(struct fg_policy_stats)},
		{&p->maps.runtime, "runtime", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		 sizeof(struct fg_runtime)},
		{&p->sources, "sources", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
		 sizeof(struct fg_source_state)},
		{&p->windows, "windows", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
		 sizeof(struct fg_window_entry)},
		{&p->logs, "logs", BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
		 sizeof(struct fg_log_entry)},
		{&p->global_stats, "global_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		 sizeof(struct fg_global_stats)},
	};
	__u32 zero = 0;
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		*maps[i].fd = open_map(pin_dir, maps[i].name, maps[i].type, maps[i].key_size,
				       maps[i].value_size);
		if (*maps[i].fd < 0) {
			int err = *maps[i].fd;

			fg_pinned_close(p);
			return err;
		}
	}
	if (bpf_map_lookup_elem(p->maps.runtime, &zero, &p->rt)) {
		int err = -errno;

		fg_pinned_close(p);
		return err;
	}
	return 0;
}

void fg_pinned_close(struct fg_pinned *p)
{
	int *fds[] = {&p->maps.policy_sets,	 &p->maps.dport_match,	&p->maps.src_match,
		      &p->maps.sport_match,	 &p->maps.access_lists, &p->bans,
		      &p->maps.policy_stats,	 &p->maps.runtime,	&p->sources,
		      &p->global_stats,		 &p->windows,		&p->logs,
		      &p->maps.new_source_budget};
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int fg_pinned_update_runtime(const char *pin_dir, const struct fg_runtime *rt)
{
	struct fg_runtime current;
	__u32 zero = 0;
	int fd = open_map(pin_dir, "runtime", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
			  sizeof(struct fg_runtime));
	int err = 0;

	if (fd < 0)
		return fd;
	/* Keep what the policy push set (slot, generation). */
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
	if (bpf_map_update_elem(fd, &zero, &current, BPF_ANY))
		err = -errno;
out:
	close(fd);
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

void fg_policy_maps_from_skel(const struct floodgate_bpf *skel, struct fg_policy_maps *maps)
{
	maps->policy_sets = bpf_map__fd(skel->maps.policy_sets);
	maps->dport_match = bpf_map__fd(skel->maps.dport_match);
	maps->src_match = bpf_map__fd(skel->maps.src_match);
	maps->sport_match = bpf_map__fd(skel->maps.sport_match);
	maps->access_lists = bpf_map__fd(skel->maps.access_lists);
	maps->new_source_budget = bpf_map__fd(skel->maps.new_source_budget);
	maps->policy_stats = bpf_map__fd(skel->maps.policy_stats);
	maps->runtime = bpf_map__fd(skel->maps.runtime);
}
