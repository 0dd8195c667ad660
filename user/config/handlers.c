// SPDX-License-Identifier: GPL-2.0-only
/*
 * The value handlers of keys (the types of the key table's rows): words of
 * a fixed set, bounded numbers, rates, durations, and the keys that fill
 * more than one field (interface, action, rate, burst, redis, key_prefix).
 * values.c parses the values; these word the FILE:LINE messages and store.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "config/handlers.h"
#include "config/parser.h"

/* "a, b or c" of a NULL-terminated list of words. */
static const char *word_list(const char *const *names, char *buf, size_t size)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; names[i] && used < size; i++)
		used += snprintf(buf + used, size - used, "%s%s",
				 i == 0		? ""
				 : names[i + 1] ? ", "
						: " or ",
				 names[i]);
	return buf;
}

static int parse_choice(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const struct fg_choice *choice = key->arg;
	char expected[256];
	int i;

	for (i = 0; choice->names[i]; i++) {
		if (strcmp(choice->names[i], v) == 0) {
			fg_field_set(base, key->offset, key->size, choice->values[i]);
			return 0;
		}
	}
	return fg_cfg_fail(p, p->line, "bad %s '%s' (expected %s)", key->name, v,
			   word_list(choice->names, expected, sizeof(expected)));
}

static void format_choice(const struct fg_key *key, __u64 value, char *buf, size_t size)
{
	const struct fg_choice *choice = key->arg;
	int i;

	for (i = 0; choice->names[i]; i++) {
		if (choice->values[i] == value) {
			snprintf(buf, size, "%s", choice->names[i]);
			return;
		}
	}
	snprintf(buf, size, "%llu", (unsigned long long)value);
}

const struct fg_key_type fg_type_choice = {
	.parse = parse_choice, .format = format_choice, .syntax = "WORD"};

static int parse_uint(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const struct fg_uint_range *range = key->arg;
	__u64 n;

	if (fg_parse_uint(v, strlen(v), range->max, &n) || n < range->min)
		return fg_cfg_fail(p, p->line, "bad %s '%s' (expected %llu..%llu)", key->name, v,
				   (unsigned long long)range->min, (unsigned long long)range->max);
	fg_field_set(base, key->offset, key->size, n);
	return 0;
}

static void format_uint(const struct fg_key *key, __u64 value, char *buf, size_t size)
{
	(void)key;
	snprintf(buf, size, "%llu", (unsigned long long)value);
}

const struct fg_key_type fg_type_uint = {.parse = parse_uint, .format = format_uint, .syntax = "N"};

/* off | COUNT/UNIT (UNIT: ms, s, min, h), COUNT up to `max` a second; off
 * is COUNT 0. The field is the count; the period goes beside it. */
static int parse_rate_or_off(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const struct fg_rate_or_off *rate = key->arg;
	__u64 count = 0, period_ns = 0;

	if (strcmp(v, "off") != 0 && fg_parse_event_rate(v, rate->max, &count, &period_ns))
		return fg_cfg_fail(p, p->line, "bad %s '%s' (expected off, or %s)", key->name, v,
				   rate->example);
	fg_field_set(base, key->offset, key->size, count);
	if (count)
		fg_field_set(base, rate->period_offset, sizeof(__u64), period_ns);
	return 0;
}

const struct fg_key_type fg_type_rate_or_off = {.parse = parse_rate_or_off,
						.syntax = "COUNT/UNIT | off"};

static int parse_duration_in(struct fg_parser *p, const char *what,
			     const struct fg_duration_range *range, const char *v, __u64 *ns)
{
	if (fg_parse_duration(v, ns) || *ns < range->min_ns || *ns > range->max_ns)
		return fg_cfg_fail(p, p->line, "bad %s '%s' (expected %s)", what, v,
				   range->expected);
	return 0;
}

static int parse_duration(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	__u64 ns;

	if (parse_duration_in(p, key->name, key->arg, v, &ns))
		return -EINVAL;
	fg_field_set(base, key->offset, key->size, ns);
	return 0;
}

const struct fg_key_type fg_type_duration = {.parse = parse_duration, .syntax = "DURATION"};

const struct fg_duration_range fg_ban_duration = {
	.min_ns = 0,
	.max_ns = FG_MAX_BAN_NS,
	.expected = "a duration of 1ms..30d such as 90s, 10m, 24h",
};

/* A network interface's name, into a char[IF_NAMESIZE]. */
static int parse_interface(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const char *c;

	if (strlen(v) >= key->size)
		return fg_cfg_fail(p, p->line,
				   "interface name '%s' is too long (expected at most %zu "
				   "characters)",
				   v, key->size - 1);
	for (c = v; *c; c++)
		if (isspace((unsigned char)*c) || *c == '/' || !isprint((unsigned char)*c))
			return fg_cfg_fail(p, p->line,
					   "bad interface name '%s' (expected a name such as eth0, "
					   "without spaces or '/')",
					   v);
	strcpy((char *)base + key->offset, v);
	return 0;
}

const struct fg_key_type fg_type_interface = {.parse = parse_interface, .syntax = "IFACE"};

/* action = drop | monitor | ban DURATION */
static int parse_action(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_policy_conf *pol = base;

	(void)key;
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
		return parse_duration_in(p, "ban duration", &fg_ban_duration, fg_cfg_trim(v + 4),
					 &pol->ban_ns);
	}
	return fg_cfg_fail(p, p->line, "bad action '%s' (expected drop, monitor or ban DURATION)",
			   v);
}

const struct fg_key_type fg_type_action = {.parse = parse_action,
					   .syntax = "drop | monitor | ban DURATION"};

/* Reports what follows the number of a rate or burst as a bad unit. */
static int bad_unit(struct fg_parser *p, const char *what, const char *v, const char *unit,
		    size_t unit_len, const char *expected)
{
	if (unit_len && unit[0] == '.')
		return fg_cfg_fail(p, p->line, "fraction in %s '%s' (expected whole numbers only)",
				   what, v);
	return fg_cfg_fail(p, p->line, "unknown unit '%.*s' in %s '%s' (expected %s)",
			   (int)unit_len, unit, what, v, expected);
}

int fg_cfg_check_refill(struct fg_parser *p, int line)
{
	struct fg_policy_conf *pol = p->pol;

	/* burst * (period / count) > 2^62, without dividing */
	if ((unsigned __int128)pol->burst * pol->rate_period_ns >
	    (unsigned __int128)FG_REFILL_LIMIT_NS * pol->rate_count)
		return fg_cfg_fail(
			p, line,
			"burst %llu too large for this rate '%s' (expected burst * period / "
			"count <= 2^62 ns)",
			(unsigned long long)pol->burst, p->rate_text);
	return 0;
}

/* Both rate and burst are known: give burst its unit and check it. */
static int resolve_burst(struct fg_parser *p)
{
	struct fg_policy_conf *pol = p->pol;
	int line = p->burst_line;

	if (!pol->bytes && p->burst.bytes)
		return fg_cfg_fail(
			p, line,
			"burst '%s' is in bytes but rate '%s' counts packets (expected a "
			"packet count such as burst = 20, or a byte rate such as 10MB/s)",
			p->burst_text, p->rate_text);
	if (pol->bytes && p->burst.value > FG_MAX_BYTE_BURST)
		return fg_cfg_fail(p, line, "burst '%s' is too large (expected 1..%llu bytes)",
				   p->burst_text, (unsigned long long)FG_MAX_BYTE_BURST);
	if (!pol->bytes && p->burst.value > FG_MAX_BURST)
		return fg_cfg_fail(p, line, "burst '%s' is too large (expected 1..%llu packets)",
				   p->burst_text, (unsigned long long)FG_MAX_BURST);
	pol->burst = (__u64)p->burst.value;
	return fg_cfg_check_refill(p, line);
}

/* The message for a rate that fg_parse_rate refused. */
static int bad_rate(struct fg_parser *p, const char *v, const struct fg_rate *rate,
		    const struct fg_value_error *e)
{
	static const char expected[] = "COUNT/PERIOD such as 100/s, 1000/10s, 5/250ms or 10MB/s";

	switch (e->fault) {
	case FG_TOO_LARGE:
		return fg_cfg_fail(p, p->line, "rate count in '%s' is too large (expected %s)", v,
				   expected);
	case FG_BAD_UNIT:
		return bad_unit(p, "rate", v, e->at, e->at_len,
				"packets as a bare number, or bytes in " FG_BYTE_UNIT_LIST);
	case FG_ZERO:
		return fg_cfg_fail(p, p->line,
				   "rate '%s' has a zero count (expected a count of at least 1)",
				   v);
	case FG_NOT_WHOLE_BYTES:
		return fg_cfg_fail(
			p, p->line,
			"rate '%s' is not a whole number of bytes (expected a multiple of 8 "
			"bits)",
			v);
	case FG_PERIOD_TOO_LONG:
		return fg_cfg_fail(p, p->line,
				   "rate period in '%s' is too long (expected 1ms..24h)", v);
	case FG_BAD_PERIOD_UNIT:
		return bad_unit(p, "rate", v, e->at, e->at_len,
				"a period of ms, s, min or h, optionally preceded by a number as "
				"in 10s");
	case FG_PERIOD_RANGE:
		return fg_cfg_fail(p, p->line,
				   "rate period in '%s' is out of range (expected 1ms..24h)", v);
	case FG_RATE_TOO_HIGH:
		if (rate->bytes)
			return fg_cfg_fail(p, p->line,
					   "rate '%s' is too high (expected at most %llu bytes/s)",
					   v, (unsigned long long)FG_MAX_BYTE_RATE_PER_S);
		return fg_cfg_fail(p, p->line,
				   "rate '%s' is too high (expected at most %llu packets/s)", v,
				   (unsigned long long)FG_MAX_PACKET_RATE_PER_S);
	case FG_RATE_TOO_LOW:
		return fg_cfg_fail(p, p->line,
				   "rate '%s' is too low (expected at least %llu bytes/s)", v,
				   (unsigned long long)FG_MIN_BYTE_RATE_PER_S);
	default:
		return fg_cfg_fail(p, p->line, "bad rate '%s' (expected %s)", v, expected);
	}
}

static int parse_rate(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_policy_conf *pol = base;
	struct fg_value_error e;
	struct fg_rate rate;

	(void)key;
	p->rate_text = v;
	if (fg_parse_rate(v, &rate, &e))
		return bad_rate(p, v, &rate, &e);
	pol->bytes = rate.bytes;
	pol->rate_count = rate.count;
	pol->rate_period_ns = rate.period_ns;
	return p->burst_text ? resolve_burst(p) : 0;
}

static int parse_burst(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_value_error e;

	(void)key;
	(void)base; /* burst is resolved into the policy once the rate is known */
	if (!fg_parse_amount(v, &p->burst, &e)) {
		p->burst_text = v;
		p->burst_line = p->line;
		return p->rate_text ? resolve_burst(p) : 0;
	}
	switch (e.fault) {
	case FG_TOO_LARGE:
		return fg_cfg_fail(
			p, p->line,
			"burst '%s' is too large (expected 1..%llu packets or 1..%llu bytes)", v,
			(unsigned long long)FG_MAX_BURST, (unsigned long long)FG_MAX_BYTE_BURST);
	case FG_BAD_UNIT:
		return bad_unit(p, "burst", v, e.at, e.at_len,
				"packets as a bare number, or bytes in " FG_BYTE_UNIT_LIST);
	case FG_ZERO:
		return fg_cfg_fail(p, p->line, "burst '%s' is zero (expected at least 1)", v);
	case FG_NOT_WHOLE_BYTES:
		return fg_cfg_fail(
			p, p->line,
			"burst '%s' is not a whole number of bytes (expected a multiple of 8 "
			"bits)",
			v);
	default:
		return fg_cfg_fail(
			p, p->line,
			"bad burst '%s' (expected a number of packets, or bytes with a unit "
			"such as 64kB)",
			v);
	}
}

static int bad_redis(struct fg_parser *p, const char *v)
{
	return fg_cfg_fail(
		p, p->line,
		"bad redis '%s' (expected HOST:PORT such as 127.0.0.1:6379 or [::1]:6379, or "
		"unix:/absolute/path)",
		v);
}

/* redis = HOST:PORT | [IPV6]:PORT | unix:/absolute/path */
static int parse_redis(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	struct fg_fleet_conf *fleet = base;
	const char *colon = strrchr(v, ':'), *host = v;
	size_t host_len = colon ? (size_t)(colon - v) : 0;
	__u64 port;

	(void)key;
	if (strncmp(v, "unix:", 5) == 0) {
		if (v[5] != '/' || strlen(v + 5) >= sizeof(fleet->unix_path))
			return fg_cfg_fail(
				p, p->line,
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
	/* A bracket left in the host ([::1]]:1) would reach the resolver. */
	if (!host_len || host_len >= sizeof(fleet->host) || memchr(host, '[', host_len) ||
	    memchr(host, ']', host_len) ||
	    fg_parse_uint(colon + 1, strlen(colon + 1), 65535, &port) || !port)
		return bad_redis(p, v);
	memcpy(fleet->host, host, host_len);
	fleet->host[host_len] = '\0';
	fleet->port = (__u16)port;
	return 0;
}

/* A string of 1..size - 1 printable characters without spaces. */
static int parse_key_prefix(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const char *c;

	for (c = v; *c; c++)
		if (!isgraph((unsigned char)*c))
			break;
	if (*c || strlen(v) >= key->size)
		return fg_cfg_fail(p, p->line,
				   "bad %s '%s' (expected 1..%zu printable characters without "
				   "spaces, such as %s)",
				   key->name, v, key->size - 1,
				   key->default_value ? key->default_value : key->example);
	strcpy((char *)base + key->offset, v);
	return 0;
}

/* password_file = /absolute/path: the file itself is checked once the
 * config is read (fg_config_read), at the line kept here (the int at the
 * offset the key's arg names). */
static int parse_secret_file(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const size_t *line_offset = key->arg;

	if (v[0] != '/' || strlen(v) >= key->size)
		return fg_cfg_fail(p, p->line,
				   "bad %s '%s' (expected an absolute path of at most %zu "
				   "characters, such as %s)",
				   key->name, v, key->size - 1, key->example);
	strcpy((char *)base + key->offset, v);
	*(int *)((char *)base + *line_offset) = p->line;
	return 0;
}

/* url = http://HOST[:PORT][/PATH] or https://...: printable, no spaces. */
static int parse_url(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const char *c;

	for (c = v; *c && isgraph((unsigned char)*c); c++)
		;
	if (*c || strlen(v) >= key->size ||
	    (strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) || !v[v[4] == 's' ? 8 : 7])
		return fg_cfg_fail(p, p->line,
				   "bad %s '%s' (expected an http:// or https:// URL of at most "
				   "%zu characters, such as %s)",
				   key->name, v, key->size - 1, key->example);
	strcpy((char *)base + key->offset, v);
	return 0;
}

/* A list of words of a choice, separated by commas or spaces: the OR of
 * their values (bits). */
static int parse_flags(struct fg_parser *p, const struct fg_key *key, void *base, char *v)
{
	const struct fg_choice *choice = key->arg;
	char expected[256], *word, *save = NULL;
	__u64 bits = 0;
	int i;

	for (word = strtok_r(v, ", \t", &save); word; word = strtok_r(NULL, ", \t", &save)) {
		for (i = 0; choice->names[i] && strcmp(choice->names[i], word); i++)
			;
		if (!choice->names[i])
			return fg_cfg_fail(p, p->line, "bad %s '%s' (expected a list of %s)",
					   key->name, word,
					   word_list(choice->names, expected, sizeof(expected)));
		bits |= choice->values[i];
	}
	/* `origins = ,` would read as no origin, which origins' "not set"
	 * (every origin) cannot tell apart. */
	if (!bits)
		return fg_cfg_fail(p, p->line, "%s names none (expected a list of %s)", key->name,
				   word_list(choice->names, expected, sizeof(expected)));
	fg_field_set(base, key->offset, key->size, bits);
	return 0;
}

const struct fg_key_type fg_type_rate = {.parse = parse_rate, .syntax = "COUNT/PERIOD"};
const struct fg_key_type fg_type_burst = {.parse = parse_burst, .syntax = "COUNT"};
const struct fg_key_type fg_type_redis = {.parse = parse_redis, .syntax = "HOST:PORT | unix:PATH"};
const struct fg_key_type fg_type_key_prefix = {.parse = parse_key_prefix, .syntax = "WORD"};
const struct fg_key_type fg_type_secret = {.parse = parse_secret_file, .syntax = "FILE"};
const struct fg_key_type fg_type_url = {.parse = parse_url, .syntax = "URL"};
const struct fg_key_type fg_type_flags = {.parse = parse_flags, .syntax = "WORD[, WORD ...]"};
