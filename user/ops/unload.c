// SPDX-License-Identifier: GPL-2.0-only
/* `unload`: detaches floodgate's program, found by what it is, and removes
 * the pins; also what an interrupted load left, and an orphan. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>

#include "attach/attachment.h"
#include "attach/synproxy_nft.h"
#include "base/sys.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"
#include "ops/hostscope.h"
#include "ops/loader.h"
#include "ops/steps.h"

/*
 * Detaches the program that uses the folder's maps (found by what it is,
 * whatever the record says), then removes the pins. Refuses pins of
 * another network namespace, and pins still in use by a program that is
 * not attached here.
 */
static int unload_pins(const char *ifname, unsigned int ifindex, const char *pin_dir,
		       enum fg_unloaded *how, struct fg_err *err)
{
	struct fg_pin_ids ids;
	struct fg_tc_place tc;
	int detached = 0;
	__u32 user;

	if (fg_step_inspect_pins(pin_dir, &ids, &tc, err))
		return -1;
	/* An interface that is gone took our program with it. */
	if (ifindex && ids.n)
		detached = fg_detach_ours(ifindex, &ids, &tc, err);
	if (detached < 0)
		return -1;
	fg_pinned_empty_prog_arrays(pin_dir);
	user = fg_step_pins_user(&ids);
	if (user)
		return fg_fail(
			err, FG_ERR_STATE,
			"BPF program %u still uses the maps pinned in %s but is not attached "
			"to %s here: nothing unloaded",
			user, pin_dir, ifname);
	fg_test_die_at("unload-detached");
	if (fg_pinned_remove(pin_dir))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot remove %s: %s", pin_dir,
			       strerror(errno));
	*how = detached ? FG_UNLOADED : FG_UNLOADED_PINS_ONLY;
	return 0;
}

/* No pins: detaches a floodgate program whose pins were lost (an orphan),
 * found by its name. */
static int unload_orphan(const char *ifname, unsigned int ifindex, enum fg_unloaded *how,
			 struct fg_err *err)
{
	const struct fg_pin_ids by_name = {.n = 0};
	const struct fg_tc_place tc = fg_step_tc_place(NULL);
	int detached = ifindex ? fg_detach_ours(ifindex, &by_name, &tc, err) : 0;

	if (detached < 0)
		return -1;
	if (!detached) {
		fg_fail(err, FG_ERR_STATE, "floodgate is not loaded on %s", ifname);
		fg_pinfolder_explain_missing(err);
		return -1;
	}
	*how = FG_UNLOADED_ORPHAN;
	return 0;
}

int fg_unload(const char *ifname, enum fg_unloaded *how, struct fg_err *err)
{
	unsigned int ifindex = if_nametoindex(ifname);
	char pin_dir[PATH_MAX];
	int lock_fd = fg_step_lock(err), ret;
	bool cleared;

	*how = FG_UNLOADED;
	if (lock_fd < 0)
		return -1;
	ret = fg_step_clear_staging(ifname, ifindex, NULL, &cleared, err);
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (!ret && !access(pin_dir, F_OK))
		ret = unload_pins(ifname, ifindex, pin_dir, how, err);
	else if (!ret && cleared)
		*how = FG_UNLOADED_STAGING;
	else if (!ret)
		ret = unload_orphan(ifname, ifindex, how, err);
	/* Whatever was unloaded, its SYN proxy's table (if any) goes too. */
	if (!ret)
		ret = fg_synproxy_nft_remove(ifname, err);
	/* The last interface of scope = host takes the host's table along. */
	fg_host_collect();
	close(lock_fd);
	return ret;
}

const char *fg_unloaded_note(enum fg_unloaded how)
{
	switch (how) {
	case FG_UNLOADED_PINS_ONLY:
		return " (its program was no longer attached: pins removed)";
	case FG_UNLOADED_STAGING:
		return " (what an interrupted load left)";
	case FG_UNLOADED_ORPHAN:
		return " (an orphaned floodgate program, whose pins were gone)";
	case FG_UNLOADED:
		break;
	}
	return "";
}
