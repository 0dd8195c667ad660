// SPDX-License-Identifier: GPL-2.0-only
/*
 * The value handlers of the keys that select traffic: match (protocol,
 * ports, syn, size), src and per in a policy, and src in [allow] and [deny].
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>

#include "base/util.h"

#include "config/match.h"
#include "config/parser.h"

/* One port or range of a dport/sport list. */
static int parse_port_token(struct fg_parser *p, const char *tok, int len, const char *what,
			    struct fg_port_range *ranges, unsigned int *n)
{
	struct fg_value_error e;

	if (*n == FG_MAX_PORT_RANGES)
		return fg_cfg_fail(
			p, p->line,
			"too many ports in %s list (expected at most %d ports or ranges)", what,
			FG_MAX_PORT_RANGES);
	if (!fg_parse_port_range(tok, len, &ranges[*n], &e)) {
		(*n)++;
		return 0;
	}
	if (e.fault == FG_PORT_RANGE)
		return fg_cfg_fail(p, p->line,
				   "port %.*s out of range in '%.*s' (expected 0..65535)",
				   (int)e.at_len, e.at, len, tok);
	if (e.fault == FG_PORTS_REVERSED)
		return fg_cfg_fail(
			p, p->line,
			"port range '%.*s' is out of order (expected LO-HI with LO <= HI)", len,
			tok);
	return fg_cfg_fail(p, p->line,
			   "bad port '%.*s' in %s list (expected PORT or LO-HI such as 22 or "
			   "8000-8080)",
			   len, tok, what);
}

/* `size LO-HI` or `size LO-max`: frame lengths, Ethernet header included,
 * on the class boundaries of FG_SIZE_CLASSES so that the match stays one
 * array read per packet. */
static int parse_size_clause(struct fg_parser *p, const char **cursor)
{
	const unsigned int last_bounded = FG_SIZE_CLASS_BYTES * (FG_SIZE_CLASSES - 1) - 1;
	struct fg_policy_conf *pol = p->pol;
	const char *tok, *dash;
	__u64 lo, hi;
	int len;

	if (pol->has_size)
		return fg_cfg_fail(p, p->line,
				   "size given twice in match (expected one size LO-HI)");
	if (!fg_cfg_next_token(cursor, FG_LIST_SEPS, &tok, &len))
		return fg_cfg_fail(p, p->line, "size without a range (expected e.g. size 0-255)");
	dash = memchr(tok, '-', len);
	if (!dash || fg_parse_uint(tok, dash - tok, last_bounded + 1, &lo))
		goto bad;
	if (fg_cfg_token_is(dash + 1, len - (int)(dash + 1 - tok), "max"))
		hi = 65535;
	else if (fg_parse_uint(dash + 1, len - (dash + 1 - tok), 65535, &hi) ||
		 (hi > last_bounded && hi != 65535))
		goto bad;
	if (lo > hi)
		return fg_cfg_fail(
			p, p->line,
			"size range '%.*s' is out of order (expected LO-HI with LO <= HI)", len,
			tok);
	if (lo % FG_SIZE_CLASS_BYTES || (hi != 65535 && (hi + 1) % FG_SIZE_CLASS_BYTES))
		return fg_cfg_fail(
			p, p->line,
			"size '%.*s' is not on a %u-byte boundary (expected LO a multiple of "
			"%u and HI one less, such as 0-255 or 256-max)",
			len, tok, FG_SIZE_CLASS_BYTES, FG_SIZE_CLASS_BYTES);
	pol->has_size = true;
	pol->size_lo_class = (__u8)(lo >> FG_SIZE_CLASS_SHIFT);
	pol->size_hi_class = (__u8)(hi == 65535 ? FG_SIZE_CLASSES - 1 : hi >> FG_SIZE_CLASS_SHIFT);
	return 0;
bad:
	return fg_cfg_fail(
		p, p->line,
		"bad size '%.*s' in match (expected LO-HI frame bytes, LO at most %u, HI at "
		"most %u or max, such as 0-255 or 256-max)",
		len, tok, last_bounded + 1, last_bounded);
}

/* The protocol that starts a match; `*name` is its word, for messages. */
static int parse_protocol(struct fg_parser *p, const char **cursor, const char **name)
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
	const char *tok;
	size_t i;
	int len;

	fg_cfg_next_token(cursor, " \t", &tok, &len);
	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		if (fg_cfg_token_is(tok, len, protos[i].name)) {
			p->pol->proto = protos[i].proto;
			*name = protos[i].name;
			return 0;
		}
	}
	return fg_cfg_fail(p, p->line,
			   "unknown protocol '%.*s' in match (expected any, tcp, udp, icmp or "
			   "icmpv6)",
			   len, tok);
}

/* `dport` or `sport` opens a list of ports: where its ranges go. */
static int start_port_list(struct fg_parser *p, const char *list, const char *proto_name,
			   struct fg_port_range **ranges, unsigned int **n)
{
	struct fg_policy_conf *pol = p->pol;
	bool dport = list[0] == 'd';

	if (pol->proto != 0 && pol->proto != IPPROTO_TCP && pol->proto != IPPROTO_UDP)
		return fg_cfg_fail(p, p->line,
				   "%s with protocol %s in match (expected tcp, udp or any before "
				   "%s)",
				   list, proto_name, list);
	*ranges = dport ? pol->dports : pol->sports;
	*n = dport ? &pol->n_dports : &pol->n_sports;
	if (**n)
		return fg_cfg_fail(p, p->line, "%s given twice in match (expected one %s list)",
				   list, list);
	return 0;
}

/* match = PROTO [dport LIST] [sport LIST] [syn] [size LO-HI] */
static int parse_match(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_policy_conf *pol = base;
	const char *cursor = v, *tok, *list = NULL, *proto_name = NULL;
	struct fg_port_range *ranges = NULL;
	unsigned int *n = NULL;
	int len, ret;

	(void)key;
	ret = parse_protocol(p, &cursor, &proto_name);
	if (ret)
		return ret;
	/* A list runs to the next clause word. */
	while (fg_cfg_next_token(&cursor, FG_LIST_SEPS, &tok, &len)) {
		bool dport = fg_cfg_token_is(tok, len, "dport");
		bool sport = fg_cfg_token_is(tok, len, "sport");
		bool syn = fg_cfg_token_is(tok, len, "syn"),
		     size = fg_cfg_token_is(tok, len, "size");

		if ((dport || sport || syn || size) && list && !*n)
			return fg_cfg_fail(p, p->line, "%s without ports (expected e.g. %s 22,80)",
					   list, list);
		if (dport || sport) {
			list = dport ? "dport" : "sport";
			ret = start_port_list(p, list, proto_name, &ranges, &n);
		} else if (size) {
			ret = parse_size_clause(p, &cursor);
			list = NULL;
		} else if (syn) {
			if (pol->proto != IPPROTO_TCP)
				return fg_cfg_fail(
					p, p->line,
					"syn with protocol %s in match (expected tcp ... syn)",
					proto_name);
			pol->syn_only = true;
			list = NULL;
		} else if (!list) {
			return fg_cfg_fail(
				p, p->line,
				"unexpected '%.*s' in match (expected PROTO [dport LIST] [sport "
				"LIST] [syn] [size LO-HI], such as tcp dport 22 syn)",
				len, tok);
		} else {
			ret = parse_port_token(p, tok, len, list, ranges, n);
		}
		if (ret)
			return ret;
	}
	if (list && !*n)
		return fg_cfg_fail(p, p->line,
				   "%s without ports (expected e.g. %s 22,80,8000-8080)", list,
				   list);
	return 0;
}

static int parse_cidr(struct fg_parser *p, const char *tok, int len, struct fg_cidr *c)
{
	struct fg_value_error e;
	int max_prefix;

	if (!fg_parse_cidr_len(tok, (size_t)len, c, &e))
		return 0;
	max_prefix = c->family == FG_FAMILY_IPV6 ? 128 : 32;
	switch (e.fault) {
	case FG_PREFIX_RANGE:
		return fg_cfg_fail(p, p->line,
				   "bad prefix length %.*s in '%.*s' (expected /0..%d for IPv%d)",
				   (int)e.at_len, e.at, len, tok, max_prefix, c->family);
	case FG_BAD_PREFIX:
		return fg_cfg_fail(p, p->line,
				   "bad prefix length '%.*s' in '%.*s' (expected /0..%d for IPv%d)",
				   (int)e.at_len, e.at, len, tok, max_prefix, c->family);
	case FG_HOST_BITS:
		return fg_cfg_fail(p, p->line,
				   "%.*s: host bits set (expected a network address such as %s/%u)",
				   len, tok, e.network, (unsigned int)c->prefix_len);
	default:
		return fg_cfg_fail(p, p->line,
				   "bad address '%.*s' in src (expected an IPv4 or IPv6 address or "
				   "network such as 10.0.0.0/8 or 2001:db8::/32)",
				   len, tok);
	}
}

/* src = CIDR list, in a policy: only these sources match. */
static int parse_src(struct fg_parser *p, const struct fg_key *key, void *base, char *text)
{
	struct fg_policy_conf *pol = base;
	const char *v = text, *tok;
	int len, ret;

	(void)key;
	while (fg_cfg_next_token(&v, FG_LIST_SEPS, &tok, &len)) {
		if (pol->n_srcs == FG_MAX_SRC_CIDRS)
			return fg_cfg_fail(
				p, p->line,
				"too many networks in src (expected at most %d per policy)",
				FG_MAX_SRC_CIDRS);
		ret = parse_cidr(p, tok, len, &pol->srcs[pol->n_srcs]);
		if (ret)
			return ret;
		pol->n_srcs++;
	}
	if (pol->n_srcs == 0)
		return fg_cfg_fail(
			p, p->line,
			"src without networks (expected e.g. src = 10.0.0.0/8, 2001:db8::/32)");
	return 0;
}

/* One `src/N` or `src/N+dport` of a per list, N in 0..128: prefix[*n]. */
static int parse_per_prefix(struct fg_parser *p, const char *v, const char *tok, int len,
			    unsigned int prefix[2], unsigned int *n)
{
	__u64 x;
	int ret;

	if (fg_cfg_token_is(tok, len, "global"))
		return fg_cfg_fail(p, p->line,
				   "'global' combined with prefixes in '%s' (expected either per = "
				   "global or per = src/32 src/64)",
				   v);
	if (len > 6 && memcmp(tok + len - 6, "+dport", 6) == 0) {
		p->pol->key_dport = true; /* one bucket per source and port */
		len -= 6;
	}
	if (len < 4 || memcmp(tok, "src/", 4) != 0)
		return fg_cfg_fail(p, p->line,
				   "bad per '%.*s' (expected global, or src/N for IPv4 and/or IPv6 "
				   "such as src/32 src/64)",
				   len, tok);
	if (*n == 2)
		return fg_cfg_fail(
			p, p->line,
			"too many prefixes in per '%s' (expected at most one IPv4 and one "
			"IPv6 prefix, such as src/32 src/64)",
			v);
	ret = fg_parse_uint(tok + 4, len - 4, 128, &x);
	if (ret == -ENOENT)
		return fg_cfg_fail(p, p->line,
				   "bad prefix length in '%.*s' (expected src/0..32 for IPv4 or "
				   "src/0..128 for IPv6)",
				   len, tok);
	if (ret)
		return fg_cfg_fail(
			p, p->line,
			"bad prefix length %.*s in '%.*s' (expected src/0..32 for IPv4 or "
			"src/0..128 for IPv6)",
			len - 4, tok + 4, len, tok);
	prefix[(*n)++] = (unsigned int)x;
	return 0;
}

/*
 * `per = src/A [src/B]`. A single prefix of 0..32 is the IPv4 one, of 33..128
 * the IPv6 one; the other family keeps its default. Of two prefixes, written
 * in either order, the smaller is the IPv4 one and the larger the IPv6 one.
 */
static int parse_per(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_policy_conf *pol = base;
	const char *cursor = v, *tok;
	unsigned int prefix[2], n = 0;
	int len;

	(void)key;
	if (strcmp(v, "global") == 0) {
		pol->key_kind = FG_KEY_GLOBAL;
		pol->prefix_v4 = 0;
		pol->prefix_v6 = 0;
		return 0;
	}
	while (fg_cfg_next_token(&cursor, FG_LIST_SEPS, &tok, &len)) {
		if (parse_per_prefix(p, v, tok, len, prefix, &n))
			return -EINVAL;
	}
	if (n == 0)
		return fg_cfg_fail(p, p->line,
				   "bad per '%s' (expected global, or src/N for IPv4 and/or IPv6 "
				   "such as src/32 src/64)",
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
		return fg_cfg_fail(p, p->line,
				   "bad prefix length %u in 'src/%u' (expected src/0..32 for IPv4)",
				   prefix[0], prefix[0]);
	pol->prefix_v4 = (__u8)prefix[0];
	pol->prefix_v6 = (__u8)prefix[1];
	return 0;
}

static bool same_cidr(const struct fg_cidr *a, const struct fg_cidr *b)
{
	return a->family == b->family && a->prefix_len == b->prefix_len &&
	       memcmp(a->addr, b->addr, 16) == 0;
}

/* `src = CIDR list` in [allow] or [deny]; may be repeated. */
static int parse_access_src(struct fg_parser *p, const struct fg_key *key, void *base, char *text)
{
	struct fg_config *cfg = base;
	bool allow = p->access == cfg->allow;
	const struct fg_cidr *other = allow ? cfg->deny : cfg->allow;
	unsigned int n_other = allow ? cfg->n_deny : cfg->n_allow, i;
	const char *v = text, *tok;
	int len, ret;

	(void)key;
	while (fg_cfg_next_token(&v, FG_LIST_SEPS, &tok, &len)) {
		struct fg_cidr *c = &p->access[*p->n_access];

		if (*p->n_access == FG_MAX_ACCESS_CIDRS)
			return fg_cfg_fail(p, p->line,
					   "too many networks in [%s] (expected at most %d)",
					   p->access_name, FG_MAX_ACCESS_CIDRS);
		ret = parse_cidr(p, tok, len, c);
		if (ret)
			return ret;
		for (i = 0; i < n_other; i++)
			if (same_cidr(c, &other[i]))
				return fg_cfg_fail(
					p, p->line,
					"'%.*s' is in both [allow] and [deny] (expected each "
					"network in one list; the longest prefix decides)",
					len, tok);
		(*p->n_access)++;
	}
	return 0;
}

/* ports = LIST in [synproxy]: the TCP destination ports it answers for. */
static int parse_synproxy_ports(struct fg_parser *p, const struct fg_key *key, void *base,
				char *value)
{
	struct fg_synproxy_conf *synproxy = base;
	const char *cursor = value, *tok;
	int len, ret;

	(void)key;
	synproxy->n_ports = 0;
	while (fg_cfg_next_token(&cursor, FG_LIST_SEPS, &tok, &len)) {
		ret = parse_port_token(p, tok, len, "ports", synproxy->ports, &synproxy->n_ports);
		if (ret)
			return ret;
	}
	return 0;
}

const struct fg_key_type fg_type_match = {
	.parse = parse_match, .syntax = "PROTO [dport LIST] [sport LIST] [syn] [size LO-HI]"};
const struct fg_key_type fg_type_src = {.parse = parse_src, .syntax = "CIDR[, CIDR ...]"};
const struct fg_key_type fg_type_per = {.parse = parse_per, .syntax = "src/V4 [src/V6] | global"};
const struct fg_key_type fg_type_access_src = {.parse = parse_access_src,
					       .syntax = "CIDR[, CIDR ...]"};
const struct fg_key_type fg_type_synproxy_ports = {.parse = parse_synproxy_ports,
						   .syntax = "PORT|LO-HI[, ...]"};
