// SPDX-License-Identifier: GPL-2.0-only
/* Value parsers shared by the config and the CLI (see values.h). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "config/values.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct fg_unit byte_units[] = {
	{"B", 1, false},
	{"kB", 1000ULL, false},
	{"MB", 1000000ULL, false},
	{"GB", 1000000000ULL, false},
	{"KiB", 1ULL << 10, false},
	{"MiB", 1ULL << 20, false},
	{"GiB", 1ULL << 30, false},
	{"bit", 1, true},
	{"kbit", 1000ULL, true},
	{"mbit", 1000000ULL, true},
	{"gbit", 1000000000ULL, true},
};

static const struct fg_unit period_units[] = {
	{"ms", 1000000ULL, false},
	{"s", FG_NS_PER_S, false},
	{"min", 60 * FG_NS_PER_S, false},
	{"h", 3600 * FG_NS_PER_S, false},
};

/* A ban's duration also takes m and d, which a rate's period does not. */
static const struct fg_unit duration_units[] = {
	{"ms", 1000000ULL, false},	  {"s", FG_NS_PER_S, false},
	{"m", 60 * FG_NS_PER_S, false},	  {"min", 60 * FG_NS_PER_S, false},
	{"h", 3600 * FG_NS_PER_S, false}, {"d", 86400 * FG_NS_PER_S, false},
};

static int fault(struct fg_value_error *err, enum fg_value_fault f, const char *at, size_t at_len)
{
	err->fault = f;
	err->at = at;
	err->at_len = at_len;
	return -EINVAL;
}

int fg_split_number(const char *s, size_t len, __u64 *n, const char **rest, size_t *rest_len)
{
	__u64 v = 0;
	size_t i;

	if (len == 0 || !isdigit((unsigned char)s[0]))
		return -ENOENT;
	for (i = 0; i < len && isdigit((unsigned char)s[i]); i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	while (i < len && isspace((unsigned char)s[i]))
		i++;
	*n = v;
	*rest = s + i;
	*rest_len = len - i;
	return 0;
}

int fg_parse_uint(const char *s, size_t len, __u64 max, __u64 *out)
{
	const char *rest;
	size_t rest_len;
	int ret = fg_split_number(s, len, out, &rest, &rest_len);

	if (ret)
		return ret;
	if (rest_len)
		return -ENOENT;
	return *out > max ? -ERANGE : 0;
}

static const struct fg_unit *find_unit(const struct fg_unit *units, size_t n, const char *s,
				       size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(units[i].name) == len && memcmp(units[i].name, s, len) == 0)
			return &units[i];
	return NULL;
}

const struct fg_unit *fg_find_byte_unit(const char *s, size_t len)
{
	return find_unit(byte_units, ARRAY_SIZE(byte_units), s, len);
}

const struct fg_unit *fg_find_period_unit(const char *s, size_t len)
{
	return find_unit(period_units, ARRAY_SIZE(period_units), s, len);
}

/* `n` of `unit` in bytes; FG_NOT_WHOLE_BYTES for bits short of a byte. */
static int to_bytes(unsigned __int128 *n, const struct fg_unit *unit, struct fg_value_error *err)
{
	*n *= unit->mult;
	if (!unit->bits)
		return 0;
	if (*n % 8)
		return fault(err, FG_NOT_WHOLE_BYTES, NULL, 0);
	*n /= 8;
	return 0;
}

/* COUNT[UNIT] of a rate, `len` characters before the '/'. */
static int parse_rate_count(const char *s, size_t len, struct fg_rate *rate,
			    unsigned __int128 *count, struct fg_value_error *err)
{
	const struct fg_unit *u = NULL;
	const char *unit;
	size_t unit_len;
	__u64 n;
	int ret = fg_split_number(s, len, &n, &unit, &unit_len);

	if (ret == -ERANGE)
		return fault(err, FG_TOO_LARGE, s, len);
	if (ret)
		return fault(err, FG_BAD_VALUE, s, len);
	rate->bytes = unit_len > 0;
	if (rate->bytes) {
		u = fg_find_byte_unit(unit, unit_len);
		if (!u)
			return fault(err, FG_BAD_UNIT, unit, unit_len);
	}
	if (n == 0)
		return fault(err, FG_ZERO, s, len);
	*count = n;
	return u ? to_bytes(count, u, err) : 0;
}

/* [N]PERIOD of a rate, in ns, within FG_MIN/MAX_PERIOD_NS. */
static int parse_rate_period(const char *s, unsigned __int128 *period, struct fg_value_error *err)
{
	size_t len = strlen(s), unit_len = len;
	const struct fg_unit *u;
	const char *unit = s;
	__u64 n = 1;

	if (len && isdigit((unsigned char)*s) && fg_split_number(s, len, &n, &unit, &unit_len))
		return fault(err, FG_PERIOD_TOO_LONG, s, len);
	u = fg_find_period_unit(unit, unit_len);
	if (!u)
		return fault(err, FG_BAD_PERIOD_UNIT, unit, unit_len);
	*period = (unsigned __int128)n * u->mult;
	if (*period < FG_MIN_PERIOD_NS || *period > FG_MAX_PERIOD_NS)
		return fault(err, FG_PERIOD_RANGE, s, len);
	return 0;
}

int fg_parse_rate(const char *text, struct fg_rate *rate, struct fg_value_error *err)
{
	const char *slash = strchr(text, '/'), *period_s;
	unsigned __int128 count, period, per_s;
	size_t count_len;
	int ret;

	memset(rate, 0, sizeof(*rate));
	if (!slash)
		return fault(err, FG_BAD_VALUE, text, strlen(text));
	count_len = (size_t)(slash - text);
	while (count_len && isspace((unsigned char)text[count_len - 1]))
		count_len--;
	period_s = slash + 1;
	while (isspace((unsigned char)*period_s))
		period_s++;
	ret = parse_rate_count(text, count_len, rate, &count, err);
	if (!ret)
		ret = parse_rate_period(period_s, &period, err);
	if (ret)
		return ret;

	/* count / period in units per second, compared without dividing */
	per_s = count * FG_NS_PER_S;
	if (per_s >
	    (unsigned __int128)(rate->bytes ? FG_MAX_BYTE_RATE_PER_S : FG_MAX_PACKET_RATE_PER_S) *
		    period)
		return fault(err, FG_RATE_TOO_HIGH, text, strlen(text));
	if (rate->bytes && per_s < (unsigned __int128)FG_MIN_BYTE_RATE_PER_S * period)
		return fault(err, FG_RATE_TOO_LOW, text, strlen(text));

	/* The bounds above keep both well inside 64 bits. */
	rate->count = (__u64)count;
	rate->period_ns = (__u64)period;
	return 0;
}

int fg_parse_event_rate(const char *text, __u64 max, __u64 *count, __u64 *period_ns)
{
	const char *slash = strchr(text, '/');
	const struct fg_unit *u;
	__u64 n;

	if (!slash)
		return -EINVAL;
	u = fg_find_period_unit(slash + 1, strlen(slash + 1));
	if (!u || fg_parse_uint(text, (size_t)(slash - text), UINT64_MAX, &n) || n == 0)
		return -EINVAL;
	/* COUNT is also the burst, so it is bounded in any unit; and the rate
	 * a second, so that 1000000/ms is not 10^9 a second. */
	if (n > max || (unsigned __int128)n * FG_NS_PER_S > (unsigned __int128)max * u->mult)
		return -ERANGE;
	*count = n;
	*period_ns = u->mult;
	return 0;
}

int fg_parse_amount(const char *text, struct fg_amount *amount, struct fg_value_error *err)
{
	const struct fg_unit *u = NULL;
	const char *unit;
	size_t unit_len, len = strlen(text);
	__u64 n;
	int ret = fg_split_number(text, len, &n, &unit, &unit_len);

	memset(amount, 0, sizeof(*amount));
	if (ret == -ERANGE)
		return fault(err, FG_TOO_LARGE, text, len);
	if (ret)
		return fault(err, FG_BAD_VALUE, text, len);
	if (unit_len) {
		u = fg_find_byte_unit(unit, unit_len);
		if (!u)
			return fault(err, FG_BAD_UNIT, unit, unit_len);
	}
	if (n == 0)
		return fault(err, FG_ZERO, text, len);
	amount->bytes = u != NULL;
	amount->value = n;
	return u ? to_bytes(&amount->value, u, err) : 0;
}

int fg_parse_duration(const char *text, __u64 *ns)
{
	const struct fg_unit *u;
	const char *rest;
	size_t rest_len;
	__u64 n;

	if (fg_split_number(text, strlen(text), &n, &rest, &rest_len) || n == 0 ||
	    !(u = find_unit(duration_units, ARRAY_SIZE(duration_units), rest, rest_len)) ||
	    n > FG_MAX_BAN_NS / u->mult)
		return -EINVAL;
	*ns = n * u->mult;
	return 0;
}

static int parse_port(const char *s, size_t len, __u16 *port, struct fg_value_error *err)
{
	__u64 n;
	int ret = fg_parse_uint(s, len, 65535, &n);

	if (ret == -ERANGE)
		return fault(err, FG_PORT_RANGE, s, len);
	if (ret)
		return fault(err, FG_BAD_PORT, s, len);
	*port = (__u16)n;
	return 0;
}

int fg_parse_port_range(const char *s, size_t len, struct fg_port_range *range,
			struct fg_value_error *err)
{
	const char *dash = memchr(s, '-', len);
	int ret;

	if (dash) {
		ret = parse_port(s, (size_t)(dash - s), &range->lo, err);
		if (!ret)
			ret = parse_port(dash + 1, (size_t)(s + len - dash - 1), &range->hi, err);
	} else {
		ret = parse_port(s, len, &range->lo, err);
		range->hi = range->lo;
	}
	if (ret)
		return ret;
	if (range->lo > range->hi)
		return fault(err, FG_PORTS_REVERSED, s, len);
	return 0;
}

/* Byte `i` of the netmask of a `prefix`-bit prefix. */
static __u8 prefix_byte_mask(unsigned int prefix, int i)
{
	unsigned int bits = prefix > (unsigned int)i * 8 ? prefix - (unsigned int)i * 8 : 0;

	return bits >= 8 ? 0xff : (__u8)(0xff << (8 - bits));
}

/* The /LEN of a CIDR, or the family's full length without one. */
static int parse_prefix_len(const char *slash, const char *end, unsigned int max_prefix,
			    __u8 *prefix_len, struct fg_value_error *err)
{
	__u64 prefix = max_prefix;
	size_t n;
	int ret;

	if (slash) {
		n = (size_t)(end - slash - 1);
		ret = fg_parse_uint(slash + 1, n, max_prefix, &prefix);
		if (ret == -ERANGE)
			return fault(err, FG_PREFIX_RANGE, slash + 1, n);
		if (ret)
			return fault(err, FG_BAD_PREFIX, slash + 1, n);
	}
	*prefix_len = (__u8)prefix;
	return 0;
}

int fg_parse_cidr_len(const char *s, size_t len, struct fg_cidr *cidr, struct fg_value_error *err)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = memchr(s, '/', len);
	size_t addr_len = slash ? (size_t)(slash - s) : len;
	bool v6 = memchr(s, ':', addr_len) != NULL;
	int af = v6 ? AF_INET6 : AF_INET, bytes = v6 ? 16 : 4, i;
	__u8 net[16] = {0};

	memset(cidr, 0, sizeof(*cidr));
	cidr->family = v6 ? FG_FAMILY_IPV6 : FG_FAMILY_IPV4;
	if (addr_len == 0 || addr_len >= sizeof(addr))
		return fault(err, FG_BAD_ADDRESS, s, len);
	memcpy(addr, s, addr_len);
	addr[addr_len] = '\0';
	if (inet_pton(af, addr, cidr->addr) != 1)
		return fault(err, FG_BAD_ADDRESS, s, len);
	if (parse_prefix_len(slash, s + len, bytes * 8, &cidr->prefix_len, err))
		return -EINVAL;
	for (i = 0; i < bytes; i++)
		net[i] = cidr->addr[i] & prefix_byte_mask(cidr->prefix_len, i);
	if (memcmp(net, cidr->addr, bytes) != 0) {
		inet_ntop(af, net, err->network, sizeof(err->network));
		return fault(err, FG_HOST_BITS, s, len);
	}
	return 0;
}

void fg_cidr_unmap_ipv4(struct fg_cidr *cidr)
{
	static const __u8 mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (cidr->family != FG_FAMILY_IPV6 || cidr->prefix_len < 96 ||
	    memcmp(cidr->addr, mapped_prefix, sizeof(mapped_prefix)))
		return;
	cidr->family = FG_FAMILY_IPV4;
	cidr->prefix_len -= 96;
	memmove(cidr->addr, cidr->addr + 12, 4);
	memset(cidr->addr + 4, 0, 12);
}

int fg_parse_cidr(const char *text, struct fg_cidr *cidr)
{
	struct fg_value_error err;

	return fg_parse_cidr_len(text, strlen(text), cidr, &err);
}

const char *const fg_algorithm_names[] = {
	[FG_ALG_TOKEN_BUCKET] = "token_bucket",	    [FG_ALG_FIXED_WINDOW] = "fixed_window",
	[FG_ALG_SLIDING_WINDOW] = "sliding_window", [FG_ALG_SLIDING_LOG] = "sliding_log",
	[FG_ALG_LEAKY_BUCKET] = "leaky_bucket",	    NULL};

const char *fg_algorithm_name(__u8 algorithm)
{
	return algorithm <= FG_ALG_LEAKY_BUCKET ? fg_algorithm_names[algorithm] : "?";
}

const char *fg_action_name(__u8 action)
{
	static const char *const names[] = {[FG_ACTION_DROP] = "drop",
					    [FG_ACTION_MONITOR] = "monitor",
					    [FG_ACTION_BAN] = "ban"};

	return action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}
