// SPDX-License-Identifier: GPL-2.0-only
/*
 * jit_lines PROG_ID [TOP] < ADDRESSES: where a JITed BPF program spends its
 * time, by source line. Reads perf's sample addresses from stdin (one hex
 * address a line, as `perf script -F ip` prints them), finds each in the
 * program's JITed line info (the kernel's record of where each source
 * line's instructions begin in the JITed image, every subprogram
 * included) and prints the TOP lines (default 30) with the most samples,
 * with their share of the program's samples. The program must still be
 * loaded, unchanged since the samples were taken, when this runs.
 *
 * Why a tool of our own: `perf annotate` and `bpftool prog dump jited` would
 * do it, but Debian builds both without the disassembler they need for BPF
 * (libopcodes, libbfd), and `bpftool prog profile` needs fentry programs,
 * which the lab's kernel refuses (docs/benchmarks.md, make profile).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

/* One source line's JITed code: from `start` to the next line's start. */
struct jited_line {
	__u64 start;
	const char *func; /* its subprogram, and where in it the line starts */
	__u64 offset;
	const char *file;
	__u32 line;
	const char *text;
	unsigned long samples;
};

static int by_start(const void *a, const void *b)
{
	const struct jited_line *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_samples(const void *a, const void *b)
{
	const struct jited_line *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/* The line whose code holds `ip`: the last to start at or before it. */
static struct jited_line *line_at(struct jited_line *lines, __u32 n, __u64 ip)
{
	__u32 low = 0, high = n;

	while (low < high) {
		__u32 mid = low + (high - low) / 2;

		if (lines[mid].start <= ip)
			low = mid + 1;
		else
			high = mid;
	}
	return low ? &lines[low - 1] : NULL;
}

/* The subprogram whose JITed code holds `ip`, or -1. */
static int func_at(const __u64 *addrs, const __u32 *lens, __u32 n, __u64 ip)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (ip >= addrs[i] && ip < addrs[i] + lens[i])
			return i;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info), n_lines, n_funcs, i, top = 30;
	unsigned long in_program = 0, outside = 0;
	struct bpf_line_info *line_info;
	struct bpf_func_info *func_info;
	struct jited_line *lines;
	__u64 *starts, *func_addrs;
	__u32 *func_lens;
	struct btf *btf;
	char buf[64];
	int fd;

	if (argc < 2 || argc > 3 || (argc == 3 && !(top = strtoul(argv[2], NULL, 10)))) {
		fprintf(stderr, "usage: jit_lines PROG_ID [TOP] < ADDRESSES\n");
		return 2;
	}
	fd = bpf_prog_get_fd_by_id(strtoul(argv[1], NULL, 10));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		fprintf(stderr, "jit_lines: program %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	n_lines = info.nr_jited_line_info;
	n_funcs = info.nr_jited_ksyms;
	if (!n_lines || info.nr_line_info != n_lines || n_funcs != info.nr_jited_func_lens ||
	    n_funcs != info.nr_func_info) {
		fprintf(stderr, "jit_lines: program %s has no JITed line info\n", argv[1]);
		return 1;
	}
	starts = calloc(n_lines, sizeof(*starts));
	line_info = calloc(n_lines, sizeof(*line_info));
	func_addrs = calloc(n_funcs, sizeof(*func_addrs));
	func_lens = calloc(n_funcs, sizeof(*func_lens));
	func_info = calloc(n_funcs, sizeof(*func_info));
	lines = calloc(n_lines, sizeof(*lines));
	if (!starts || !line_info || !func_addrs || !func_lens || !func_info || !lines)
		return 1;
	memset(&info, 0, sizeof(info));
	info.nr_jited_line_info = n_lines;
	info.jited_line_info_rec_size = sizeof(*starts);
	info.jited_line_info = (__u64)(unsigned long)starts;
	info.nr_line_info = n_lines;
	info.line_info_rec_size = sizeof(*line_info);
	info.line_info = (__u64)(unsigned long)line_info;
	info.nr_jited_ksyms = n_funcs;
	info.jited_ksyms = (__u64)(unsigned long)func_addrs;
	info.nr_jited_func_lens = n_funcs;
	info.jited_func_lens = (__u64)(unsigned long)func_lens;
	info.nr_func_info = n_funcs;
	info.func_info_rec_size = sizeof(*func_info);
	info.func_info = (__u64)(unsigned long)func_info;
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		fprintf(stderr, "jit_lines: program %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf) {
		fprintf(stderr, "jit_lines: program %s: no BTF\n", argv[1]);
		return 1;
	}
	for (i = 0; i < n_lines; i++) {
		int f = func_at(func_addrs, func_lens, n_funcs, starts[i]);
		const struct btf_type *type =
			f < 0 ? NULL : btf__type_by_id(btf, func_info[f].type_id);

		lines[i].start = starts[i];
		lines[i].func = type ? btf__name_by_offset(btf, type->name_off) : "?";
		lines[i].offset = f < 0 ? 0 : starts[i] - func_addrs[f];
		lines[i].file = base_name(btf__name_by_offset(btf, line_info[i].file_name_off));
		lines[i].line = BPF_LINE_INFO_LINE_NUM(line_info[i].line_col);
		lines[i].text = btf__name_by_offset(btf, line_info[i].line_off);
	}
	qsort(lines, n_lines, sizeof(*lines), by_start);

	while (fgets(buf, sizeof(buf), stdin)) {
		__u64 ip = strtoull(buf, NULL, 16);
		struct jited_line *line;

		if (func_at(func_addrs, func_lens, n_funcs, ip) < 0) {
			outside++;
			continue;
		}
		line = line_at(lines, n_lines, ip);
		if (line) {
			line->samples++;
			in_program++;
		}
	}
	printf("   %lu samples in the program (%lu elsewhere); its source lines by samples:\n",
	       in_program, outside);
	qsort(lines, n_lines, sizeof(*lines), by_samples);
	for (i = 0; i < n_lines && i < top && lines[i].samples; i++) {
		const struct jited_line *l = &lines[i];
		const char *text = l->text ? l->text + strspn(l->text, " \t") : "";

		printf("   %6.2f%%  %s+%#llx  %s:%u  %.60s\n", 100.0 * l->samples / in_program,
		       l->func, (unsigned long long)l->offset, l->file, l->line, text);
	}
	return 0;
}
