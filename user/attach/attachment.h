/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Finding floodgate's programs by what they are, not by what was recorded:
 * a program is floodgate's when it uses one of the maps pinned in a pin
 * folder (or, for an orphan whose pins are gone, by its name). A load that
 * died between attaching and recording, or pins whose program is gone, are
 * recognised this way and recovered without manual steps.
 */
#ifndef FG_ATTACHMENT_H
#define FG_ATTACHMENT_H

#include <stdbool.h>
#include <linux/types.h>

#include "base/err.h"

#define FG_MAX_PIN_IDS 32

/* The ids of the maps pinned in one folder. n == 0 means "match by name":
 * any program named as floodgate's (an orphan whose pins are gone). */
struct fg_pin_ids {
	__u32 ids[FG_MAX_PIN_IDS];
	unsigned int n;
};

/* Where floodgate's tc filter is looked for (the recorded handle and
 * priority, or the ones floodgate always uses). */
struct fg_tc_place {
	__u32 handle;
	__u32 priority;
	bool owns_qdisc; /* remove the clsact qdisc with the filter */
};

/* Reads the ids of every map pinned in pin_dir (a missing folder gives
 * none) but host_sources, which other interfaces' programs use too (scope
 * = host). Returns 0 or a negative errno. */
int fg_pin_ids_read(const char *pin_dir, struct fg_pin_ids *ids);

/* Does program `prog_id` use one of the maps (or, with none, bear the name
 * of floodgate's programs)? */
bool fg_prog_is_ours(__u32 prog_id, const struct fg_pin_ids *ids);

/* The id of a program anywhere on the system (any interface, any network
 * namespace) that uses one of the maps, or 0. */
__u32 fg_pins_in_use(const struct fg_pin_ids *ids);

/* Where libxdp pins its dispatchers (dispatch-IFINDEX-DISPATCHER_ID/). */
#define FG_LIBXDP_PIN_DIR "/sys/fs/bpf/xdp"

/* Has libxdp's folder of a dispatcher that is no longer attached (the
 * interface's XDP program was replaced or removed by other means) removed
 * by libxdp, when it holds floodgate's program of these pins: its pinned
 * link would keep that program, and the pinned maps, alive for ever. */
void fg_xdp_clear_stale_dispatchers(const struct fg_pin_ids *ids);

/* Closes this process's fds of program `prog_id`. libxdp 1.3 leaves program
 * fds open after xdp_multiprog__close() (a lone program's, and through
 * libxdp's dispatcher, its components'): one would keep a detached program,
 * and the pinned maps it uses, alive until this process exits. Call it
 * only when this process holds no skeleton of that program. */
void fg_close_own_prog_fds(__u32 prog_id);

/* The id of floodgate's program attached to ifindex, at XDP or at tc
 * ingress in `tc`, or 0. */
__u32 fg_find_attached(unsigned int ifindex, const struct fg_pin_ids *ids,
		       const struct fg_tc_place *tc);

/* Detaches every program of ours from ifindex (XDP, and tc at `tc`), then
 * checks that none remains. Returns how many were detached, or -EBUSY
 * with `err` when one is still attached. */
int fg_detach_ours(unsigned int ifindex, const struct fg_pin_ids *ids, const struct fg_tc_place *tc,
		   struct fg_err *err);

#endif /* FG_ATTACHMENT_H */
