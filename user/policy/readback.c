// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fg_algos.h"
#include "fg_gcra.h"
#include "base/clock.h"
#include "base/util.h"
#include "policy/readback.h"

/* The roundest number in [lo, hi] (most trailing decimal zeros). */
static __u64 roundest(__u64 lo, __u64 hi)
{
	__u64 step = 10000000000000000000ULL, m;

	for (; step > 1; step /= 10) {
		m = lo % step ? lo + (step - lo % step) : lo;
		if (m >= lo && m <= hi)
			return m;
	}
	return lo;
}

/* The roundest COUNT whose interval over `period_ns` is `interval_fp`, or 0
 * when there is none. The interval does not increase with COUNT, and
 * COUNT is within a factor 1 +- 1/interval_fp of the estimate below. */
static __u64 gcra_count(__u64 interval_fp, __u64 period_ns)
{
	__u64 estimate = (period_ns << FG_GCRA_FRAC_BITS) / interval_fp;
	__u64 lo = estimate / 2 + 1, hi = 2 * estimate + 2, top = hi, mid, first;

	if (!estimate)
		return 0;
	while (lo < hi) { /* the first COUNT with interval <= interval_fp */
		mid = lo + (hi - lo) / 2;
		if (fg_gcra_interval_fp(mid, period_ns) <= interval_fp)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (fg_gcra_interval_fp(lo, period_ns) != interval_fp)
		return 0;
	first = lo;
	hi = top;
	while (lo < hi) { /* the last COUNT with that interval */
		mid = lo + (hi - lo + 1) / 2;
		if (fg_gcra_interval_fp(mid, period_ns) == interval_fp)
			lo = mid;
		else
			hi = mid - 1;
	}
	return roundest(first, lo);
}

/* The roundest burst whose tolerance is `p`'s, or 0 when none. In packet
 * mode tau is burst whole per-packet costs; in byte mode it does not
 * decrease with burst, which is within a factor of two of the estimate. */
static __u64 gcra_burst(const struct fg_gcra_params *p, int bytes)
{
	__u64 cost = fg_gcra_cost_ns(p->interval_fp, 1), lo, hi, top, mid, first;

	if (!bytes)
		return cost && p->tolerance_ns % cost == 0 ? p->tolerance_ns / cost : 0;
	top = (__u64)(((unsigned __int128)p->tolerance_ns << FG_GCRA_FRAC_BITS) / p->interval_fp);
	lo = top / 2 + 1;
	hi = 2 * top + 2;
	if (hi > (1ULL << 63) / ((p->interval_fp >> FG_GCRA_FRAC_BITS) + 1))
		hi = (1ULL << 63) / ((p->interval_fp >> FG_GCRA_FRAC_BITS) + 1);
	top = hi;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fg_gcra_tolerance_ns(p->interval_fp, mid, bytes) >= p->tolerance_ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (fg_gcra_tolerance_ns(p->interval_fp, lo, bytes) != p->tolerance_ns)
		return 0;
	first = lo;
	hi = top;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (fg_gcra_tolerance_ns(p->interval_fp, mid, bytes) == p->tolerance_ns)
			lo = mid;
		else
			hi = mid - 1;
	}
	return roundest(first, lo);
}

static int gcra_rate(const struct fg_gcra_params *p, int bytes, struct fg_readback_rate *out)
{
	/* the config's period units, preferred in this order; up to 24h */
	static const __u64 units[] = {1000000000ULL, 60000000000ULL, 3600000000000ULL, 1000000ULL};
	static const __u64 max_multiple[] = {59, 59, 24, 999};
	__u64 n, count;
	size_t u;

	out->burst = gcra_burst(p, bytes);
	for (n = 1; n <= 999; n++) {
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			if (n > max_multiple[u])
				continue;
			count = gcra_count(p->interval_fp, n * units[u]);
			if (count) {
				out->count = count;
				out->period_ns = n * units[u];
				return 0;
			}
		}
	}
	out->count = 1;
	out->period_ns = fg_gcra_cost_ns(p->interval_fp, 1);
	return -1;
}

int fg_policy_rate(const struct fg_policy *p, struct fg_readback_rate *out)
{
	const union fg_rate_params *params = &p->params;

	switch (p->algorithm) {
	case FG_ALG_FIXED_WINDOW:
		out->count = params->fixed_window.count;
		out->period_ns = params->fixed_window.period_ns;
		out->burst = out->count; /* a window admits exactly COUNT */
		return 0;
	case FG_ALG_SLIDING_WINDOW:
		out->count = params->sliding_window.count;
		out->period_ns = params->sliding_window.period_ns;
		out->burst = out->count;
		return 0;
	case FG_ALG_SLIDING_LOG:
		out->count = params->sliding_log.count;
		out->period_ns = params->sliding_log.period_ns;
		out->burst = out->count;
		return 0;
	case FG_ALG_LEAKY_BUCKET:
		return gcra_rate(&params->leaky_bucket.gcra, p->flags & FG_POLICY_BYTES, out);
	default:
		return gcra_rate(&params->token_bucket, p->flags & FG_POLICY_BYTES, out);
	}
}

void fg_format_count_period(__u64 count, __u64 period_ns, bool bytes, char *buf, size_t size)
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
		if (period_ns % units[i].ns)
			continue;
		if (period_ns == units[i].ns)
			snprintf(buf, size, "%" PRIu64 "%s/%s", (uint64_t)count, unit_b,
				 units[i].unit);
		else
			snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "%s", (uint64_t)count, unit_b,
				 (uint64_t)(period_ns / units[i].ns), units[i].unit);
		return;
	}
	snprintf(buf, size, "%" PRIu64 "%s/%" PRIu64 "ns", (uint64_t)count, unit_b,
		 (uint64_t)period_ns);
}

__u64 fg_format_rate(const struct fg_policy *p, char *buf, size_t size)
{
	struct fg_readback_rate rate;

	fg_policy_rate(p, &rate);
	fg_format_count_period(rate.count, rate.period_ns, p->flags & FG_POLICY_BYTES, buf, size);
	return rate.burst;
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
