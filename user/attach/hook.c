// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "attach/hook.h"
#include "attach/xdp_ext.h"

int fg_attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id,
		  struct fg_err *err)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xdp_opts, .obj = skel->obj, .prog_name = "fg_xdp");
	struct xdp_program *prog;
	int ret;

	/* Without EXT, libxdp's dispatcher attempt can only fail, noisily. */
	if (!fg_xdp_ext_allowed())
		return fg_xdp_attach_alone(skel->obj, skel->progs.fg_xdp, ifindex,
					   mode == FG_XDP_GENERIC, prog_id, err);
	prog = xdp_program__create(&xdp_opts);
	ret = libxdp_get_error(prog);
	if (ret) {
		fg_fail(err, FG_ERR_SYSTEM, "libxdp cannot use the XDP program: %s",
			strerror(-ret));
		return ret;
	}
	ret = xdp_program__attach(prog, ifindex,
				  mode == FG_XDP_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (ret)
		fg_xdp_explain_attach_error(ret, ifindex, err);
	else
		*prog_id = xdp_program__id(prog);
	xdp_program__close(prog);
	return ret;
}

/* Is the program we recorded still attached where we put it? */
int fg_still_attached(const struct fg_runtime *rt)
{
	if (rt->hook == FG_HOOK_XDP) {
		/* By id: any other XDP program on the interface is not ours
		 * (through libxdp's dispatcher, ours is one of its programs). */
		return fg_xdp_holds(rt->ifindex, rt->prog_id);
	} else {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = rt->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = rt->tc_handle,
			    .priority = rt->tc_priority);

		return !bpf_tc_query(&hook, &opts) && opts.prog_id == rt->prog_id;
	}
}
