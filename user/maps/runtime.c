// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "maps/lpmkey.h"

#include "config/keys.h"
#include "maps/runtime.h"

void fg_runtime_record_config(struct fg_runtime *rt, const struct fg_config *cfg)
{
	size_t i;

	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];
		const struct fg_fixed *fixed = key->fixed;

		if (fixed && fixed->kind == FG_FIXED_RECORDED)
			fg_field_set(rt, fixed->record, fixed->record_size,
				     fg_field_get(cfg, key->offset, key->size));
	}
}

/* Whether the program loaded with `rt` runs with the config's `value`. */
static bool runs_with(const struct fg_fixed *fixed, const struct fg_runtime *rt, __u64 value)
{
	if (fixed->xdp_only && rt->hook != FG_HOOK_XDP)
		return true;
	if (value == fg_field_get(rt, fixed->record, fixed->record_size))
		return true;
	return fixed->runs_with_size &&
	       value == fg_field_get(rt, fixed->runs_with, fixed->runs_with_size);
}

static int refuse(struct fg_err *err, const char *source, const struct fg_key *key,
		  const char *value, const char *loaded)
{
	const struct fg_fixed *fixed = key->fixed;

	return fg_fail_at(err, FG_ERR_CONFIG, "%s: %s = %s cannot change by reload%s%s%s", source,
			  key->name, value, fixed->before, fixed->after ? loaded : "",
			  fixed->after ? fixed->after : "");
}

/* A recorded key the config changes: refused, with the value loaded. */
static int check_recorded(const struct fg_key *key, const struct fg_runtime *rt, const char *source,
			  const struct fg_config *cfg, struct fg_err *err)
{
	const struct fg_fixed *fixed = key->fixed;
	__u64 value = fg_field_get(cfg, key->offset, key->size);
	char wanted[64], loaded[64];

	if (runs_with(fixed, rt, value))
		return 0;
	key->type->format(key, value, wanted, sizeof(wanted));
	if (fixed->runs_with_size)
		key->type->format(key, fg_field_get(rt, fixed->runs_with, fixed->runs_with_size),
				  loaded, sizeof(loaded));
	else
		key->type->format(key, fg_field_get(rt, fixed->record, fixed->record_size), loaded,
				  sizeof(loaded));
	return refuse(err, source, key, wanted, loaded);
}

int fg_runtime_check_reload(const struct fg_runtime *rt, const char *ifname, const char *source,
			    const struct fg_config *cfg, struct fg_err *err)
{
	size_t i;

	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];
		const char *name;

		if (!key->fixed)
			continue;
		switch (key->fixed->kind) {
		case FG_FIXED_RECORDED:
			if (check_recorded(key, rt, source, cfg, err))
				return -1;
			break;
		case FG_FIXED_INTERFACE:
			name = (const char *)cfg + key->offset;
			if (name[0] && strcmp(name, ifname))
				return refuse(err, source, key, name, ifname);
			break;
		case FG_FIXED_TABLE:
			break;
		}
	}
	return 0;
}

int fg_runtime_mark_bans(int runtime_fd)
{
	struct fg_runtime rt;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(runtime_fd, &zero, &rt))
		return -errno;
	if (rt.bans_may_exist)
		return 0;
	rt.bans_may_exist = 1;
	return bpf_map_update_elem(runtime_fd, &zero, &rt, BPF_ANY) ? -errno : 0;
}

int fg_runtime_mark_bans_if_any(int runtime_fd, int bans_fd)
{
	struct fg_src_lpm_key first;

	if (bpf_map_get_next_key(bans_fd, NULL, &first))
		return errno == ENOENT ? 0 : -errno;
	return fg_runtime_mark_bans(runtime_fd);
}
