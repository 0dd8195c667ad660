// SPDX-License-Identifier: GPL-2.0-only
/*
 * What Redis says is checked before it is obeyed (docs/fleet.md, "What the fleet
 * may ban"): a fleet ban must be at least min_ban_prefix (min_ban_prefix6)
 * long, lasts max_ban at most, and may not cover an [allow] prefix or one
 * of the host's own addresses (ops/banguard.c, shared with CrowdSec); a
 * hold lasts MAX_HOLD_NS at most. What is refused is counted in
 * fleet_state and logged, a few lines at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "base/log.h"
#include "maps/batch.h"
#include "service/fleet_internal.h"

#define LOG_WINDOW_NS  (10ULL * FG_NS_PER_S)
#define LOG_PER_WINDOW 16

const char *fg_fleet_ban_refusal(struct fg_fleet *f, const struct fg_cidr *cidr)
{
	struct fg_ban_guard *guard = &f->bans.guard;

	guard->who = "fleet";
	guard->min_prefix4 = f->conf.min_ban_prefix;
	guard->min_prefix6 = f->conf.min_ban_prefix6;
	return fg_ban_guard_refusal(guard, &f->pinned, cidr);
}

__u64 fg_fleet_ban_left_ns(const struct fg_fleet *f, long long left_us)
{
	if (left_us < 0 || (__u64)left_us > f->conf.max_ban_ns / FG_NS_PER_US)
		return f->conf.max_ban_ns;
	return (__u64)left_us * FG_NS_PER_US;
}

__u64 fg_fleet_hold_ns(struct fg_fleet *f, long long hold_us)
{
	if (hold_us <= 0)
		return 0;
	if ((__u64)hold_us > MAX_HOLD_NS / FG_NS_PER_US) {
		f->state.holds_capped++;
		return MAX_HOLD_NS;
	}
	return (__u64)hold_us * FG_NS_PER_US;
}

void fg_fleet_refuse(struct fg_fleet *f, const char *member, const char *why)
{
	struct fleet_bans *b = &f->bans;
	__u64 now = fg_monotonic_ns();

	f->state.bans_refused++;
	if (now - b->log_window_ns >= LOG_WINDOW_NS) {
		if (b->unlogged)
			pr_warn("fleet: %u more bans from Redis refused (not logged)\n",
				b->unlogged);
		b->log_window_ns = now;
		b->logged = b->unlogged = 0;
	}
	if (b->logged++ < LOG_PER_WINDOW)
		pr_warn("fleet: refused a ban from Redis: %.60s (%s)\n", member, why);
	else
		b->unlogged++;
}

void fg_fleet_free_protected(struct fg_fleet *f)
{
	fg_ban_guard_free(&f->bans.guard);
}
