/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The values that the config and the command line share: whole numbers,
 * numbers with units, rates COUNT/PERIOD, durations, byte amounts, CIDRs and
 * port ranges. These parsers know no grammar and print nothing: each returns
 * 0 or -EINVAL and, through struct fg_value_error, what was wrong and where,
 * so that the config can word a FILE:LINE message and the CLI its own.
 */
#ifndef FG_VALUES_H
#define FG_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <arpa/inet.h>

#include "floodgate.h"

#define FG_NS_PER_S   1000000000ULL
#define FG_MAX_BAN_NS (30ULL * 24 * 3600 * FG_NS_PER_S) /* 30 days */

/* Bounds that make a rate "absurd". */
#define FG_MIN_PERIOD_NS	 1000000ULL		      /* 1ms */
#define FG_MAX_PERIOD_NS	 (24ULL * 3600 * FG_NS_PER_S) /* 24h */
#define FG_MAX_PACKET_RATE_PER_S 1000000000ULL		      /* 1G packets/s */
#define FG_MAX_BYTE_RATE_PER_S	 1000000000000ULL	      /* 1 TB/s */
#define FG_MIN_BYTE_RATE_PER_S	 8ULL			      /* keeps cost*T in 64 bits */

#define FG_BYTE_UNIT_LIST "B, kB, MB, GB, KiB, MiB, GiB, bit, kbit, mbit or gbit"

struct fg_port_range {
	__u16 lo; /* host order, inclusive */
	__u16 hi;
};

struct fg_cidr {
	__u8 family; /* FG_FAMILY_IPV4 / FG_FAMILY_IPV6 */
	__u8 prefix_len;
	__u8 addr[16]; /* network order, already masked to prefix_len */
};

struct fg_unit {
	const char *name;
	__u64 mult; /* bytes (or bits), or ns for a period */
	bool bits;  /* mult counts bits: divide by 8 */
};

/* A rate COUNT/PERIOD, within the bounds above. */
struct fg_rate {
	bool bytes;	 /* COUNT had a byte unit */
	__u64 count;	 /* packets, or bytes */
	__u64 period_ns; /* FG_MIN_PERIOD_NS..FG_MAX_PERIOD_NS */
};

/* A packet count, or bytes when a unit follows the number (burst = 64kB). */
struct fg_amount {
	bool bytes;
	unsigned __int128 value; /* >= 1; bytes may exceed 64 bits (GiB x 2^64) */
};

enum fg_value_fault {
	FG_BAD_VALUE = 1,   /* not the expected shape at all */
	FG_TOO_LARGE,	    /* the number does not fit in 64 bits */
	FG_BAD_UNIT,	    /* `at` is the unit after the number */
	FG_BAD_PERIOD_UNIT, /* `at` is the unit of a rate's period */
	FG_ZERO,	    /* a count of zero */
	FG_NOT_WHOLE_BYTES, /* bits that are not a multiple of 8 */
	FG_PERIOD_TOO_LONG, /* a rate's period number overflows */
	FG_PERIOD_RANGE,    /* a rate's period is outside 1ms..24h */
	FG_RATE_TOO_HIGH,   /* above FG_MAX_PACKET/BYTE_RATE_PER_S */
	FG_RATE_TOO_LOW,    /* a byte rate below FG_MIN_BYTE_RATE_PER_S */
	FG_PORT_RANGE,	    /* `at` is a port above 65535 */
	FG_BAD_PORT,	    /* not PORT or LO-HI */
	FG_PORTS_REVERSED,  /* LO > HI */
	FG_BAD_ADDRESS,	    /* not an IPv4 or IPv6 address */
	FG_PREFIX_RANGE,    /* `at` is a prefix length above 32 or 128 */
	FG_BAD_PREFIX,	    /* `at` is a prefix length that is not a number */
	FG_HOST_BITS,	    /* `network` is what the address should have been */
};

struct fg_value_error {
	enum fg_value_fault fault;
	const char *at; /* the part at fault, inside the parsed text */
	size_t at_len;
	char network[INET6_ADDRSTRLEN]; /* FG_HOST_BITS */
};

/* Splits "123kB" or "123 kB" into the number and what follows it. Returns 0,
 * -ENOENT when there is no leading digit, -ERANGE when it overflows. */
int fg_split_number(const char *s, size_t len, __u64 *n, const char **rest, size_t *rest_len);

/* A whole token that must be a plain decimal number no larger than `max`.
 * Returns 0, -ENOENT when it is not a number, -ERANGE when it is too large. */
int fg_parse_uint(const char *s, size_t len, __u64 max, __u64 *out);

/* B, kB, MB, GB, KiB, MiB, GiB, bit, kbit, mbit, gbit; NULL when unknown. */
const struct fg_unit *fg_find_byte_unit(const char *s, size_t len);

/* A rate's period unit: ms, s, min, h; NULL when unknown. */
const struct fg_unit *fg_find_period_unit(const char *s, size_t len);

/* COUNT[UNIT]/[N]PERIOD such as 100/s, 1000/10s, 5/250ms or 10MB/s, with
 * spaces allowed around the '/'. */
int fg_parse_rate(const char *text, struct fg_rate *rate, struct fg_value_error *err);

/* N/PERIOD with a bare count per ms, s, min or h (no N before the period):
 * new_sources = 50000/s. The count is at most `max`, and so is the rate a
 * second (-ERANGE past either); -EINVAL for anything else wrong. */
int fg_parse_event_rate(const char *text, __u64 max, __u64 *count, __u64 *period_ns);

/* A packet count, or bytes with a unit from FG_BYTE_UNIT_LIST. */
int fg_parse_amount(const char *text, struct fg_amount *amount, struct fg_value_error *err);

/* A duration such as 90s, 10m, 24h, 7d (ms, s, m/min, h, d), up to
 * FG_MAX_BAN_NS. Returns 0 or -EINVAL. */
int fg_parse_duration(const char *text, __u64 *ns);

/* PORT or LO-HI, 0..65535, LO <= HI. */
int fg_parse_port_range(const char *s, size_t len, struct fg_port_range *range,
			struct fg_value_error *err);

/* ADDR or ADDR/LEN, IPv4 or IPv6, host bits clear. On error `cidr->family`
 * says which family the address looked like. An IPv4-mapped prefix
 * (::ffff:a.b.c.d) stays IPv6: the datapath keys an IPv6 packet by its
 * whole source, so in a list it matches IPv6 packets with such a source
 * (::ffff:0:0/96 in the IPv6 bogon lists), never an IPv4 packet. */
int fg_parse_cidr_len(const char *s, size_t len, struct fg_cidr *cidr, struct fg_value_error *err);

/* The same for a whole string, when the reason does not matter. */
int fg_parse_cidr(const char *text, struct fg_cidr *cidr);

/* An IPv4-mapped IPv6 prefix, /96 or longer, made the IPv4 prefix it maps,
 * for an address taken from a log (`floodgate ban ::ffff:192.0.2.7`, as a
 * dual-stack socket writes an IPv4 peer), which means the IPv4 host. Any
 * other prefix is left as it is. */
void fg_cidr_unmap_ipv4(struct fg_cidr *cidr);

/* The config's names of enum fg_algorithm, indexed by value, NULL-ended. */
extern const char *const fg_algorithm_names[];

/* The config's name of an algorithm or an action; "?" for an unknown one. */
const char *fg_algorithm_name(__u8 algorithm);
const char *fg_action_name(__u8 action);

#endif /* FG_VALUES_H */
