// SPDX-License-Identifier: GPL-2.0-only
/* `status` and `stats` as text and JSON, and the counters `stats` and
 * `replay` share. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/print.h"
#include "policy/readback.h"

/* `per` as status prints it: src/32 src/64, src/32+dport src/64+dport, global. */
static void format_per(const struct fg_policy *p, char *buf, size_t size)
{
	const char *dport = p->flags & FG_POLICY_KEY_DPORT ? "+dport" : "";

	if (p->key_kind == FG_KEY_GLOBAL)
		snprintf(buf, size, "global");
	else
		snprintf(buf, size, "src/%u%s src/%u%s", p->prefix_v4, dport, p->prefix_v6, dport);
}

static const char *hook_name(__u32 hook)
{
	return hook == FG_HOOK_XDP ? "xdp" : "tc";
}

static const char *xdp_mode_name(__u32 mode)
{
	return mode == FG_XDP_GENERIC ? "generic" : "native";
}

static const char *malformed_name(const struct fg_policy_set *set)
{
	return set->malformed_verdict == FG_VERDICT_DROP ? "drop" : "pass";
}

/* The fleet sync, when a `run` syncs this interface or did. */
static void print_fleet(const struct fg_status *status)
{
	const struct fg_fleet_state *st = &status->fleet;

	if (!status->fleet_known)
		return;
	printf("  fleet:    %s", !st->syncing	  ? "not syncing (no `run` with [fleet])"
				 : st->connected  ? "connected to Redis"
				 : st->refuse_all ? "Redis unreachable, refusing fleet-scoped keys"
						  : "Redis unreachable, enforcing local limits");
	if (st->syncs)
		printf(", last sync %.1f s ago (%.2f ms)",
		       ((double)status->now_real_ns - (double)st->last_sync_ns) / 1e9,
		       st->sync_latency_ns / 1e6);
	printf(", %" PRIu64 " keys held, %" PRIu64 " syncs, %" PRIu64 " outages\n",
	       (uint64_t)st->keys_held, (uint64_t)st->syncs, (uint64_t)st->outages);
}

static void print_policies(const struct fg_policy_set *set)
{
	char rate[64], per[48];
	__u32 i;

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
}

static void print_list(const char *name, const struct fg_status_list *list)
{
	printf("  %-9s %u prefixes, %.1f MiB (up to %.1f MiB during a reload)\n", name,
	       list->prefixes, list->memory_bytes / 1048576.0, list->reload_peak_bytes / 1048576.0);
}

static void print_lists(const struct fg_status *status)
{
	print_list("allow:", &status->allow);
	print_list("deny:", &status->deny);
	printf("  lists:    access_lists sized for %u prefixes (both slots of a reload), "
	       "%.1f MiB in use\n",
	       status->lists_capacity, status->lists_memlock / 1048576.0);
}

static json_t *list_json(const struct fg_status_list *list)
{
	json_t *o = json_object();

	fg_json_set(o, "prefixes", json_integer(list->prefixes));
	fg_json_set(o, "memory_bytes", fg_json_u64(list->memory_bytes));
	fg_json_set(o, "reload_peak_bytes", fg_json_u64(list->reload_peak_bytes));
	return o;
}

static json_t *lists_json(const struct fg_status *status)
{
	json_t *o = json_object();

	fg_json_set(o, "allow", list_json(&status->allow));
	fg_json_set(o, "deny", list_json(&status->deny));
	fg_json_set(o, "capacity", json_integer(status->lists_capacity));
	fg_json_set(o, "memlock_bytes", fg_json_u64(status->lists_memlock));
	return o;
}

/* The SYN proxy, when the program has one: "synproxy: ports 22, 443 (mss
 * 1460/1440, wscale 7, sack, timestamps, synacks off), program 12; nftables table inet
 * floodgate_synproxy_eth0 installed". */
static void print_synproxy(const struct fg_status_synproxy *sp)
{
	if (!sp->enabled) {
		if (sp->nft_installed)
			printf("  synproxy: off, but its nftables table %s is still there "
			       "(unload removes it)\n",
			       sp->nft_table);
		return;
	}
	printf("  synproxy: ports %s (mss %u/%u, wscale %u%s%s, synacks %s), program %u; nftables "
	       "table %s %s\n",
	       sp->ports, sp->mss, sp->mss6, sp->wscale, sp->sack ? ", sack" : "",
	       sp->timestamps ? ", timestamps" : "", sp->synacks, sp->prog_id, sp->nft_table,
	       sp->nft_installed ? "installed" : "MISSING (handshakes cannot complete)");
}

static json_t *synproxy_json(const struct fg_status_synproxy *sp)
{
	json_t *o;

	if (!sp->enabled)
		return json_null();
	o = json_object();
	fg_json_set(o, "ports", json_string(sp->ports));
	fg_json_set(o, "mss", json_integer(sp->mss));
	fg_json_set(o, "mss6", json_integer(sp->mss6));
	fg_json_set(o, "wscale", json_integer(sp->wscale));
	fg_json_set(o, "sack", json_boolean(sp->sack));
	fg_json_set(o, "timestamps", json_boolean(sp->timestamps));
	fg_json_set(o, "synacks", json_string(sp->synacks));
	fg_json_set(o, "program_id", json_integer(sp->prog_id));
	fg_json_set(o, "nftables_table", json_string(sp->nft_table));
	fg_json_set(o, "nftables_installed", json_boolean(sp->nft_installed));
	return o;
}

void fg_print_status_text(const char *ifname, const struct fg_status *status)
{
	const struct fg_runtime *rt = &status->rt;
	unsigned int i;

	printf("%s: %s", ifname, rt->hook == FG_HOOK_XDP ? "xdp" : "tc ingress");
	if (rt->hook == FG_HOOK_XDP)
		printf(" (%s)", xdp_mode_name(rt->xdp_mode));
	printf(", program id %u, %s\n", rt->prog_id,
	       status->attached ? "attached" : "NOT ATTACHED");
	if (rt->hook == FG_HOOK_XDP)
		printf("  xdp:      %s\n", status->sharing);
	printf("  pinned:   %s\n", status->pin_dir);
	for (i = 0; i < status->n_tables; i++) {
		const struct fg_status_table *t = &status->tables[i];
		char label[24];

		snprintf(label, sizeof(label), "%s:", t->name);
		printf("  %-9s %" PRIu64 " of %u entries in use (%s)\n", label,
		       (uint64_t)t->entries, t->capacity, t->note);
	}
	printf("  ban share: policies hold %" PRId64 " of their %u; bans from outside a full "
	       "table refused: %" PRIu64 "\n",
	       (int64_t)status->ban_count.policy_bans, status->policy_ban_cap,
	       (uint64_t)status->ban_count.outside_refused);
	print_lists(status);
	print_synproxy(&status->synproxy);
	print_fleet(status);
	printf("  policy:   generation %" PRIu64 ", malformed packets: %s\n",
	       (uint64_t)rt->generation, malformed_name(status->set));
	print_policies(status->set);
	if (!status->attached)
		printf("  floodgate's program %u is not attached to %s: run 'floodgate unload %s', "
		       "then load it again\n",
		       rt->prog_id, ifname, ifname);
}

static json_t *policies_json(const struct fg_policy_set *set)
{
	json_t *array = json_array();
	char rate[64], per[48];
	__u32 i;

	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &set->policies[i];
		__u64 burst = fg_format_rate(p, rate, sizeof(rate));
		json_t *o = json_object();

		format_per(p, per, sizeof(per));
		fg_json_set(o, "name", fg_json_text(p->name));
		fg_json_set(o, "algorithm", json_string(fg_algorithm_name(p->algorithm)));
		fg_json_set(o, "rate", json_string(rate));
		fg_json_set(o, "burst", fg_json_u64(burst));
		fg_json_set(o, "per", json_string(per));
		fg_json_set(o, "action", json_string(fg_action_name(p->action)));
		json_array_append_new(array, o);
	}
	return array;
}

json_t *fg_status_json(const char *ifname, const struct fg_status *status)
{
	const struct fg_runtime *rt = &status->rt;
	bool xdp = rt->hook == FG_HOOK_XDP;
	json_t *o = json_object(), *tables = json_array();
	unsigned int i;

	fg_json_set(o, "interface", fg_json_text(ifname));
	fg_json_set(o, "hook", json_string(hook_name(rt->hook)));
	fg_json_set(o, "xdp_mode", xdp ? json_string(xdp_mode_name(rt->xdp_mode)) : json_null());
	fg_json_set(o, "xdp", xdp ? fg_json_text(status->sharing) : json_null());
	fg_json_set(o, "program_id", json_integer(rt->prog_id));
	fg_json_set(o, "attached", json_boolean(status->attached));
	fg_json_set(o, "pinned", fg_json_text(status->pin_dir));
	fg_json_set(o, "generation", fg_json_u64(rt->generation));
	fg_json_set(o, "malformed", json_string(malformed_name(status->set)));
	for (i = 0; i < status->n_tables; i++) {
		json_t *t = json_object();

		fg_json_set(t, "name", json_string(status->tables[i].name));
		fg_json_set(t, "entries", fg_json_u64(status->tables[i].entries));
		fg_json_set(t, "capacity", json_integer(status->tables[i].capacity));
		json_array_append_new(tables, t);
	}
	fg_json_set(o, "tables", tables);
	fg_json_set(o, "policy_bans", json_integer(status->ban_count.policy_bans));
	fg_json_set(o, "policy_ban_share", json_integer(status->policy_ban_cap));
	fg_json_set(o, "bans_refused_full", fg_json_u64(status->ban_count.outside_refused));
	fg_json_set(o, "lists", lists_json(status));
	fg_json_set(o, "synproxy", synproxy_json(&status->synproxy));
	fg_json_set(o, "policies", policies_json(status->set));
	return o;
}

json_t *fg_status_error_json(const char *ifname, const struct fg_err *err)
{
	json_t *o = json_object();

	fg_json_set(o, "interface", fg_json_text(ifname));
	fg_json_set(o, "error", fg_json_text(err->msg));
	return o;
}

void fg_print_counters_text(const struct fg_global_stats *g, const struct fg_policy_set *set,
			    const struct fg_policy_stats *ps)
{
	__u32 i;

#define X(field, ...) printf("  %-14s %" PRIu64 "\n", #field, (uint64_t)g->field);
	FG_GLOBAL_COUNTERS(X)
#undef X
	printf("\n  %-20s %12s %12s %12s %12s\n", "POLICY", "MATCHED", "PASSED", "DROPPED",
	       "WOULD-DROP");
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		printf("  %-20s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
		       set->policies[i].name, (uint64_t)ps[i].matched_packets,
		       (uint64_t)ps[i].passed_packets, (uint64_t)ps[i].dropped_packets,
		       (uint64_t)ps[i].would_drop_packets);
}

void fg_counters_json(json_t *object, const struct fg_global_stats *g,
		      const struct fg_policy_set *set, const struct fg_policy_stats *ps)
{
	json_t *global = json_object(), *policies = json_array();
	__u32 i;

#define X(field, ...) fg_json_set(global, #field, fg_json_u64(g->field));
	FG_GLOBAL_COUNTERS(X)
#undef X
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++) {
		json_t *p = json_object();

		fg_json_set(p, "name", fg_json_text(set->policies[i].name));
		fg_json_set(p, "action", json_string(fg_action_name(set->policies[i].action)));
#define X(field, ...) fg_json_set(p, #field, fg_json_u64(ps[i].field));
		FG_POLICY_COUNTERS(X)
#undef X
		json_array_append_new(policies, p);
	}
	fg_json_set(object, "global", global);
	fg_json_set(object, "policies", policies);
}

void fg_print_stats_text(const char *ifname, const struct fg_stats *stats)
{
	printf("%s:\n", ifname);
	fg_print_counters_text(&stats->global, stats->set, stats->policies);
}

json_t *fg_stats_json(const char *ifname, const struct fg_stats *stats)
{
	json_t *o = json_object();

	fg_json_set(o, "interface", fg_json_text(ifname));
	fg_json_set(o, "hook", json_string(hook_name(stats->hook)));
	fg_json_set(o, "generation", fg_json_u64(stats->generation));
	fg_counters_json(o, &stats->global, stats->set, stats->policies);
	return o;
}
