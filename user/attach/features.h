/* SPDX-License-Identifier: GPL-2.0-only */
/* What the kernel offers that floodgate needs, as the load checks it:
 * for `floodgate --version` and the load's own checks. Nothing here runs
 * on the packet path. */
#ifndef FG_ATTACH_FEATURES_H
#define FG_ATTACH_FEATURES_H

#include <stdbool.h>
#include <sys/utsname.h>

/* Where the kernel's BTF is: the load refuses a kernel without it. */
#define FG_KERNEL_BTF_PATH "/sys/kernel/btf/vmlinux"

struct fg_kernel_features {
	char release[sizeof(((struct utsname *)0)->release)]; /* uname -r */
	bool btf;					      /* FG_KERNEL_BTF_PATH */
	int jit; /* net.core.bpf_jit_enable: 0, 1, 2, or -1: unknown */
	/* BPF_PROG_TYPE_EXT, which libxdp's dispatcher needs: 1 allowed,
	 * 0 refused, -1 not probed (the probe loads a program: root's). */
	int ext;
};

bool fg_kernel_has_btf(void);
/* Fills `f`; probes EXT only when `may_load` (the caller is root). */
void fg_kernel_features(struct fg_kernel_features *f, bool may_load);

#endif /* FG_ATTACH_FEATURES_H */
