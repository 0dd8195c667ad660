// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "floodgate.skel.h"
#include "attach/hook.h"
#include "attach/xdp_ext.h"
#include "base/log.h"

int fg_attach_xdp(struct floodgate_bpf *skel, unsigned int ifindex, int mode, __u32 *prog_id)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xdp_opts, .obj = skel->obj, .prog_name = "fg_xdp");
	struct xdp_program *prog;
	int err;

	/* Without EXT, libxdp's dispatcher attempt can only fail, noisily. */
	if (!fg_xdp_ext_allowed())
		return fg_xdp_attach_alone(skel->obj, skel->progs.fg_xdp, ifindex,
					   mode == FG_XDP_GENERIC, prog_id);
	prog = xdp_program__create(&xdp_opts);
	err = libxdp_get_error(prog);
	if (err) {
		pr_warn("Error: libxdp cannot use the XDP program: %s\n", strerror(-err));
		return err;
	}
	err = xdp_program__attach(prog, ifindex,
				  mode == FG_XDP_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (err) {
		fg_xdp_explain_attach_error(err, ifindex);
	} else {
		*prog_id = xdp_program__id(prog);
	}
	xdp_program__close(prog);
	return err;
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
