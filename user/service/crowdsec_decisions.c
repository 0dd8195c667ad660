// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Local API's decision stream, parsed (docs/crowdsec.md, "CrowdSec"): what is
 * not a ban of scope Ip or Range is counted and left; what is malformed
 * (a value that is no address or prefix of its scope, a duration that is
 * not one, no time left, a field of the wrong type) is counted as refused.
 * Nothing a reply holds can make this fail but a reply that is no
 * decision stream at all.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "service/crowdsec.h"

/* Go's units (time.ParseDuration), in ns. */
static const struct {
	const char *name;
	__u64 ns;
} units[] = {
	{"ns", 1},
	{"us", 1000},
	{"\xc2\xb5s", 1000}, /* µs, U+00B5 */
	{"\xce\xbcs", 1000},
	/* μs, U+03BC */ {"ms", 1000000},
	{"s", 1000000000ULL},
	{"m", 60000000000ULL},
	{"h", 3600000000000ULL},
};

/* The longest unit name that starts `s`, or -1. */
static int unit_at(const char *s)
{
	int best = -1;
	size_t i, len, best_len = 0;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		len = strlen(units[i].name);
		if (len > best_len && !strncmp(s, units[i].name, len)) {
			best = (int)i;
			best_len = len;
		}
	}
	return best;
}

/* One NUMBER UNIT term at *s: its ns added to *total. */
static int duration_term(const char **s, __u64 *total)
{
	__u64 whole = 0, frac = 0, scale = 1, part;
	const char *p = *s;
	bool digits = false;
	int u;

	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (__u64)(*p - '0'), &whole))
			return -EINVAL;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
			if (scale < 1000000000000000000ULL) { /* finer digits are below 1 ns */
				frac = frac * 10 + (__u64)(*p - '0');
				scale *= 10;
			}
	u = digits ? unit_at(p) : -1;
	if (u < 0)
		return -EINVAL;
	/* frac / scale of a unit, computed without overflow: scale <= 10^18 */
	part = (__u64)((unsigned __int128)frac * units[u].ns / scale);
	if (__builtin_mul_overflow(whole, units[u].ns, &whole) ||
	    __builtin_add_overflow(whole, part, &whole) ||
	    __builtin_add_overflow(*total, whole, total))
		return -EINVAL;
	*s = p + strlen(units[u].name);
	return 0;
}

int fg_crowdsec_duration_ns(const char *text, __s64 *ns)
{
	const char *s = text;
	bool negative = false;
	__u64 total = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '-' || *s == '+')
		negative = *s++ == '-';
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s)
		if (duration_term(&s, &total))
			return -EINVAL;
	if (total > (__u64)INT64_MAX)
		return -EINVAL;
	*ns = negative ? -(__s64)total : (__s64)total;
	return 0;
}

static __u8 origin_of(const char *name)
{
	unsigned int o;

	for (o = 0; o < FG_CROWDSEC_ORIGIN_OTHER; o++)
		if (!strcmp(fg_crowdsec_origin_name(o), name))
			return (__u8)o;
	return FG_CROWDSEC_ORIGIN_OTHER;
}

static void note_refusal(struct fg_crowdsec_reply *reply, const json_t *d, const char *why)
{
	const char *value = json_string_value(json_object_get(d, "value"));

	if (!reply->refused++)
		snprintf(reply->first_refusal, sizeof(reply->first_refusal), "%.60s: %s",
			 value ? value : "(no value)", why);
}

enum verdict { KEEP, IGNORE, REFUSE };

/* Reads one decision of the array `deleted` or `new`. */
static enum verdict read_decision(const json_t *d, bool lift, __u8 scopes, __u32 origins,
				  struct fg_crowdsec_decision *out, const char **why)
{
	const char *type = json_string_value(json_object_get(d, "type"));
	const char *scope = json_string_value(json_object_get(d, "scope"));
	const char *value = json_string_value(json_object_get(d, "value"));
	const char *origin = json_string_value(json_object_get(d, "origin"));
	const char *duration = json_string_value(json_object_get(d, "duration"));
	bool range;
	__s64 left;

	*why = "not a decision object with type, scope, value and origin strings";
	if (!json_is_object(d) || !type || !scope || !value || !origin)
		return REFUSE;
	range = !strcasecmp(scope, "range");
	if (strcasecmp(type, "ban") || (!range && strcasecmp(scope, "ip")))
		return IGNORE;
	if (!(scopes & (range ? FG_CROWDSEC_SCOPE_RANGE : FG_CROWDSEC_SCOPE_IP)))
		return IGNORE;
	out->origin = origin_of(origin);
	if (origins && !(origins & (1U << out->origin)))
		return IGNORE;
	*why = range ? "not a prefix (ADDR/LEN, host bits clear)" : "not an address";
	if (fg_parse_cidr(value, &out->cidr) || (range != (strchr(value, '/') != NULL)))
		return REFUSE;
	out->left_ns = 0;
	if (lift)
		return KEEP;
	*why = "its duration is not a positive duration";
	if (!duration || fg_crowdsec_duration_ns(duration, &left) || left <= 0)
		return REFUSE;
	out->left_ns = (__u64)left;
	return KEEP;
}

static int read_array(const json_t *array, bool lift, __u8 scopes, __u32 origins,
		      struct fg_crowdsec_reply *reply)
{
	struct fg_crowdsec_decision **list = lift ? &reply->lifts : &reply->bans;
	size_t *n = lift ? &reply->n_lifts : &reply->n_bans, i;
	const char *why;

	if (json_is_null(array))
		return 0;
	if (!json_is_array(array))
		return -EINVAL;
	*list = calloc(json_array_size(array) + 1, sizeof(**list));
	if (!*list)
		return -ENOMEM;
	for (i = 0; i < json_array_size(array); i++) {
		const json_t *d = json_array_get(array, i);

		switch (read_decision(d, lift, scopes, origins, &(*list)[*n], &why)) {
		case KEEP:
			(*n)++;
			break;
		case IGNORE:
			reply->ignored++;
			break;
		case REFUSE:
			note_refusal(reply, d, why);
			break;
		}
	}
	return 0;
}

int fg_crowdsec_parse(const char *body, size_t len, __u8 scopes, __u32 origins,
		      struct fg_crowdsec_reply *reply)
{
	json_t *root;
	int err;

	*reply = (struct fg_crowdsec_reply){0};
	/* No duplicate keys: a reply that names "new" twice is no stream. */
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root) || !json_object_get(root, "new") ||
	    !json_object_get(root, "deleted")) {
		json_decref(root);
		return -EINVAL;
	}
	err = read_array(json_object_get(root, "deleted"), true, scopes, origins, reply);
	if (!err)
		err = read_array(json_object_get(root, "new"), false, scopes, origins, reply);
	json_decref(root);
	return err;
}

void fg_crowdsec_reply_free(struct fg_crowdsec_reply *reply)
{
	free(reply->lifts);
	free(reply->bans);
	*reply = (struct fg_crowdsec_reply){0};
}
