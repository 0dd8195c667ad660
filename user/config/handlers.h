/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The types of the key table's rows (config/keys.c) and their parameters,
 * for every key but those that select traffic (config/match.h).
 */
#ifndef FG_CONFIG_HANDLERS_H
#define FG_CONFIG_HANDLERS_H

#include "config/key.h"

struct fg_parser;

/* A burst is checked against the rate: at most 2^62 ns of credit. */
#define FG_REFILL_LIMIT_NS (1ULL << 62)
#define FG_MAX_BYTE_BURST  (FG_MAX_BURST * 1500)

/* fg_type_choice: one word of `names` (NULL-terminated); `values` parallel.
 * The message's "expected a, b or c" lists the names. */
struct fg_choice {
	const char *const *names;
	const __u8 *values;
};

/* fg_type_uint: a whole number of min..max. */
struct fg_uint_range {
	__u64 min, max;
};

/* fg_type_rate_or_off: off, or COUNT/UNIT of at most `max` a second; the
 * field is the count, `period_offset` the __u64 period in ns beside it. */
struct fg_rate_or_off {
	__u64 max;
	const char *example; /* ends "expected off, or ..." */
	size_t period_offset;
};

/* fg_type_duration: a duration of min_ns..max_ns, into a __u64 of ns. */
struct fg_duration_range {
	__u64 min_ns, max_ns;
	const char *expected;
};

extern const struct fg_key_type fg_type_choice;
extern const struct fg_key_type fg_type_uint;
extern const struct fg_key_type fg_type_rate_or_off;
extern const struct fg_key_type fg_type_duration;
extern const struct fg_key_type fg_type_interface;  /* a char[IF_NAMESIZE] */
extern const struct fg_key_type fg_type_action;	    /* drop | monitor | ban DURATION */
extern const struct fg_key_type fg_type_rate;	    /* COUNT/PERIOD */
extern const struct fg_key_type fg_type_burst;	    /* resolved once the rate is known */
extern const struct fg_key_type fg_type_redis;	    /* HOST:PORT or unix:/path */
extern const struct fg_key_type fg_type_key_prefix; /* printable, no spaces */
/* fg_type_secret: an absolute path; the line is kept for its later check,
 * in the int at the offset (a const size_t) the key's arg points to */
extern const struct fg_key_type fg_type_secret;
extern const struct fg_key_type fg_type_url; /* http:// or https:// */
/* fg_type_flags: a list of words of a struct fg_choice, the OR of their
 * values */
extern const struct fg_key_type fg_type_flags;

/* The durations of bans: `ban DURATION` and ban_max. */
extern const struct fg_duration_range fg_ban_duration;

/* Refuses a burst that would hold more than FG_REFILL_LIMIT_NS of credit
 * at the policy's rate; `line` is the one to blame. */
int fg_cfg_check_refill(struct fg_parser *p, int line);

#endif /* FG_CONFIG_HANDLERS_H */
