/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether libxdp's multiprog dispatcher can work on this kernel, a plain
 * XDP attach for when it cannot, and how floodgate holds its interface. */
#ifndef FG_XDP_EXT_H
#define FG_XDP_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "base/err.h"

struct bpf_object;
struct bpf_program;

/* False when the kernel refuses BPF_PROG_TYPE_EXT (freplace) programs,
 * which libxdp's dispatcher attaches its components as. Probed once. */
bool fg_xdp_ext_allowed(void);

/* Loads OBJ and attaches PROG to IFINDEX as the interface's only XDP
 * program, without libxdp. Returns 0, or -errno with `err` saying what
 * failed. */
int fg_xdp_attach_alone(struct bpf_object *obj, struct bpf_program *prog, unsigned int ifindex,
			bool generic, __u32 *prog_id, struct fg_err *err);

/* Says in `err` why an XDP attach to IFINDEX failed with RET (-errno) and
 * what to do: no native support (FG_ERR_ENV), an MTU too large for XDP,
 * the interface taken. Returns RET. */
int fg_xdp_explain_attach_error(int ret, unsigned int ifindex, struct fg_err *err);

/* Describes, for `status`, how program PROG_ID holds IFINDEX: through
 * libxdp's dispatcher beside others, or alone. */
void fg_xdp_describe_sharing(unsigned int ifindex, __u32 prog_id, char *buf, size_t len);

/* Whether prog_id is libxdp's dispatcher. */
bool fg_xdp_is_dispatcher(__u32 prog_id);

/* Is program `prog_id` attached to the interface, alone or as one of the
 * programs of libxdp's dispatcher? Another XDP program there is not ours. */
bool fg_xdp_holds(unsigned int ifindex, __u32 prog_id);

/* Detaches program `prog_id` from libxdp's dispatcher on ifindex (libxdp
 * replaces the dispatcher with one without it, in one attach). */
int fg_xdp_detach_component(unsigned int ifindex, __u32 prog_id);

#endif /* FG_XDP_EXT_H */
