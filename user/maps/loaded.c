// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "maps/loaded.h"
#include "maps/pinfolder.h"

int fg_open_loaded(const char *ifname, struct fg_pinned *pinned, struct fg_err *err)
{
	char pin_dir[PATH_MAX];
	int ret;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (access(pin_dir, F_OK)) {
		fg_fail(err, FG_ERR_STATE, "floodgate is not loaded on %s", ifname);
		fg_pinfolder_explain_missing(err);
		return -1;
	}
	if (fg_pinfolder_check_owned(pin_dir, err))
		return -1;
	ret = fg_pinned_open(pin_dir, pinned, err);
	return ret ? -1 : 0;
}

int fg_read_active_set(const struct fg_pinned *pinned, struct fg_policy_set *set)
{
	__u32 slot = pinned->rt.active_slot;

	return bpf_map_lookup_elem(pinned->maps.policy_sets, &slot, set) ? -errno : 0;
}
