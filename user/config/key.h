/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The shape of one config key: a row of the key table (config/keys.c).
 * The parser's dispatch, its "expected one of" lists, the defaults, the
 * duplicate-key check and the reload refusal of keys fixed at load all
 * read these rows; nothing else names a key.
 */
#ifndef FG_CONFIG_KEY_H
#define FG_CONFIG_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

/* Where a key may appear: a bit per kind of section. */
/* The struct a section fills: fg_config (global keys, [allow], [deny]),
 * fg_policy_conf ([policy NAME]), fg_fleet_conf ([fleet]),
 * fg_crowdsec_conf ([crowdsec]) or fg_synproxy_conf ([synproxy]). */
enum fg_section {
	FG_IN_GLOBAL = 1 << 0,	 /* before the first section */
	FG_IN_POLICY = 1 << 1,	 /* [policy NAME] */
	FG_IN_FLEET = 1 << 2,	 /* [fleet] */
	FG_IN_ACCESS = 1 << 3,	 /* [allow] and [deny] */
	FG_IN_CROWDSEC = 1 << 4, /* [crowdsec] */
	FG_IN_SYNPROXY = 1 << 5, /* [synproxy] */
};

struct fg_parser;
struct fg_key;

/* How the values of a key are read and, for keys fixed at load, written
 * back in a message. */
struct fg_key_type {
	/* Parses `v` into the section's struct `base`; on error reports
	 * FILE:LINE through the parser and returns -EINVAL. */
	int (*parse)(struct fg_parser *p, const struct fg_key *key, void *base, char *v);
	/* A number `key` holds, as the config writes it (for the reload
	 * refusal of keys fixed at load); NULL for types nothing fixes. */
	void (*format)(const struct fg_key *key, __u64 value, char *buf, size_t size);
	/* How a value is written, for floodgate.conf(5): "COUNT/PERIOD". */
	const char *syntax;
};

/* How a reload learns what the load set a fixed key to. */
enum fg_fixed_kind {
	FG_FIXED_RECORDED,  /* struct fg_runtime records it (maps/runtime.c) */
	FG_FIXED_INTERFACE, /* the interface the program runs on, when the key is set */
	FG_FIXED_TABLE,	    /* the size of the table it sizes, checked by the reload */
};

/* A key only a load can set, and why a reload refuses to change it. */
struct fg_fixed {
	enum fg_fixed_kind kind;
	/* FG_FIXED_RECORDED: the load's config value in struct fg_runtime. */
	size_t record, record_size;
	/* What the program runs with, when a command-line option may override
	 * the config (--hook, --mode): either value is accepted. Size 0: the
	 * program runs with the recorded value. */
	size_t runs_with, runs_with_size;
	/* The key matters only to the XDP hook (xdp_mode). */
	bool xdp_only;
	/* The refusal ends with BEFORE, the loaded value, AFTER; without
	 * AFTER, the loaded value is not shown. */
	const char *before, *after;
};

struct fg_key {
	const char *name;
	unsigned int sections; /* enum fg_section bits; with the field in keys.c */
	const struct fg_key_type *type;
	const void *arg; /* the type's parameters: choices, bounds, messages */
	/* The field filled, in the section's struct; size 0 when the type
	 * fills several (match, rate, src, ...). */
	size_t offset, size;
	/* Parsed when the section starts; NULL: no default, or one derived
	 * from other keys (config/validate.c). */
	const char *default_value;
	/* For floodgate.conf(5), a key without default_value: what applies
	 * when it is not given ("1", "every source"); NULL for a required key. */
	const char *default_doc;
	const char *example;	      /* a valid value other than the default (tests) */
	const char *example_needs;    /* another line of the section the example needs */
	bool repeatable;	      /* else a second line is a duplicate */
	const struct fg_fixed *fixed; /* fixed at load; NULL: a reload applies it */
};

/* The unsigned number of `size` bytes at `offset` in `base`. */
static inline __u64 fg_field_get(const void *base, size_t offset, size_t size)
{
	const char *at = (const char *)base + offset;

	switch (size) {
	case 1:
		return *(const __u8 *)at;
	case 2:
		return *(const __u16 *)at;
	case 4:
		return *(const __u32 *)at;
	default:
		return *(const __u64 *)at;
	}
}

static inline void fg_field_set(void *base, size_t offset, size_t size, __u64 value)
{
	char *at = (char *)base + offset;

	switch (size) {
	case 1:
		*(__u8 *)at = (__u8)value;
		break;
	case 2:
		*(__u16 *)at = (__u16)value;
		break;
	case 4:
		*(__u32 *)at = (__u32)value;
		break;
	default:
		*(__u64 *)at = value;
	}
}

/* The largest number of rows: bounds the parser's per-key line numbers. */
#define FG_MAX_KEYS 56

#endif /* FG_CONFIG_KEY_H */
