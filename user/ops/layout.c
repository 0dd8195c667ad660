// SPDX-License-Identifier: GPL-2.0-only
/* Map layouts: this build's, and the one pinned (see layout.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach/attachment.h"
#include "ops/layout.h"

static __u32 fnv1a(__u32 hash, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++)
		hash = (hash ^ p[i]) * 16777619u;
	return hash;
}

static __u32 row_hash(__u32 hash, const char *name, __u32 type, __u32 key, __u32 value)
{
	const __u32 sizes[] = {type, key, value};

	hash = fnv1a(hash, name, strlen(name) + 1);
	return fnv1a(hash, sizes, sizeof(sizes));
}

__u32 fg_layout_hash(void)
{
	__u32 hash = 2166136261u;
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++)
		hash = row_hash(hash, fg_pinned_maps[i].name, fg_pinned_maps[i].type,
				fg_pinned_maps[i].key_size, fg_pinned_maps[i].value_size);
	return hash;
}

__u32 fg_old_layout_hash(const struct fg_old_map *old)
{
	__u32 hash = 2166136261u;
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++)
		hash = row_hash(hash, fg_pinned_maps[i].name, old[i].info.type,
				old[i].info.key_size, old[i].info.value_size);
	return hash;
}

bool fg_same_layout(const struct fg_pinned_map *row, const struct fg_old_map *old)
{
	return old->fd >= 0 && old->info.type == row->type && old->info.key_size == row->key_size &&
	       old->info.value_size == row->value_size;
}

void fg_open_old_maps(const char *pin_dir, struct fg_old_map *old)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++) {
		__u32 len = sizeof(old[i].info);

		memset(&old[i].info, 0, sizeof(old[i].info));
		snprintf(path, sizeof(path), "%s/%s", pin_dir, fg_pinned_maps[i].name);
		old[i].fd = bpf_obj_get(path);
		if (old[i].fd >= 0 && bpf_obj_get_info_by_fd(old[i].fd, &old[i].info, &len)) {
			close(old[i].fd);
			old[i].fd = -1;
		}
		if (old[i].fd < 0)
			memset(&old[i].info, 0, sizeof(old[i].info));
	}
}

void fg_close_old_maps(struct fg_old_map *old)
{
	size_t i;

	for (i = 0; old && i < fg_pinned_map_count; i++)
		if (old[i].fd >= 0)
			close(old[i].fd);
}

/* Does a program still use the pins? A resize takes over from it; stale
 * pins are the load's to remove. */
static bool pins_in_use(const char *pin_dir)
{
	struct fg_pin_ids ids;

	return !fg_pin_ids_read(pin_dir, &ids) && fg_pins_in_use(&ids);
}

bool fg_upgrade_needed(const char *pin_dir, const struct fg_config *cfg)
{
	struct fg_old_map *old = calloc(fg_pinned_map_count, sizeof(*old));
	const struct fg_pinned_map *bans = fg_pinned_find("bans");
	bool needed = false, any = false;
	size_t i;

	if (!old)
		return false;
	fg_open_old_maps(pin_dir, old);
	for (i = 0; i < fg_pinned_map_count; i++) {
		any |= old[i].fd >= 0;
		needed |= !fg_same_layout(&fg_pinned_maps[i], &old[i]);
	}
	i = (size_t)(bans - fg_pinned_maps);
	needed |= old[i].fd >= 0 && old[i].info.max_entries != bans->entries(cfg) &&
		  pins_in_use(pin_dir);
	fg_close_old_maps(old);
	free(old);
	return any && needed;
}

int fg_old_read_prefix(const struct fg_old_map *old, const void *key, void *out, __u32 new_size,
		       bool percpu)
{
	int ncpus = percpu ? libbpf_num_possible_cpus() : 1, cpu;
	__u32 old_size = old->info.value_size, old_stride = (old_size + 7) & ~7U;
	__u32 new_stride = (new_size + 7) & ~7U;
	__u32 common = old_size < new_size ? old_size : new_size;
	char *buf = calloc(ncpus, old_stride);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	memset(out, 0, (size_t)ncpus * new_stride);
	if (bpf_map_lookup_elem(old->fd, key, buf))
		err = -errno;
	for (cpu = 0; !err && cpu < ncpus; cpu++)
		memcpy((char *)out + (size_t)cpu * new_stride, buf + (size_t)cpu * old_stride,
		       common);
	free(buf);
	return err;
}
