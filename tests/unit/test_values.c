// SPDX-License-Identifier: GPL-2.0-only
/* The value parsers shared by the config and the CLI (user/config/values.c):
 * numbers, units, rates, byte amounts, durations, port ranges and CIDRs, at
 * and just beyond each bound, with the part at fault named in the error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/values.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define S	      FG_NS_PER_S

/* The part at fault must be `at` (NULL: not checked). */
static void check_fault(const char *text, const struct fg_value_error *e, enum fg_value_fault want,
			const char *at)
{
	if (e->fault != want)
		fail_msg("'%s': fault %d, expected %d", text, e->fault, want);
	if (at && (e->at_len != strlen(at) || memcmp(e->at, at, e->at_len) != 0))
		fail_msg("'%s': at '%.*s', expected '%s'", text, (int)e->at_len, e->at, at);
}

static void test_numbers(void **state)
{
	const char *rest;
	size_t rest_len;
	__u64 n;

	(void)state;
	assert_int_equal(fg_split_number("123kB", 5, &n, &rest, &rest_len), 0);
	assert_int_equal(n, 123);
	assert_int_equal(rest_len, 2);
	assert_memory_equal(rest, "kB", 2);
	assert_int_equal(fg_split_number("7  s", 4, &n, &rest, &rest_len), 0);
	assert_int_equal(rest_len, 1);
	assert_int_equal(fg_split_number("18446744073709551615", 20, &n, &rest, &rest_len), 0);
	assert_true(n == UINT64_MAX);
	assert_int_equal(fg_split_number("18446744073709551616", 20, &n, &rest, &rest_len),
			 -ERANGE);
	assert_int_equal(fg_split_number("", 0, &n, &rest, &rest_len), -ENOENT);
	assert_int_equal(fg_split_number("-1", 2, &n, &rest, &rest_len), -ENOENT);
	/* only `len` characters count */
	assert_int_equal(fg_split_number("12345", 2, &n, &rest, &rest_len), 0);
	assert_int_equal(n, 12);

	assert_int_equal(fg_parse_uint("65535", 5, 65535, &n), 0);
	assert_int_equal(n, 65535);
	assert_int_equal(fg_parse_uint("65536", 5, 65535, &n), -ERANGE);
	assert_int_equal(fg_parse_uint("0", 1, 0, &n), 0);
	assert_int_equal(fg_parse_uint("12a", 3, 100, &n), -ENOENT);
	assert_int_equal(fg_parse_uint("1 2", 3, 100, &n), -ENOENT);
	assert_int_equal(fg_parse_uint("", 0, 100, &n), -ENOENT);
}

static void test_units(void **state)
{
	const struct fg_unit *u;

	(void)state;
	u = fg_find_byte_unit("KiB", 3);
	assert_non_null(u);
	assert_int_equal(u->mult, 1024);
	assert_false(u->bits);
	u = fg_find_byte_unit("gbit", 4);
	assert_non_null(u);
	assert_int_equal(u->mult, 1000000000ULL);
	assert_true(u->bits);
	assert_null(fg_find_byte_unit("kb", 2)); /* case matters: kB or kbit */
	assert_null(fg_find_byte_unit("", 0));
	assert_null(fg_find_byte_unit("Bx", 1 + 1));
	u = fg_find_period_unit("min", 3);
	assert_non_null(u);
	assert_int_equal(u->mult, 60 * S);
	assert_null(fg_find_period_unit("m", 1)); /* a period's minute is min */
	assert_null(fg_find_period_unit("d", 1));
}

struct rate_case {
	const char *text;
	bool bytes;
	__u64 count, period_ns;
};

static void test_rates(void **state)
{
	static const struct rate_case ok[] = {
		{"100/s", false, 100, S},
		{"1000 / 10s", false, 1000, 10 * S},
		{"5/250ms", false, 5, 250000000ULL},
		{"10MB/s", true, 10000000ULL, S},
		{"1 kbit/s", true, 125, S},
		{"1/1ms", false, 1, 1000000ULL},		 /* shortest period */
		{"1/24h", false, 1, 24 * 3600 * S},		 /* longest period */
		{"1/1440min", false, 1, 24 * 3600 * S},		 /* the same */
		{"1000000000/s", false, 1000000000ULL, S},	 /* highest packet rate */
		{"1000000000000B/s", true, 1000000000000ULL, S}, /* highest byte rate */
		{"8B/s", true, 8, S},				 /* lowest byte rate */
		{"64bit/s", true, 8, S},			 /* the same in bits */
		{"480B/min", true, 480, 60 * S},		 /* 8 B/s over a minute */
	};
	struct fg_value_error e;
	struct fg_rate r;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (fg_parse_rate(ok[i].text, &r, &e))
			fail_msg("'%s' refused with fault %d", ok[i].text, e.fault);
		assert_int_equal(r.bytes, ok[i].bytes);
		assert_int_equal(r.count, ok[i].count);
		assert_int_equal(r.period_ns, ok[i].period_ns);
	}
}

struct fault_case {
	const char *text;
	enum fg_value_fault fault;
	const char *at; /* NULL: not checked */
};

static void test_rate_faults(void **state)
{
	static const struct fault_case bad[] = {
		{"100", FG_BAD_VALUE, NULL},
		{"/s", FG_BAD_VALUE, NULL},
		{"x/s", FG_BAD_VALUE, NULL},
		{"99999999999999999999/s", FG_TOO_LARGE, NULL},
		{"1.5/s", FG_BAD_UNIT, ".5"},
		{"10 parsecs/s", FG_BAD_UNIT, "parsecs"},
		{"0/s", FG_ZERO, NULL},
		{"0B/s", FG_ZERO, NULL},
		{"9bit/s", FG_NOT_WHOLE_BYTES, NULL},
		{"1/99999999999999999999s", FG_PERIOD_TOO_LONG, NULL},
		{"1/fortnight", FG_BAD_PERIOD_UNIT, "fortnight"},
		{"1/", FG_BAD_PERIOD_UNIT, ""},
		{"1/10d", FG_BAD_PERIOD_UNIT, "d"},
		{"1/0s", FG_PERIOD_RANGE, NULL},
		{"1/25h", FG_PERIOD_RANGE, NULL},
		{"1/1441min", FG_PERIOD_RANGE, NULL},
		{"1000000001/s", FG_RATE_TOO_HIGH, NULL},
		{"1000000000001B/s", FG_RATE_TOO_HIGH, NULL},
		{"7B/s", FG_RATE_TOO_LOW, NULL},
		{"56bit/s", FG_RATE_TOO_LOW, NULL},
		{"479B/min", FG_RATE_TOO_LOW, NULL},
	};
	struct fg_value_error e;
	struct fg_rate r;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&e, 0, sizeof(e));
		if (!fg_parse_rate(bad[i].text, &r, &e))
			fail_msg("'%s' accepted", bad[i].text);
		check_fault(bad[i].text, &e, bad[i].fault, bad[i].at);
	}
}

static void test_event_rates(void **state)
{
	__u64 n = 0, period = 0;

	(void)state;
	assert_int_equal(fg_parse_event_rate("50000/s", 1000000000ULL, &n, &period), 0);
	assert_int_equal(n, 50000);
	assert_int_equal(period, S);
	assert_int_equal(fg_parse_event_rate("1/h", 10, &n, &period), 0);
	assert_int_equal(period, 3600 * S);
	/* max bounds the rate a second, whatever the unit, and COUNT */
	assert_int_equal(fg_parse_event_rate("10/ms", 10000, &n, &period), 0);
	assert_int_equal(fg_parse_event_rate("11/ms", 10000, &n, &period), -ERANGE);
	assert_int_equal(fg_parse_event_rate("1/ms", 10, &n, &period), -ERANGE);
	assert_int_equal(fg_parse_event_rate("10/h", 10, &n, &period), 0);
	assert_int_equal(fg_parse_event_rate("11/h", 10, &n, &period), -ERANGE);
	assert_int_equal(fg_parse_event_rate("11/s", 10, &n, &period), -ERANGE);
	assert_int_equal(fg_parse_event_rate("0/s", 10, &n, &period), -EINVAL);
	assert_int_equal(fg_parse_event_rate("5/10s", 10, &n, &period), -EINVAL);
	assert_int_equal(fg_parse_event_rate("5", 10, &n, &period), -EINVAL);
	assert_int_equal(fg_parse_event_rate("off", 10, &n, &period), -EINVAL);
}

static void test_amounts(void **state)
{
	static const struct fault_case bad[] = {
		{"", FG_BAD_VALUE, NULL},
		{"kB", FG_BAD_VALUE, NULL},
		{"18446744073709551616", FG_TOO_LARGE, NULL},
		{"1 parsec", FG_BAD_UNIT, "parsec"},
		{"1.5kB", FG_BAD_UNIT, ".5kB"},
		{"0", FG_ZERO, NULL},
		{"0kB", FG_ZERO, NULL},
		{"9bit", FG_NOT_WHOLE_BYTES, NULL},
	};
	struct fg_value_error e;
	struct fg_amount a;
	size_t i;

	(void)state;
	assert_int_equal(fg_parse_amount("20", &a, &e), 0);
	assert_false(a.bytes);
	assert_true(a.value == 20);
	assert_int_equal(fg_parse_amount("64kB", &a, &e), 0);
	assert_true(a.bytes);
	assert_true(a.value == 64000);
	assert_int_equal(fg_parse_amount("8bit", &a, &e), 0);
	assert_true(a.value == 1);
	assert_int_equal(fg_parse_amount("1", &a, &e), 0);
	/* beyond 64 bits, exactly: the caller decides what is too large */
	assert_int_equal(fg_parse_amount("18446744073709551615GiB", &a, &e), 0);
	assert_true(a.value == (unsigned __int128)UINT64_MAX << 30);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&e, 0, sizeof(e));
		if (!fg_parse_amount(bad[i].text, &a, &e))
			fail_msg("'%s' accepted", bad[i].text);
		check_fault(bad[i].text, &e, bad[i].fault, bad[i].at);
	}
}

static void test_durations(void **state)
{
	static const struct {
		const char *text;
		__u64 ns;
	} ok[] = {
		{"1ms", 1000000ULL},
		{"90s", 90 * S},
		{"10m", 600 * S},
		{"10min", 600 * S},
		{"24h", 86400 * S},
		{"30d", FG_MAX_BAN_NS},
		{"720h", FG_MAX_BAN_NS},
		{"43200min", FG_MAX_BAN_NS},
		{"2592000000ms", FG_MAX_BAN_NS},
	};
	static const char *const bad[] = {
		"31d", "721h", "43201min", "2592000001ms", "0s", "5y", "s", "", "10", "-1s", "1.5h",
	};
	size_t i;
	__u64 ns;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		ns = 0;
		if (fg_parse_duration(ok[i].text, &ns) || ns != ok[i].ns)
			fail_msg("'%s': %llu ns, expected %llu", ok[i].text, (unsigned long long)ns,
				 (unsigned long long)ok[i].ns);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (fg_parse_duration(bad[i], &ns) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
}

static void test_port_ranges(void **state)
{
	static const struct fault_case bad[] = {
		{"65536", FG_PORT_RANGE, "65536"},
		{"1-65536", FG_PORT_RANGE, "65536"},
		{"99999-1", FG_PORT_RANGE, "99999"},
		{"x", FG_BAD_PORT, NULL},
		{"-5", FG_BAD_PORT, NULL},
		{"5-", FG_BAD_PORT, NULL},
		{"", FG_BAD_PORT, NULL},
		{"80-70", FG_PORTS_REVERSED, NULL},
	};
	struct fg_value_error e;
	struct fg_port_range r;
	size_t i;

	(void)state;
	assert_int_equal(fg_parse_port_range("22", 2, &r, &e), 0);
	assert_int_equal(r.lo, 22);
	assert_int_equal(r.hi, 22);
	assert_int_equal(fg_parse_port_range("0-65535", 7, &r, &e), 0);
	assert_int_equal(r.lo, 0);
	assert_int_equal(r.hi, 65535);
	assert_int_equal(fg_parse_port_range("80-80", 5, &r, &e), 0);
	/* only `len` characters count: a list's next entry is not read */
	assert_int_equal(fg_parse_port_range("8000-8080,9", 9, &r, &e), 0);
	assert_int_equal(r.hi, 8080);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&e, 0, sizeof(e));
		if (!fg_parse_port_range(bad[i].text, strlen(bad[i].text), &r, &e))
			fail_msg("'%s' accepted", bad[i].text);
		check_fault(bad[i].text, &e, bad[i].fault, bad[i].at);
	}
}

static void test_cidrs(void **state)
{
	static const struct {
		const char *text;
		__u8 family, prefix_len, first_byte;
	} ok[] = {
		{"192.0.2.7", FG_FAMILY_IPV4, 32, 192},
		{"10.0.0.0/8", FG_FAMILY_IPV4, 8, 10},
		{"0.0.0.0/0", FG_FAMILY_IPV4, 0, 0},
		{"10.0.0.128/25", FG_FAMILY_IPV4, 25, 10},
		{"10.0.0.1/32", FG_FAMILY_IPV4, 32, 10},
		{"2001:db8::/32", FG_FAMILY_IPV6, 32, 0x20},
		{"::/0", FG_FAMILY_IPV6, 0, 0},
		{"::1/128", FG_FAMILY_IPV6, 128, 0},
		{"fe80::/10", FG_FAMILY_IPV6, 10, 0xfe},
	};
	static const struct fault_case bad[] = {
		{"10.0.0.0/33", FG_PREFIX_RANGE, "33"},
		{"::/129", FG_PREFIX_RANGE, "129"},
		{"10.0.0.0/x", FG_BAD_PREFIX, "x"},
		{"10.0.0.0/", FG_BAD_PREFIX, ""},
		{"10.0.0.0/-1", FG_BAD_PREFIX, "-1"},
		{"10.0.0.256/8", FG_BAD_ADDRESS, NULL},
		{"10/8", FG_BAD_ADDRESS, NULL},
		{"/8", FG_BAD_ADDRESS, NULL},
		{"", FG_BAD_ADDRESS, NULL},
		{"fe80::1%eth0", FG_BAD_ADDRESS, NULL},
		{"2001:db8::g/32", FG_BAD_ADDRESS, NULL},
		{"1111:2222:3333:4444:5555:6666:7777:8888:9999", FG_BAD_ADDRESS, NULL},
	};
	struct fg_value_error e;
	struct fg_cidr c;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (fg_parse_cidr_len(ok[i].text, strlen(ok[i].text), &c, &e))
			fail_msg("'%s' refused with fault %d", ok[i].text, e.fault);
		assert_int_equal(c.family, ok[i].family);
		assert_int_equal(c.prefix_len, ok[i].prefix_len);
		assert_int_equal(c.addr[0], ok[i].first_byte);
		assert_int_equal(fg_parse_cidr(ok[i].text, &c), 0);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&e, 0, sizeof(e));
		if (!fg_parse_cidr_len(bad[i].text, strlen(bad[i].text), &c, &e))
			fail_msg("'%s' accepted", bad[i].text);
		check_fault(bad[i].text, &e, bad[i].fault, bad[i].at);
		assert_int_equal(fg_parse_cidr(bad[i].text, &c), -EINVAL);
	}
}

/* Host bits name the network the address should have been. */
static void test_cidr_host_bits(void **state)
{
	struct fg_value_error e;
	struct fg_cidr c;

	(void)state;
	assert_int_equal(fg_parse_cidr_len("10.0.0.1/24", 11, &c, &e), -EINVAL);
	assert_int_equal(e.fault, FG_HOST_BITS);
	assert_string_equal(e.network, "10.0.0.0");
	assert_int_equal(c.prefix_len, 24);
	assert_int_equal(fg_parse_cidr_len("10.0.0.129/25", 13, &c, &e), -EINVAL);
	assert_string_equal(e.network, "10.0.0.128");
	assert_int_equal(fg_parse_cidr_len("2001:db8::1/64", 14, &c, &e), -EINVAL);
	assert_int_equal(e.fault, FG_HOST_BITS);
	assert_string_equal(e.network, "2001:db8::");
	assert_int_equal(c.family, FG_FAMILY_IPV6);
	assert_int_equal(fg_parse_cidr_len("0.0.0.1/0", 9, &c, &e), -EINVAL);
	assert_string_equal(e.network, "0.0.0.0");
	/* a list entry: only `len` characters count */
	assert_int_equal(fg_parse_cidr_len("10.0.0.0/8,10.0.0.1", 10, &c, &e), 0);
	assert_int_equal(c.prefix_len, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),	    cmocka_unit_test(test_units),
		cmocka_unit_test(test_rates),	    cmocka_unit_test(test_rate_faults),
		cmocka_unit_test(test_event_rates), cmocka_unit_test(test_amounts),
		cmocka_unit_test(test_durations),   cmocka_unit_test(test_port_ranges),
		cmocka_unit_test(test_cidrs),	    cmocka_unit_test(test_cidr_host_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
