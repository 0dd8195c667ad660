// SPDX-License-Identifier: GPL-2.0-only
/* `floodgate --version`: this build, the libraries it runs with, and what
 * the kernel offers, as the load checks it (attach/features.c). */
#include <bpf/libbpf.h>

#include "attach/features.h"
#include "base/util.h"
#include "cli/version.h"
#include "fg_build.h" /* FG_GIT_REVISION, FG_LIBXDP_BUILT: the Makefile's */

static const char *yes_no(int value)
{
	return value < 0 ? "unknown" : value ? "yes" : "no";
}

void fg_cli_print_version(FILE *out)
{
	struct fg_kernel_features f;

	fg_kernel_features(&f, fg_is_root());
	fprintf(out, "floodgate %s\n", FG_VERSION);
#ifdef FG_GIT_REVISION
	fprintf(out, "revision: %s\n", FG_GIT_REVISION);
#endif
	fprintf(out, "libbpf: %u.%u\n", libbpf_major_version(), libbpf_minor_version());
	/* libxdp has no call that says its version: the one built against. */
	fprintf(out, "libxdp: %s (built against)\n", FG_LIBXDP_BUILT);
	fprintf(out, "kernel: %s\n", f.release);
	fprintf(out, "  BTF (%s): %s\n", FG_KERNEL_BTF_PATH, yes_no(f.btf));
	fprintf(out, "  BPF JIT (net.core.bpf_jit_enable): %s\n", yes_no(f.jit));
	fprintf(out, "  freplace programs (libxdp's dispatcher): %s\n",
		f.ext < 0 ? "not probed (the probe needs root)" : yes_no(f.ext));
}
