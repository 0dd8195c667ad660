// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach/features.h"
#include "attach/xdp_ext.h"

bool fg_kernel_has_btf(void)
{
	return access(FG_KERNEL_BTF_PATH, R_OK) == 0;
}

static int read_jit(void)
{
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "r");
	int jit = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &jit) != 1)
		jit = -1;
	fclose(f);
	return jit;
}

void fg_kernel_features(struct fg_kernel_features *f, bool may_load)
{
	struct utsname u;

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	f->btf = fg_kernel_has_btf();
	f->jit = read_jit();
	f->ext = may_load ? fg_xdp_ext_allowed() : -1;
}
