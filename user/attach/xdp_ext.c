// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "base/log.h"
#include "attach/xdp_ext.h"

/* The dispatcher runs each program as an EXT (freplace) of one of its slots.
 * Hardened kernels refuse the whole EXT type with EPERM before the verifier
 * runs; a stock kernel verifies this program and rejects it with EINVAL, as
 * it names no function to replace. Anything but EPERM means "allowed". */
static bool probe_ext(void)
{
	const struct bpf_insn return_zero[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_EXT, "fg_ext_probe", "GPL", return_zero, 2, NULL);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	pr_debug("BPF_PROG_TYPE_EXT probe: %s\n", strerror(-fd));
	return fd != -EPERM;
}

bool fg_xdp_ext_allowed(void)
{
	static int allowed = -1;

	if (allowed < 0)
		allowed = probe_ext();
	return allowed;
}

/* An interface's MTU from sysfs, or 0 when unknown. */
static unsigned int interface_mtu(unsigned int ifindex)
{
	char name[IF_NAMESIZE], path[64];
	unsigned int mtu = 0;
	FILE *f;

	if (!if_indextoname(ifindex, name))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &mtu) != 1)
		mtu = 0;
	fclose(f);
	return mtu;
}

int fg_xdp_explain_attach_error(int ret, unsigned int ifindex, struct fg_err *err)
{
	if (ret == -EOPNOTSUPP)
		fg_fail(err, FG_ERR_ENV,
			"the interface has no native XDP support (try --mode generic or --hook "
			"tc)");
	else if (ret == -ERANGE)
		/* The driver's reason (e.g. veth's "Peer MTU is too large to
		 * set XDP") is in the kernel's extack, shown only with -v. */
		fg_fail(err, FG_ERR_SYSTEM,
			"cannot attach native XDP: the MTU is too large for XDP on this interface "
			"(its MTU is %u; for a veth, its peer's MTU counts: a frame must fit in "
			"one page, about 3500 bytes). Lower the MTU (ip link set dev IFACE mtu "
			"1500, on both ends of a veth), or use --mode generic or --hook tc",
			interface_mtu(ifindex));
	else if (ret == -EBUSY || ret == -EEXIST)
		fg_fail(err, FG_ERR_SYSTEM,
			"another XDP program holds the interface, and this kernel refuses the "
			"BPF_PROG_TYPE_EXT programs libxdp needs to share it (try --hook tc)");
	else
		fg_fail(err, FG_ERR_SYSTEM, "cannot attach XDP: %s", strerror(-ret));
	return ret;
}

int fg_xdp_attach_alone(struct bpf_object *obj, struct bpf_program *prog, unsigned int ifindex,
			bool generic, __u32 *prog_id, struct fg_err *err)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	int ret = bpf_object__load(obj);

	if (ret) {
		fg_fail(err, FG_ERR_SYSTEM, "cannot load the XDP program: %s", strerror(-ret));
		return ret;
	}
	pr_info("this kernel refuses BPF_PROG_TYPE_EXT: attaching without libxdp's dispatcher\n");
	ret = bpf_xdp_attach(ifindex, bpf_program__fd(prog),
			     XDP_FLAGS_UPDATE_IF_NOEXIST |
				     (generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE),
			     NULL);
	if (ret)
		return fg_xdp_explain_attach_error(ret, ifindex, err);
	ret = bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &info_len);
	if (ret) {
		fg_fail(err, FG_ERR_SYSTEM, "cannot read the attached program's id: %s",
			strerror(-ret));
		bpf_xdp_detach(ifindex, generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, NULL);
		return ret;
	}
	*prog_id = info.id;
	return 0;
}

bool fg_xdp_is_dispatcher(__u32 prog_id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool yes;

	if (fd < 0)
		return false;
	yes = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "xdp_dispatcher");
	close(fd);
	return yes;
}

/* Whether `prog_id` is one of the programs libxdp's dispatcher on ifindex runs. */
static bool dispatcher_runs(unsigned int ifindex, __u32 prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *prog;
	bool ours = false;

	if (libxdp_get_error(mp))
		return false;
	for (prog = xdp_multiprog__next_prog(NULL, mp); prog && !ours;
	     prog = xdp_multiprog__next_prog(prog, mp))
		ours = xdp_program__id(prog) == prog_id;
	xdp_multiprog__close(mp);
	return ours;
}

/*
 * Asks the kernel first: libxdp 1.3's xdp_multiprog__close() leaks the
 * program fd of a lone (legacy) XDP program, and a long-lived `floodgate
 * run` that held one would keep a detached program, and with it the pinned
 * maps, alive after its own unload. libxdp is consulted only when the
 * attached program is its dispatcher.
 */
bool fg_xdp_holds(unsigned int ifindex, __u32 prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	__u32 attached[3];
	size_t i;

	if (bpf_xdp_query((int)ifindex, 0, &query))
		return false;
	attached[0] = query.skb_prog_id;
	attached[1] = query.drv_prog_id;
	attached[2] = query.hw_prog_id;
	for (i = 0; i < 3; i++) {
		if (!attached[i])
			continue;
		if (attached[i] == prog_id ||
		    (fg_xdp_is_dispatcher(attached[i]) && dispatcher_runs(ifindex, prog_id)))
			return true;
	}
	return false;
}

void fg_xdp_describe_sharing(unsigned int ifindex, __u32 prog_id, char *buf, size_t len)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *prog, *main_prog;
	int err = libxdp_get_error(mp), others = 0;
	bool ours = false;

	if (err) {
		snprintf(buf, len, "unknown (libxdp cannot read the interface: %s)",
			 strerror(-err));
		return;
	}
	if (!xdp_multiprog__is_legacy(mp)) {
		for (prog = xdp_multiprog__next_prog(NULL, mp); prog;
		     prog = xdp_multiprog__next_prog(prog, mp)) {
			if (xdp_program__id(prog) == prog_id)
				ours = true;
			else
				others++;
		}
		if (ours)
			snprintf(buf, len, "through libxdp's dispatcher, beside %d other program%s",
				 others, others == 1 ? "" : "s");
		else
			snprintf(buf, len,
				 "no: libxdp's dispatcher holds the interface without it");
	} else {
		main_prog = xdp_multiprog__main_prog(mp);
		if (!main_prog)
			snprintf(buf, len, "no: no XDP program is attached");
		else if (xdp_program__id(main_prog) == prog_id)
			snprintf(buf, len, "alone, without libxdp's dispatcher%s",
				 fg_xdp_ext_allowed() ? ""
						      : " (this kernel refuses BPF_PROG_TYPE_EXT, "
							"which it needs)");
		else
			snprintf(buf, len, "no: another XDP program holds the interface");
	}
	xdp_multiprog__close(mp);
}

int fg_xdp_detach_component(unsigned int ifindex, __u32 prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *prog;
	int err = libxdp_get_error(mp);

	if (err)
		return err;
	err = -ENOENT;
	for (prog = xdp_multiprog__next_prog(NULL, mp); prog;
	     prog = xdp_multiprog__next_prog(prog, mp))
		if (xdp_program__id(prog) == prog_id) {
			err = xdp_program__detach(prog, ifindex, xdp_multiprog__attach_mode(mp), 0);
			break;
		}
	xdp_multiprog__close(mp);
	return err;
}
