// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "attach/attachment.h"
#include "maps/pinned.h"
#include "attach/xdp_ext.h"
#include "base/log.h"
#include "base/util.h"

#define MAX_PROG_MAPS 64

int fg_pin_ids_read(const char *pin_dir, struct fg_pin_ids *ids)
{
	DIR *dir = opendir(pin_dir);
	struct dirent *entry;
	char path[PATH_MAX];

	ids->n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((entry = readdir(dir)) && ids->n < FG_MAX_PIN_IDS) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		/* The host's table (scope = host) is used by the programs of
		 * other interfaces too: it tells nothing of whose pins these
		 * are. */
		if (entry->d_name[0] == '.' || !strcmp(entry->d_name, FG_HOST_MAP))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, entry->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.id)
			ids->ids[ids->n++] = info.id;
		close(fd);
	}
	closedir(dir);
	return 0;
}

static bool uses_one_of(const __u32 *map_ids, __u32 n, const struct fg_pin_ids *ids)
{
	__u32 i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ids->n; j++)
			if (map_ids[i] == ids->ids[j])
				return true;
	return false;
}

bool fg_prog_is_ours(__u32 prog_id, const struct fg_pin_ids *ids)
{
	__u32 map_ids[MAX_PROG_MAPS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool ours = false;

	if (fd < 0)
		return false;
	info.nr_map_ids = MAX_PROG_MAPS;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		if (ids->n)
			ours = uses_one_of(map_ids,
					   info.nr_map_ids < MAX_PROG_MAPS ? info.nr_map_ids
									   : MAX_PROG_MAPS,
					   ids);
		else
			ours = !strcmp(info.name, "fg_xdp") || !strcmp(info.name, "fg_tc");
	}
	close(fd);
	return ours;
}

void fg_close_own_prog_fds(__u32 prog_id)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *entry;
	char path[64], target[64];

	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = atoi(entry->d_name);
		ssize_t n;

		if (entry->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		/* Only program fds: a map's info has an id of another space. */
		if (strcmp(target, "anon_inode:bpf-prog"))
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == prog_id) {
			pr_debug("closing fd %d of detached program %u, left open by libxdp\n", fd,
				 prog_id);
			close(fd);
		}
	}
	closedir(dir);
}

/* Whether one of the `prog*-prog` pins of libxdp's dispatcher folder
 * `path` is floodgate's program of these pins. */
static bool dispatch_dir_runs_ours(const char *path, const struct fg_pin_ids *ids)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	char pin[PATH_MAX + sizeof(entry->d_name) + 1];
	bool ours = false;

	if (!dir)
		return false;
	while (!ours && (entry = readdir(dir))) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		size_t n = strlen(entry->d_name);
		int fd;

		if (strncmp(entry->d_name, "prog", 4) || n < 5 ||
		    strcmp(entry->d_name + n - 5, "-prog"))
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", path, entry->d_name);
		fd = bpf_obj_get(pin);
		if (fd < 0)
			continue;
		ours = !bpf_obj_get_info_by_fd(fd, &info, &len) && fg_prog_is_ours(info.id, ids);
		close(fd);
	}
	closedir(dir);
	return ours;
}

static bool xdp_attached_id(int ifindex, __u32 prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);

	return !bpf_xdp_query(ifindex, 0, &query) &&
	       (query.skb_prog_id == prog_id || query.drv_prog_id == prog_id ||
		query.hw_prog_id == prog_id);
}

void fg_xdp_clear_stale_dispatchers(const struct fg_pin_ids *ids)
{
	DIR *dir = opendir(FG_LIBXDP_PIN_DIR);
	struct dirent *entry;
	char path[PATH_MAX];

	if (!dir || !ids->n) {
		if (dir)
			closedir(dir);
		return;
	}
	while ((entry = readdir(dir))) {
		__u32 dispatcher_id;
		int ifindex;

		if (sscanf(entry->d_name, "dispatch-%d-%u", &ifindex, &dispatcher_id) != 2 ||
		    xdp_attached_id(ifindex, dispatcher_id))
			continue;
		snprintf(path, sizeof(path), "%s/%s", FG_LIBXDP_PIN_DIR, entry->d_name);
		if (!dispatch_dir_runs_ours(path, ids))
			continue;
		pr_info("removing libxdp's pins in %s: dispatcher %u is no longer attached, "
			"and they kept floodgate's program alive\n",
			path, dispatcher_id);
		libxdp_clean_references(ifindex);
	}
	closedir(dir);
}

__u32 fg_pins_in_use(const struct fg_pin_ids *ids)
{
	__u32 id = 0;

	if (!ids->n)
		return 0;
	while (!bpf_prog_get_next_id(id, &id))
		if (fg_prog_is_ours(id, ids))
			return id;
	return 0;
}

/* Our component of libxdp's dispatcher on ifindex: its id, detached first
 * when `detach`. 0: none. */
static __u32 dispatched_ours(unsigned int ifindex, const struct fg_pin_ids *ids, bool detach)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *prog;
	__u32 found = 0;

	if (libxdp_get_error(mp))
		return 0;
	for (prog = xdp_multiprog__next_prog(NULL, mp); prog && !found;
	     prog = xdp_multiprog__next_prog(prog, mp)) {
		if (!fg_prog_is_ours(xdp_program__id(prog), ids))
			continue;
		found = xdp_program__id(prog);
		if (detach && xdp_program__detach(prog, ifindex, xdp_multiprog__attach_mode(mp), 0))
			pr_warn("Warning: cannot detach XDP program %u from libxdp's dispatcher\n",
				found);
	}
	xdp_multiprog__close(mp);
	return found;
}

/* Floodgate's XDP program on ifindex, detached first when `detach`. */
static __u32 xdp_ours(unsigned int ifindex, const struct fg_pin_ids *ids, bool detach)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	const struct {
		__u32 *id;
		__u32 mode;
	} modes[] = {
		{&query.skb_prog_id, XDP_FLAGS_SKB_MODE},
		{&query.drv_prog_id, XDP_FLAGS_DRV_MODE},
		{&query.hw_prog_id, XDP_FLAGS_HW_MODE},
	};
	size_t i;

	if (bpf_xdp_query((int)ifindex, 0, &query))
		return 0;
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		__u32 id = *modes[i].id;
		int fd;

		if (!id)
			continue;
		if (fg_xdp_is_dispatcher(id))
			return dispatched_ours(ifindex, ids, detach);
		if (!fg_prog_is_ours(id, ids))
			continue;
		if (!detach)
			return id;
		/* Detach that program only, should another replace it meanwhile. */
		fd = bpf_prog_get_fd_by_id(id);
		if (fd >= 0) {
			LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = fd);

			if (bpf_xdp_detach((int)ifindex, modes[i].mode | XDP_FLAGS_REPLACE, &opts))
				pr_warn("Warning: cannot detach XDP program %u: %s\n", id,
					strerror(errno));
			close(fd);
		}
		return id;
	}
	return 0;
}

static __u32 tc_ours(unsigned int ifindex, const struct fg_pin_ids *ids,
		     const struct fg_tc_place *tc, bool detach)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, query, .handle = tc->handle, .priority = tc->priority);
	LIBBPF_OPTS(bpf_tc_opts, filter, .handle = tc->handle, .priority = tc->priority);

	if (bpf_tc_query(&hook, &query) || !fg_prog_is_ours(query.prog_id, ids))
		return 0;
	if (!detach)
		return query.prog_id;
	if (tc->owns_qdisc) {
		/* Removing our clsact removes our filter with it. */
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	} else if (bpf_tc_detach(&hook, &filter)) {
		pr_warn("Warning: cannot detach tc program %u: %s\n", query.prog_id,
			strerror(errno));
	}
	return query.prog_id;
}

__u32 fg_find_attached(unsigned int ifindex, const struct fg_pin_ids *ids,
		       const struct fg_tc_place *tc)
{
	__u32 id = xdp_ours(ifindex, ids, false);

	return id ? id : tc_ours(ifindex, ids, tc, false);
}

int fg_detach_ours(unsigned int ifindex, const struct fg_pin_ids *ids, const struct fg_tc_place *tc,
		   struct fg_err *err)
{
	int detached = 0;
	__u32 id;

	if (xdp_ours(ifindex, ids, true))
		detached++;
	if (tc_ours(ifindex, ids, tc, true))
		detached++;
	id = fg_find_attached(ifindex, ids, tc);
	if (id) {
		fg_fail(err, FG_ERR_SYSTEM,
			"floodgate's program %u is still attached to interface %u", id, ifindex);
		return -EBUSY;
	}
	return detached;
}
