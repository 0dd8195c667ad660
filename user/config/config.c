// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config grammar: one pass over the lines, one error at most. The values
 * themselves (numbers, units, rates, durations, ports, CIDRs) are parsed by
 * values.c; this file knows where they go and words the FILE:LINE messages.
 *
 * Every value is checked as soon as its line is read, except for what needs
 * another key of the same policy: burst needs the rate (a byte rate makes
 * burst count bytes), so it is resolved as soon as both are known, and the
 * required keys and the default burst are settled when the policy ends.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "config/config.h"
#include "fg_algos.h"

const char fg_default_config[] =
	"# floodgate built-in policy (floodgate load IFACE without -c); README explains it\n"
	"hook = xdp\n"
	"xdp_mode = native\n"
	"max_sources = 262144\n"
	"malformed = drop\n"
	"on_insert_failure = pass\n"
	"\n"
	"[policy syn]              # new TCP connections: SYN floods\n"
	"match = tcp syn\n"
	"rate = 1000/s\n"
	"burst = 2000\n"
	"\n"
	"[policy icmp]             # ping floods\n"
	"match = icmp\n"
	"rate = 100/s\n"
	"burst = 200\n"
	"\n"
	"[policy icmpv6]           # ping6 floods; neighbour discovery fits well within\n"
	"match = icmpv6\n"
	"rate = 500/s\n"
	"burst = 1000\n"
	"\n"
	"[policy small-udp]        # small datagrams and fragments: UDP floods, not VPN data\n"
	"match = udp size 0-255\n"
	"rate = 50000/s\n"
	"burst = 50000\n"
	"\n"
	"[policy small]            # every frame below 1 KiB: ACK/RST floods, not bulk ACKs\n"
	"match = any size 0-1023\n"
	"rate = 100000/s\n"
	"burst = 100000\n";

#define MAX_SOURCES_LIMIT	 16777216U
#define MAX_BYTE_BURST		 (FG_MAX_BURST * 1500)
#define REFILL_LIMIT_NS		 (1ULL << 62)
#define LEAKY_DEFAULT_BYTE_DEPTH 1514ULL

#define LIST_SEPS     ", \t"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum global_key {
	G_INTERFACE,
	G_HOOK,
	G_XDP_MODE,
	G_MAX_SOURCES,
	G_MAX_SOURCES_IPV6,
	G_MALFORMED,
	G_ON_INSERT_FAILURE,
	G_NEW_SOURCES,
	G_NEW_SOURCES_BURST,
	G_CLOCK,
	G_EVENTS,
	G_N,
};

enum policy_key {
	P_MATCH,
	P_SRC,
	P_PER,
	P_ALGORITHM,
	P_RATE,
	P_BURST,
	P_ACTION,
	P_BAN_FACTOR,
	P_BAN_MAX,
	P_SCOPE,
	P_N,
};

enum fleet_key {
	F_REDIS,
	F_SYNC,
	F_KEY_PREFIX,
	F_ON_REDIS_DOWN,
	F_N,
};

static const char *const global_keys[G_N] = {
	"interface",
	"hook",
	"xdp_mode",
	"max_sources",
	"max_sources_ipv6",
	"malformed",
	"on_insert_failure",
	"new_sources",
	"new_sources_burst",
	"clock",
	"events",
};

static const char *const policy_keys[P_N] = {
	"match", "src",	   "per",	 "algorithm", "rate",
	"burst", "action", "ban_factor", "ban_max",   "scope",
};

static const char *const fleet_keys[F_N] = {"redis", "sync", "key_prefix", "on_redis_down"};

#define GLOBAL_KEY_LIST                                                                            \
	"interface, hook, xdp_mode, max_sources, max_sources_ipv6, malformed, on_insert_failure, " \
	"new_sources, new_sources_burst, clock, events"
#define POLICY_KEY_LIST                                                                            \
	"match, src, per, algorithm, rate, burst, action, ban_factor, ban_max, scope"
#define FLEET_KEY_LIST "redis, sync, key_prefix, on_redis_down"
struct parser {
	const char *source;
	FILE *err;
	struct fg_config *cfg;
	int line;
	int global_line[G_N]; /* where each global key was set, 0 = not yet */

	/* The policy being read; NULL before the first section. */
	struct fg_policy_conf *pol;
	/* In an [allow] or [deny] section: where its prefixes go. */
	struct fg_cidr *access;
	unsigned int *n_access;
	const char *access_name;
	bool in_fleet;	       /* in the [fleet] section */
	int fleet_line[F_N];   /* where each [fleet] key was set */
	int first_fleet_scope; /* line of the first scope = fleet, 0 = none */
	int policy_line[P_N];
	const char *rate_text;
	/* burst as written, until the rate says packets or bytes */
	const char *burst_text;
	struct fg_amount burst; /* bytes when burst.bytes */
};

static int __attribute__((format(printf, 3, 4)))
fail(struct parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	if (!p->err)
		return -EINVAL;
	fprintf(p->err, "%s:%d: ", p->source, line);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

/* The next token of `*cursor` between separators, as a pointer and length. */
static bool next_token(const char **cursor, const char *seps, const char **tok, int *len)
{
	const char *s = *cursor + strspn(*cursor, seps);
	size_t n = strcspn(s, seps);

	*cursor = s + n;
	*tok = s;
	*len = (int)n;
	return n > 0;
}

static bool token_is(const char *tok, int len, const char *word)
{
	return (size_t)len == strlen(word) && memcmp(tok, word, len) == 0;
}

static int find_key(const char *const *keys, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(keys[i], key) == 0)
			return i;
	return -1;
}

/* One of a fixed set of words; `names` is NULL-terminated, `values` parallel. */
static int parse_choice(struct parser *p, const char *key, const char *v, const char *const *names,
			const __u8 *values, const char *expected, __u8 *out)
{
	int i;

	for (i = 0; names[i]; i++) {
		if (strcmp(names[i], v) == 0) {
			*out = values[i];
			return 0;
		}
	}
	return fail(p, p->line, "bad %s '%s' (expected %s)", key, v, expected);
}

/* --- global keys ----------------------------------------------------------- */

static int parse_interface(struct parser *p, const char *v)
{
	const char *c;

	if (strlen(v) >= IF_NAMESIZE)
		return fail(p, p->line,
			    "interface name '%s' is too long (expected at most %d characters)", v,
			    IF_NAMESIZE - 1);
	for (c = v; *c; c++)
		if (isspace((unsigned char)*c) || *c == '/' || !isprint((unsigned char)*c))
			return fail(
				p, p->line,
				"bad interface name '%s' (expected a name such as eth0, without "
				"spaces or '/')",
				v);
	strcpy(p->cfg->interface, v);
	return 0;
}

/* new_sources, events = off | COUNT/UNIT (UNIT: ms, s, min, h), COUNT up
 * to `max` a second; off is COUNT 0. `example` completes the message. */
static int parse_rate_or_off(struct parser *p, const char *key, const char *v, __u64 max,
			     const char *example, __u64 *count, __u64 *period_ns)
{
	if (strcmp(v, "off") == 0) {
		*count = 0;
		return 0;
	}
	if (fg_parse_event_rate(v, max, count, period_ns))
		return fail(p, p->line, "bad %s '%s' (expected off, or %s)", key, v, example);
	return 0;
}

static int global_key(struct parser *p, const char *key, const char *v)
{
	static const char *const hooks[] = {"xdp", "tc", NULL};
	static const __u8 hook_values[] = {FG_HOOK_XDP, FG_HOOK_TC};
	static const char *const modes[] = {"native", "generic", NULL};
	static const __u8 mode_values[] = {FG_XDP_NATIVE, FG_XDP_GENERIC};
	static const char *const verdicts[] = {"pass", "drop", NULL};
	static const __u8 verdict_values[] = {FG_VERDICT_PASS, FG_VERDICT_DROP};
	struct fg_config *cfg = p->cfg;
	int k = find_key(global_keys, G_N, key);
	__u64 n;

	if (k < 0) {
		if (find_key(policy_keys, P_N, key) >= 0)
			return fail(p, p->line,
				    "unknown key '%s' outside a policy section (expected one "
				    "of: " GLOBAL_KEY_LIST
				    "; policy keys go after a [policy NAME] line)",
				    key);
		return fail(p, p->line, "unknown key '%s' (expected one of: " GLOBAL_KEY_LIST ")",
			    key);
	}
	if (p->global_line[k])
		return fail(p, p->line,
			    "duplicate key '%s' (expected each key once; first set at line %d)",
			    key, p->global_line[k]);
	p->global_line[k] = p->line;

	switch (k) {
	case G_INTERFACE:
		return parse_interface(p, v);
	case G_HOOK:
		return parse_choice(p, key, v, hooks, hook_values, "xdp or tc", &cfg->hook);
	case G_XDP_MODE:
		return parse_choice(p, key, v, modes, mode_values, "native or generic",
				    &cfg->xdp_mode);
	case G_MAX_SOURCES:
		if (fg_parse_uint(v, strlen(v), MAX_SOURCES_LIMIT, &n) || n == 0)
			return fail(p, p->line, "bad max_sources '%s' (expected 1..%u)", v,
				    MAX_SOURCES_LIMIT);
		cfg->max_sources = (__u32)n;
		return 0;
	case G_MAX_SOURCES_IPV6:
		/* The floor holds every policy's global and overflow keys: a
		 * smaller table would let IPv6 sources evict them. */
		if (fg_parse_uint(v, strlen(v), MAX_SOURCES_LIMIT, &n) || n < FG_MIN_SOURCES_IPV6)
			return fail(p, p->line, "bad max_sources_ipv6 '%s' (expected %u..%u)", v,
				    FG_MIN_SOURCES_IPV6, MAX_SOURCES_LIMIT);
		cfg->max_sources_ipv6 = (__u32)n;
		return 0;
	case G_MALFORMED:
		return parse_choice(p, key, v, verdicts, verdict_values, "pass or drop",
				    &cfg->malformed);
	case G_ON_INSERT_FAILURE:
		return parse_choice(p, key, v, verdicts, verdict_values, "pass or drop",
				    &cfg->table_full);
	case G_NEW_SOURCES:
		return parse_rate_or_off(p, key, v, FG_MAX_PACKET_RATE_PER_S,
					 "a rate of new sources such as 50000/s",
					 &cfg->new_sources_count, &cfg->new_sources_period_ns);
	case G_CLOCK:
		if (strcmp(v, "precise") && strcmp(v, "coarse"))
			return fail(p, p->line, "bad clock '%s' (expected precise or coarse)", v);
		cfg->coarse_clock = v[0] == 'c';
		return 0;
	case G_EVENTS:
		return parse_rate_or_off(p, key, v, FG_MAX_EVENTS_PER_S,
					 "a rate of events such as 100/s, up to 1000000/s",
					 &cfg->events_count, &cfg->events_period_ns);
	case G_NEW_SOURCES_BURST:
		if (fg_parse_uint(v, strlen(v), FG_MAX_BURST, &n) || n == 0)
			return fail(p, p->line, "bad new_sources_burst '%s' (expected 1..%llu)", v,
				    FG_MAX_BURST);
		cfg->new_sources_burst = n;
		return 0;
	}
	return 0;
}

/* --- match ----------------------------------------------------------------- */

/* One port or range of a dport/sport list. */
static int parse_port_token(struct parser *p, const char *tok, int len, const char *what,
			    struct fg_port_range *ranges, unsigned int *n)
{
	struct fg_value_error e;

	if (*n == FG_MAX_PORT_RANGES)
		return fail(p, p->line,
			    "too many ports in %s list (expected at most %d ports or ranges)", what,
			    FG_MAX_PORT_RANGES);
	if (!fg_parse_port_range(tok, len, &ranges[*n], &e)) {
		(*n)++;
		return 0;
	}
	if (e.fault == FG_PORT_RANGE)
		return fail(p, p->line, "port %.*s out of range in '%.*s' (expected 0..65535)",
			    (int)e.at_len, e.at, len, tok);
	if (e.fault == FG_PORTS_REVERSED)
		return fail(p, p->line,
			    "port range '%.*s' is out of order (expected LO-HI with LO <= HI)", len,
			    tok);
	return fail(p, p->line,
		    "bad port '%.*s' in dport list (expected PORT or LO-HI such as 22 or "
		    "8000-8080)",
		    len, tok);
}

/* `size LO-HI` or `size LO-max`: frame lengths, Ethernet header included,
 * on the class boundaries of FG_SIZE_CLASSES so that the match stays one
 * array read per packet. */
static int parse_size_clause(struct parser *p, const char **cursor)
{
	const unsigned int last_bounded = FG_SIZE_CLASS_BYTES * (FG_SIZE_CLASSES - 1) - 1;
	struct fg_policy_conf *pol = p->pol;
	const char *tok, *dash;
	__u64 lo, hi;
	int len;

	if (pol->has_size)
		return fail(p, p->line, "size given twice in match (expected one size LO-HI)");
	if (!next_token(cursor, LIST_SEPS, &tok, &len))
		return fail(p, p->line, "size without a range (expected e.g. size 0-255)");
	dash = memchr(tok, '-', len);
	if (!dash || fg_parse_uint(tok, dash - tok, last_bounded + 1, &lo))
		goto bad;
	if (token_is(dash + 1, len - (int)(dash + 1 - tok), "max"))
		hi = 65535;
	else if (fg_parse_uint(dash + 1, len - (dash + 1 - tok), 65535, &hi) ||
		 (hi > last_bounded && hi != 65535))
		goto bad;
	if (lo > hi)
		return fail(p, p->line,
			    "size range '%.*s' is out of order (expected LO-HI with LO <= HI)", len,
			    tok);
	if (lo % FG_SIZE_CLASS_BYTES || (hi != 65535 && (hi + 1) % FG_SIZE_CLASS_BYTES))
		return fail(p, p->line,
			    "size '%.*s' is not on a %u-byte boundary (expected LO a multiple of "
			    "%u and HI one less, such as 0-255 or 256-max)",
			    len, tok, FG_SIZE_CLASS_BYTES, FG_SIZE_CLASS_BYTES);
	pol->has_size = true;
	pol->size_lo_class = (__u8)(lo >> FG_SIZE_CLASS_SHIFT);
	pol->size_hi_class = (__u8)(hi == 65535 ? FG_SIZE_CLASSES - 1 : hi >> FG_SIZE_CLASS_SHIFT);
	return 0;
bad:
	return fail(p, p->line,
		    "bad size '%.*s' in match (expected LO-HI frame bytes, LO at most %u, HI at "
		    "most %u or max, such as 0-255 or 256-max)",
		    len, tok, last_bounded + 1, last_bounded);
}

static int parse_match(struct parser *p, const char *v)
{
	static const struct {
		const char *name;
		__u8 proto;
	} protos[] = {
		{"any", 0},
		{"tcp", IPPROTO_TCP},
		{"udp", IPPROTO_UDP},
		{"icmp", IPPROTO_ICMP},
		{"icmpv6", IPPROTO_ICMPV6},
	};
	struct fg_policy_conf *pol = p->pol;
	const char *cursor = v, *tok, *list = NULL;
	struct fg_port_range *ranges = NULL;
	unsigned int *n = NULL;
	size_t i;
	int len, ret;

	next_token(&cursor, " \t", &tok, &len);
	for (i = 0; i < ARRAY_SIZE(protos); i++)
		if (token_is(tok, len, protos[i].name))
			break;
	if (i == ARRAY_SIZE(protos))
		return fail(p, p->line,
			    "unknown protocol '%.*s' in match (expected any, tcp, udp, icmp or "
			    "icmpv6)",
			    len, tok);
	pol->proto = protos[i].proto;

	/* Clauses: dport LIST, sport LIST, syn, size LO-HI. A list runs to the next clause
	 * word. */
	while (next_token(&cursor, LIST_SEPS, &tok, &len)) {
		bool dport = token_is(tok, len, "dport"), sport = token_is(tok, len, "sport");
		bool syn = token_is(tok, len, "syn"), size = token_is(tok, len, "size");

		if ((dport || sport || syn || size) && list && !*n)
			return fail(p, p->line, "%s without ports (expected e.g. %s 22,80)", list,
				    list);
		if (dport || sport) {
			list = dport ? "dport" : "sport";
			if (pol->proto != 0 && pol->proto != IPPROTO_TCP &&
			    pol->proto != IPPROTO_UDP)
				return fail(
					p, p->line,
					"%s with protocol %s in match (expected tcp, udp or any "
					"before %s)",
					list, protos[i].name, list);
			ranges = dport ? pol->dports : pol->sports;
			n = dport ? &pol->n_dports : &pol->n_sports;
			if (*n)
				return fail(p, p->line,
					    "%s given twice in match (expected one %s list)", list,
					    list);
			continue;
		}
		if (size) {
			ret = parse_size_clause(p, &cursor);
			if (ret)
				return ret;
			list = NULL;
			continue;
		}
		if (syn) {
			if (pol->proto != IPPROTO_TCP)
				return fail(p, p->line,
					    "syn with protocol %s in match (expected tcp ... syn)",
					    protos[i].name);
			pol->syn_only = true;
			list = NULL;
			continue;
		}
		if (!list)
			return fail(
				p, p->line,
				"unexpected '%.*s' in match (expected PROTO [dport LIST] [sport "
				"LIST] [syn] [size LO-HI], such as tcp dport 22 syn)",
				len, tok);
		ret = parse_port_token(p, tok, len, list, ranges, n);
		if (ret)
			return ret;
	}
	if (list && !*n)
		return fail(p, p->line, "%s without ports (expected e.g. %s 22,80,8000-8080)", list,
			    list);
	return 0;
}

/* --- src ------------------------------------------------------------------- */

static int parse_cidr(struct parser *p, const char *tok, int len, struct fg_cidr *c)
{
	struct fg_value_error e;
	int max_prefix;

	if (!fg_parse_cidr_len(tok, (size_t)len, c, &e))
		return 0;
	max_prefix = c->family == FG_FAMILY_IPV6 ? 128 : 32;
	switch (e.fault) {
	case FG_PREFIX_RANGE:
		return fail(p, p->line,
			    "bad prefix length %.*s in '%.*s' (expected /0..%d for IPv%d)",
			    (int)e.at_len, e.at, len, tok, max_prefix, c->family);
	case FG_BAD_PREFIX:
		return fail(p, p->line,
			    "bad prefix length '%.*s' in '%.*s' (expected /0..%d for IPv%d)",
			    (int)e.at_len, e.at, len, tok, max_prefix, c->family);
	case FG_HOST_BITS:
		return fail(p, p->line,
			    "%.*s: host bits set (expected a network address such as %s/%u)", len,
			    tok, e.network, (unsigned int)c->prefix_len);
	default:
		return fail(p, p->line,
			    "bad address '%.*s' in src (expected an IPv4 or IPv6 address or "
			    "network such as 10.0.0.0/8 or 2001:db8::/32)",
			    len, tok);
	}
}

static int parse_src(struct parser *p, const char *v)
{
	struct fg_policy_conf *pol = p->pol;
	const char *tok;
	int len, ret;

	while (next_token(&v, LIST_SEPS, &tok, &len)) {
		if (pol->n_srcs == FG_MAX_SRC_CIDRS)
			return fail(p, p->line,
				    "too many networks in src (expected at most %d per policy)",
				    FG_MAX_SRC_CIDRS);
		ret = parse_cidr(p, tok, len, &pol->srcs[pol->n_srcs]);
		if (ret)
			return ret;
		pol->n_srcs++;
	}
	if (pol->n_srcs == 0)
		return fail(p, p->line,
			    "src without networks (expected e.g. src = 10.0.0.0/8, 2001:db8::/32)");
	return 0;
}

static int parse_duration(struct parser *p, const char *what, const char *v, __u64 *ns)
{
	if (fg_parse_duration(v, ns))
		return fail(p, p->line,
			    "bad %s '%s' (expected a duration of 1ms..30d such as 90s, 10m, 24h)",
			    what, v);
	return 0;
}

/* action = drop | monitor | ban DURATION */
static int parse_action(struct parser *p, const char *v)
{
	struct fg_policy_conf *pol = p->pol;

	if (strcmp(v, "drop") == 0) {
		pol->action = FG_ACTION_DROP;
		return 0;
	}
	if (strcmp(v, "monitor") == 0) {
		pol->action = FG_ACTION_MONITOR;
		return 0;
	}
	if (strncmp(v, "ban", 3) == 0 && (v[3] == ' ' || v[3] == '\t')) {
		pol->action = FG_ACTION_BAN;
		return parse_duration(p, "ban duration", trim((char *)v + 4), &pol->ban_ns);
	}
	return fail(p, p->line, "bad action '%s' (expected drop, monitor or ban DURATION)", v);
}

/* --- per ------------------------------------------------------------------- */

/*
 * `per = src/A [src/B]`. A single prefix of 0..32 is the IPv4 one, of 33..128
 * the IPv6 one; the other family keeps its default. Of two prefixes, written
 * in either order, the smaller is the IPv4 one and the larger the IPv6 one.
 */
static int parse_per(struct parser *p, const char *v)
{
	struct fg_policy_conf *pol = p->pol;
	const char *cursor = v, *tok;
	unsigned int prefix[2], n = 0;
	int len;

	if (strcmp(v, "global") == 0) {
		pol->key_kind = FG_KEY_GLOBAL;
		pol->prefix_v4 = 0;
		pol->prefix_v6 = 0;
		return 0;
	}
	while (next_token(&cursor, LIST_SEPS, &tok, &len)) {
		__u64 x;
		int ret;

		if (token_is(tok, len, "global"))
			return fail(p, p->line,
				    "'global' combined with prefixes in '%s' (expected either "
				    "per = global or per = src/32 src/64)",
				    v);
		if (len > 6 && memcmp(tok + len - 6, "+dport", 6) == 0) {
			pol->key_dport = true; /* one bucket per source and port */
			len -= 6;
		}
		if (len < 4 || memcmp(tok, "src/", 4) != 0)
			return fail(p, p->line,
				    "bad per '%.*s' (expected global, or src/N for IPv4 and/or "
				    "IPv6 such "
				    "as src/32 src/64)",
				    len, tok);
		if (n == 2)
			return fail(
				p, p->line,
				"too many prefixes in per '%s' (expected at most one IPv4 and one "
				"IPv6 prefix, such as src/32 src/64)",
				v);
		ret = fg_parse_uint(tok + 4, len - 4, 128, &x);
		if (ret == -ENOENT)
			return fail(p, p->line,
				    "bad prefix length in '%.*s' (expected src/0..32 for IPv4 or "
				    "src/0..128 for IPv6)",
				    len, tok);
		if (ret)
			return fail(
				p, p->line,
				"bad prefix length %.*s in '%.*s' (expected src/0..32 for IPv4 or "
				"src/0..128 for IPv6)",
				len - 4, tok + 4, len, tok);
		prefix[n++] = (unsigned int)x;
	}

	if (n == 0)
		return fail(p, p->line,
			    "bad per '%s' (expected global, or src/N for IPv4 and/or IPv6 such as "
			    "src/32 src/64)",
			    v);
	pol->key_kind = FG_KEY_SOURCE;
	if (n == 1) {
		if (prefix[0] <= 32)
			pol->prefix_v4 = (__u8)prefix[0];
		else
			pol->prefix_v6 = (__u8)prefix[0];
		return 0;
	}
	if (prefix[0] > prefix[1]) {
		unsigned int t = prefix[0];

		prefix[0] = prefix[1];
		prefix[1] = t;
	}
	if (prefix[0] > 32)
		return fail(p, p->line,
			    "bad prefix length %u in 'src/%u' (expected src/0..32 for IPv4)",
			    prefix[0], prefix[0]);
	pol->prefix_v4 = (__u8)prefix[0];
	pol->prefix_v6 = (__u8)prefix[1];
	return 0;
}

/* --- rate and burst -------------------------------------------------------- */

/* Reports what follows the number of a rate or burst as a bad unit. */
static int bad_unit(struct parser *p, const char *what, const char *v, const char *unit,
		    size_t unit_len, const char *expected)
{
	if (unit_len && unit[0] == '.')
		return fail(p, p->line, "fraction in %s '%s' (expected whole numbers only)", what,
			    v);
	return fail(p, p->line, "unknown unit '%.*s' in %s '%s' (expected %s)", (int)unit_len, unit,
		    what, v, expected);
}

static int check_refill(struct parser *p, int line)
{
	struct fg_policy_conf *pol = p->pol;

	/* burst * (period / count) > 2^62, without dividing */
	if ((unsigned __int128)pol->burst * pol->rate_period_ns >
	    (unsigned __int128)REFILL_LIMIT_NS * pol->rate_count)
		return fail(p, line,
			    "burst %llu too large for this rate '%s' (expected burst * period / "
			    "count <= 2^62 ns)",
			    (unsigned long long)pol->burst, p->rate_text);
	return 0;
}

/* Both rate and burst are known: give burst its unit and check it. */
static int resolve_burst(struct parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = p->policy_line[P_BURST];

	if (!pol->bytes && p->burst.bytes)
		return fail(p, line,
			    "burst '%s' is in bytes but rate '%s' counts packets (expected a "
			    "packet count such as burst = 20, or a byte rate such as 10MB/s)",
			    p->burst_text, p->rate_text);
	if (pol->bytes && p->burst.value > MAX_BYTE_BURST)
		return fail(p, line, "burst '%s' is too large (expected 1..%llu bytes)",
			    p->burst_text, (unsigned long long)MAX_BYTE_BURST);
	if (!pol->bytes && p->burst.value > FG_MAX_BURST)
		return fail(p, line, "burst '%s' is too large (expected 1..%llu packets)",
			    p->burst_text, (unsigned long long)FG_MAX_BURST);
	pol->burst = (__u64)p->burst.value;
	return check_refill(p, line);
}

/* The message for a rate that fg_parse_rate refused. */
static int bad_rate(struct parser *p, const char *v, const struct fg_rate *rate,
		    const struct fg_value_error *e)
{
	static const char expected[] = "COUNT/PERIOD such as 100/s, 1000/10s, 5/250ms or 10MB/s";

	switch (e->fault) {
	case FG_TOO_LARGE:
		return fail(p, p->line, "rate count in '%s' is too large (expected %s)", v,
			    expected);
	case FG_BAD_UNIT:
		return bad_unit(p, "rate", v, e->at, e->at_len,
				"packets as a bare number, or bytes in " FG_BYTE_UNIT_LIST);
	case FG_ZERO:
		return fail(p, p->line,
			    "rate '%s' has a zero count (expected a count of at least 1)", v);
	case FG_NOT_WHOLE_BYTES:
		return fail(p, p->line,
			    "rate '%s' is not a whole number of bytes (expected a multiple of 8 "
			    "bits)",
			    v);
	case FG_PERIOD_TOO_LONG:
		return fail(p, p->line, "rate period in '%s' is too long (expected 1ms..24h)", v);
	case FG_BAD_PERIOD_UNIT:
		return bad_unit(p, "rate", v, e->at, e->at_len,
				"a period of ms, s, min or h, optionally preceded by a number as "
				"in 10s");
	case FG_PERIOD_RANGE:
		return fail(p, p->line, "rate period in '%s' is out of range (expected 1ms..24h)",
			    v);
	case FG_RATE_TOO_HIGH:
		if (rate->bytes)
			return fail(p, p->line,
				    "rate '%s' is too high (expected at most %llu bytes/s)", v,
				    (unsigned long long)FG_MAX_BYTE_RATE_PER_S);
		return fail(p, p->line, "rate '%s' is too high (expected at most %llu packets/s)",
			    v, (unsigned long long)FG_MAX_PACKET_RATE_PER_S);
	case FG_RATE_TOO_LOW:
		return fail(p, p->line, "rate '%s' is too low (expected at least %llu bytes/s)", v,
			    (unsigned long long)FG_MIN_BYTE_RATE_PER_S);
	default:
		return fail(p, p->line, "bad rate '%s' (expected %s)", v, expected);
	}
}

static int parse_rate(struct parser *p, const char *v)
{
	struct fg_policy_conf *pol = p->pol;
	struct fg_value_error e;
	struct fg_rate rate;

	p->rate_text = v;
	if (fg_parse_rate(v, &rate, &e))
		return bad_rate(p, v, &rate, &e);
	pol->bytes = rate.bytes;
	pol->rate_count = rate.count;
	pol->rate_period_ns = rate.period_ns;
	return p->burst_text ? resolve_burst(p) : 0;
}

static int parse_burst(struct parser *p, const char *v)
{
	struct fg_value_error e;

	if (!fg_parse_amount(v, &p->burst, &e)) {
		p->burst_text = v;
		return p->policy_line[P_RATE] ? resolve_burst(p) : 0;
	}
	switch (e.fault) {
	case FG_TOO_LARGE:
		return fail(p, p->line,
			    "burst '%s' is too large (expected 1..%llu packets or 1..%llu bytes)",
			    v, (unsigned long long)FG_MAX_BURST,
			    (unsigned long long)MAX_BYTE_BURST);
	case FG_BAD_UNIT:
		return bad_unit(p, "burst", v, e.at, e.at_len,
				"packets as a bare number, or bytes in " FG_BYTE_UNIT_LIST);
	case FG_ZERO:
		return fail(p, p->line, "burst '%s' is zero (expected at least 1)", v);
	case FG_NOT_WHOLE_BYTES:
		return fail(p, p->line,
			    "burst '%s' is not a whole number of bytes (expected a multiple of 8 "
			    "bits)",
			    v);
	default:
		return fail(p, p->line,
			    "bad burst '%s' (expected a number of packets, or bytes with a unit "
			    "such as 64kB)",
			    v);
	}
}

/* --- [fleet] -------------------------------------------------------------- */

static int bad_redis(struct parser *p, const char *v)
{
	return fail(p, p->line,
		    "bad redis '%s' (expected HOST:PORT such as 127.0.0.1:6379 or [::1]:6379, or "
		    "unix:/absolute/path)",
		    v);
}

/* redis = HOST:PORT | [IPV6]:PORT | unix:/absolute/path */
static int parse_redis(struct parser *p, const char *v)
{
	struct fg_fleet_conf *fleet = &p->cfg->fleet;
	const char *colon = strrchr(v, ':'), *host = v;
	size_t host_len = colon ? (size_t)(colon - v) : 0;
	__u64 port;

	if (strncmp(v, "unix:", 5) == 0) {
		if (v[5] != '/' || strlen(v + 5) >= sizeof(fleet->unix_path))
			return fail(p, p->line,
				    "bad redis socket '%s' (expected unix:/absolute/path of at "
				    "most %zu characters)",
				    v, sizeof(fleet->unix_path) - 1);
		strcpy(fleet->unix_path, v + 5);
		return 0;
	}
	if (!colon || strcspn(v, " \t") != strlen(v))
		return bad_redis(p, v);
	if (v[0] == '[') {
		if (host_len < 3 || v[host_len - 1] != ']')
			return bad_redis(p, v);
		host++;
		host_len -= 2;
	} else if (memchr(v, ':', host_len)) {
		return bad_redis(p, v); /* a bare IPv6 address: which colon is the port's? */
	}
	if (!host_len || host_len >= sizeof(fleet->host) ||
	    fg_parse_uint(colon + 1, strlen(colon + 1), 65535, &port) || !port)
		return bad_redis(p, v);
	memcpy(fleet->host, host, host_len);
	fleet->host[host_len] = '\0';
	fleet->port = (__u16)port;
	return 0;
}

static int parse_key_prefix(struct parser *p, const char *v)
{
	struct fg_fleet_conf *fleet = &p->cfg->fleet;
	const char *c;

	for (c = v; *c; c++)
		if (!isgraph((unsigned char)*c))
			break;
	if (*c || strlen(v) >= sizeof(fleet->key_prefix))
		return fail(p, p->line,
			    "bad key_prefix '%s' (expected 1..%zu printable characters without "
			    "spaces, such as floodgate:)",
			    v, sizeof(fleet->key_prefix) - 1);
	strcpy(fleet->key_prefix, v);
	return 0;
}

static int fleet_key(struct parser *p, const char *key, const char *v)
{
	static const char *const downs[] = {"local", "closed", NULL};
	static const __u8 down_values[] = {FG_REDIS_DOWN_LOCAL, FG_REDIS_DOWN_CLOSED};
	struct fg_fleet_conf *fleet = &p->cfg->fleet;
	int k = find_key(fleet_keys, F_N, key);

	if (k < 0)
		return fail(p, p->line,
			    "unknown key '%s' in [fleet] (expected one of: " FLEET_KEY_LIST ")",
			    key);
	if (p->fleet_line[k])
		return fail(p, p->line,
			    "duplicate key '%s' in [fleet] (expected each key once; first set at "
			    "line %d)",
			    key, p->fleet_line[k]);
	p->fleet_line[k] = p->line;

	switch (k) {
	case F_REDIS:
		return parse_redis(p, v);
	case F_SYNC:
		if (fg_parse_duration(v, &fleet->sync_ns) ||
		    fleet->sync_ns < FG_FLEET_MIN_SYNC_NS || fleet->sync_ns > FG_FLEET_MAX_SYNC_NS)
			return fail(p, p->line,
				    "bad sync '%s' (expected a duration of 10ms..60s such as "
				    "250ms)",
				    v);
		return 0;
	case F_KEY_PREFIX:
		return parse_key_prefix(p, v);
	case F_ON_REDIS_DOWN:
		return parse_choice(p, key, v, downs, down_values, "local or closed",
				    &fleet->on_redis_down);
	}
	return 0;
}

static int start_fleet(struct parser *p)
{
	struct fg_fleet_conf *fleet = &p->cfg->fleet;

	if (fleet->enabled)
		return fail(p, p->line,
			    "duplicate [fleet] section (expected one; first at line %d)",
			    fleet->line);
	fleet->enabled = true;
	fleet->line = p->line;
	fleet->sync_ns = FG_FLEET_DEFAULT_SYNC_NS;
	strcpy(fleet->key_prefix, FG_FLEET_DEFAULT_PREFIX);
	fleet->on_redis_down = FG_REDIS_DOWN_LOCAL;
	p->in_fleet = true;
	return 0;
}

/* What needs the whole file: [fleet] and the policies that use it. */
static int check_fleet(struct parser *p)
{
	const struct fg_fleet_conf *fleet = &p->cfg->fleet;

	if (fleet->enabled && !p->fleet_line[F_REDIS])
		return fail(p, fleet->line,
			    "[fleet] has no redis (expected redis = HOST:PORT or unix:/path)");
	if (p->first_fleet_scope && !fleet->enabled)
		return fail(p, p->first_fleet_scope,
			    "scope = fleet without a [fleet] section (expected a [fleet] section "
			    "with redis = HOST:PORT)");
	return 0;
}

static int parse_scope(struct parser *p, const char *v)
{
	if (strcmp(v, "local") == 0) {
		p->pol->scope = FG_SCOPE_LOCAL;
		return 0;
	}
	if (strcmp(v, "fleet") == 0) {
		p->pol->scope = FG_SCOPE_FLEET;
		if (!p->first_fleet_scope)
			p->first_fleet_scope = p->line;
		return 0;
	}
	if (strcmp(v, "host") == 0) {
		p->pol->scope = FG_SCOPE_HOST;
		return 0;
	}
	return fail(p, p->line, "bad scope '%s' (expected local, host or fleet)", v);
}

/* --- policy sections ------------------------------------------------------- */

static int policy_key(struct parser *p, const char *key, char *v)
{
	static const __u8 algorithm_values[] = {FG_ALG_TOKEN_BUCKET, FG_ALG_FIXED_WINDOW,
						FG_ALG_SLIDING_WINDOW, FG_ALG_SLIDING_LOG,
						FG_ALG_LEAKY_BUCKET};
	struct fg_policy_conf *pol = p->pol;
	int k = find_key(policy_keys, P_N, key);

	if (k < 0) {
		if (find_key(global_keys, G_N, key) >= 0)
			return fail(p, p->line,
				    "unknown key '%s' in a policy section (expected one "
				    "of: " POLICY_KEY_LIST
				    "; global keys go before the first [policy NAME])",
				    key);
		return fail(p, p->line, "unknown key '%s' (expected one of: " POLICY_KEY_LIST ")",
			    key);
	}
	if (p->policy_line[k])
		return fail(p, p->line,
			    "duplicate key '%s' in policy '%s' (expected each key once; first set "
			    "at line %d)",
			    key, pol->name, p->policy_line[k]);
	p->policy_line[k] = p->line;

	switch (k) {
	case P_MATCH:
		return parse_match(p, v);
	case P_SRC:
		return parse_src(p, v);
	case P_PER:
		return parse_per(p, v);
	case P_ALGORITHM:
		return parse_choice(p, key, v, fg_algorithm_names, algorithm_values,
				    "token_bucket, fixed_window, sliding_window, sliding_log or "
				    "leaky_bucket",
				    &pol->algorithm);
	case P_RATE:
		return parse_rate(p, v);
	case P_BURST:
		return parse_burst(p, v);
	case P_ACTION:
		return parse_action(p, v);
	case P_BAN_FACTOR: {
		__u64 factor;

		if (fg_parse_uint(v, strlen(v), 1000, &factor) || factor == 0)
			return fail(p, p->line, "bad ban_factor '%s' (expected 1..1000)", v);
		pol->ban_factor = (__u32)factor;
		return 0;
	}
	case P_BAN_MAX:
		return parse_duration(p, "ban_max", v, &pol->ban_max_ns);
	case P_SCOPE:
		return parse_scope(p, v);
	}
	return 0;
}

/* The limits each algorithm adds to the common ones (see fg_algos.h). */
static int check_algorithm(struct parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = p->policy_line[P_ALGORITHM] ? p->policy_line[P_ALGORITHM] : pol->line;
	const char *name = fg_algorithm_name(pol->algorithm);

	switch (pol->algorithm) {
	case FG_ALG_SLIDING_LOG:
		if (pol->bytes)
			return fail(p, line,
				    "sliding_log counts packets, not bytes (expected a packet rate "
				    "such as 5/s, or another algorithm for '%s')",
				    p->rate_text);
		if (pol->rate_count > FG_SLIDING_LOG_MAX)
			return fail(p, p->policy_line[P_RATE],
				    "sliding_log keeps at most %d timestamps per key, not %llu "
				    "(expected COUNT <= %d, e.g. 100/10s as 10/s)",
				    FG_SLIDING_LOG_MAX, (unsigned long long)pol->rate_count,
				    FG_SLIDING_LOG_MAX);
		__attribute__((fallthrough)); /* a log is a window of COUNT */
	case FG_ALG_FIXED_WINDOW:
	case FG_ALG_SLIDING_WINDOW:
		if (pol->rate_count > FG_WINDOW_MAX_COUNT)
			return fail(p, p->policy_line[P_RATE],
				    "%s counts at most %llu per window (expected a smaller COUNT "
				    "or a shorter period)",
				    name, FG_WINDOW_MAX_COUNT);
		if (p->policy_line[P_BURST] && pol->burst != pol->rate_count)
			return fail(p, p->policy_line[P_BURST],
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
static int check_host_scope(struct parser *p)
{
	struct fg_policy_conf *pol = p->pol;

	if (pol->scope != FG_SCOPE_HOST ||
	    (pol->algorithm != FG_ALG_SLIDING_WINDOW && pol->algorithm != FG_ALG_SLIDING_LOG))
		return 0;
	return fail(p, p->policy_line[P_SCOPE],
		    "scope = host does not support %s (expected algorithm = token_bucket, "
		    "leaky_bucket or fixed_window, or scope = local)",
		    fg_algorithm_name(pol->algorithm));
}

static int check_ban(struct parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = p->policy_line[P_ACTION] ? p->policy_line[P_ACTION] : pol->line;

	if (pol->action != FG_ACTION_BAN) {
		if (p->policy_line[P_BAN_FACTOR] || p->policy_line[P_BAN_MAX])
			return fail(p,
				    p->policy_line[P_BAN_FACTOR] ? p->policy_line[P_BAN_FACTOR]
								 : p->policy_line[P_BAN_MAX],
				    "ban_factor and ban_max need action = ban DURATION (expected "
				    "e.g. action = ban 10m)");
		return 0;
	}
	if (pol->key_kind == FG_KEY_GLOBAL)
		return fail(p, line,
			    "action = ban with per = global would ban every source (expected per "
			    "= src/N)");
	if (!pol->ban_factor)
		pol->ban_factor = 1;
	if (!pol->ban_max_ns)
		pol->ban_max_ns = pol->ban_ns;
	if (pol->ban_max_ns < pol->ban_ns)
		return fail(
			p, p->policy_line[P_BAN_MAX],
			"ban_max is shorter than the ban (expected ban_max >= the ban duration)");
	return 0;
}

static int finish_policy(struct parser *p)
{
	struct fg_policy_conf *pol = p->pol;

	if (!pol)
		return 0;
	if (!p->policy_line[P_MATCH])
		return fail(p, pol->line,
			    "policy '%s' has no 'match' (expected e.g. match = tcp dport 22)",
			    pol->name);
	if (!p->policy_line[P_RATE])
		return fail(p, pol->line, "policy '%s' has no 'rate' (expected e.g. rate = 100/s)",
			    pol->name);
	if (check_algorithm(p) || check_ban(p) || check_host_scope(p))
		return -EINVAL;
	if (!p->policy_line[P_BURST] && pol->algorithm == FG_ALG_LEAKY_BUCKET) {
		/* A meter's depth: one packet, or one full-size frame of bytes
		 * (a smaller depth would refuse every large packet). */
		pol->burst = pol->bytes ? LEAKY_DEFAULT_BYTE_DEPTH : 1;
	} else if (!p->policy_line[P_BURST]) {
		__u64 max = pol->bytes ? MAX_BYTE_BURST : FG_MAX_BURST;

		if (pol->rate_count > max)
			return fail(
				p, p->policy_line[P_RATE],
				"rate '%s' is too large a count for the default burst (expected "
				"an explicit burst of 1..%llu %s, or a shorter period)",
				p->rate_text, (unsigned long long)max,
				pol->bytes ? "bytes" : "packets");
		pol->burst = pol->rate_count;
		if (check_refill(p, p->policy_line[P_RATE]))
			return -EINVAL;
	}
	p->cfg->n_policies++;
	p->pol = NULL;
	return 0;
}

static bool valid_policy_name(const char *name)
{
	size_t len = strlen(name), i;

	if (len == 0 || len >= FG_POLICY_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

static int parse_section(struct parser *p, char *line)
{
	struct fg_config *cfg = p->cfg;
	struct fg_policy_conf *pol;
	size_t len = strlen(line);
	char *inner, *name;
	unsigned int i;
	int ret;

	ret = finish_policy(p);
	if (ret)
		return ret;
	if (line[len - 1] != ']')
		return fail(p, p->line, "unterminated section '%s' (expected [policy NAME])", line);
	line[len - 1] = '\0';
	inner = trim(line + 1);
	p->access = NULL;
	p->in_fleet = false;
	if (strcmp(inner, "fleet") == 0)
		return start_fleet(p);
	if (strcmp(inner, "allow") == 0 || strcmp(inner, "deny") == 0) {
		bool allow = inner[0] == 'a';

		p->access = allow ? cfg->allow : cfg->deny;
		p->n_access = allow ? &cfg->n_allow : &cfg->n_deny;
		p->access_name = allow ? "allow" : "deny";
		return 0;
	}
	if (strncmp(inner, "policy", 6) != 0 || (inner[6] && !isspace((unsigned char)inner[6])))
		return fail(p, p->line,
			    "unknown section '[%s]' (expected [policy NAME], [allow], [deny] or "
			    "[fleet])",
			    inner);
	name = trim(inner + 6);
	if (!*name)
		return fail(p, p->line, "policy section without a name (expected [policy NAME])");
	if (!valid_policy_name(name))
		return fail(
			p, p->line,
			"bad policy name '%s' (expected 1..%d characters of A-Z, a-z, 0-9, _, . "
			"and -)",
			name, FG_POLICY_NAME_LEN - 1);
	for (i = 0; i < cfg->n_policies; i++)
		if (strcmp(cfg->policies[i].name, name) == 0)
			return fail(
				p, p->line,
				"duplicate policy '%s' (expected a unique name; first defined at "
				"line %d)",
				name, cfg->policies[i].line);
	if (cfg->n_policies == FG_MAX_POLICIES)
		return fail(p, p->line, "too many policies (expected at most %d)", FG_MAX_POLICIES);

	pol = &cfg->policies[cfg->n_policies];
	memset(pol, 0, sizeof(*pol));
	strcpy(pol->name, name);
	pol->line = p->line;
	pol->key_kind = FG_KEY_SOURCE;
	pol->prefix_v4 = 32;
	pol->prefix_v6 = 64;
	pol->algorithm = FG_ALG_TOKEN_BUCKET;
	pol->action = FG_ACTION_DROP;
	pol->size_hi_class = FG_SIZE_CLASSES - 1;

	p->pol = pol;
	memset(p->policy_line, 0, sizeof(p->policy_line));
	p->rate_text = NULL;
	p->burst_text = NULL;
	memset(&p->burst, 0, sizeof(p->burst));
	return 0;
}

static bool same_cidr(const struct fg_cidr *a, const struct fg_cidr *b)
{
	return a->family == b->family && a->prefix_len == b->prefix_len &&
	       memcmp(a->addr, b->addr, 16) == 0;
}

/* `src = CIDR list` in [allow] or [deny]; may be repeated. */
static int access_key(struct parser *p, const char *key, const char *v)
{
	struct fg_config *cfg = p->cfg;
	bool allow = p->access == cfg->allow;
	const struct fg_cidr *other = allow ? cfg->deny : cfg->allow;
	unsigned int n_other = allow ? cfg->n_deny : cfg->n_allow, i;
	const char *tok;
	int len, ret;

	if (strcmp(key, "src") != 0)
		return fail(p, p->line, "unknown key '%s' in [%s] (expected src = CIDR list)", key,
			    p->access_name);
	while (next_token(&v, LIST_SEPS, &tok, &len)) {
		struct fg_cidr *c = &p->access[*p->n_access];

		if (*p->n_access == FG_MAX_ACCESS_CIDRS)
			return fail(p, p->line, "too many networks in [%s] (expected at most %d)",
				    p->access_name, FG_MAX_ACCESS_CIDRS);
		ret = parse_cidr(p, tok, len, c);
		if (ret)
			return ret;
		for (i = 0; i < n_other; i++)
			if (same_cidr(c, &other[i]))
				return fail(p, p->line,
					    "'%.*s' is in both [allow] and [deny] (expected each "
					    "network in one list; the longest prefix decides)",
					    len, tok);
		(*p->n_access)++;
	}
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	char *hash = strchr(line, '#');
	char *eq, *key, *value;

	if (hash)
		*hash = '\0';
	line = trim(line);
	if (!*line)
		return 0;
	if (*line == '[')
		return parse_section(p, line);

	eq = strchr(line, '=');
	if (!eq)
		return fail(
			p, p->line,
			"cannot parse '%s' (expected key = value, [policy NAME], a comment or a "
			"blank line)",
			line);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!*key)
		return fail(p, p->line, "'=' without a key (expected key = value)");
	if (!*value)
		return fail(p, p->line, "key '%s' has no value (expected %s = VALUE)", key, key);
	if (p->access)
		return access_key(p, key, value);
	if (p->in_fleet)
		return fleet_key(p, key, value);
	return p->pol ? policy_key(p, key, value) : global_key(p, key, value);
}

int fg_config_parse_string(const char *source, const char *text, struct fg_config *cfg, FILE *err)
{
	struct parser p;
	char *copy, *s;
	int ret = 0;

	memset(cfg, 0, sizeof(*cfg));
	memset(&p, 0, sizeof(p));
	p.source = source ? source : "<config>";
	p.err = err;
	p.cfg = cfg;

	text = text ? text : "";
	/* A UTF-8 byte-order mark, which some Windows editors write, is
	 * not part of the first line. */
	if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
		text += 3;
	copy = strdup(text);
	if (!copy) {
		if (err)
			fprintf(err, "%s: %s\n", p.source, strerror(ENOMEM));
		return -ENOMEM;
	}

	cfg->hook = FG_HOOK_XDP;
	cfg->xdp_mode = FG_XDP_NATIVE;
	cfg->max_sources = FG_DEFAULT_MAX_SOURCES;
	cfg->malformed = FG_VERDICT_DROP;
	cfg->table_full = FG_VERDICT_PASS;
	cfg->new_sources_count = FG_DEFAULT_NEW_SOURCES;
	cfg->new_sources_period_ns = FG_NS_PER_S;
	cfg->events_count = FG_DEFAULT_EVENTS;
	cfg->events_period_ns = FG_NS_PER_S;

	for (s = copy; *s && !ret;) {
		char *nl = strchr(s, '\n');

		if (nl)
			*nl = '\0';
		p.line++;
		ret = parse_line(&p, s);
		s = nl ? nl + 1 : s + strlen(s);
	}
	if (!ret)
		ret = finish_policy(&p);
	if (!ret)
		ret = check_fleet(&p);
	if (!ret && !p.global_line[G_MAX_SOURCES_IPV6])
		cfg->max_sources_ipv6 = fg_default_sources_ipv6(cfg->max_sources);
	if (!ret && cfg->n_policies == 0)
		ret = fail(&p, p.line ? p.line : 1,
			   "no policy (expected at least one [policy NAME] section)");

	free(copy);
	if (ret)
		memset(cfg, 0, sizeof(*cfg));
	return ret;
}

int fg_config_parse_file(const char *path, struct fg_config *cfg, FILE *err)
{
	char *buf = NULL, *nul;
	size_t len = 0, size = 0, n;
	FILE *f;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		goto out_errno;
	}
	for (;;) {
		if (len > FG_CONFIG_MAX_BYTES) {
			/* Bounded memory and time, even for /dev/zero. */
			ret = -EFBIG;
			fclose(f);
			free(buf);
			if (err)
				fprintf(err, "%s: too large (a config may have at most %d bytes)\n",
					path, FG_CONFIG_MAX_BYTES);
			return ret;
		}
		if (size - len < 4096) {
			char *bigger = realloc(buf, size ? size * 2 : 8192);

			if (!bigger) {
				ret = -ENOMEM;
				fclose(f);
				goto out_errno;
			}
			buf = bigger;
			size = size ? size * 2 : 8192;
		}
		n = fread(buf + len, 1, size - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		ret = errno ? -errno : -EIO;
		fclose(f);
		goto out_errno;
	}
	fclose(f);
	buf[len] = '\0';

	nul = memchr(buf, '\0', len);
	if (nul) {
		int line = 1;
		char *c;

		for (c = buf; c < nul; c++)
			line += *c == '\n';
		if (err)
			fprintf(err, "%s:%d: NUL byte in the file (expected a text file)\n", path,
				line);
		free(buf);
		return -EINVAL;
	}

	ret = fg_config_parse_string(path, buf, cfg, err);
	free(buf);
	return ret;

out_errno:
	free(buf);
	if (err)
		fprintf(err, "%s: %s\n", path, strerror(-ret));
	return ret;
}
