// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "maps/pinned.h"
#include "maps/skeleton.h"
#include "policy/access.h"
#include "policy/synproxy.h"

/*
 * How far bpf_ktime_get_coarse_ns() can lag bpf_ktime_get_ns(), for the
 * datapath's refusals that skip the precise read (bpf/fg_clock.h). Both
 * read the monotonic timekeeper: the coarse clock is its time as of the
 * last timekeeping update (tkr_mono's base at cycle_last), the precise one
 * adds the clocksource's cycles since then, so coarse <= precise. An
 * update accumulates whole ticks and leaves less than one behind; updates
 * come every tick from the CPU that keeps time, and a CPU whose tick NOHZ
 * stopped catches timekeeping up on the interrupt that wakes it (and
 * restarts its tick when it leaves idle, as for ksoftirqd). So the lag is
 * under two ticks plus how late a tick can be: a third tick covers that,
 * and at least 3 ms, the longest a softirq run on a tickless CPU lasts
 * before it is handed to ksoftirqd (10 restarts of 300 packets at ~1 us).
 * The tick is CLOCK_MONOTONIC_COARSE's resolution (TICK_NSEC); 0 (no
 * shortcut) if it is unknown. test_coarse_clock_lag_bound samples it.
 */
__u64 fg_coarse_lag_ns(void)
{
	const __u64 floor_ns = 3000000;
	struct timespec tick;
	__u64 lag;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &tick) || tick.tv_sec)
		return 0;
	lag = 3 * (__u64)tick.tv_nsec;
	return lag > floor_ns ? lag : floor_ns;
}

/*
 * How far the datapath's reading of the coarse clock can lag
 * bpf_ktime_get_ns(): each CPU reuses its reading while jiffies has not
 * moved (bpf/fg_clock.h, fg_coarse_cached). Jiffies move in the same
 * timekeeping update as the coarse clock, just before it, and the update
 * that ends a jiffy comes within a tick of the one that began it, late by
 * at most what fg_coarse_lag_ns() allows for: a jiffy lasts less than that
 * bound, so a reading is reused for less than the bound after it was taken,
 * and it lagged by less than the bound when taken. Twice the bound covers
 * both.
 * test_coarse_reading_lag_bound checks the reuse.
 */
__u64 fg_coarse_reading_lag_ns(void)
{
	return 2 * fg_coarse_lag_ns();
}

/* Sizes every table row that the config sizes; the pinned ones keep the
 * size they were created with when a second open reuses them. */
static void size_maps(struct floodgate_bpf *skel, const struct fg_config *cfg,
		      const struct fg_skel_opts *opts)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];
		struct bpf_map *map;

		if (!row->entries)
			continue;
		map = bpf_object__find_map_by_name(skel->obj, row->name);
		if (map)
			bpf_map__set_max_entries(map, row->entries(cfg));
	}
	/* Both slots of the [allow]/[deny] lists the config's files hold,
	 * with headroom: the same size in every open of one load. */
	bpf_map__set_max_entries(skel->maps.access_lists,
				 fg_access_lists_entries(cfg->access_prefixes));
	/* The benchmark's key sets and the tests' small tables are IPv4: the
	 * size goes to sources4. A map kind is measured on both tables, so
	 * IPv6 sources meet the same kind of map. */
	/* The proxy's cache of known connections: 192 KiB a CPU, for nothing
	 * without [synproxy]. */
	if (!cfg->synproxy.enabled)
		bpf_map__set_max_entries(skel->maps.synproxy_flows, 1);
	/* The refusal cache: FG_REFUSAL_SETS for each CPU (bpf/fg_maps.h).
	 * Should the count be unknown, CPU 0's part alone: the others' then
	 * find no entry, and refuse from their states. */
	if (libbpf_num_possible_cpus() > 0)
		bpf_map__set_max_entries(skel->maps.refusals, (__u32)libbpf_num_possible_cpus()
								      << FG_REFUSAL_SET_BITS);
	if (opts->sources_entries)
		bpf_map__set_max_entries(skel->maps.sources4, opts->sources_entries);
	if (opts->windows_entries)
		bpf_map__set_max_entries(skel->maps.windows, opts->windows_entries);
	if (opts->sources_map_type) {
		bpf_map__set_type(skel->maps.sources4, opts->sources_map_type);
		bpf_map__set_type(skel->maps.sources, opts->sources_map_type);
	}
	if (opts->sources_map_flags) {
		bpf_map__set_map_flags(skel->maps.sources4, opts->sources_map_flags);
		bpf_map__set_map_flags(skel->maps.sources, opts->sources_map_flags);
	}
}

/* The hook's program, and its SYN proxy only for a config with
 * [synproxy]: the proxy calls helpers and kfuncs a kernel may lack
 * (conntrack's are a module on Debian's 6.1), and without the section
 * nothing needs them. */
static void set_autoload(struct floodgate_bpf *skel, int progs, bool synproxy)
{
	bool xdp = progs == FG_SKEL_XDP || progs == FG_SKEL_EVERY_PROG;
	bool tc = progs == FG_SKEL_TC || progs == FG_SKEL_EVERY_PROG;

	bpf_program__set_autoload(skel->progs.fg_xdp, xdp);
	bpf_program__set_autoload(skel->progs.fg_tc, tc);
	bpf_program__set_autoload(skel->progs.fg_xdp_synproxy, xdp && synproxy);
	bpf_program__set_autoload(skel->progs.fg_tc_synproxy, tc && synproxy);
}

/* fg_xdp tail-calls its SYN proxy through the prog array synproxy_xdp, and
 * the kernel admits a program into a prog array only if its expected attach
 * type is the array owner's (checked since Debian's 6.1.y; the owner is the
 * first program loaded with the array). Through libxdp's dispatcher fg_xdp is
 * an EXT program, whose attach type is always 0; alone it is an XDP program,
 * to which libbpf gives BPF_XDP for SEC("xdp"); and an upgrade or a reload
 * hands the array from one to the other. So both XDP programs say 0, the
 * type every XDP program had before BPF_XDP, which only programs in devmaps
 * and cpumaps need. */
static void share_xdp_attach_type(struct floodgate_bpf *skel)
{
	bpf_program__set_expected_attach_type(skel->progs.fg_xdp, 0);
	bpf_program__set_expected_attach_type(skel->progs.fg_xdp_synproxy, 0);
}

int fg_skel_link_synproxy(struct floodgate_bpf *skel)
{
	const struct {
		struct bpf_program *prog;
		struct bpf_map *array;
	} links[] = {
		{skel->progs.fg_xdp_synproxy, skel->maps.synproxy_xdp},
		{skel->progs.fg_tc_synproxy, skel->maps.synproxy_tc},
	};
	__u32 zero = 0;
	size_t i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		int fd = bpf_program__fd(links[i].prog);

		if (fd < 0) /* not loaded */
			continue;
		if (bpf_map_update_elem(bpf_map__fd(links[i].array), &zero, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The program's read-only data map: the one whose name ends in ".rodata"
 * (the kernel keeps the object's name prefix, cut to fit). The section
 * also holds the object's constants after the variables: its value is at
 * least the skeleton's struct, and its size is left in *value_size. */
static int rodata_fd(int prog_fd, __u32 *value_size)
{
	__u32 ids[64], i, len;
	struct bpf_prog_info info = {.nr_map_ids = 64, .map_ids = (__u64)(unsigned long)ids};
	struct bpf_map_info map;

	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 64; i++) {
		int fd = bpf_map_get_fd_by_id(ids[i]);
		size_t n;

		if (fd < 0)
			continue;
		memset(&map, 0, sizeof(map));
		len = sizeof(map);
		if (!bpf_obj_get_info_by_fd(fd, &map, &len) && (n = strlen(map.name)) >= 7 &&
		    !strcmp(map.name + n - 7, ".rodata") &&
		    map.value_size >= sizeof(struct floodgate_bpf__rodata)) {
			*value_size = map.value_size;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

int fg_skel_read_synproxy(__u32 prog_id, struct fg_synproxy_params *out)
{
	struct floodgate_bpf__rodata *rodata = NULL;
	int prog_fd = bpf_prog_get_fd_by_id(prog_id), fd, err = 0;
	__u32 zero = 0, size = 0;

	if (prog_fd < 0) {
		err = -errno;
		goto out;
	}
	fd = rodata_fd(prog_fd, &size);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	rodata = malloc(size);
	if (!rodata)
		err = -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, rodata))
		err = -errno;
	else
		memcpy(out, (const void *)&rodata->fg_synproxy, sizeof(*out));
	close(fd);
out:
	if (prog_fd >= 0)
		close(prog_fd);
	free(rodata);
	return err;
}

struct floodgate_bpf *fg_skel_open(const struct fg_config *cfg, const struct fg_skel_opts *opts)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .pin_root_path = opts->pin_dir);
	struct floodgate_bpf *skel = floodgate_bpf__open_opts(&open_opts);
	struct bpf_map *map;

	if (!skel)
		return NULL;
	if (!opts->pin_dir) {
		bpf_object__for_each_map (map, skel->obj) {
			bpf_map__set_pin_path(map, NULL);
		}
	}
	size_maps(skel, cfg, opts);
	/* After size_maps: the reused map brings its own size. */
	if (opts->host_fd > 0 && bpf_map__reuse_fd(skel->maps.host_sources, opts->host_fd)) {
		int err = errno;

		floodgate_bpf__destroy(skel);
		errno = err;
		return NULL;
	}
	skel->rodata->fg_coarse_clock = cfg->coarse_clock;
	/* clock = coarse reads the coarse clock anyway: no shortcut there */
	skel->rodata->fg_coarse_lag_ns = cfg->coarse_clock ? 0 : fg_coarse_reading_lag_ns();
	skel->rodata->fg_refusal_churn_limit =
		bpf_map__max_entries(skel->maps.sources4) >> FG_REFUSAL_CHURN_SHIFT;
	skel->rodata->fg_max_policy_bans = fg_policy_ban_cap(bpf_map__max_entries(skel->maps.bans));
	skel->rodata->fg_test_clock = opts->test_clock;
	skel->rodata->fg_test_naive_update = opts->naive_update;
	skel->rodata->fg_bench_source_mask = opts->bench_source_mask;
	if (fg_synproxy_compile(&cfg->synproxy,
				(struct fg_synproxy_params *)&skel->rodata->fg_synproxy)) {
		floodgate_bpf__destroy(skel);
		errno = EINVAL;
		return NULL;
	}
	set_autoload(skel, opts->progs, cfg->synproxy.enabled);
	share_xdp_attach_type(skel);
	return skel;
}

int fg_skel_push(const struct fg_policy_maps *maps, const struct fg_config *cfg,
		 const struct fg_compiled *compiled, __u32 slot)
{
	struct fg_compiled *own = NULL;
	int err = 0;

	if (!compiled) {
		own = calloc(1, sizeof(*own));
		err = own ? fg_policy_compile(cfg, slot, own) : -ENOMEM;
		compiled = own;
	}
	if (!err)
		err = fg_policy_write_slot(maps, slot, compiled);
	if (!err)
		err = fg_policy_activate(maps, slot);
	fg_compiled_free(own);
	return err;
}

int fg_skel_load_opened(struct floodgate_bpf *skel, const struct fg_config *cfg,
			const struct fg_compiled *compiled, const struct fg_runtime *rt)
{
	struct fg_pinned maps;
	__u32 zero = 0;
	int err = floodgate_bpf__load(skel);

	if (!err)
		err = fg_skel_link_synproxy(skel);
	if (!err && rt && bpf_map_update_elem(bpf_map__fd(skel->maps.runtime), &zero, rt, BPF_ANY))
		err = -errno;
	if (!err)
		err = fg_pinned_from_object(skel->obj, &maps);
	if (!err)
		err = fg_skel_push(&maps.maps, cfg, compiled, 0);
	if (err)
		floodgate_bpf__destroy(skel);
	return err;
}

int fg_skel_prepare(const struct fg_config *cfg, const struct fg_skel_opts *opts,
		    const struct fg_compiled *compiled, const struct fg_runtime *rt,
		    struct floodgate_bpf **out)
{
	struct floodgate_bpf *skel = fg_skel_open(cfg, opts);
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	err = fg_skel_load_opened(skel, cfg, compiled, rt);
	if (!err)
		*out = skel;
	return err;
}

int fg_skel_prepare_text(const char *text, const struct fg_skel_opts *opts,
			 struct floodgate_bpf **out)
{
	static const struct fg_skel_opts every_prog = {.progs = FG_SKEL_EVERY_PROG};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	int err = -ENOMEM;

	*out = NULL;
	if (cfg)
		err = fg_config_parse_string("<test>", text, cfg, stderr);
	if (!err)
		err = fg_skel_prepare(cfg, opts ? opts : &every_prog, NULL, NULL, out);
	free(cfg);
	return err;
}
