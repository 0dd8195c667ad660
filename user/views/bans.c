// SPDX-License-Identifier: GPL-2.0-only
/* `bans`: the listing, moved here verbatim from ops/bans.c (ops return
 * results and print nothing). The read models' rework replaces this file. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "cli/exit.h" /* until the read models return struct fg_err alone */
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "views/bans.h"

static const char *banned_by(const struct fg_policy_set *set, __u32 policy_id)
{
	__u32 i;

	if (!policy_id)
		return "(by hand)";
	for (i = 0; i < set->count && i < FG_MAX_POLICIES; i++)
		if (set->policies[i].id == policy_id)
			return set->policies[i].name;
	return "(a removed policy)";
}

/* One row of `bans`: text columns, or one JSON object (README: bans --json). */
static void print_ban(const struct fg_src_lpm_key *key, const struct fg_ban *ban,
		      const struct fg_policy_set *set, __u64 now, bool json, bool first)
{
	char addr[INET6_ADDRSTRLEN], prefix[INET6_ADDRSTRLEN + 8], left[32];
	const char *by = banned_by(set, ban->policy_id);
	bool forever = ban->expires_ns == ~0ULL, expired = !forever && ban->expires_ns <= now;

	inet_ntop(key->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, key->addr, addr,
		  sizeof(addr));
	snprintf(prefix, sizeof(prefix), "%s/%u", addr, key->prefixlen - FG_SRC_LPM_HEADER_BITS);
	if (json) {
		printf("%s\n    {\"prefix\": \"%s\", \"family\": %u, \"state\": \"%s\", ",
		       first ? "" : ",", prefix, key->family,
		       forever	 ? "until_unbanned"
		       : expired ? "expired"
				 : "active");
		if (forever || expired)
			printf("\"remaining_s\": null, ");
		else
			printf("\"remaining_s\": %.3f, ", (ban->expires_ns - now) / 1e9);
		printf("\"duration_s\": %.3f, \"strikes\": %u, \"by_hand\": %s, \"policy\": ",
		       ban->duration_ns / 1e9, ban->strikes, ban->policy_id ? "false" : "true");
		if (ban->policy_id && by[0] != '(')
			printf("\"%s\"}", by);
		else
			printf("null}");
		return;
	}
	if (forever)
		snprintf(left, sizeof(left), "until unbanned");
	else if (expired)
		snprintf(left, sizeof(left), "expired");
	else
		snprintf(left, sizeof(left), "%.1fs", (ban->expires_ns - now) / 1e9);
	printf("%-44s %-14s %-8u %s\n", prefix, left, ban->strikes, by);
}

int fg_cmd_bans(const char *ifname, bool json)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_err err = {0};
	struct fg_src_lpm_key key, next;
	void *prev = NULL;
	__u64 now;
	__u32 slot;
	int ret, shown = 0;

	if (!set) {
		pr_warn("Error: out of memory (the policy set needs %zu bytes)\n", sizeof(*set));
		return FG_EXIT_FAILURE;
	}
	ret = fg_open_loaded(ifname, &pinned, &err) ? fg_exit_report(&err) : FG_EXIT_OK;
	if (ret)
		goto out;
	slot = pinned.rt.active_slot;
	if (bpf_map_lookup_elem(pinned.maps.policy_sets, &slot, set))
		memset(set, 0, sizeof(*set));
	now = fg_monotonic_ns();
	if (json)
		printf("{\"interface\": \"%s\", \"bans\": [", ifname);
	else
		printf("%-44s %-14s %-8s %s\n", "BANNED", "REMAINING", "STRIKES", "BY");
	while (!bpf_map_get_next_key(pinned.bans, prev, &next)) {
		struct fg_ban ban;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(pinned.bans, &key, &ban))
			continue;
		print_ban(&key, &ban, set, now, json, shown == 0);
		shown++;
	}
	if (json)
		printf("%s]}\n", shown ? "\n  " : "");
	else if (!shown)
		printf("(no bans)\n");
out:
	fg_pinned_close(&pinned);
	free(set);
	return ret;
}
