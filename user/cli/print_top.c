// SPDX-License-Identifier: GPL-2.0-only
/* `top` and `bans` as text and JSON. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/print.h"

static void print_entry_text(const struct fg_top_entry *v)
{
	const struct fg_top_row *row = v->row;
	char source[sizeof(v->source) + 8], next[32], ban[48];

	snprintf(source, sizeof(source), row->key.dport ? "%s:%u" : "%s", v->source,
		 row->key.dport);
	if (v->next_ns == ~0ULL)
		snprintf(next, sizeof(next), "?");
	else if (!v->next_ns)
		snprintf(next, sizeof(next), "now");
	else
		snprintf(next, sizeof(next), "in %.3f s", v->next_ns / 1e9);
	if (!v->banned)
		snprintf(ban, sizeof(ban), "-");
	else if (v->ban_forever)
		snprintf(ban, sizeof(ban), "until unbanned");
	else
		snprintf(ban, sizeof(ban), "%.0f s left", v->ban_left_s);
	printf("%-30s %-16s %12" PRIu64 " %8.1fs %12" PRIu64 " %-7s %-12s %s\n", source, v->policy,
	       (uint64_t)row->dropped, v->last_seen_s, (uint64_t)v->allowance, v->unit, next, ban);
}

void fg_print_top_text(const struct fg_top_view *view)
{
	unsigned int i;

	printf("%-30s %-16s %12s %9s %12s %-7s %-12s %s\n", "SOURCE", "POLICY", "DROPPED~", "SEEN",
	       "ALLOWANCE", "UNIT", "NEXT", "BAN");
	for (i = 0; i < view->top.count; i++)
		print_entry_text(&view->entries[i]);
}

static json_t *entry_json(const struct fg_top_entry *v)
{
	json_t *o = json_object(), *ban = json_null();

	fg_json_set(o, "source", json_string(v->source));
	fg_json_set(o, "dport", v->row->key.dport ? json_integer(v->row->key.dport) : json_null());
	fg_json_set(o, "policy", fg_json_text(v->policy));
	fg_json_set(o, "dropped", fg_json_u64(v->row->dropped));
	fg_json_set(o, "last_seen_s", fg_json_real(v->last_seen_s, 1));
	fg_json_set(o, "allowance", fg_json_u64(v->allowance));
	fg_json_set(o, "unit", json_string(v->unit));
	fg_json_set(o, "next_admission_ms",
		    v->next_ns == ~0ULL ? json_null() : fg_json_real(v->next_ns / 1e6, 3));
	if (v->banned) {
		ban = json_object();
		fg_json_set(ban, "expires_in_s",
			    v->ban_forever ? json_null() : fg_json_real(v->ban_left_s, 1));
		fg_json_set(ban, "strikes", json_integer(v->strikes));
	}
	fg_json_set(o, "ban", ban);
	return o;
}

json_t *fg_top_json(const struct fg_top_view *view)
{
	json_t *o = json_object(), *sources = json_array();
	unsigned int i;

	for (i = 0; i < view->top.count; i++)
		json_array_append_new(sources, entry_json(&view->entries[i]));
	fg_json_set(o, "sources", sources);
	return o;
}

static const char *ban_state_name(enum fg_ban_state state)
{
	switch (state) {
	case FG_BAN_UNTIL_UNBANNED:
		return "until_unbanned";
	case FG_BAN_EXPIRED:
		return "expired";
	case FG_BAN_ACTIVE:
		break;
	}
	return "active";
}

void fg_print_bans_text(const struct fg_ban_list *list)
{
	size_t i;

	printf("%-44s %-14s %-8s %s\n", "BANNED", "REMAINING", "STRIKES", "BY");
	for (i = 0; i < list->count; i++) {
		const struct fg_ban_entry *e = &list->entries[i];
		const char *by = e->by_hand	? "(by hand)"
				 : e->origin[0] ? e->origin
				 : e->policy	? e->policy
						: "(a removed policy)";
		char left[32];

		if (e->state == FG_BAN_UNTIL_UNBANNED)
			snprintf(left, sizeof(left), "until unbanned");
		else if (e->state == FG_BAN_EXPIRED)
			snprintf(left, sizeof(left), "expired");
		else
			snprintf(left, sizeof(left), "%.1fs", e->remaining_s);
		printf("%-44s %-14s %-8u %s\n", e->prefix, left, e->strikes, by);
	}
	if (!list->count)
		printf("(no bans)\n");
}

json_t *fg_bans_json(const char *ifname, const struct fg_ban_list *list)
{
	json_t *o = json_object(), *bans = json_array();
	size_t i;

	fg_json_set(o, "interface", fg_json_text(ifname));
	for (i = 0; i < list->count; i++) {
		const struct fg_ban_entry *e = &list->entries[i];
		json_t *b = json_object();

		fg_json_set(b, "prefix", json_string(e->prefix));
		fg_json_set(b, "family", json_integer(e->family));
		fg_json_set(b, "state", json_string(ban_state_name(e->state)));
		fg_json_set(b, "remaining_s",
			    e->state == FG_BAN_ACTIVE ? fg_json_real(e->remaining_s, 3)
						      : json_null());
		fg_json_set(b, "duration_s", fg_json_real(e->duration_s, 3));
		fg_json_set(b, "strikes", json_integer(e->strikes));
		fg_json_set(b, "by_hand", json_boolean(e->by_hand));
		fg_json_set(b, "policy", fg_json_text(e->policy));
		fg_json_set(b, "origin", e->origin[0] ? json_string(e->origin) : json_null());
		json_array_append_new(bans, b);
	}
	fg_json_set(o, "bans", bans);
	return o;
}
