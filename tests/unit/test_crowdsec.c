// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CrowdSec decision stream as floodgate reads it
 * (user/service/crowdsec_decisions.c): Go durations, and replies good,
 * odd and hostile. A hostile reply never crashes, bans nothing wrong, and
 * is counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "service/crowdsec.h"

#define S  1000000000LL
#define MS 1000000LL

static __s64 duration(const char *text)
{
	__s64 ns = 12345;

	if (fg_crowdsec_duration_ns(text, &ns))
		fail_msg("'%s': expected a duration", text);
	return ns;
}

static void test_durations(void **state)
{
	(void)state;
	assert_int_equal(duration("3h59m58.5s"), (3 * 3600 + 59 * 60 + 58) * S + 500 * MS);
	assert_int_equal(duration("3h59m59.149872664s"),
			 (3 * 3600 + 59 * 60 + 59) * S + 149872664LL);
	assert_int_equal(duration("-26.149678ms"), -26149678LL);
	assert_int_equal(duration("4h"), 4 * 3600 * S);
	assert_int_equal(duration("1m0s"), 60 * S);
	assert_int_equal(duration("0s"), 0);
	assert_int_equal(duration("0"), 0);
	assert_int_equal(duration("1.5\xc2\xb5s"), 1500);
	assert_int_equal(duration("2us"), 2000);
	assert_int_equal(duration("7ns"), 7);
	assert_int_equal(duration(".5s"), 500 * MS);
	assert_int_equal(duration("87600h"), 87600LL * 3600 * S);
	assert_int_equal(duration("2562047h47m16.854775807s"), INT64_MAX);
}

static void test_bad_durations(void **state)
{
	const char *bad[] = {"",
			     "-",
			     "h",
			     "3",
			     "3x",
			     "3h5",
			     "1..5s",
			     "s3",
			     "3 h",
			     "1e3s",
			     "--1s",
			     "3hm",
			     ".s",
			     "2562047h47m16.854775808s",
			     "99999999999999999999h",
			     "9223372036854775808ns"};
	__s64 ns;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (fg_crowdsec_duration_ns(bad[i], &ns) != -EINVAL)
			fail_msg("'%s' taken as %lld ns", bad[i], (long long)ns);
}

static const __u8 ip_and_range = FG_CROWDSEC_SCOPE_IP | FG_CROWDSEC_SCOPE_RANGE;

static int parse(const char *text, struct fg_crowdsec_reply *reply)
{
	return fg_crowdsec_parse(text, strlen(text), ip_and_range, 0, reply);
}

static void test_a_stream(void **state)
{
	struct fg_crowdsec_reply r;

	(void)state;
	assert_int_equal(
		parse("{\"deleted\":[{\"duration\":\"-26ms\",\"id\":1,\"origin\":\"cscli\","
		      "\"scenario\":\"x\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2."
		      "7\"}],"
		      "\"new\":[{\"duration\":\"3h59m58.5s\",\"id\":2,\"origin\":\"crowdsec\","
		      "\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"198.51.100.0/24\"},"
		      "{\"duration\":\"1h\",\"origin\":\"lists\",\"scope\":\"Ip\",\"type\":\"ban\","
		      "\"value\":\"2001:db8::1\"},"
		      "{\"duration\":\"1h\",\"origin\":\"elsewhere\",\"scope\":\"ip\",\"type\":"
		      "\"ban\","
		      "\"value\":\"203.0.113.9\"},"
		      "{\"duration\":\"1h\",\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":"
		      "\"captcha\","
		      "\"value\":\"203.0.113.1\"},"
		      "{\"duration\":\"1h\",\"origin\":\"cscli\",\"scope\":\"Country\",\"type\":"
		      "\"ban\","
		      "\"value\":\"FR\"}]}",
		      &r),
		0);
	assert_int_equal(r.n_lifts, 1);
	assert_int_equal(r.lifts[0].cidr.family, FG_FAMILY_IPV4);
	assert_int_equal(r.lifts[0].cidr.prefix_len, 32);
	assert_int_equal(r.lifts[0].origin, FG_CROWDSEC_ORIGIN_CSCLI);
	assert_int_equal(r.n_bans, 3);
	assert_int_equal(r.bans[0].cidr.prefix_len, 24);
	assert_int_equal(r.bans[0].origin, FG_CROWDSEC_ORIGIN_CROWDSEC);
	assert_int_equal(r.bans[0].left_ns, (3 * 3600 + 59 * 60 + 58) * S + 500 * MS);
	assert_int_equal(r.bans[1].cidr.family, FG_FAMILY_IPV6);
	assert_int_equal(r.bans[1].cidr.prefix_len, 128);
	assert_int_equal(r.bans[1].origin, FG_CROWDSEC_ORIGIN_LISTS);
	assert_int_equal(r.bans[2].origin, FG_CROWDSEC_ORIGIN_OTHER);
	assert_int_equal(r.ignored, 2); /* captcha, Country */
	assert_int_equal(r.refused, 0);
	fg_crowdsec_reply_free(&r);

	assert_int_equal(parse("{\"deleted\":null,\"new\":null}", &r), 0);
	assert_int_equal(r.n_bans + r.n_lifts + r.ignored + r.refused, 0);
	fg_crowdsec_reply_free(&r);
}

static void test_filters(void **state)
{
	const char *text = "{\"deleted\":null,\"new\":["
			   "{\"duration\":\"1h\",\"origin\":\"cscli\",\"scope\":\"Ip\","
			   "\"type\":\"ban\",\"value\":\"192.0.2.1\"},"
			   "{\"duration\":\"1h\",\"origin\":\"CAPI\",\"scope\":\"Range\","
			   "\"type\":\"ban\",\"value\":\"192.0.2.0/24\"}]}";
	struct fg_crowdsec_reply r;

	(void)state;
	assert_int_equal(fg_crowdsec_parse(text, strlen(text), FG_CROWDSEC_SCOPE_IP, 0, &r), 0);
	assert_int_equal(r.n_bans, 1);
	assert_int_equal(r.bans[0].cidr.prefix_len, 32);
	assert_int_equal(r.ignored, 1);
	fg_crowdsec_reply_free(&r);
	assert_int_equal(fg_crowdsec_parse(text, strlen(text), ip_and_range,
					   1U << FG_CROWDSEC_ORIGIN_CAPI, &r),
			 0);
	assert_int_equal(r.n_bans, 1);
	assert_int_equal(r.bans[0].origin, FG_CROWDSEC_ORIGIN_CAPI);
	assert_int_equal(r.ignored, 1);
	fg_crowdsec_reply_free(&r);
}

/* Replies that are no decision stream: nothing to apply. */
static void test_not_a_stream(void **state)
{
	const char *bad[] = {
		"",
		"not json",
		"[]",
		"null",
		"{\"new\":[]}", /* no deleted */
		"{\"new\":{},\"deleted\":null}",
		"{\"new\":\"x\",\"deleted\":null}",
		"{\"new\":[],\"deleted\":7}",
		"{\"new\":[],\"deleted\":null,\"new\":[]}",
		"{\"new\":[{\"type\":\"ban\"", /* truncated */
	};
	struct fg_crowdsec_reply r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &r) != -EINVAL)
			fail_msg("'%s' taken as a stream", bad[i]);
		fg_crowdsec_reply_free(&r);
	}
	/* a NUL inside the body, and bytes past `len`, are not read as JSON */
	assert_int_equal(
		fg_crowdsec_parse("{\"new\":null,\"deleted\":null}x", 5, ip_and_range, 0, &r),
		-EINVAL);
	fg_crowdsec_reply_free(&r);
}

/* Decisions that must never become bans: each is refused and counted. */
static void test_hostile_decisions(void **state)
{
	const char *bad[] = {
		"7",
		"null",
		"[]",
		"{}",
		"{\"type\":1,\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\","
		"\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":19216801,\"origin\":\"cscli\","
		"\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":[],"
		"\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\","
		"\"duration\":3600}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\","
		"\"duration\":\"-1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\","
		"\"duration\":\"0s\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1\",\"origin\":\"cscli\","
		"\"duration\":\"1y\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.0/"
		"24\",\"origin\":\"cscli\",\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"192.0.2.1\",\"origin\":"
		"\"cscli\",\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"192.0.2.1/"
		"24\",\"origin\":\"cscli\",\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"192.0.2.0/"
		"33\",\"origin\":\"cscli\",\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"\",\"origin\":\"cscli\","
		"\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"999.0.0.1\",\"origin\":\"cscli\","
		"\"duration\":\"1h\"}",
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.1 "
		"\",\"origin\":\"cscli\",\"duration\":\"1h\"}",
	};
	char text[1024];
	struct fg_crowdsec_reply r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"deleted\":null,\"new\":[%s]}", bad[i]);
		assert_int_equal(parse(text, &r), 0);
		if (r.n_bans || r.refused != 1)
			fail_msg("%s: %zu bans, %zu refused", bad[i], r.n_bans, r.refused);
		assert_true(r.first_refusal[0]);
		fg_crowdsec_reply_free(&r);
	}
}

/* 0.0.0.0/0 parses as a prefix: what keeps it out is the check every ban
 * from outside passes (min_ban_prefix, ops/banguard.c), after parsing. */
static void test_widest_prefix_is_left_to_the_guard(void **state)
{
	struct fg_crowdsec_reply r;

	(void)state;
	assert_int_equal(
		parse("{\"deleted\":null,\"new\":[{\"type\":\"ban\",\"scope\":\"Range\","
		      "\"value\":\"0.0.0.0/0\",\"origin\":\"cscli\",\"duration\":\"1h\"}]}",
		      &r),
		0);
	assert_int_equal(r.n_bans, 1);
	assert_int_equal(r.bans[0].cidr.prefix_len, 0);
	fg_crowdsec_reply_free(&r);
}

/* 100,000 decisions, as a big import sends them. */
static void test_a_large_stream(void **state)
{
	size_t cap = 200 * 100000 + 64, used = 0, i;
	char *text = malloc(cap);
	struct fg_crowdsec_reply r;

	(void)state;
	assert_non_null(text);
	used += (size_t)snprintf(text, cap, "{\"deleted\":null,\"new\":[");
	for (i = 0; i < 100000; i++)
		used += (size_t)snprintf(
			text + used, cap - used,
			"%s{\"duration\":\"3h59m%zu.5s\",\"origin\":\"lists\","
			"\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"10.%zu.%zu.%zu\"}",
			i ? "," : "", i % 60, i >> 16, (i >> 8) & 255, i & 255);
	snprintf(text + used, cap - used, "]}");
	assert_int_equal(fg_crowdsec_parse(text, strlen(text), ip_and_range, 0, &r), 0);
	assert_int_equal(r.n_bans, 100000);
	assert_int_equal(r.refused, 0);
	assert_int_equal(r.bans[99999].cidr.addr[3], 99999 & 255);
	fg_crowdsec_reply_free(&r);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_bad_durations),
		cmocka_unit_test(test_a_stream),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_not_a_stream),
		cmocka_unit_test(test_hostile_decisions),
		cmocka_unit_test(test_widest_prefix_is_left_to_the_guard),
		cmocka_unit_test(test_a_large_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
