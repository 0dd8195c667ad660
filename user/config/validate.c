// SPDX-License-Identifier: GPL-2.0-only
/*
 * What needs more than one key: the keys a policy requires, what its
 * algorithm, action and scope allow together, the defaults derived from
 * other keys (burst, ban_factor, ban_max), and [fleet] for the policies
 * that use it. Each runs once its section, or the file, has ended.
 */
#include <errno.h>

#include "config/handlers.h"
#include "config/keys.h"
#include "config/validate.h"
#include "fg_algos.h"

/* A leaky bucket's depth by default: one full-size frame of bytes. */
#define LEAKY_DEFAULT_BYTE_DEPTH 1514ULL

/* The line where the row `name` of `section` was set; 0 when it was not. */
static int key_line(const struct fg_parser *p, unsigned int section, const char *name)
{
	const struct fg_key *key = fg_key_find(section, name);

	return key ? p->key_line[key - fg_keys] : 0;
}

static int policy_line(const struct fg_parser *p, const char *name)
{
	return key_line(p, FG_IN_POLICY, name);
}

/* The line of key `name` of the policy, or of its header when unset. */
static int policy_line_or_header(const struct fg_parser *p, const char *name)
{
	int line = policy_line(p, name);

	return line ? line : p->pol->line;
}

int fg_cfg_check_crowdsec(struct fg_parser *p)
{
	const struct fg_crowdsec_conf *cs = &p->cfg->crowdsec;

	if (!cs->enabled)
		return 0;
	if (!cs->url[0])
		return fg_cfg_fail(p, cs->line,
				   "[crowdsec] has no url (expected url = the Local API's, such "
				   "as http://127.0.0.1:8080/)");
	if (!cs->api_key_file[0])
		return fg_cfg_fail(p, cs->line,
				   "[crowdsec] has no api_key_file (expected api_key_file = PATH, "
				   "the file holding the key of 'cscli bouncers add floodgate')");
	return 0;
}

int fg_cfg_check_synproxy(struct fg_parser *p)
{
	const struct fg_synproxy_conf *synproxy = &p->cfg->synproxy;
	int ports_line = key_line(p, FG_IN_SYNPROXY, "ports");

	if (!synproxy->enabled)
		return 0;
	if (!ports_line)
		return fg_cfg_fail(p, synproxy->line,
				   "[synproxy] has no ports (expected ports = the TCP ports of "
				   "its listeners, such as 22, 443)");
	if (!synproxy->n_ports)
		return fg_cfg_fail(p, ports_line,
				   "ports names no port (expected PORT or LO-HI such as 22 or "
				   "8000-8080)");
	return 0;
}

/* What needs the whole file: [fleet] and the policies that use it. */
int fg_cfg_check_fleet(struct fg_parser *p)
{
	const struct fg_fleet_conf *fleet = &p->cfg->fleet;

	if (fleet->enabled && !key_line(p, FG_IN_FLEET, "redis"))
		return fg_cfg_fail(
			p, fleet->line,
			"[fleet] has no redis (expected redis = HOST:PORT or unix:/path)");
	if (fleet->user[0] && !fleet->password_file[0])
		return fg_cfg_fail(p, key_line(p, FG_IN_FLEET, "user"),
				   "user without password_file (expected password_file = PATH, "
				   "the file holding the password of user %s)",
				   fleet->user);
	if (p->first_fleet_scope && !fleet->enabled)
		return fg_cfg_fail(
			p, p->first_fleet_scope,
			"scope = fleet without a [fleet] section (expected a [fleet] section "
			"with redis = HOST:PORT)");
	return 0;
}

/* The limits each algorithm adds to the common ones (see fg_algos.h). */
static int check_algorithm(struct fg_parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = policy_line_or_header(p, "algorithm");
	const char *name = fg_algorithm_name(pol->algorithm);

	switch (pol->algorithm) {
	case FG_ALG_SLIDING_LOG:
		if (pol->bytes)
			return fg_cfg_fail(
				p, line,
				"sliding_log counts packets, not bytes (expected a packet rate "
				"such as 5/s, or another algorithm for '%s')",
				p->rate_text);
		if (pol->rate_count > FG_SLIDING_LOG_MAX)
			return fg_cfg_fail(
				p, policy_line(p, "rate"),
				"sliding_log keeps at most %d timestamps per key, not %llu "
				"(expected COUNT <= %d, e.g. 100/10s as 10/s)",
				FG_SLIDING_LOG_MAX, (unsigned long long)pol->rate_count,
				FG_SLIDING_LOG_MAX);
		__attribute__((fallthrough)); /* a log is a window of COUNT */
	case FG_ALG_FIXED_WINDOW:
	case FG_ALG_SLIDING_WINDOW:
		if (pol->rate_count > FG_WINDOW_MAX_COUNT)
			return fg_cfg_fail(
				p, policy_line(p, "rate"),
				"%s counts at most %llu per window (expected a smaller COUNT "
				"or a shorter period)",
				name, FG_WINDOW_MAX_COUNT);
		if (policy_line(p, "burst") && pol->burst != pol->rate_count)
			return fg_cfg_fail(
				p, policy_line(p, "burst"),
				"%s admits exactly COUNT per PERIOD, so burst %llu does not "
				"apply (expected no burst, or burst = %llu)",
				name, (unsigned long long)pol->burst,
				(unsigned long long)pol->rate_count);
		break;
	case FG_ALG_LEAKY_BUCKET:
	case FG_ALG_TOKEN_BUCKET:
		break;
	}
	return 0;
}

/* scope = host shares one-word states only (host_sources holds what
 * `sources` holds): the lock-guarded states of sliding_window and
 * sliding_log have no host-wide table. */
static int check_host_scope(struct fg_parser *p)
{
	struct fg_policy_conf *pol = p->pol;

	if (pol->scope != FG_SCOPE_HOST ||
	    (pol->algorithm != FG_ALG_SLIDING_WINDOW && pol->algorithm != FG_ALG_SLIDING_LOG))
		return 0;
	return fg_cfg_fail(p, policy_line(p, "scope"),
			   "scope = host does not support %s (expected algorithm = token_bucket, "
			   "leaky_bucket or fixed_window, or scope = local)",
			   fg_algorithm_name(pol->algorithm));
}

/* The shortest prefixes action = ban may cover: a ban of a shorter `per`
 * prefix takes a whole region of the Internet (or an ISP's) off the host
 * for one source's excess. */
#define FG_BAN_MIN_PREFIX_V4 8
#define FG_BAN_MIN_PREFIX_V6 32

static int check_ban_prefix(struct fg_parser *p)
{
	const struct fg_policy_conf *pol = p->pol;
	bool v4 = pol->prefix_v4 < FG_BAN_MIN_PREFIX_V4;

	if (!v4 && pol->prefix_v6 >= FG_BAN_MIN_PREFIX_V6)
		return 0;
	return fg_cfg_fail(
		p, policy_line_or_header(p, "per"),
		"action = ban with per = src/%u would ban up to a /%u of %s addresses at "
		"once (expected per = src/%u or longer for IPv4 and src/%u or longer "
		"for IPv6)",
		v4 ? pol->prefix_v4 : pol->prefix_v6, v4 ? pol->prefix_v4 : pol->prefix_v6,
		v4 ? "IPv4" : "IPv6", FG_BAN_MIN_PREFIX_V4, FG_BAN_MIN_PREFIX_V6);
}

static int check_ban(struct fg_parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = policy_line_or_header(p, "action");
	int ban_only = policy_line(p, "ban_factor");

	if (!ban_only)
		ban_only = policy_line(p, "ban_max");
	if (!ban_only)
		ban_only = policy_line(p, "ban_unverified");
	if (pol->action != FG_ACTION_BAN) {
		if (ban_only)
			return fg_cfg_fail(
				p, ban_only,
				"ban_factor, ban_max and ban_unverified need action = ban DURATION "
				"(expected e.g. action = ban 10m)");
		return 0;
	}
	if (pol->key_kind == FG_KEY_GLOBAL)
		return fg_cfg_fail(
			p, line,
			"action = ban with per = global would ban every source (expected per "
			"= src/N)");
	if (check_ban_prefix(p))
		return -EINVAL;
	if (!pol->ban_factor)
		pol->ban_factor = 1;
	if (!pol->ban_max_ns)
		pol->ban_max_ns = pol->ban_ns;
	if (pol->ban_max_ns < pol->ban_ns)
		return fg_cfg_fail(
			p, policy_line(p, "ban_max"),
			"ban_max is shorter than the ban (expected ban_max >= the ban duration)");
	return 0;
}

int fg_cfg_finish_policy(struct fg_parser *p)
{
	struct fg_policy_conf *pol = p->pol;

	if (!pol)
		return 0;
	if (!policy_line(p, "match"))
		return fg_cfg_fail(
			p, pol->line,
			"policy '%s' has no 'match' (expected e.g. match = tcp dport 22)",
			pol->name);
	if (!policy_line(p, "rate"))
		return fg_cfg_fail(p, pol->line,
				   "policy '%s' has no 'rate' (expected e.g. rate = 100/s)",
				   pol->name);
	if (check_algorithm(p) || check_ban(p) || check_host_scope(p))
		return -EINVAL;
	if (!policy_line(p, "burst") && pol->algorithm == FG_ALG_LEAKY_BUCKET) {
		/* A meter's depth: one packet, or one full-size frame of bytes
		 * (a smaller depth would refuse every large packet). */
		pol->burst = pol->bytes ? LEAKY_DEFAULT_BYTE_DEPTH : 1;
	} else if (!policy_line(p, "burst")) {
		__u64 max = pol->bytes ? FG_MAX_BYTE_BURST : FG_MAX_BURST;

		if (pol->rate_count > max)
			return fg_cfg_fail(
				p, policy_line(p, "rate"),
				"rate '%s' is too large a count for the default burst (expected "
				"an explicit burst of 1..%llu %s, or a shorter period)",
				p->rate_text, (unsigned long long)max,
				pol->bytes ? "bytes" : "packets");
		pol->burst = pol->rate_count;
		if (fg_cfg_check_refill(p, policy_line(p, "rate")))
			return -EINVAL;
	}
	if (pol->scope == FG_SCOPE_FLEET && !p->first_fleet_scope)
		p->first_fleet_scope = policy_line(p, "scope");
	p->cfg->n_policies++;
	p->pol = NULL;
	return 0;
}
