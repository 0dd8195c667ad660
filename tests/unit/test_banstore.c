// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the state file of bans by hand (user/ops/banstore.c): the
 * parser, every fault with its line, the round trip, and the clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/clock.h"
#include "ops/banstore.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define S	      FG_NS_PER_S

static int parse(const char *text, struct fg_banstore *store, struct fg_err *err)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(in);
	fg_err_clear(err);
	ret = fg_banstore_parse("fgA.bans", in, store, err);
	fclose(in);
	return ret;
}

static void test_good(void **state)
{
	struct fg_banstore store;
	struct fg_err err;

	(void)state;
	assert_int_equal(
		parse("# a comment\n\n   \n"
		      "10.0.5.0/24 expires_unix_ns=1764800000000000000 duration_ns=3600000000000 "
		      "strikes=1\n"
		      "\t2001:db8:5::/48  strikes=3 expires_unix_ns=never\tduration_ns=0\n"
		      "0.0.0.0/0 expires_unix_ns=5 duration_ns=5 strikes=4294967295",
		      &store, &err),
		0);
	assert_int_equal(store.count, 3);
	assert_int_equal(store.bans[0].cidr.family, FG_FAMILY_IPV4);
	assert_int_equal(store.bans[0].cidr.prefix_len, 24);
	assert_int_equal(store.bans[0].expires_unix_ns, 1764800000000000000ULL);
	assert_int_equal(store.bans[0].duration_ns, 3600 * S);
	assert_int_equal(store.bans[0].strikes, 1);
	assert_int_equal(store.bans[1].cidr.family, FG_FAMILY_IPV6);
	assert_int_equal(store.bans[1].expires_unix_ns, FG_BANSTORE_NEVER);
	assert_int_equal(store.bans[1].strikes, 3);
	assert_int_equal(store.bans[2].cidr.prefix_len, 0);
	assert_int_equal(store.bans[2].strikes, UINT32_MAX);
	fg_banstore_free(&store);
	assert_int_equal(parse("", &store, &err), 0);
	assert_int_equal(store.count, 0);
}

/* Each bad file is refused at its line, with nothing kept. */
static void test_faults(void **state)
{
	static const struct {
		const char *text, *where;
	} bad[] = {
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0 strikes=1 colour=red\n",
		 "fgA.bans:1: "},
		{"# ok\n10.0.5.1/24 expires_unix_ns=1 duration_ns=0 strikes=1\n", "fgA.bans:2: "},
		{"10.0.5.0/33 expires_unix_ns=1 duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"banana expires_unix_ns=1 duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=12x duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=-1 duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=+1 duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=18446744073709551616 duration_ns=0 strikes=1\n",
		 "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns= duration_ns=0 strikes=1\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0 strikes=0\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0 strikes=4294967296\n",
		 "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 expires_unix_ns=2 duration_ns=0 strikes=1\n",
		 "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0 strikes=1 junk\n", "fgA.bans:1: "},
		{"10.0.5.0/24\n", "fgA.bans:1: "},
		{"10.0.5.0/24 expires_unix_ns=1 duration_ns=0 strikes=1\n"
		 "10.0.5.0/24 expires_unix_ns=2 duration_ns=0 strikes=1\n",
		 "fgA.bans:2: "},
	};
	struct fg_banstore store;
	struct fg_err err;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse(bad[i].text, &store, &err) != -1)
			fail_msg("accepted: %s", bad[i].text);
		if (strncmp(err.msg, bad[i].where, strlen(bad[i].where)) || !err.located ||
		    err.kind != FG_ERR_CONFIG)
			fail_msg("%s: message '%s', expected it to begin '%s'", bad[i].text,
				 err.msg, bad[i].where);
		assert_int_equal(store.count, 0);
		assert_null(store.bans);
	}
}

/* A NUL byte, and a line longer than any valid one. */
static void test_binary(void **state)
{
	static const char nul[] = "10.0.5.0/24 expires_unix_ns=1\0 duration_ns=0 strikes=1\n";
	char long_line[1024];
	struct fg_banstore store;
	struct fg_err err;
	FILE *in;

	(void)state;
	in = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	fg_err_clear(&err);
	assert_int_equal(fg_banstore_parse("fgA.bans", in, &store, &err), -1);
	fclose(in);
	assert_true(strstr(err.msg, "fgA.bans:1: a NUL byte") == err.msg);
	memset(long_line, ' ', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	memcpy(long_line, "10.0.5.0/24", 11);
	assert_int_equal(parse(long_line, &store, &err), -1);
	assert_true(strstr(err.msg, "fgA.bans:1: line too long") == err.msg);
}

static void test_round_trip(void **state)
{
	const char *text = "10.0.5.0/24 expires_unix_ns=17 duration_ns=3 strikes=2\n"
			   "2001:db8:5::/48 expires_unix_ns=never duration_ns=0 strikes=1\n";
	struct fg_banstore store, again;
	struct fg_err err;
	char *out = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse(text, &store, &err), 0);
	f = open_memstream(&out, &size);
	assert_int_equal(fg_banstore_format(f, &store), 0);
	fclose(f);
	assert_non_null(strstr(out, text));
	assert_int_equal(parse(out, &again, &err), 0);
	assert_int_equal(again.count, store.count);
	assert_memory_equal(again.bans, store.bans, store.count * sizeof(*store.bans));
	fg_banstore_free(&store);
	fg_banstore_free(&again);
	free(out);
}

/* The map counts from boot, the file in Unix time: a ban with an hour
 * left keeps an hour left across any change of the monotonic clock. */
static void test_clocks(void **state)
{
	const __u64 unix_now = 1764800000 * S, left = 3600 * S;
	__u64 expires_unix, expires;

	(void)state;
	/* Written on a host up for 10 days. */
	expires_unix = fg_banstore_unix_of(10 * 86400 * S + left, 10 * 86400 * S, unix_now);
	assert_int_equal(expires_unix, unix_now + left);
	/* Read 5 minutes later, 2 minutes after a reboot. */
	assert_true(fg_banstore_mono_of(expires_unix, 120 * S, unix_now + 300 * S, &expires));
	assert_int_equal(expires, 120 * S + left - 300 * S);
	/* Expired: past, and exactly now. */
	assert_false(fg_banstore_mono_of(expires_unix, 120 * S, unix_now + left, &expires));
	assert_false(fg_banstore_mono_of(expires_unix, 120 * S, unix_now + 2 * left, &expires));
	/* Until unbanned, both ways. */
	assert_int_equal(fg_banstore_unix_of(~0ULL, 5, unix_now), FG_BANSTORE_NEVER);
	assert_true(fg_banstore_mono_of(FG_BANSTORE_NEVER, 5, unix_now, &expires));
	assert_int_equal(expires, ~0ULL);
	/* An expiry already past in the map is written as now. */
	assert_int_equal(fg_banstore_unix_of(5, 10, unix_now), unix_now);
	/* A finite ban far in the future stays finite. */
	assert_true(fg_banstore_mono_of(~0ULL - 1, 1000 * S, 1, &expires));
	assert_int_equal(expires, ~0ULL - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),   cmocka_unit_test(test_faults),
		cmocka_unit_test(test_binary), cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
