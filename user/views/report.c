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

#include "attach/hook.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "cli/exit.h" /* until the read models return struct fg_err alone */
#include "policy/readback.h"
#include "base/log.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"
#include "policy/policy.h"
#include "attach/xdp_ext.h"
#include "views/report.h"
#include "config/values.h"

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
	struct fg_err open_err = {0};
	bool attached;
	int err;

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = set ? fg_pinned_open(pin_dir, &pinned, &open_err) : -ENOMEM;
	if (!err)
		err = fg_read_active_set(&pinned, set);
	if (err) {
		if (open_err.kind)
			pr_warn("Error: %s\n", open_err.msg);
		else
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
	struct fg_err e = {0};
	DIR *dir;

	if (ifname) {
		fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
		if (access(pin_dir, F_OK)) {
			fg_fail(&e, FG_ERR_STATE, "floodgate is not loaded on %s", ifname);
			fg_pinfolder_explain_missing(&e);
			return fg_exit_report(&e);
		}
		if (fg_pinfolder_check_owned(pin_dir, &e))
			return fg_exit_report(&e);
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
		fg_pinfolder_explain_missing(&e);
		if (e.msg[0])
			fprintf(stderr, "%s\n", e.msg);
	}
	return ret;
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
	struct fg_err e = {0};
	__u32 i, zero = 0;
	int err, ret;

	if (!ps || !set) {
		pr_warn("Error: out of memory reading the counters of %s\n", ifname);
		ret = FG_EXIT_FAILURE;
		goto out;
	}
	if (fg_open_loaded(ifname, &pinned, &e)) {
		ret = fg_exit_report(&e);
		goto out;
	}
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
