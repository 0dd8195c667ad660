// SPDX-License-Identifier: GPL-2.0-only
/* `status` and `stats`: read-only views of the pinned maps. */
#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "log.h"
#include "pinfolder.h"
#include "pinned.h"
#include "policy.h"
#include "xdp_ext.h"
#include "report.h"
#include "values.h"

/* Formats the policy's rate in the config's vocabulary; fg_policy_rate()
 * says how it is derived from the params. */
static void format_rate(const struct fg_readback_rate *rate, int bytes, char *buf, size_t size)
{
	static const struct {
		__u64 ns;
		const char *unit;
	} units[] = {{3600000000000ULL, "h"},
		     {60000000000ULL, "min"},
		     {1000000000ULL, "s"},
		     {1000000ULL, "ms"}};
	const char *unit_b = bytes ? "B" : "";
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (rate->period_ns % units[i].ns)
			continue;
		if (rate->period_ns == units[i].ns)
			snprintf(buf, size, "%" PRIu64 "%s/%s", (uint64_t)rate->count, unit_b,
				 units[i].unit);
		else
			snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "%s", (uint64_t)rate->count,
				 unit_b, (uint64_t)(rate->period_ns / units[i].ns), units[i].unit);
		return;
	}
	snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "ns", (uint64_t)rate->count, unit_b,
		 (uint64_t)rate->period_ns);
}

__u64 fg_format_rate(const struct fg_policy *p, char *buf, size_t size)
{
	struct fg_readback_rate rate;

	fg_policy_rate(p, &rate);
	format_rate(&rate, p->flags & FG_POLICY_BYTES, buf, size);
	return rate.burst;
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

const struct fg_policy *fg_policy_by_id(const struct fg_policy_set *set, __u32 id)
{
	__u32 i;

	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (set->policies[i].id == id)
			return &set->policies[i];
	return NULL;
}

void fg_format_key(const struct fg_source_key *key, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN];

	if (key->family == FG_FAMILY_OVERFLOW) {
		snprintf(buf, size, "overflow");
		return;
	}
	if (key->family != FG_FAMILY_IPV4 && key->family != FG_FAMILY_IPV6) {
		snprintf(buf, size, "global");
		return;
	}
	inet_ntop(key->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, key->addr, addr,
		  sizeof(addr));
	snprintf(buf, size, "%s/%u", addr, key->prefix_len);
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

/* Entries in use of each table the pinned-map table marks for `status`. */
static void print_occupancy(struct fg_pinned *pinned)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];
		int fd = *fg_pinned_fd(pinned, row);
		char label[24];

		if (!row->status_note)
			continue;
		snprintf(label, sizeof(label), "%s:", row->name);
		printf("  %-9s %" PRIu64 " of %u entries in use (", label,
		       (uint64_t)count_entries(fd), max_entries(fd));
		printf("%s)\n", row->status_note);
	}
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

/* The fleet sync, when a `run` syncs this interface or did. */
static void print_fleet(const struct fg_pinned *pinned)
{
	struct fg_fleet_state st;
	struct timespec now;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pinned->fleet_state, &zero, &st) || (!st.syncing && !st.syncs))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	printf("  fleet:    %s", !st.syncing	 ? "not syncing (no `run` with [fleet])"
				 : st.connected	 ? "connected to Redis"
				 : st.refuse_all ? "Redis unreachable, refusing fleet-scoped keys"
						 : "Redis unreachable, enforcing local limits");
	if (st.syncs)
		printf(", last sync %.1f s ago (%.2f ms)",
		       ((double)now.tv_sec * 1e9 + now.tv_nsec - (double)st.last_sync_ns) / 1e9,
		       st.sync_latency_ns / 1e6);
	printf(", %" PRIu64 " keys held, %" PRIu64 " syncs, %" PRIu64 " outages\n",
	       (uint64_t)st.keys_held, (uint64_t)st.syncs, (uint64_t)st.outages);
}

/* `per` as status prints it: src/32 src/64, src/32+dport src/64+dport, global. */
static void format_per(const struct fg_policy *p, char *buf, size_t size)
{
	const char *dport = p->flags & FG_POLICY_KEY_DPORT ? "+dport" : "";

	if (p->key_kind == FG_KEY_GLOBAL)
		snprintf(buf, size, "global");
	else
		snprintf(buf, size, "src/%u%s src/%u%s", p->prefix_v4, dport, p->prefix_v6, dport);
}

static void print_status_text(const char *ifname, const char *pin_dir, struct fg_pinned *pinned,
			      const struct fg_policy_set *set, bool attached, const char *sharing)
{
	char rate[64], per[48];
	__u32 i;

	printf("%s: %s", ifname, pinned->rt.hook == FG_HOOK_XDP ? "xdp" : "tc ingress");
	if (pinned->rt.hook == FG_HOOK_XDP)
		printf(" (%s)", pinned->rt.xdp_mode == FG_XDP_GENERIC ? "generic" : "native");
	printf(", program id %u, %s\n", pinned->rt.prog_id, attached ? "attached" : "NOT ATTACHED");
	if (pinned->rt.hook == FG_HOOK_XDP)
		printf("  xdp:      %s\n", sharing);
	printf("  pinned:   %s\n", pin_dir);
	print_occupancy(pinned);
	print_fleet(pinned);
	printf("  policy:   generation %" PRIu64 ", malformed packets: %s\n",
	       (uint64_t)pinned->rt.generation,
	       set->malformed_verdict == FG_VERDICT_DROP ? "drop" : "pass");
	printf("  %-20s %-15s %-16s %-12s %-26s %s\n", "POLICY", "ALGORITHM", "RATE", "BURST",
	       "PER", "ACTION");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &set->policies[i];
		__u64 burst = fg_format_rate(p, rate, sizeof(rate));

		format_per(p, per, sizeof(per));
		printf("  %-20s %-15s %-16s %-12" PRIu64 " %-26s %s\n", p->name,
		       fg_algorithm_name(p->algorithm), rate, (uint64_t)burst, per,
		       fg_action_name(p->action));
	}
	if (!attached)
		printf("  floodgate's program %u is not attached to %s: run 'floodgate unload %s', "
		       "then load it again\n",
		       pinned->rt.prog_id, ifname, ifname);
}

/* README: status --json. Names, paths and the sharing text hold no quote or
 * backslash (interface names cannot, policy names are [A-Za-z0-9_.-]). */
static void print_status_json(const char *ifname, const char *pin_dir, struct fg_pinned *pinned,
			      const struct fg_policy_set *set, bool attached, const char *sharing)
{
	const char *sep = "";
	char rate[64], per[48];
	size_t t;
	__u32 i;

	printf("{\"interface\":\"%s\",\"hook\":\"%s\",\"xdp_mode\":", ifname,
	       pinned->rt.hook == FG_HOOK_XDP ? "xdp" : "tc");
	if (pinned->rt.hook == FG_HOOK_XDP)
		printf("\"%s\",\"xdp\":\"%s\"",
		       pinned->rt.xdp_mode == FG_XDP_GENERIC ? "generic" : "native", sharing);
	else
		printf("null,\"xdp\":null");
	printf(",\"program_id\":%u,\"attached\":%s,\"pinned\":\"%s\",\"generation\":%" PRIu64
	       ",\"malformed\":\"%s\",\"tables\":[",
	       pinned->rt.prog_id, attached ? "true" : "false", pin_dir,
	       (uint64_t)pinned->rt.generation,
	       set->malformed_verdict == FG_VERDICT_DROP ? "drop" : "pass");
	for (t = 0; t < fg_pinned_map_count; t++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[t];
		int fd = *fg_pinned_fd(pinned, row);

		if (!row->status_note)
			continue;
		printf("%s{\"name\":\"%s\",\"entries\":%" PRIu64 ",\"capacity\":%u}", sep,
		       row->name, (uint64_t)count_entries(fd), max_entries(fd));
		sep = ",";
	}
	printf("],\"policies\":[");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &set->policies[i];
		__u64 burst = fg_format_rate(p, rate, sizeof(rate));

		format_per(p, per, sizeof(per));
		printf("%s{\"name\":\"%s\",\"algorithm\":\"%s\",\"rate\":\"%s\",\"burst\":%" PRIu64
		       ",\"per\":\"%s\",\"action\":\"%s\"}",
		       i ? "," : "", p->name, fg_algorithm_name(p->algorithm), rate,
		       (uint64_t)burst, per, fg_action_name(p->action));
	}
	printf("]}");
}

static int status_one(const char *ifname, bool json)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	char pin_dir[PATH_MAX], sharing[160] = "";
	bool attached;
	int err;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = set ? fg_pinned_open(pin_dir, &pinned) : -ENOMEM;
	if (!err)
		err = fg_read_active_set(&pinned, set);
	if (err) {
		/* fg_pinned_open said why pins of another namespace are refused. */
		if (err != -EXDEV)
			pr_warn("Error: cannot read the state of %s: %s\n", ifname, strerror(-err));
		if (json) /* keeps the array whole: bpftool's {"error": ...} */
			printf("{\"interface\":\"%s\",\"error\":\"%s\"}", ifname, strerror(-err));
		fg_pinned_close(&pinned);
		free(set);
		return err == -EXDEV ? FG_EXIT_STATE : FG_EXIT_FAILURE;
	}
	attached = fg_still_attached(&pinned.rt);
	if (pinned.rt.hook == FG_HOOK_XDP)
		fg_xdp_describe_sharing(pinned.rt.ifindex, pinned.rt.prog_id, sharing,
					sizeof(sharing));
	if (json)
		print_status_json(ifname, pin_dir, &pinned, set, attached, sharing);
	else
		print_status_text(ifname, pin_dir, &pinned, set, attached, sharing);
	fg_pinned_close(&pinned);
	free(set);
	return attached ? FG_EXIT_OK : FG_EXIT_STATE;
}

int fg_cmd_status(const char *ifname, bool json)
{
	struct dirent *entry;
	int ret = FG_EXIT_OK, shown = 0, err;
	char pin_dir[PATH_MAX];
	DIR *dir;

	if (ifname) {
		fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
		if (access(pin_dir, F_OK)) {
			pr_warn("Error: floodgate is not loaded on %s\n", ifname);
			fg_pinfolder_explain_missing();
			return FG_EXIT_STATE;
		}
		ret = fg_pinfolder_check_owned(pin_dir);
		if (ret)
			return ret;
	}
	if (json)
		printf("{\"interfaces\":[");
	dir = ifname ? NULL : opendir(FG_PIN_BASE);
	while (ifname || (dir && (entry = readdir(dir)))) {
		char listed[IF_NAMESIZE];
		const char *name = ifname;

		if (!ifname) {
			/* An interrupted load's staging folder is not a load. */
			if (entry->d_name[0] == '.' || strchr(entry->d_name, ':'))
				continue;
			fg_ifname_of_pin(entry->d_name, listed, sizeof(listed));
			name = listed;
		}
		if (shown++)
			printf(json ? "," : "\n");
		err = status_one(name, json);
		if (err && ret != FG_EXIT_FAILURE)
			ret = err; /* a failure to read outranks NOT ATTACHED */
		if (ifname)
			break;
	}
	if (dir)
		closedir(dir);
	if (json) {
		printf("]}\n");
	} else if (!shown) {
		printf("floodgate is not loaded on any interface\n");
		fg_pinfolder_explain_missing();
	}
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

void fg_print_counters_json(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps)
{
	const char *sep = "";
	__u32 i;

	printf("\"global\":{");
#define X(f)                                                                                       \
	printf("%s\"" #f "\":%" PRIu64, sep, (uint64_t)g->f);                                      \
	sep = ",";
	GLOBAL_FIELDS(X)
#undef X
	printf("},\"policies\":[");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		printf("%s{\"name\":\"%s\",\"action\":\"%s\"", i ? "," : "", set->policies[i].name,
		       fg_action_name(set->policies[i].action));
#define X(f) printf(",\"" #f "\":%" PRIu64, (uint64_t)ps[i].f);
		POLICY_FIELDS(X)
#undef X
		printf("}");
	}
	printf("]");
}

void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps)
{
	__u32 i;

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

static void print_stats_json(const char *ifname, const struct fg_pinned *pinned,
			     const struct fg_global_stats *g, const struct fg_policy_set *set,
			     const struct fg_policy_stats *ps)
{
	printf("{\"interface\":\"%s\",\"hook\":\"%s\",\"generation\":%" PRIu64 ",", ifname,
	       pinned->rt.hook == FG_HOOK_XDP ? "xdp" : "tc", (uint64_t)pinned->rt.generation);
	fg_print_counters_json(g, set, ps);
	printf("}\n");
}

static void print_stats_text(const char *ifname, const struct fg_global_stats *g,
			     const struct fg_policy_set *set, const struct fg_policy_stats *ps)
{
	printf("%s:\n", ifname);
	fg_print_counters_text(g, set, ps);
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
		pr_warn("Error: out of memory reading the counters of %s\n", ifname);
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
