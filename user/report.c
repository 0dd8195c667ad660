// SPDX-License-Identifier: GPL-2.0-only
/* `status` and `stats`: read-only views of the pinned maps. */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "log.h"
#include "pinned.h"
#include "report.h"

static const char *algorithm_name(__u8 algorithm)
{
	static const char *const names[] = {"token_bucket", "fixed_window", "sliding_window",
					    "sliding_log", "leaky_bucket"};

	return algorithm < sizeof(names) / sizeof(names[0]) ? names[algorithm] : "?";
}

static const char *action_name(__u8 action)
{
	return action == FG_ACTION_MONITOR ? "monitor" : "drop";
}

/* Formats COUNT/PERIOD back into the config's vocabulary. */
void fg_format_rate(const struct fg_policy *p, char *buf, size_t size)
{
	static const struct {
		__u64 ns;
		const char *unit;
	} units[] = {{3600000000000ULL, "h"},
		     {60000000000ULL, "min"},
		     {1000000000ULL, "s"},
		     {1000000ULL, "ms"}};
	const char *bytes = p->flags & FG_POLICY_BYTES ? "B" : "";
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (p->rate_period_ns % units[i].ns)
			continue;
		if (p->rate_period_ns == units[i].ns)
			snprintf(buf, size, "%" PRIu64 "%s/%s", (uint64_t)p->rate_count, bytes,
				 units[i].unit);
		else
			snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "%s", (uint64_t)p->rate_count,
				 bytes, (uint64_t)(p->rate_period_ns / units[i].ns), units[i].unit);
		return;
	}
	snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "ns", (uint64_t)p->rate_count, bytes,
		 (uint64_t)p->rate_period_ns);
}

int fg_read_active_set(const struct fg_pinned *pinned, struct fg_policy_set *set)
{
	__u32 slot = pinned->rt.active_slot;

	return bpf_map_lookup_elem(pinned->maps.policy_sets, &slot, set) ? -errno : 0;
}

const struct fg_policy *fg_find_policy(const struct fg_policy_set *set, const char *name)
{
	__u32 i;

	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (!strncmp(set->policies[i].name, name, FG_POLICY_NAME_LEN))
			return &set->policies[i];
	return NULL;
}

/* Entries in use in a hash or trie whose keys are at most 32 bytes. */
static __u64 count_entries(int fd)
{
	__u8 key[32], next[32];
	void *prev = NULL;
	__u64 n = 0;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

static __u32 max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/* Is the program we recorded still attached where we put it? */
int fg_still_attached(const struct fg_runtime *rt)
{
	if (rt->hook == FG_HOOK_XDP) {
		LIBBPF_OPTS(bpf_xdp_query_opts, query);

		if (bpf_xdp_query(rt->ifindex, 0, &query))
			return 0;
		/* Through libxdp's dispatcher the attached id is the
		 * dispatcher's; our program is one of its components. */
		return query.prog_id != 0;
	} else {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = rt->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = rt->tc_handle,
			    .priority = rt->tc_priority);

		return !bpf_tc_query(&hook, &opts) && opts.prog_id == rt->prog_id;
	}
}

static int status_one(const char *ifname)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	char pin_dir[PATH_MAX], rate[64], per[32];
	__u32 i;
	int err;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = set ? fg_pinned_open(pin_dir, &pinned) : -ENOMEM;
	if (!err)
		err = fg_read_active_set(&pinned, set);
	if (err) {
		pr_warn("Error: cannot read the state of %s: %s\n", ifname, strerror(-err));
		fg_pinned_close(&pinned);
		free(set);
		return FG_EXIT_FAILURE;
	}
	printf("%s: %s", ifname, pinned.rt.hook == FG_HOOK_XDP ? "xdp" : "tc ingress");
	if (pinned.rt.hook == FG_HOOK_XDP)
		printf(" (%s)", pinned.rt.xdp_mode == FG_XDP_GENERIC ? "generic" : "native");
	printf(", program id %u, %s\n", pinned.rt.prog_id,
	       fg_still_attached(&pinned.rt) ? "attached" : "NOT ATTACHED");
	printf("  pinned:   %s\n", pin_dir);
	printf("  sources:  %" PRIu64 " of %" PRIu64 " entries in use\n",
	       (uint64_t)count_entries(pinned.sources), (uint64_t)pinned.rt.max_sources);
	printf("  windows:  %" PRIu64 " of %u (sliding_window)\n",
	       (uint64_t)count_entries(pinned.windows), max_entries(pinned.windows));
	printf("  logs:     %" PRIu64 " of %u (sliding_log)\n",
	       (uint64_t)count_entries(pinned.logs), max_entries(pinned.logs));
	printf("  bans:     %" PRIu64 " (floodgate bans %s lists them)\n",
	       (uint64_t)count_entries(pinned.bans), ifname);
	printf("  policy:   generation %" PRIu64 ", malformed packets: %s\n",
	       (uint64_t)pinned.rt.generation,
	       set->malformed_verdict == FG_VERDICT_DROP ? "drop" : "pass");
	printf("  %-20s %-15s %-16s %-12s %-16s %s\n", "POLICY", "ALGORITHM", "RATE", "BURST",
	       "PER", "ACTION");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &set->policies[i];

		fg_format_rate(p, rate, sizeof(rate));
		if (p->key_kind == FG_KEY_GLOBAL)
			snprintf(per, sizeof(per), "global");
		else
			snprintf(per, sizeof(per), "src/%u src/%u", p->prefix_v4, p->prefix_v6);
		printf("  %-20s %-15s %-16s %-12" PRIu64 " %-16s %s\n", p->name,
		       algorithm_name(p->algorithm), rate, (uint64_t)p->burst, per,
		       action_name(p->action));
	}
	fg_pinned_close(&pinned);
	free(set);
	return FG_EXIT_OK;
}

int fg_cmd_status(const char *ifname)
{
	struct dirent *entry;
	int ret = FG_EXIT_OK, shown = 0;
	char pin_dir[PATH_MAX];
	DIR *dir;

	if (ifname) {
		fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
		if (access(pin_dir, F_OK)) {
			pr_warn("Error: floodgate is not loaded on %s\n", ifname);
			return FG_EXIT_STATE;
		}
		return status_one(ifname);
	}
	dir = opendir(FG_PIN_BASE);
	while (dir && (entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		if (shown++)
			printf("\n");
		if (status_one(entry->d_name))
			ret = FG_EXIT_FAILURE;
	}
	if (dir)
		closedir(dir);
	if (!shown)
		printf("floodgate is not loaded on any interface\n");
	return ret;
}

int fg_sum_percpu(int fd, __u32 index, void *sum, size_t value_size)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *values, *out = sum;
	size_t words = value_size / sizeof(__u64), i;
	int cpu;

	if (ncpus < 0)
		return ncpus;
	values = calloc(ncpus, value_size);
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &index, values)) {
		free(values);
		return -errno;
	}
	memset(sum, 0, value_size);
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < words; i++)
			out[i] += values[cpu * words + i];
	free(values);
	return 0;
}

static void print_stats_json(const char *ifname, const struct fg_pinned *pinned,
			     const struct fg_global_stats *g, const struct fg_policy_set *set,
			     const struct fg_policy_stats *ps)
{
	const char *sep = "";
	__u32 i;

	printf("{\"interface\":\"%s\",\"hook\":\"%s\",\"generation\":%" PRIu64 ",\"global\":{",
	       ifname, pinned->rt.hook == FG_HOOK_XDP ? "xdp" : "tc",
	       (uint64_t)pinned->rt.generation);
#define X(f)                                                                                       \
	printf("%s\"" #f "\":%" PRIu64, sep, (uint64_t)g->f);                                      \
	sep = ",";
	GLOBAL_FIELDS(X)
#undef X
	printf("},\"policies\":[");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		printf("%s{\"name\":\"%s\",\"action\":\"%s\"", i ? "," : "", set->policies[i].name,
		       action_name(set->policies[i].action));
#define X(f) printf(",\"" #f "\":%" PRIu64, (uint64_t)ps[i].f);
		POLICY_FIELDS(X)
#undef X
		printf("}");
	}
	printf("]}\n");
}

static void print_stats_text(const char *ifname, const struct fg_global_stats *g,
			     const struct fg_policy_set *set, const struct fg_policy_stats *ps)
{
	__u32 i;

	printf("%s:\n", ifname);
#define X(f) printf("  %-14s %" PRIu64 "\n", #f, (uint64_t)g->f);
	GLOBAL_FIELDS(X)
#undef X
	printf("\n  %-20s %12s %12s %12s %12s\n", "POLICY", "MATCHED", "PASSED", "DROPPED",
	       "WOULD-DROP");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		printf("  %-20s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
		       set->policies[i].name, (uint64_t)ps[i].matched_packets,
		       (uint64_t)ps[i].passed_packets, (uint64_t)ps[i].dropped_packets,
		       (uint64_t)ps[i].would_drop_packets);
}

int fg_cmd_stats(const char *ifname, bool json)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_stats *ps = calloc(FG_MAX_POLICIES, sizeof(*ps));
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_global_stats global;
	__u32 i, zero = 0;
	int err, ret;

	if (!ps || !set) {
		ret = FG_EXIT_FAILURE;
		goto out;
	}
	ret = fg_open_loaded(ifname, &pinned);
	if (ret)
		goto out;
	ret = FG_EXIT_FAILURE;
	err = fg_read_active_set(&pinned, set);
	if (!err)
		err = fg_sum_percpu(pinned.global_stats, zero, &global, sizeof(global));
	for (i = 0; !err && i < set->count && i < FG_MAX_POLICIES; i++)
		err = fg_sum_percpu(pinned.maps.policy_stats,
				    pinned.rt.active_slot * FG_MAX_POLICIES + i, &ps[i],
				    sizeof(ps[i]));
	if (err) {
		pr_warn("Error: cannot read the counters of %s: %s\n", ifname, strerror(-err));
		goto out;
	}
	if (json)
		print_stats_json(ifname, &pinned, &global, set, ps);
	else
		print_stats_text(ifname, &global, set, ps);
	ret = FG_EXIT_OK;
out:
	fg_pinned_close(&pinned);
	free(ps);
	free(set);
	return ret;
}
