/* SPDX-License-Identifier: GPL-2.0-only */
/* Putting floodgate's program on an interface's hook, and finding it there. */
#ifndef FG_HOOK_H
#define FG_HOOK_H

#include <linux/types.h>

#include "base/err.h"
#include "floodgate.h"

struct floodgate_bpf;

/* Attaches the opened (not yet loaded) skeleton's XDP program: through
 * libxdp's dispatcher where the kernel allows EXT programs, else alone.
 * MODE is an enum fg_xdp_mode. Returns 0, or a negative errno with `err`
 * saying what failed and what to do. */
int fg_attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id,
		  struct fg_err *err);

/* Is the program recorded in `rt` still attached where it was put? */
int fg_still_attached(const struct fg_runtime *rt);

#endif /* FG_HOOK_H */
