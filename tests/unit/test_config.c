// SPDX-License-Identifier: GPL-2.0-only
/* The config parser (user/config/): every accepted config form, and every
 * error with its FILE:LINE: and the part at fault. Run from the repo root. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "config/config.h"
#include "fg_gcra.h"
#include "policy/policy.h"
#include "policy/synproxy.h"
#include "ops/steps.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct fg_config cfg;

/* Parses `text` as "t.conf"; returns the code and what went to `err`. */
static int parse(const char *text, char **err)
{
	size_t len = 0;
	FILE *f;
	int ret;

	*err = NULL;
	f = open_memstream(err, &len);
	assert_non_null(f);
	ret = fg_config_parse_string("t.conf", text, &cfg, f);
	fclose(f);
	return ret;
}

/* Parses `text` that must be accepted, with nothing printed. */
static const struct fg_config *parse_ok(const char *what, const char *text)
{
	char *err;
	int ret = parse(text, &err);

	if (ret != 0 || err[0] != '\0')
		fail_msg("%s: expected success, got %d and \"%s\" for:\n%s", what, ret, err, text);
	free(err);
	return &cfg;
}

/* Parses `text` that must fail at `line` with one well-formed line that
 * contains `needle`, or is exactly `exact` when that is given. */
static void parse_error(const char *what, const char *text, int line, const char *needle,
			const char *exact)
{
	char prefix[64], *err, *nl;
	int ret;

	memset(&cfg, 0xa5, sizeof(cfg));
	ret = parse(text, &err);
	snprintf(prefix, sizeof(prefix), "t.conf:%d: ", line);
	if (ret != -EINVAL)
		fail_msg("%s: expected -EINVAL, got %d (\"%s\") for:\n%s", what, ret, err, text);
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("%s: expected a message starting with \"%s\", got \"%s\"", what, prefix,
			 err);
	nl = strchr(err, '\n');
	if (!nl || nl[1] != '\0')
		fail_msg("%s: expected exactly one line, got \"%s\"", what, err);
	if (nl - err < 2 || nl[-1] != ')' || !strstr(err, " (expected "))
		fail_msg("%s: expected \"... (expected ...)\", got \"%s\"", what, err);
	if (needle && !strstr(err, needle))
		fail_msg("%s: expected \"%s\" in \"%s\"", what, needle, err);
	if (exact && strcmp(err, exact) != 0)
		fail_msg("%s: expected \"%s\", got \"%s\"", what, exact, err);
	if (cfg.n_policies != 0 || cfg.max_sources != 0)
		fail_msg("%s: cfg not cleared after an error", what);
	free(err);
}

/* "[policy p]" with one key line added to a minimal valid policy. */
static const struct fg_policy_conf *one_policy(const char *what, const char *match,
					       const char *rate, const char *extra)
{
	char text[2048];

	snprintf(text, sizeof(text), "[policy p]\nmatch = %s\nrate = %s\n%s\n", match, rate, extra);
	parse_ok(what, text);
	assert_int_equal(cfg.n_policies, 1);
	return &cfg.policies[0];
}

/* --- accepted forms -------------------------------------------------------- */

static void test_defaults(void **state)
{
	const struct fg_policy_conf *pol;

	(void)state;
	memset(&cfg, 0x5a, sizeof(cfg));
	parse_ok("minimal", "[policy p]\nmatch = any\nrate = 10/s\n");
	assert_string_equal(cfg.interface, "");
	assert_int_equal(cfg.hook, FG_HOOK_XDP);
	assert_int_equal(cfg.xdp_mode, FG_XDP_NATIVE);
	assert_int_equal(cfg.max_sources, FG_DEFAULT_MAX_SOURCES);
	assert_int_equal(cfg.malformed, FG_VERDICT_DROP);
	assert_int_equal(cfg.table_full, FG_VERDICT_PASS);
	assert_int_equal(cfg.n_policies, 1);

	pol = &cfg.policies[0];
	assert_string_equal(pol->name, "p");
	assert_int_equal(pol->line, 1);
	assert_int_equal(pol->proto, 0);
	assert_int_equal(pol->n_dports, 0);
	assert_int_equal(pol->n_srcs, 0);
	assert_int_equal(pol->key_kind, FG_KEY_SOURCE);
	assert_int_equal(pol->prefix_v4, 32);
	assert_int_equal(pol->prefix_v6, 64);
	assert_int_equal(pol->algorithm, FG_ALG_TOKEN_BUCKET);
	assert_int_equal(pol->action, FG_ACTION_DROP);
	assert_false(pol->bytes);
	assert_int_equal(pol->rate_count, 10);
	assert_int_equal(pol->rate_period_ns, 1000000000ULL);
	assert_int_equal(pol->burst, 10);
}

static void test_global_keys(void **state)
{
	(void)state;
	parse_ok("all globals", "interface = eth0\n"
				"hook = tc\n"
				"xdp_mode = generic\n"
				"max_sources = 1000000\n"
				"malformed = pass\n"
				"on_insert_failure = drop\n"
				"[policy p]\nmatch = any\nrate = 1/s\n");
	assert_string_equal(cfg.interface, "eth0");
	assert_int_equal(cfg.hook, FG_HOOK_TC);
	assert_int_equal(cfg.xdp_mode, FG_XDP_GENERIC);
	assert_int_equal(cfg.max_sources, 1000000);
	assert_int_equal(cfg.malformed, FG_VERDICT_PASS);
	assert_int_equal(cfg.table_full, FG_VERDICT_DROP);

	parse_ok("explicit defaults", "hook = xdp\n"
				      "xdp_mode = native\n"
				      "malformed = drop\n"
				      "on_insert_failure = pass\n"
				      "max_sources = 1\n"
				      "interface = enp3s0f1.100\n"
				      "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_string_equal(cfg.interface, "enp3s0f1.100");
	assert_int_equal(cfg.hook, FG_HOOK_XDP);
	assert_int_equal(cfg.xdp_mode, FG_XDP_NATIVE);
	assert_int_equal(cfg.max_sources, 1);
	assert_int_equal(cfg.malformed, FG_VERDICT_DROP);
	assert_int_equal(cfg.table_full, FG_VERDICT_PASS);

	parse_ok("largest max_sources, longest interface",
		 "max_sources = 16777216\ninterface = abcdefghijklmno\n"
		 "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(cfg.max_sources, 16777216);
	assert_string_equal(cfg.interface, "abcdefghijklmno");
}

static void test_full_policy(void **state)
{
	static const __u8 v4[16] = {10, 1, 0, 0};
	static const __u8 v6[16] = {0x20, 0x01, 0x0d, 0xb8};
	const struct fg_policy_conf *pol;

	(void)state;
	parse_ok("every policy key", "[policy ssh]\n"
				     "match     = tcp dport 22,2222,8000-8080\n"
				     "src       = 10.1.0.0/16, 2001:db8::/32\n"
				     "per       = src/24 src/48\n"
				     "algorithm = token_bucket\n"
				     "rate      = 100/10s\n"
				     "burst     = 30\n"
				     "action    = monitor\n");
	pol = &cfg.policies[0];
	assert_string_equal(pol->name, "ssh");
	assert_int_equal(pol->line, 1);
	assert_int_equal(pol->proto, IPPROTO_TCP);
	assert_int_equal(pol->n_dports, 3);
	assert_int_equal(pol->dports[0].lo, 22);
	assert_int_equal(pol->dports[0].hi, 22);
	assert_int_equal(pol->dports[1].lo, 2222);
	assert_int_equal(pol->dports[1].hi, 2222);
	assert_int_equal(pol->dports[2].lo, 8000);
	assert_int_equal(pol->dports[2].hi, 8080);
	assert_int_equal(pol->n_srcs, 2);
	assert_int_equal(pol->srcs[0].family, FG_FAMILY_IPV4);
	assert_int_equal(pol->srcs[0].prefix_len, 16);
	assert_memory_equal(pol->srcs[0].addr, v4, 16);
	assert_int_equal(pol->srcs[1].family, FG_FAMILY_IPV6);
	assert_int_equal(pol->srcs[1].prefix_len, 32);
	assert_memory_equal(pol->srcs[1].addr, v6, 16);
	assert_int_equal(pol->key_kind, FG_KEY_SOURCE);
	assert_int_equal(pol->prefix_v4, 24);
	assert_int_equal(pol->prefix_v6, 48);
	assert_int_equal(pol->algorithm, FG_ALG_TOKEN_BUCKET);
	assert_int_equal(pol->action, FG_ACTION_MONITOR);
	assert_false(pol->bytes);
	assert_int_equal(pol->rate_count, 100);
	assert_int_equal(pol->rate_period_ns, 10000000000ULL);
	assert_int_equal(pol->burst, 30);

	pol = one_policy("action drop", "any", "1/s", "action = drop");
	assert_int_equal(pol->action, FG_ACTION_DROP);
}

static void test_rates(void **state)
{
	static const struct {
		const char *rate;
		bool bytes;
		__u64 count;
		__u64 period_ns;
	} cases[] = {
		{"10/s", false, 10, 1000000000ULL},
		{"100/10s", false, 100, 10000000000ULL},
		{"5/250ms", false, 5, 250000000ULL},
		{"1/ms", false, 1, 1000000ULL},
		{"1/1ms", false, 1, 1000000ULL},
		{"3/min", false, 3, 60000000000ULL},
		{"60/2min", false, 60, 120000000000ULL},
		{"1/h", false, 1, 3600000000000ULL},
		{"1/24h", false, 1, 86400000000000ULL},
		{"1/1440min", false, 1, 86400000000000ULL},
		{"010/s", false, 10, 1000000000ULL},
		{"1000000000/s", false, 1000000000ULL, 1000000000ULL},
		{"1000000/ms", false, 1000000ULL, 1000000ULL},
		{"10 / s", false, 10, 1000000000ULL},
		{"10/ 10 s", false, 10, 10000000000ULL},
		{"1500B/ms", true, 1500, 1000000ULL},
		{"10MB/s", true, 10000000ULL, 1000000000ULL},
		{"10 MB/s", true, 10000000ULL, 1000000000ULL},
		{"1kB/s", true, 1000, 1000000000ULL},
		{"2GB/s", true, 2000000000ULL, 1000000000ULL},
		{"1000GB/s", true, 1000000000000ULL, 1000000000ULL},
		{"1KiB/s", true, 1024, 1000000000ULL},
		{"3MiB/s", true, 3 << 20, 1000000000ULL},
		{"1GiB/10s", true, 1ULL << 30, 10000000000ULL},
		{"64bit/s", true, 8, 1000000000ULL},
		{"8B/s", true, 8, 1000000000ULL},
		{"1kbit/s", true, 125, 1000000000ULL},
		{"80mbit/s", true, 10000000ULL, 1000000000ULL},
		{"8gbit/s", true, 1000000000ULL, 1000000000ULL},
		{"691200B/24h", true, 691200, 86400000000000ULL},
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fg_policy_conf *pol =
			one_policy(cases[i].rate, "any", cases[i].rate, "");

		if (pol->bytes != cases[i].bytes || pol->rate_count != cases[i].count ||
		    pol->rate_period_ns != cases[i].period_ns || pol->burst != cases[i].count)
			fail_msg("rate %s: got bytes=%d count=%llu period=%llu burst=%llu",
				 cases[i].rate, pol->bytes, (unsigned long long)pol->rate_count,
				 (unsigned long long)pol->rate_period_ns,
				 (unsigned long long)pol->burst);
	}
}

static void test_bursts(void **state)
{
	static const struct {
		const char *rate;
		const char *burst;
		__u64 expected;
	} cases[] = {
		{"10/s", "20", 20},
		{"10/s", "1", 1},
		{"10/s", "1000000000", 1000000000ULL},
		{"1000/s", "1000000000", 1000000000ULL},
		{"10MB/s", "1500", 1500},
		{"10MB/s", "1500B", 1500},
		{"10MB/s", "64kB", 64000},
		{"10MB/s", "64 kB", 64000},
		{"10MB/s", "2MB", 2000000},
		{"10MB/s", "1GB", 1000000000ULL},
		{"10MB/s", "64KiB", 65536},
		{"10MB/s", "1MiB", 1048576},
		{"10MB/s", "1GiB", 1073741824ULL},
		{"10MB/s", "8bit", 1},
		{"10MB/s", "1kbit", 125},
		{"10MB/s", "8mbit", 1000000},
		{"10MB/s", "8gbit", 1000000000ULL},
		{"10MB/s", "1500000000000", 1500000000000ULL},
		{"80mbit/s", "1500GB", 1500000000000ULL},
		/* burst * period / count right at 2^62 ns */
		{"1/h", "1281023", 1281023},
		{"8B/s", "36893488147", 36893488147ULL},
	};
	char extra[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fg_policy_conf *pol;

		snprintf(extra, sizeof(extra), "burst = %s", cases[i].burst);
		pol = one_policy(extra, "any", cases[i].rate, extra);
		if (pol->burst != cases[i].expected)
			fail_msg("rate %s burst %s: got %llu", cases[i].rate, cases[i].burst,
				 (unsigned long long)pol->burst);
	}

	/* burst may come before rate */
	parse_ok("burst before rate", "[policy p]\nmatch = any\nburst = 64kB\nrate = 1MB/s\n");
	assert_true(cfg.policies[0].bytes);
	assert_int_equal(cfg.policies[0].burst, 64000);
	parse_ok("burst before packet rate", "[policy p]\nburst = 7\nmatch = any\nrate = 1/s\n");
	assert_false(cfg.policies[0].bytes);
	assert_int_equal(cfg.policies[0].burst, 7);
}

static void test_per(void **state)
{
	static const struct {
		const char *per;
		__u8 kind;
		__u8 v4;
		__u8 v6;
	} cases[] = {
		{"src/32 src/64", FG_KEY_SOURCE, 32, 64},
		{"src/64 src/32", FG_KEY_SOURCE, 32, 64},
		{"src/24 src/48", FG_KEY_SOURCE, 24, 48},
		{"src/56,src/16", FG_KEY_SOURCE, 16, 56},
		{"src/24, src/56", FG_KEY_SOURCE, 24, 56},
		{"src/0 src/0", FG_KEY_SOURCE, 0, 0},
		{"src/32 src/128", FG_KEY_SOURCE, 32, 128},
		{"src/24 src/32", FG_KEY_SOURCE, 24, 32},
		{"src/24", FG_KEY_SOURCE, 24, 64},   /* IPv4 only */
		{"src/0", FG_KEY_SOURCE, 0, 64},     /* IPv4 only */
		{"src/32", FG_KEY_SOURCE, 32, 64},   /* IPv4 only */
		{"src/48", FG_KEY_SOURCE, 32, 48},   /* IPv6 only */
		{"src/128", FG_KEY_SOURCE, 32, 128}, /* IPv6 only */
		{"src/33", FG_KEY_SOURCE, 32, 33},   /* IPv6 only */
		{"global", FG_KEY_GLOBAL, 0, 0},
	};
	char extra[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fg_policy_conf *pol;

		snprintf(extra, sizeof(extra), "per = %s", cases[i].per);
		pol = one_policy(extra, "any", "10/s", extra);
		if (pol->key_kind != cases[i].kind || pol->prefix_v4 != cases[i].v4 ||
		    pol->prefix_v6 != cases[i].v6)
			fail_msg("per %s: got kind=%d v4=%d v6=%d", cases[i].per, pol->key_kind,
				 pol->prefix_v4, pol->prefix_v6);
	}
}

static void test_match(void **state)
{
	static const struct {
		const char *match;
		__u8 proto;
		unsigned int n;
		struct fg_port_range ports[3];
	} cases[] = {
		{"any", 0, 0, {{0, 0}}},
		{"tcp", IPPROTO_TCP, 0, {{0, 0}}},
		{"udp", IPPROTO_UDP, 0, {{0, 0}}},
		{"icmp", IPPROTO_ICMP, 0, {{0, 0}}},
		{"icmpv6", IPPROTO_ICMPV6, 0, {{0, 0}}},
		{"tcp dport 22", IPPROTO_TCP, 1, {{22, 22}}},
		{"udp dport 53,5353", IPPROTO_UDP, 2, {{53, 53}, {5353, 5353}}},
		{"any dport 8000-8080", 0, 1, {{8000, 8080}}},
		{"tcp dport 22, 80 443", IPPROTO_TCP, 3, {{22, 22}, {80, 80}, {443, 443}}},
		{"tcp   dport\t0-65535", IPPROTO_TCP, 1, {{0, 65535}}},
		{"udp dport 0,65535,7-7", IPPROTO_UDP, 3, {{0, 0}, {65535, 65535}, {7, 7}}},
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fg_policy_conf *pol =
			one_policy(cases[i].match, cases[i].match, "10/s", "");

		if (pol->proto != cases[i].proto || pol->n_dports != cases[i].n)
			fail_msg("match %s: got proto=%d n_dports=%u", cases[i].match, pol->proto,
				 pol->n_dports);
		for (j = 0; j < cases[i].n; j++)
			if (pol->dports[j].lo != cases[i].ports[j].lo ||
			    pol->dports[j].hi != cases[i].ports[j].hi)
				fail_msg("match %s: range %zu is %u-%u", cases[i].match, j,
					 pol->dports[j].lo, pol->dports[j].hi);
	}

	one_policy("16 port ranges", "tcp dport 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16-20", "1/s",
		   "");
	assert_int_equal(cfg.policies[0].n_dports, FG_MAX_PORT_RANGES);
	assert_int_equal(cfg.policies[0].dports[15].lo, 16);
	assert_int_equal(cfg.policies[0].dports[15].hi, 20);
}

static void test_src(void **state)
{
	static const struct {
		const char *cidr;
		__u8 family;
		__u8 prefix;
		__u8 addr[16];
	} cases[] = {
		{"0.0.0.0/0", FG_FAMILY_IPV4, 0, {0}},
		{"::/0", FG_FAMILY_IPV6, 0, {0}},
		{"10.1.2.3", FG_FAMILY_IPV4, 32, {10, 1, 2, 3}},
		{"10.1.2.3/32", FG_FAMILY_IPV4, 32, {10, 1, 2, 3}},
		{"192.168.128.0/17", FG_FAMILY_IPV4, 17, {192, 168, 128, 0}},
		{"2001:db8::1", FG_FAMILY_IPV6, 128, {0x20, 0x01, 0x0d, 0xb8, [15] = 1}},
		{"2001:db8:8000::/33", FG_FAMILY_IPV6, 33, {0x20, 0x01, 0x0d, 0xb8, 0x80}},
		{"fe80::/10", FG_FAMILY_IPV6, 10, {0xfe, 0x80}},
		/* IPv4-mapped stays IPv6: the datapath keys an IPv6 packet by its
		 * whole source, and an IPv4 packet never meets it */
		{"::ffff:10.0.0.0/104", FG_FAMILY_IPV6, 104, {[10] = 0xff, [11] = 0xff, [12] = 10}},
	};
	const struct fg_policy_conf *pol;
	char extra[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(extra, sizeof(extra), "src = %s", cases[i].cidr);
		pol = one_policy(extra, "any", "10/s", extra);
		if (pol->n_srcs != 1 || pol->srcs[0].family != cases[i].family ||
		    pol->srcs[0].prefix_len != cases[i].prefix ||
		    memcmp(pol->srcs[0].addr, cases[i].addr, 16) != 0)
			fail_msg("src %s: got n=%u family=%d prefix=%d", cases[i].cidr, pol->n_srcs,
				 pol->srcs[0].family, pol->srcs[0].prefix_len);
	}

	pol = one_policy("list", "any", "10/s", "src = 0.0.0.0/0, ::/0");
	assert_int_equal(pol->n_srcs, 2);
	pol = one_policy("space list", "any", "10/s",
			 "src = 10.0.0.0/8 172.16.0.0/12\t192.168.0.0/16");
	assert_int_equal(pol->n_srcs, 3);
	assert_int_equal(pol->srcs[2].addr[1], 168);
	pol = one_policy("16 networks", "any", "10/s",
			 "src = 10.0.0.0/8 10.1.0.0/16 10.2.0.0/16 10.3.0.0/16 10.4.0.0/16 "
			 "10.5.0.0/16 10.6.0.0/16 10.7.0.0/16 10.8.0.0/16 10.9.0.0/16 "
			 "10.10.0.0/16 10.11.0.0/16 10.12.0.0/16 10.13.0.0/16 10.14.0.0/16 ::1");
	assert_int_equal(pol->n_srcs, FG_MAX_SRC_CIDRS);
	assert_int_equal(pol->srcs[15].family, FG_FAMILY_IPV6);
}

static void test_layout(void **state)
{
	(void)state;
	/* comments, blank lines, free whitespace, CRLF */
	parse_ok("layout", "# leading comment\n"
			   "\n"
			   "   \t\n"
			   "hook=tc# no space before the comment\n"
			   "  max_sources\t=\t5   # trailing\n"
			   "[policy a] # header comment\n"
			   "match = tcp dport 22 # ssh\n"
			   "\n"
			   "rate = 10/s#x\n"
			   "\t[ policy  b ]\t\n"
			   "   match=any\n"
			   "rate=1/s\n"
			   "# trailing comment without newline");
	assert_int_equal(cfg.hook, FG_HOOK_TC);
	assert_int_equal(cfg.max_sources, 5);
	assert_int_equal(cfg.n_policies, 2);
	assert_string_equal(cfg.policies[0].name, "a");
	assert_int_equal(cfg.policies[0].line, 6);
	assert_int_equal(cfg.policies[0].n_dports, 1);
	assert_int_equal(cfg.policies[0].rate_count, 10);
	assert_string_equal(cfg.policies[1].name, "b");
	assert_int_equal(cfg.policies[1].line, 10);

	parse_ok("CRLF", "interface = eth1\r\n"
			 "\r\n"
			 "# comment\r\n"
			 "[policy ssh]\r\n"
			 "match = tcp dport 22\r\n"
			 "rate = 10/s\r\n"
			 "burst = 20\r\n");
	assert_string_equal(cfg.interface, "eth1");
	assert_string_equal(cfg.policies[0].name, "ssh");
	assert_int_equal(cfg.policies[0].line, 4);
	assert_int_equal(cfg.policies[0].burst, 20);

	parse_ok("no final newline", "[policy p]\nmatch = any\nrate = 1/s");
	assert_int_equal(cfg.policies[0].rate_count, 1);

	parse_ok("names", "[policy A-z_0.9]\nmatch = any\nrate = 1/s\n"
			  "[policy abcdefghijklmnopqrstuvwxyz01234]\nmatch = any\nrate = 1/s\n");
	assert_string_equal(cfg.policies[0].name, "A-z_0.9");
	assert_string_equal(cfg.policies[1].name, "abcdefghijklmnopqrstuvwxyz01234");
}

static void test_max_policies(void **state)
{
	char *text = malloc(FG_MAX_POLICIES * 64 + 1);
	size_t len = 0;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < FG_MAX_POLICIES; i++)
		len += sprintf(text + len, "[policy p%d]\nmatch = any\nrate = %d/s\n", i, i + 1);
	parse_ok("64 policies", text);
	assert_int_equal(cfg.n_policies, FG_MAX_POLICIES);
	for (i = 0; i < FG_MAX_POLICIES; i++) {
		assert_int_equal(cfg.policies[i].line, 3 * i + 1);
		assert_int_equal(cfg.policies[i].rate_count, i + 1);
	}
	assert_string_equal(cfg.policies[63].name, "p63");
	free(text);
}

/* A UTF-8 byte-order mark at the start is not part of the first key. */
static void test_byte_order_mark(void **state)
{
	(void)state;
	parse_ok("BOM", "\xEF\xBB\xBFmax_sources = 1000\n[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(cfg.max_sources, 1000);
	assert_int_equal(cfg.n_policies, 1);
	parse_ok("BOM before a section", "\xEF\xBB\xBF[policy p]\nmatch = any\nrate = 1/s\n");
	assert_string_equal(cfg.policies[0].name, "p");
}

static void test_default_config(void **state)
{
	char *err;

	(void)state;
	assert_int_equal(parse(fg_default_config, &err), 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(cfg.hook, FG_HOOK_XDP);
	assert_int_equal(cfg.xdp_mode, FG_XDP_NATIVE);
	assert_int_equal(cfg.max_sources, 262144);
	assert_int_equal(cfg.malformed, FG_VERDICT_DROP);
	assert_int_equal(cfg.table_full, FG_VERDICT_PASS);
	assert_int_equal(cfg.n_policies, 5);

	/* docs/config.md "The built-in policy" explains each number. */
	assert_string_equal(cfg.policies[0].name, "syn");
	assert_int_equal(cfg.policies[0].proto, IPPROTO_TCP);
	assert_true(cfg.policies[0].syn_only);
	assert_false(cfg.policies[0].has_size);
	assert_int_equal(cfg.policies[0].rate_count, 1000);
	assert_int_equal(cfg.policies[0].burst, 2000);

	assert_string_equal(cfg.policies[1].name, "icmp");
	assert_int_equal(cfg.policies[1].proto, IPPROTO_ICMP);
	assert_int_equal(cfg.policies[1].rate_count, 100);
	assert_int_equal(cfg.policies[1].burst, 200);

	assert_string_equal(cfg.policies[2].name, "icmpv6");
	assert_int_equal(cfg.policies[2].proto, IPPROTO_ICMPV6);
	assert_int_equal(cfg.policies[2].rate_count, 500);
	assert_int_equal(cfg.policies[2].burst, 1000);

	assert_string_equal(cfg.policies[3].name, "small-udp");
	assert_int_equal(cfg.policies[3].proto, IPPROTO_UDP);
	assert_true(cfg.policies[3].has_size);
	assert_int_equal(cfg.policies[3].size_lo_class, 0);
	assert_int_equal(cfg.policies[3].size_hi_class, 3); /* 0-255 */
	assert_int_equal(cfg.policies[3].rate_count, 50000);
	assert_int_equal(cfg.policies[3].burst, 50000);

	assert_string_equal(cfg.policies[4].name, "small");
	assert_int_equal(cfg.policies[4].proto, 0);
	assert_int_equal(cfg.policies[4].size_lo_class, 0);
	assert_int_equal(cfg.policies[4].size_hi_class, 15); /* 0-1023 */
	assert_int_equal(cfg.policies[4].key_kind, FG_KEY_SOURCE);
	assert_int_equal(cfg.policies[4].prefix_v4, 32);
	assert_int_equal(cfg.policies[4].prefix_v6, 64);
	assert_int_equal(cfg.policies[4].rate_count, 100000);
	assert_int_equal(cfg.policies[4].rate_period_ns, 1000000000ULL);
	assert_int_equal(cfg.policies[4].burst, 100000);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(cfg.policies[i].action, FG_ACTION_DROP);
		assert_int_equal(cfg.policies[i].algorithm, FG_ALG_TOKEN_BUCKET);
	}
}

static void test_sample_file(void **state)
{
	const struct fg_policy_conf *pol;
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	int ret;

	(void)state;
	ret = fg_config_parse_file("floodgate.conf.sample", &cfg, f);
	fclose(f);
	if (ret)
		fail_msg("floodgate.conf.sample: %d %s", ret, err);
	assert_string_equal(err, "");
	free(err);

	assert_string_equal(cfg.interface, "eth0");
	assert_int_equal(cfg.n_policies, 6);
	assert_string_equal(cfg.policies[5].name, "ssh-syn");
	assert_true(cfg.policies[5].syn_only);
	assert_int_equal(cfg.policies[5].algorithm, FG_ALG_SLIDING_LOG);
	assert_int_equal(cfg.policies[5].action, FG_ACTION_BAN);
	assert_int_equal(cfg.n_allow, 2);
	assert_int_equal(cfg.n_deny, 1);
	pol = &cfg.policies[0];
	assert_string_equal(pol->name, "ssh");
	assert_int_equal(pol->proto, IPPROTO_TCP);
	assert_int_equal(pol->dports[0].lo, 22);

	pol = &cfg.policies[1];
	assert_string_equal(pol->name, "dns");
	assert_int_equal(pol->proto, IPPROTO_UDP);
	assert_int_equal(pol->n_srcs, 3);
	assert_int_equal(pol->action, FG_ACTION_MONITOR);

	pol = &cfg.policies[2];
	assert_true(pol->bytes);
	assert_int_equal(pol->rate_count, 8000000);
	assert_int_equal(pol->burst, 1048576);

	pol = &cfg.policies[3];
	assert_int_equal(pol->key_kind, FG_KEY_GLOBAL);
	assert_int_equal(pol->rate_period_ns, 10000000000ULL);

	pol = &cfg.policies[4];
	assert_int_equal(pol->proto, 0);
	assert_int_equal(pol->n_dports, 0);
	assert_int_equal(pol->n_srcs, 0);
}

static void test_policy_id(void **state)
{
	(void)state;
	assert_int_equal(fg_policy_id("a"), 0xe40c292cU);
	assert_int_equal(fg_policy_id(""), 0x811c9dc5U);
	assert_int_equal(fg_policy_id("foobar"), 0xbf9cf968U);
}

/* --- errors ---------------------------------------------------------------- */

/* A valid policy whose header is line 1 and which has two lines. */
#define POL	"[policy p]\nmatch = any\n"
/* ... and with a rate: three lines */
#define POLR	POL "rate = 10/s\n"
#define BYTEPOL "[policy p]\nmatch = any\nrate = 10MB/s\n"

struct error_case {
	const char *text;
	int line;
	const char *needle;
	const char *exact; /* whole message, when given */
};

static void run_errors(const struct error_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		parse_error(cases[i].text, cases[i].text, cases[i].line, cases[i].needle,
			    cases[i].exact);
}

static void test_errors_structure(void **state)
{
	static const struct error_case cases[] = {
		{"hello\n" POLR, 1, "cannot parse 'hello'", NULL},
		{POLR "rate 10/s\n", 4, "cannot parse", NULL},
		{"= 5\n" POLR, 1, "without a key", NULL},
		{"hook =\n" POLR, 1, "'hook' has no value", NULL},
		{POLR "burst = # nothing\n", 4, "'burst' has no value", NULL},
		{"brust = 1\n" POLR, 1, "unknown key 'brust'",
		 "t.conf:1: unknown key 'brust' (expected one of: interface, hook, xdp_mode, "
		 "max_sources, max_sources_ipv6, malformed, on_insert_failure, new_sources, "
		 "new_sources_burst, clock, events, max_bans)\n"},
		{"Hook = xdp\n" POLR, 1, "unknown key 'Hook'", NULL},
		{"rate = 10/s\n" POLR, 1, "unknown key 'rate' outside a policy section", NULL},
		{POLR "brust = 20\n", 4, NULL,
		 "t.conf:4: unknown key 'brust' (expected one of: match, src, per, algorithm, "
		 "rate, burst, action, ban_factor, ban_max, scope, ban_unverified)\n"},
		{POLR "hook = tc\n", 4, "unknown key 'hook' in a policy section", NULL},
		{POLR "max_sources = 5\n", 4, "in a policy section", NULL},
		{"[foo]\n" POLR, 1, "unknown section '[foo]'", NULL},
		{"[]\n" POLR, 1, "unknown section", NULL},
		{"[policyx]\n" POLR, 1, "unknown section", NULL},
		{POLR "[global]\n", 4, "unknown section", NULL},
		{"[policy]\nmatch = any\nrate = 1/s\n", 1, "without a name", NULL},
		{"[policy ssh\nmatch = any\nrate = 1/s\n", 1, "unterminated section", NULL},
		{"[policy a b]\nmatch = any\nrate = 1/s\n", 1, "bad policy name 'a b'", NULL},
		{"[policy a/b]\nmatch = any\nrate = 1/s\n", 1, "bad policy name", NULL},
		{"[policy a:b]\nmatch = any\nrate = 1/s\n", 1, "bad policy name", NULL},
		{"[policy abcdefghijklmnopqrstuvwxyz012345]\nmatch = any\nrate = 1/s\n", 1,
		 "bad policy name", NULL},
		{"hook = xdp\nhook = tc\n" POLR, 2, "duplicate key 'hook'", NULL},
		{"interface = a\nmax_sources = 5\ninterface = b\n" POLR, 3,
		 "duplicate key 'interface'", NULL},
		{POLR "rate = 20/s\n", 4, "duplicate key 'rate'", NULL},
		{POLR "match = tcp\n", 4, "duplicate key 'match'", NULL},
		{POLR "per = global\n\nper = global\n", 6, "duplicate key 'per'", NULL},
		{POLR "[policy q]\nmatch = any\nrate = 1/s\n[policy p]\nmatch = any\nrate = 1/s\n",
		 7, "duplicate policy 'p'", NULL},
		{"[policy ssh]\nmatch = tcp dport 22\n", 1, NULL,
		 "t.conf:1: policy 'ssh' has no 'rate' (expected e.g. rate = 100/s)\n"},
		{"[policy ssh]\nrate = 10/s\n\n", 1, "policy 'ssh' has no 'match'", NULL},
		{"hook = xdp\n\n[policy a]\nmatch = any\n\n[policy b]\nmatch = any\nrate = 1/s\n",
		 3, "policy 'a' has no 'rate'", NULL},
		{POLR "[policy empty]\n", 4, "policy 'empty' has no 'match'", NULL},
		{"", 1, "no policy", NULL},
		{"\n", 1, "no policy", NULL},
		{"hook = xdp", 1, "no policy", NULL},
		{"hook = xdp\n", 1, "no policy", NULL},
		{"hook = xdp\n\n# only a comment\n", 3, "no policy", NULL},
		{"# a\n\n\n\n", 4, "no policy", NULL},
		{"hook = xdp\r\nhook = tc\r\n" POLR, 2, "duplicate key 'hook'", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

/* --- [fleet] and scope ------------------------------------------------------ */

static void test_fleet(void **state)
{
	const struct fg_fleet_conf *fleet = &cfg.fleet;

	(void)state;
	parse_ok("no fleet", POLR);
	assert_false(fleet->enabled);
	assert_int_equal(cfg.policies[0].scope, FG_SCOPE_LOCAL);

	parse_ok("fleet defaults", POLR "scope = fleet\n[fleet]\nredis = 127.0.0.1:6379\n");
	assert_true(fleet->enabled);
	assert_int_equal(fleet->line, 5);
	assert_string_equal(fleet->host, "127.0.0.1");
	assert_int_equal(fleet->port, 6379);
	assert_string_equal(fleet->unix_path, "");
	assert_int_equal(fleet->sync_ns, 250000000ULL);
	assert_string_equal(fleet->key_prefix, "floodgate:");
	assert_int_equal(fleet->on_redis_down, FG_REDIS_DOWN_LOCAL);
	assert_int_equal(fleet->min_ban_prefix, 16);
	assert_int_equal(fleet->min_ban_prefix6, 32);
	assert_int_equal(fleet->max_ban_ns, 24ULL * 3600 * 1000000000ULL);
	assert_int_equal(cfg.policies[0].scope, FG_SCOPE_FLEET);

	parse_ok("fleet, every key",
		 "[fleet]\nredis = [::1]:7000\nsync = 1s\n"
		 "key_prefix = edge/eu:\non_redis_down = closed\nmin_ban_prefix = 24\n"
		 "min_ban_prefix6 = 48\nmax_ban = 1h\n" POLR "scope = local\n");
	assert_int_equal(fleet->min_ban_prefix, 24);
	assert_int_equal(fleet->min_ban_prefix6, 48);
	assert_int_equal(fleet->max_ban_ns, 3600ULL * 1000000000ULL);
	assert_string_equal(fleet->host, "::1");
	assert_int_equal(fleet->port, 7000);
	assert_int_equal(fleet->sync_ns, 1000000000ULL);
	assert_string_equal(fleet->key_prefix, "edge/eu:");
	assert_int_equal(fleet->on_redis_down, FG_REDIS_DOWN_CLOSED);
	assert_int_equal(cfg.policies[0].scope, FG_SCOPE_LOCAL);

	parse_ok("host scope", POLR "scope = host\n");
	assert_int_equal(cfg.policies[0].scope, FG_SCOPE_HOST);
	assert_false(fleet->enabled);
	parse_ok("host scope, fixed_window", POLR "algorithm = fixed_window\nscope = host\n");
	assert_int_equal(cfg.policies[0].scope, FG_SCOPE_HOST);

	parse_ok("unix socket and a host name",
		 "[fleet]\nredis = unix:/run/redis/redis.sock\nsync = 10ms\n" POLR);
	assert_string_equal(fleet->unix_path, "/run/redis/redis.sock");
	assert_string_equal(fleet->host, "");
	assert_int_equal(fleet->sync_ns, 10000000ULL);
	parse_ok("host name", "[fleet]\nredis = redis.internal:6380\n" POLR);
	assert_string_equal(fleet->host, "redis.internal");
	assert_int_equal(fleet->port, 6380);
}

static void test_errors_fleet(void **state)
{
	static const struct error_case cases[] = {
		{"[fleet]\n" POLR, 1, NULL,
		 "t.conf:1: [fleet] has no redis (expected redis = HOST:PORT or unix:/path)\n"},
		{POLR "scope = fleet\n", 4, "scope = fleet without a [fleet] section", NULL},
		{POLR "scope = global\n", 4, "bad scope 'global'", NULL},
		{POLR "scope = host\nalgorithm = sliding_window\n", 4, NULL,
		 "t.conf:4: scope = host does not support sliding_window (expected algorithm = "
		 "token_bucket, leaky_bucket or fixed_window, or scope = local)\n"},
		{POLR "algorithm = sliding_log\nscope = host\n", 5,
		 "scope = host does not support sliding_log", NULL},
		{"[fleet]\nredis = a:1\n[fleet]\n" POLR, 3, "duplicate [fleet] section", NULL},
		{"[fleet]\nredis = a:1\nredis = b:2\n" POLR, 3, "duplicate key 'redis' in [fleet]",
		 NULL},
		{"[fleet]\nredis = a:1\nrate = 1/s\n" POLR, 3, NULL,
		 "t.conf:3: unknown key 'rate' in [fleet] (expected one of: redis, sync, "
		 "key_prefix, on_redis_down, password_file, user, min_ban_prefix, min_ban_prefix6, "
		 "max_ban)\n"},
		{"[fleet]\nredis = a:1\nmin_ban_prefix = 33\n" POLR, 3, "bad min_ban_prefix '33'",
		 NULL},
		{"[fleet]\nredis = a:1\nmin_ban_prefix6 = 129\n" POLR, 3, "bad min_ban_prefix6",
		 NULL},
		{"[fleet]\nredis = a:1\nmax_ban = 0s\n" POLR, 3, "bad max_ban '0s'", NULL},
		{"[fleet]\nredis = a:1\nmax_ban = 31d\n" POLR, 3, "bad max_ban", NULL},
		{"[fleet]\nredis = 127.0.0.1\n" POLR, 2, "bad redis '127.0.0.1'", NULL},
		{"[fleet]\nredis = 127.0.0.1:0\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = 127.0.0.1:65536\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = :6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = ::1:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = [::1:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = []:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = [::1]]:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = [[::1]:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = host]:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = a b:6379\n" POLR, 2, "bad redis", NULL},
		{"[fleet]\nredis = unix:run/redis.sock\n" POLR, 2, "bad redis socket", NULL},
		{"[fleet]\nredis = a:1\nsync = 5ms\n" POLR, 3, "bad sync '5ms'", NULL},
		{"[fleet]\nredis = a:1\nsync = 2min\n" POLR, 3, "bad sync", NULL},
		{"[fleet]\nredis = a:1\nsync = fast\n" POLR, 3, "bad sync", NULL},
		{"[fleet]\nredis = a:1\nkey_prefix = a b\n" POLR, 3, "bad key_prefix", NULL},
		{"[fleet]\nredis = a:1\non_redis_down = open\n" POLR, 3, "bad on_redis_down 'open'",
		 NULL},
		{"[fleet]\nredis = a:1\nhook = tc\n" POLR, 3, "unknown key 'hook' in [fleet]",
		 NULL},
		{"[fleet]\nredis = a:1\npassword_file = redis.pass\n" POLR, 3,
		 "bad password_file 'redis.pass' (expected an absolute path", NULL},
		{"[fleet]\nredis = a:1\nuser = fg\n" POLR, 3, NULL,
		 "t.conf:3: user without password_file (expected password_file = PATH, the file "
		 "holding the password of user fg)\n"},
		{"[fleet]\nredis = a:1\nuser = f g\npassword_file = /p\n" POLR, 3, "bad user 'f g'",
		 NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_synproxy(void **state)
{
	const struct fg_synproxy_conf *sp = &cfg.synproxy;

	(void)state;
	parse_ok("no [synproxy]", POLR);
	assert_false(sp->enabled);

	/* A [synproxy] alone is a config; what it does not set is the
	 * defaults of an Ethernet listener on Linux. */
	parse_ok("defaults", "[synproxy]\nports = 22\n");
	assert_int_equal(cfg.n_policies, 0);
	assert_true(sp->enabled);
	assert_int_equal(sp->line, 1);
	assert_int_equal(sp->n_ports, 1);
	assert_int_equal(sp->ports[0].lo, 22);
	assert_int_equal(sp->ports[0].hi, 22);
	assert_int_equal(sp->mss, 1460);
	assert_int_equal(sp->mss6, 1440);
	assert_int_equal(sp->wscale, 7);
	assert_true(sp->sack);
	assert_true(sp->timestamps);

	parse_ok("every key", POLR "[synproxy]\nports = 22, 443,8000-8080 0\nmss = 536\n"
				   "mss6 = 65475\nwscale = 14\nsack = no\ntimestamps = no\n");
	assert_int_equal(cfg.n_policies, 1);
	assert_int_equal(sp->line, 4);
	assert_int_equal(sp->n_ports, 4);
	assert_int_equal(sp->ports[1].lo, 443);
	assert_int_equal(sp->ports[2].lo, 8000);
	assert_int_equal(sp->ports[2].hi, 8080);
	assert_int_equal(sp->ports[3].hi, 0);
	assert_int_equal(sp->mss, 536);
	assert_int_equal(sp->mss6, 65475);
	assert_int_equal(sp->wscale, 14);
	assert_false(sp->sack);
	assert_false(sp->timestamps);

	parse_ok("wscale 0, sixteen ports",
		 "[synproxy]\nwscale = 0\nports = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0-65535\n");
	assert_int_equal(sp->wscale, 0);
	assert_int_equal(sp->n_ports, 16);
}

/* [synproxy] compiled for the datapath: the ports as a bitmap, the option
 * words as they go on the wire. */
static void test_synproxy_compile(void **state)
{
	static const __u8 mss4[4] = {2, 4, 0x05, 0x78}, mss6[4] = {2, 4, 0x05, 0xa0};
	static const __u8 wscale[4] = {1, 3, 3, 9}, sack_ts[4] = {4, 2, 8, 10};
	static const __u8 nop_ts[4] = {1, 1, 8, 10};
	static struct fg_synproxy_params params;
	unsigned int i, set = 0;

	(void)state;
	parse_ok("compile", "[synproxy]\nports = 22, 8000-8080, 65535, 0\nmss = 1400\nwscale = 9\n"
			    "sack = no\n");
	memset(&params, 0xa5, sizeof(params));
	fg_synproxy_compile(&cfg.synproxy, &params);
	for (i = 0; i < FG_SYNPROXY_PORT_WORDS; i++)
		set += __builtin_popcountll(params.ports[i]);
	assert_int_equal(set, 1 + 81 + 1 + 1);
	assert_true(params.ports[0] & 1ULL << 22);
	assert_false(params.ports[0] & 1ULL << 21);
	assert_true(params.ports[0] & 1ULL << 0);
	assert_true(params.ports[8000 / 64] & 1ULL << (8000 % 64));
	assert_true(params.ports[8080 / 64] & 1ULL << (8080 % 64));
	assert_false(params.ports[8081 / 64] & 1ULL << (8081 % 64));
	assert_true(params.ports[1023] & 1ULL << 63);
	assert_memory_equal(params.mss4.bytes, mss4, 4);
	assert_memory_equal(params.mss6.bytes, mss6, 4);
	assert_memory_equal(params.wscale.bytes, wscale, 4);
	assert_memory_equal(params.sack_timestamps.bytes, sack_ts, 4);
	assert_memory_equal(params.nop_timestamps.bytes, nop_ts, 4);
	assert_int_equal(params.enabled, 1);
	assert_int_equal(params.sack, 0);
	assert_int_equal(params.timestamps, 1);
	assert_int_equal(params.synacks.interval_fp, 0); /* synacks = off by default */

	/* synacks: each online CPU gets its share of the rate and the burst. */
	parse_ok("synacks", "[synproxy]\nports = 22\nsynacks = 1000/s\n");
	fg_synproxy_compile(&cfg.synproxy, &params);
	assert_int_equal(fg_gcra_cost_ns(params.synacks.interval_fp, 1),
			 1000000ULL * fg_online_cpus());
	assert_int_equal(params.synacks.tolerance_ns, 1000 * 1000000ULL);

	/* No section: the proxy is off, and nothing else is set. */
	parse_ok("no section", POLR);
	fg_synproxy_compile(&cfg.synproxy, &params);
	for (i = 0; i < sizeof(params); i++)
		assert_int_equal(((const __u8 *)&params)[i], 0);
}

static void test_errors_synproxy(void **state)
{
	static const struct error_case cases[] = {
		{"[synproxy]\n", 1, NULL,
		 "t.conf:1: [synproxy] has no ports (expected ports = the TCP ports of its "
		 "listeners, such as 22, 443)\n"},
		{POLR "[synproxy]\nmss = 1400\n", 4, "[synproxy] has no ports", NULL},
		{"[synproxy]\nports = ,\n", 2, NULL,
		 "t.conf:2: ports names no port (expected PORT or LO-HI such as 22 or "
		 "8000-8080)\n"},
		{"[synproxy]\nports = 22\n[synproxy]\nports = 80\n", 3,
		 "duplicate [synproxy] section (expected one; first at line 1)", NULL},
		{"[synproxy]\nports = 22\nports = 80\n", 3,
		 "duplicate key 'ports' in [synproxy] (expected each key once; first set at line "
		 "2)",
		 NULL},
		{"[synproxy]\nports = 22\nrate = 1/s\n", 3, NULL,
		 "t.conf:3: unknown key 'rate' in [synproxy] (expected one of: ports, mss, mss6, "
		 "wscale, sack, timestamps, synacks)\n"},
		{"[synproxy]\nports = ssh\n", 2, NULL,
		 "t.conf:2: bad port 'ssh' in ports list (expected PORT or LO-HI such as 22 or "
		 "8000-8080)\n"},
		{"[synproxy]\nports = 65536\n", 2, "port 65536 out of range", NULL},
		{"[synproxy]\nports = 90-80\n", 2, "port range '90-80' is out of order", NULL},
		{"[synproxy]\nports = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n", 2,
		 "too many ports in ports list (expected at most 16 ports or ranges)", NULL},
		{"[synproxy]\nports = 22\nmss = 535\n", 3, "bad mss '535'", NULL},
		{"[synproxy]\nports = 22\nmss = 65496\n", 3, "bad mss", NULL},
		{"[synproxy]\nports = 22\nmss = big\n", 3, "bad mss", NULL},
		{"[synproxy]\nports = 22\nmss6 = 1219\n", 3, "bad mss6 '1219'", NULL},
		{"[synproxy]\nports = 22\nmss6 = 65476\n", 3, "bad mss6", NULL},
		{"[synproxy]\nports = 22\nwscale = 15\n", 3, "bad wscale '15'", NULL},
		{"[synproxy]\nports = 22\nwscale = -1\n", 3, "bad wscale", NULL},
		{"[synproxy]\nports = 22\nsack = maybe\n", 3, "bad sack 'maybe'", NULL},
		{"[synproxy]\nports = 22\ntimestamps = on\n", 3, "bad timestamps 'on'", NULL},
		{"[synproxy]\nports = 22\nsynacks = 0/s\n", 3, NULL,
		 "t.conf:3: bad synacks '0/s' (expected off, or a rate of SYN-ACKs such as "
		 "100000/s, up to 1000000000/s)\n"},
		{"[synproxy]\nports = 22\nsynacks = lots\n", 3, "bad synacks 'lots'", NULL},
		{"[synproxy]\nports = 22\n[policy p]\nmatch = any\n", 3, "policy 'p' has no 'rate'",
		 NULL},
		{"[synproxies]\n", 1, NULL,
		 "t.conf:1: unknown section '[synproxies]' (expected [policy NAME], [allow], "
		 "[deny], [fleet], [crowdsec] or [synproxy])\n"},
		{"ports = 22\n", 1, "unknown key 'ports'", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_globals(void **state)
{
	static const struct error_case cases[] = {
		{"hook = tcx\n" POLR, 1, "bad hook 'tcx'", NULL},
		{"hook = XDP\n" POLR, 1, "bad hook", NULL},
		{"xdp_mode = offload\n" POLR, 1, "bad xdp_mode", NULL},
		{"malformed = maybe\n" POLR, 1, "bad malformed", NULL},
		{"on_insert_failure = accept\n" POLR, 1, "bad on_insert_failure", NULL},
		{"max_sources = 0\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = 16777217\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = abc\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = -1\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = +5\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = 0x10\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = 1e6\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = 10 000\n" POLR, 1, "bad max_sources", NULL},
		{"max_sources = 99999999999999999999999\n" POLR, 1, "bad max_sources", NULL},
		{"interface = abcdefghijklmnop\n" POLR, 1, "too long", NULL},
		{"interface = eth 0\n" POLR, 1, "bad interface name", NULL},
		{"interface = a/b\n" POLR, 1, "bad interface name", NULL},
		{POL "algorithm = gcra\nrate = 1/s\n", 3, "bad algorithm", NULL},
		{POLR "action = reject\n", 4, "bad action 'reject'", NULL},
		{POLR "action = drop monitor\n", 4, "bad action", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_algorithms(void **state)
{
	static const struct {
		const char *name;
		__u8 value;
	} names[] = {
		{"token_bucket", FG_ALG_TOKEN_BUCKET},	   {"fixed_window", FG_ALG_FIXED_WINDOW},
		{"sliding_window", FG_ALG_SLIDING_WINDOW}, {"sliding_log", FG_ALG_SLIDING_LOG},
		{"leaky_bucket", FG_ALG_LEAKY_BUCKET},
	};
	const struct fg_policy_conf *pol;
	char extra[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(extra, sizeof(extra), "algorithm = %s", names[i].name);
		pol = one_policy(names[i].name, "any", "100/s", extra);
		assert_int_equal(pol->algorithm, names[i].value);
		/* leaky_bucket is a meter of depth 1 by default; the others
		 * admit COUNT at once */
		assert_int_equal(pol->burst, names[i].value == FG_ALG_LEAKY_BUCKET ? 1 : 100);
	}
	pol = one_policy("leaky bytes", "any", "1MB/s", "algorithm = leaky_bucket");
	assert_int_equal(pol->burst, 1514);
	pol = one_policy("leaky depth", "any", "10/s", "algorithm = leaky_bucket\nburst = 4");
	assert_int_equal(pol->burst, 4);
	pol = one_policy("window burst = COUNT", "any", "10/s",
			 "burst = 10\nalgorithm = fixed_window");
	assert_int_equal(pol->burst, 10);
	pol = one_policy("sliding window bytes", "any", "10MB/s", "algorithm = sliding_window");
	assert_true(pol->bytes);
	pol = one_policy("log at the cap", "tcp dport 22", "128/min", "algorithm = sliding_log");
	assert_int_equal(pol->rate_count, FG_SLIDING_LOG_MAX);
}

static void test_errors_algorithms(void **state)
{
	static const struct error_case cases[] = {
		{POL "algorithm = sliding_log\nrate = 10MB/s\n", 3, "counts packets, not bytes",
		 NULL},
		{POL "rate = 1MB/s\nalgorithm = sliding_log\n", 4, "counts packets, not bytes",
		 NULL},
		{POL "algorithm = sliding_log\nrate = 129/s\n", 4, "at most 128 timestamps", NULL},
		{POL "algorithm = fixed_window\nrate = 10/s\nburst = 20\n", 5,
		 "burst 20 does not apply", NULL},
		{POL "burst = 5\nrate = 10/s\nalgorithm = sliding_window\n", 3,
		 "burst 5 does not apply", NULL},
		{POL "algorithm = sliding_window\nrate = 5GB/s\n", 4, "at most 4294967295", NULL},
		{POL "algorithm = token_bucket\nalgorithm = fixed_window\nrate = 1/s\n", 4,
		 "duplicate key 'algorithm'", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_match_clauses_and_keys(void **state)
{
	/* frame-length classes of 64 bytes; the last one is open-ended */
	static const struct {
		const char *match;
		int lo_class, hi_class;
	} sizes[] = {
		{"udp", 0, FG_SIZE_CLASSES - 1},
		{"udp size 0-255", 0, 3},
		{"any size 1024-max", 16, FG_SIZE_CLASSES - 1},
		{"tcp size 64-65535", 1, FG_SIZE_CLASSES - 1},
		{"tcp size 1984-max", FG_SIZE_CLASSES - 1, FG_SIZE_CLASSES - 1},
		{"icmp size 64-1983", 1, FG_SIZE_CLASSES - 2},
	};
	const struct fg_policy_conf *pol;
	size_t i;

	(void)state;
	pol = one_policy("syn", "tcp dport 22 syn", "5/s", "");
	assert_true(pol->syn_only);
	assert_int_equal(pol->n_dports, 1);
	pol = one_policy("sport", "udp sport 53 dport 1024-65535", "5/s", "");
	assert_int_equal(pol->n_sports, 1);
	assert_int_equal(pol->sports[0].lo, 53);
	assert_int_equal(pol->dports[0].lo, 1024);
	assert_int_equal(pol->dports[0].hi, 65535);
	pol = one_policy("syn first", "tcp syn sport 1,2 dport 3", "5/s", "");
	assert_true(pol->syn_only);
	assert_int_equal(pol->n_sports, 2);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pol = one_policy(sizes[i].match, sizes[i].match, "5/s", "");
		assert_int_equal(pol->has_size, strstr(sizes[i].match, "size") != NULL);
		assert_int_equal(pol->size_lo_class, sizes[i].lo_class);
		assert_int_equal(pol->size_hi_class, sizes[i].hi_class);
	}
	assert_true(one_policy("syn size", "tcp syn size 64-65535", "5/s", "")->syn_only);
	assert_int_equal(
		one_policy("dport size", "any size 1024-max dport 53", "5/s", "")->n_dports, 1);
	pol = one_policy("+dport", "tcp", "5/s", "per = src/32+dport src/64+dport");
	assert_true(pol->key_dport);
	assert_int_equal(pol->prefix_v4, 32);
	assert_int_equal(pol->prefix_v6, 64);
	pol = one_policy("ban", "tcp", "5/s", "action = ban 10m\nban_factor = 2\nban_max = 24h");
	assert_int_equal(pol->action, FG_ACTION_BAN);
	assert_int_equal(pol->ban_ns, 600ULL * 1000000000ULL);
	assert_int_equal(pol->ban_factor, 2);
	assert_int_equal(pol->ban_max_ns, 86400ULL * 1000000000ULL);
	pol = one_policy("ban defaults", "tcp", "5/s", "action = ban 90s");
	assert_int_equal(pol->ban_factor, 1);
	assert_int_equal(pol->ban_max_ns, 90ULL * 1000000000ULL);
	assert_false(pol->ban_unverified);
	/* the shortest prefixes a ban may cover */
	pol = one_policy("ban /8 /32", "udp", "5/s",
			 "action = ban 90s\nper = src/8 src/32\nban_unverified = yes");
	assert_int_equal(pol->prefix_v4, 8);
	assert_true(pol->ban_unverified);
}

static void test_access_lists(void **state)
{
	const struct fg_config *c;

	(void)state;
	c = parse_ok("lists", "[allow]\nsrc = 10.0.0.0/8, 2001:db8::/32\nsrc = 192.0.2.1\n"
			      "[deny]\nsrc = 10.66.0.0/16\n"
			      "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->n_allow, 3);
	assert_int_equal(c->n_deny, 1);
	assert_int_equal(c->allow[2].prefix_len, 32);
	assert_int_equal(c->deny[0].prefix_len, 16);
	assert_int_equal(c->n_policies, 1);
}

static void test_errors_access_and_ban(void **state)
{
	static const struct error_case cases[] = {
		{"[deny]\nnet = 10.0.0.0/8\n" POLR, 2, "unknown key 'net' in [deny]", NULL},
		{"[deny]\nsrc = 10.0.0.1/8\n" POLR, 2, "host bits", NULL},
		{"[allow]\nsrc = 10.0.0.0/8\n[deny]\nsrc = 10.0.0.0/8\n" POLR, 4,
		 "in both [allow] and [deny]", NULL},
		{"[deny]\nfile_errors = skip\n[deny]\nfile_errors = fail\n" POLR, 4, NULL,
		 "t.conf:4: file_errors set twice for [deny] (expected it once: it applies to all "
		 "the list's files; first set at line 2)\n"},
		{"[crowdsec]\norigins = ,\n" POLR, 2, "origins names none", NULL},
		{"[crowdsec]\nscopes = ,\n" POLR, 2, "scopes names none", NULL},
		{"[blocklist]\n" POLR, 1, "unknown section '[blocklist]'", NULL},
		{POL "rate = 1/s\naction = ban\n", 4, "bad action", NULL},
		{POL "rate = 1/s\naction = ban 10y\n", 4, "bad ban duration", NULL},
		{POL "rate = 1/s\naction = ban 31d\n", 4, "bad ban duration", NULL},
		{POL "rate = 1/s\naction = ban 0s\n", 4, "bad ban duration", NULL},
		{POL "rate = 1/s\nban_factor = 2\n", 4, "need action = ban", NULL},
		{POL "rate = 1/s\naction = ban 1h\nban_max = 10m\n", 5, "shorter than the ban",
		 NULL},
		{POL "rate = 1/s\naction = ban 1h\nban_factor = 0\n", 5, "bad ban_factor", NULL},
		{POL "rate = 1/s\nper = global\naction = ban 1h\n", 5, "ban every source", NULL},
		{POL "rate = 1/s\nper = src/7 src/64\naction = ban 1h\n", 4, NULL,
		 "t.conf:4: action = ban with per = src/7 would ban up to a /7 of IPv4 addresses "
		 "at "
		 "once (expected per = src/8 or longer for IPv4 and src/32 or longer for IPv6)\n"},
		{POL "rate = 1/s\naction = ban 1h\nper = src/24 src/31\n", 5, NULL,
		 "t.conf:5: action = ban with per = src/31 would ban up to a /31 of IPv6 addresses "
		 "at once (expected per = src/8 or longer for IPv4 and src/32 or longer for "
		 "IPv6)\n"},
		{POL "rate = 1/s\nper = src/0 src/0\naction = ban 1h\n", 4, "a /0 of IPv4", NULL},
		{POL "rate = 1/s\nper = src/32+port\n", 4, "bad prefix length", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_budget_and_clock(void **state)
{
	const struct fg_config *c;

	(void)state;
	c = parse_ok("defaults", "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->new_sources_count, FG_DEFAULT_NEW_SOURCES);
	assert_false(c->coarse_clock);
	c = parse_ok("set", "new_sources = 200/ms\nnew_sources_burst = 7\nclock = coarse\n"
			    "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->new_sources_count, 200);
	assert_int_equal(c->new_sources_period_ns, 1000000);
	assert_int_equal(c->new_sources_burst, 7);
	assert_true(c->coarse_clock);
	c = parse_ok("off", "new_sources = off\n[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->new_sources_count, 0);
}

static void test_events_key(void **state)
{
	const struct fg_config *c;

	(void)state;
	c = parse_ok("default", "[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->events_count, FG_DEFAULT_EVENTS);
	assert_int_equal(c->events_period_ns, 1000000000ULL);
	c = parse_ok("set", "events = 20/min\n[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->events_count, 20);
	assert_int_equal(c->events_period_ns, 60000000000ULL);
	c = parse_ok("off", "events = off\n[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->events_count, 0);
	c = parse_ok("the most a ms", "events = 1000/ms\n[policy p]\nmatch = any\nrate = 1/s\n");
	assert_int_equal(c->events_count, 1000);
	assert_int_equal(c->events_period_ns, 1000000ULL);
}

/* max_sources sizes sources4 (IPv4), max_sources_ipv6 sources (IPv6,
 * global and overflow keys): a quarter of max_sources unless set, never
 * below FG_MIN_SOURCES_IPV6. */
static void test_max_sources_ipv6(void **state)
{
	const struct fg_config *c;

	(void)state;
	c = parse_ok("default", POLR);
	assert_int_equal(c->max_sources_ipv6, FG_DEFAULT_MAX_SOURCES / 4);
	c = parse_ok("a quarter", "max_sources = 1048576\n" POLR);
	assert_int_equal(c->max_sources_ipv6, 262144);
	c = parse_ok("the floor", "max_sources = 1000\n" POLR);
	assert_int_equal(c->max_sources_ipv6, FG_MIN_SOURCES_IPV6);
	c = parse_ok("just above the floor", "max_sources = 4100\n" POLR);
	assert_int_equal(c->max_sources_ipv6, 1025);
	/* set: as given, before or after max_sources */
	c = parse_ok("set", "max_sources_ipv6 = 5000\nmax_sources = 1048576\n" POLR);
	assert_int_equal(c->max_sources_ipv6, 5000);
	assert_int_equal(c->max_sources, 1048576);
	c = parse_ok("smallest", "max_sources_ipv6 = 1024\n" POLR);
	assert_int_equal(c->max_sources_ipv6, FG_MIN_SOURCES_IPV6);
	c = parse_ok("largest", "max_sources_ipv6 = 16777216\n" POLR);
	assert_int_equal(c->max_sources_ipv6, 16777216);
}

static void test_errors_max_sources_ipv6(void **state)
{
	static const struct error_case cases[] = {
		{"max_sources_ipv6 = 0\n" POLR, 1, NULL,
		 "t.conf:1: bad max_sources_ipv6 '0' (expected 1024..16777216)\n"},
		/* under the floor: IPv6 sources would evict the global and
		 * overflow keys */
		{"max_sources_ipv6 = 1023\n" POLR, 1, "bad max_sources_ipv6", NULL},
		{"\nmax_sources_ipv6 = 16777217\n" POLR, 2, "bad max_sources_ipv6", NULL},
		{"max_sources_ipv6 = -1\n" POLR, 1, "bad max_sources_ipv6", NULL},
		{"max_sources_ipv6 = 1k\n" POLR, 1, "bad max_sources_ipv6", NULL},
		{"max_sources_ipv6 = 2048\nmax_sources_ipv6 = 2048\n" POLR, 2,
		 "duplicate key 'max_sources_ipv6'", NULL},
		{POLR "max_sources_ipv6 = 2048\n", 4, "in a policy section", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

/* max_bans sizes `bans` (include/floodgate_lists.h): 65,536 unless set. */
static void test_max_bans(void **state)
{
	static const struct error_case cases[] = {
		{"max_bans = 8191\n" POLR, 1, NULL,
		 "t.conf:1: bad max_bans '8191' (expected 8192..16777216)\n"},
		{"max_bans = 16777217\n" POLR, 1, "bad max_bans", NULL},
		{POLR "max_bans = 131072\n", 4, "in a policy section", NULL},
	};
	const struct fg_config *c;

	(void)state;
	c = parse_ok("default", POLR);
	assert_int_equal(c->max_bans, 65536);
	c = parse_ok("set", "max_bans = 131072\n" POLR);
	assert_int_equal(c->max_bans, 131072);
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_budget_and_clock(void **state)
{
	static const struct error_case cases[] = {
		{"new_sources = 10\n" POLR, 1, "bad new_sources", NULL},
		{"new_sources = 0/s\n" POLR, 1, "bad new_sources", NULL},
		{"new_sources = 10/fortnight\n" POLR, 1, "bad new_sources", NULL},
		{"new_sources_burst = 0\n" POLR, 1, "bad new_sources_burst", NULL},
		{"clock = fast\n" POLR, 1, "bad clock 'fast'", NULL},
		{"events = many\n" POLR, 1,
		 "bad events 'many' (expected off, or a rate of events such as 100/s", NULL},
		{"events = 0/s\n" POLR, 1, "bad events", NULL},
		{"events = 2000000/s\n" POLR, 1, "up to 1000000/s", NULL},
		/* The bound is a second's, whatever the unit (10^9 a second),
		 * and COUNT's, the burst (an hour's worth at once). */
		{"events = 1000000/ms\n" POLR, 1, "up to 1000000/s", NULL},
		{"events = 3600000000/h\n" POLR, 1, "up to 1000000/s", NULL},
		{"new_sources = 1000000000/ms\n" POLR, 1, "bad new_sources", NULL},
		{"[synproxy]\nports = 22\nsynacks = 1000000000/ms\n" POLR, 3, "bad synacks", NULL},
		{"events = 1/s\nevents = off\n" POLR, 2, "duplicate key 'events'", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_match(void **state)
{
	static const struct error_case cases[] = {
		{"[policy p]\nmatch = sctp\nrate = 1/s\n", 2, "unknown protocol 'sctp'", NULL},
		{"[policy p]\nmatch = TCP\nrate = 1/s\n", 2, "unknown protocol", NULL},
		{"[policy p]\nmatch = tcp sport\nrate = 1/s\n", 2, "sport without ports", NULL},
		{"[policy p]\nmatch = tcp dport syn\nrate = 1/s\n", 2, "dport without ports", NULL},
		{"[policy p]\nmatch = udp syn\nrate = 1/s\n", 2, "syn with protocol udp", NULL},
		{"[policy p]\nmatch = icmp sport 1\nrate = 1/s\n", 2, "sport with protocol icmp",
		 NULL},
		{"[policy p]\nmatch = tcp dport 1 dport 2\nrate = 1/s\n", 2, "dport given twice",
		 NULL},
		{"[policy p]\nmatch = tcp sport 9-1\nrate = 1/s\n", 2, "out of order", NULL},
		{"[policy p]\nmatch = tcp 22\nrate = 1/s\n", 2, "unexpected '22'", NULL},
		{"[policy p]\nmatch = icmp dport 1\nrate = 1/s\n", 2, "dport with protocol icmp",
		 NULL},
		{"[policy p]\nmatch = icmpv6 dport 1\nrate = 1/s\n", 2, "dport with protocol",
		 NULL},
		{"[policy p]\nmatch = tcp dport\nrate = 1/s\n", 2, "dport without ports", NULL},
		{"[policy p]\nmatch = tcp dport ,\nrate = 1/s\n", 2, "dport without ports", NULL},
		{"[policy p]\nmatch = tcp dport 80-22\nrate = 1/s\n", 2,
		 "port range '80-22' is out of order", NULL},
		{"[policy p]\nmatch = tcp dport 65536\nrate = 1/s\n", 2, "port 65536 out of range",
		 NULL},
		{"[policy p]\nmatch = udp dport 1-70000\nrate = 1/s\n", 2,
		 "port 70000 out of range", NULL},
		{"[policy p]\nmatch = udp dport 99999999999999999999999\nrate = 1/s\n", 2,
		 "out of range", NULL},
		{"[policy p]\nmatch = tcp dport 22x\nrate = 1/s\n", 2, "bad port '22x'", NULL},
		{"[policy p]\nmatch = tcp dport -5\nrate = 1/s\n", 2, "bad port", NULL},
		{"[policy p]\nmatch = tcp dport 8000-\nrate = 1/s\n", 2, "bad port", NULL},
		{"[policy p]\nmatch = tcp dport 1-2-3\nrate = 1/s\n", 2, "bad port", NULL},
		{"[policy p]\nmatch = tcp dport +22\nrate = 1/s\n", 2, "bad port", NULL},
		{"[policy p]\nmatch = tcp dport 0x16\nrate = 1/s\n", 2, "bad port", NULL},
		{"[policy p]\nmatch = tcp dport 22 dport 80\nrate = 1/s\n", 2, "dport given twice",
		 NULL},
		{"[policy p]\nmatch = tcp dport 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n", 2,
		 "too many ports", NULL},
		{"[policy p]\nmatch = udp size\nrate = 1/s\n", 2, "size without a range", NULL},
		{"[policy p]\nmatch = udp size 0-255 size 0-63\nrate = 1/s\n", 2,
		 "size given twice", NULL},
		{"[policy p]\nmatch = udp size 0-200\nrate = 1/s\n", 2,
		 "size '0-200' is not on a 64-byte boundary", NULL},
		{"[policy p]\nmatch = udp size 10-255\nrate = 1/s\n", 2, "64-byte boundary", NULL},
		{"[policy p]\nmatch = udp size 256-0\nrate = 1/s\n", 2,
		 "size range '256-0' is out of order", NULL},
		{"[policy p]\nmatch = udp size 0-4095\nrate = 1/s\n", 2,
		 "bad size '0-4095' in match (expected LO-HI frame bytes, LO at most 1984, HI at "
		 "most 1983 or max",
		 NULL},
		{"[policy p]\nmatch = udp size 2048-max\nrate = 1/s\n", 2, "bad size '2048-max'",
		 NULL},
		{"[policy p]\nmatch = udp size 255\nrate = 1/s\n", 2, "bad size '255'", NULL},
		{"[policy p]\nmatch = udp size -255\nrate = 1/s\n", 2, "bad size", NULL},
		{"[policy p]\nmatch = udp size 0-max-1\nrate = 1/s\n", 2, "bad size", NULL},
		{"[policy p]\nmatch = udp dport size 0-63\nrate = 1/s\n", 2, "dport without ports",
		 NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_src_per(void **state)
{
	static const struct error_case cases[] = {
		{POLR "src = 10.0.0.256/8\n", 4, "bad address '10.0.0.256/8'", NULL},
		{POLR "src = 10/8\n", 4, "bad address", NULL},
		{POLR "src = /8\n", 4, "bad address", NULL},
		{POLR "src = eth0\n", 4, "bad address", NULL},
		{POLR "src = 2001:db8::g/32\n", 4, "bad address", NULL},
		{POLR "src = 10.0.0.0/8 fe80::1%eth0\n", 4, "bad address 'fe80::1%eth0'", NULL},
		{POLR "src = 10.0.0.0/33\n", 4, "bad prefix length 33 in '10.0.0.0/33'", NULL},
		{POLR "src = ::/129\n", 4, "bad prefix length 129", NULL},
		{POLR "src = 10.0.0.0/\n", 4, "bad prefix length", NULL},
		{POLR "src = 10.0.0.0/x\n", 4, "bad prefix length", NULL},
		{POLR "src = 10.0.0.0/-1\n", 4, "bad prefix length", NULL},
		{POLR "src = 10.0.0.0/+8\n", 4, "bad prefix length", NULL},
		{POLR "src = 10.0.0.0/8/8\n", 4, "bad prefix length", NULL},
		{POLR "src = 10.0.0.1/24\n", 4, NULL,
		 "t.conf:4: 10.0.0.1/24: host bits set (expected a network address such as "
		 "10.0.0.0/24)\n"},
		{POLR "src = 10.0.0.0/8, 192.168.1.1/16\n", 4, "192.168.1.1/16: host bits set",
		 NULL},
		{POLR "src = 2001:db8::1/64\n", 4,
		 "host bits set (expected a network address such "
		 "as 2001:db8::/64)",
		 NULL},
		{POLR "src = 0.0.0.1/0\n", 4, "such as 0.0.0.0/0", NULL},
		{POLR "src = , ,\n", 4, "src without networks", NULL},
		{POLR "src = 1.0.0.0/8 2.0.0.0/8 3.0.0.0/8 4.0.0.0/8 5.0.0.0/8 6.0.0.0/8 7.0.0.0/8 "
		      "8.0.0.0/8 9.0.0.0/8 10.0.0.0/8 11.0.0.0/8 12.0.0.0/8 13.0.0.0/8 14.0.0.0/8 "
		      "15.0.0.0/8 16.0.0.0/8 17.0.0.0/8\n",
		 4, "too many networks in src", NULL},
		{POLR "per = src/33 src/64\n", 4, NULL,
		 "t.conf:4: bad prefix length 33 in 'src/33' (expected src/0..32 for IPv4)\n"},
		{POLR "per = src/64 src/128\n", 4, "bad prefix length 64 in 'src/64'", NULL},
		{POLR "per = src/129\n", 4, "bad prefix length 129 in 'src/129'", NULL},
		{POLR "per = src/32 src/200\n", 4, "bad prefix length 200", NULL},
		{POLR "per = src/x\n", 4, "bad prefix length", NULL},
		{POLR "per = src/\n", 4, "bad prefix length", NULL},
		{POLR "per = src/-1\n", 4, "bad prefix length", NULL},
		{POLR "per = src/+8\n", 4, "bad prefix length", NULL},
		{POLR "per = src 32\n", 4, "bad per 'src'", NULL},
		{POLR "per = dst/32\n", 4, "bad per 'dst/32'", NULL},
		{POLR "per = Global\n", 4, "bad per", NULL},
		{POLR "per = ,\n", 4, "bad per", NULL},
		{POLR "per = src/24 src/32 src/64\n", 4, "too many prefixes", NULL},
		{POLR "per = global src/32\n", 4, "'global' combined", NULL},
		{POLR "per = src/32 global\n", 4, "'global' combined", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_rate(void **state)
{
	static const struct error_case cases[] = {
		{POL "rate = 0/s\n", 3, "zero count", NULL},
		{POL "rate = 0MB/s\n", 3, "zero count", NULL},
		{POL "rate = 10\n", 3, "bad rate '10'", NULL},
		{POL "rate = /s\n", 3, "bad rate", NULL},
		{POL "rate = abc/s\n", 3, "bad rate", NULL},
		{POL "rate = -1/s\n", 3, "bad rate", NULL},
		{POL "rate = +1/s\n", 3, "bad rate", NULL},
		{POL "rate = 10/\n", 3, "unknown unit '' in rate", NULL},
		{POL "rate = 10/S\n", 3, "unknown unit 'S'", NULL},
		{POL "rate = 10/sec\n", 3, "unknown unit 'sec'", NULL},
		{POL "rate = 10/us\n", 3, "unknown unit 'us'", NULL},
		{POL "rate = 10/s/s\n", 3, "unknown unit 's/s'", NULL},
		{POL "rate = 10/-1s\n", 3, "unknown unit", NULL},
		{POL "rate = 0x10/s\n", 3, "unknown unit 'x10'", NULL},
		{POL "rate = 0/0s\n", 3, "zero count", NULL},
		{POL "rate = 1.5/s\n", 3, "fraction in rate", NULL},
		{POL "rate = 1/1.5h\n", 3, "fraction in rate", NULL},
		{POL "rate = 10Kb/s\n", 3, "unknown unit 'Kb'", NULL},
		{POL "rate = 10kb/s\n", 3, "unknown unit 'kb'", NULL},
		{POL "rate = 10mB/s\n", 3, "unknown unit 'mB'", NULL},
		{POL "rate = 10TB/s\n", 3, "unknown unit 'TB'", NULL},
		{POL "rate = 10Mbit/s\n", 3, "unknown unit 'Mbit'", NULL},
		{POL "rate = 10pps/s\n", 3, "unknown unit 'pps'", NULL},
		{POL "rate = 10/0s\n", 3, "out of range", NULL},
		{POL "rate = 1/0ms\n", 3, "out of range", NULL},
		{POL "rate = 1/25h\n", 3, "out of range", NULL},
		{POL "rate = 1/1441min\n", 3, "out of range", NULL},
		{POL "rate = 1/99999999999999999999s\n", 3, "too long", NULL},
		{POL "rate = 1/18446744073709551615h\n", 3, "out of range", NULL},
		{POL "rate = 99999999999999999999/s\n", 3, "too large", NULL},
		{POL "rate = 1000000001/s\n", 3, "too high", NULL},
		{POL "rate = 1000001/ms\n", 3, "too high", NULL},
		{POL "rate = 18446744073709551615/24h\n", 3, "too high", NULL},
		{POL "rate = 1001GB/s\n", 3, "too high", NULL},
		{POL "rate = 18446744073709551615GiB/s\n", 3, "too high", NULL},
		{POL "rate = 8001gbit/s\n", 3, "too high", NULL},
		{POL "rate = 7B/s\n", 3, "too low", NULL},
		{POL "rate = 479B/min\n", 3, "too low", NULL},
		{POL "rate = 7999B/1000s\n", 3, "too low", NULL},
		{POL "rate = 12bit/s\n", 3, "not a whole number of bytes", NULL},
		/* the default burst, rate COUNT, is too large */
		{POL "rate = 100000000000/24h\n", 3, "default burst", NULL},
		{POL "rate = 100000GB/24h\n", 3, "default burst", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_burst(void **state)
{
	static const struct error_case cases[] = {
		{POLR "burst = 0\n", 4, "burst '0' is zero", NULL},
		{BYTEPOL "burst = 0kB\n", 4, "is zero", NULL},
		{POLR "burst = -1\n", 4, "bad burst", NULL},
		{POLR "burst = abc\n", 4, "bad burst", NULL},
		{POLR "burst = 1.5\n", 4, "fraction in burst", NULL},
		{POLR "burst = 20 pkts\n", 4, "unknown unit 'pkts'", NULL},
		{POLR "burst = 0x10\n", 4, "unknown unit 'x10'", NULL},
		{BYTEPOL "burst = 0.5kB\n", 4, "fraction in burst", NULL},
		{BYTEPOL "burst = 2TB\n", 4, "unknown unit 'TB'", NULL},
		{POLR "burst = 1000000001\n", 4, "too large", NULL},
		{POLR "burst = 99999999999999999999\n", 4, "too large", NULL},
		{BYTEPOL "burst = 1500000000001\n", 4, "too large", NULL},
		{BYTEPOL "burst = 1501GB\n", 4, "too large", NULL},
		{BYTEPOL "burst = 18446744073709551615GiB\n", 4, "too large", NULL},
		{BYTEPOL "burst = 12bit\n", 4, "not a whole number of bytes", NULL},
		/* a byte unit on the burst of a packet rate, in either order */
		{POLR "burst = 64kB\n", 4, "burst '64kB' is in bytes but rate '10/s'", NULL},
		{POLR "\nburst = 8bit\n", 5, "is in bytes", NULL},
		{POL "burst = 64kB\nrate = 10/s\n", 3, "is in bytes", NULL},
		{"[policy p]\nburst = 1B\n\nmatch = any\nrate = 10/s\n", 2, "is in bytes", NULL},
		/* burst * period / count above 2^62 ns */
		{POL "rate = 1/24h\nburst = 1000000\n", 4, "too large for this rate", NULL},
		{POL "rate = 1/h\nburst = 1281024\n", 4, "too large for this rate", NULL},
		{POL "burst = 1000000\nrate = 1/24h\n", 3, "too large for this rate", NULL},
		{POL "rate = 8B/s\nburst = 36893488148\n", 4, "too large for this rate", NULL},
		{POL "rate = 8B/s\nburst = 1500GB\n", 4, "too large for this rate", NULL},
	};

	(void)state;
	run_errors(cases, ARRAY_SIZE(cases));
}

static void test_errors_too_many_policies(void **state)
{
	char *text = malloc((FG_MAX_POLICIES + 1) * 64 + 1);
	size_t len = 0;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i <= FG_MAX_POLICIES; i++)
		len += sprintf(text + len, "[policy p%d]\nmatch = any\nrate = 1/s\n", i);
	parse_error("65 policies", text, 3 * FG_MAX_POLICIES + 1, "too many policies", NULL);
	free(text);
}

/* --- files and odds and ends ----------------------------------------------- */

static int parse_file(const char *path, char **err)
{
	size_t len = 0;
	FILE *f = open_memstream(err, &len);
	int ret;

	assert_non_null(f);
	ret = fg_config_parse_file(path, &cfg, f);
	fclose(f);
	return ret;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_files(void **state)
{
	static const char nul[] = "hook = xdp\n[policy p]\nmat\0ch = any\nrate = 1/s\n";
	char dir[] = "/tmp/fg-test-config-XXXXXX";
	char path[64], expected[128], *err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fg.conf", dir);

	assert_int_equal(parse_file(path, &err), -ENOENT);
	snprintf(expected, sizeof(expected), "%s: %s\n", path, strerror(ENOENT));
	assert_string_equal(err, expected);
	free(err);

	assert_int_equal(parse_file(dir, &err), -EISDIR);
	snprintf(expected, sizeof(expected), "%s: %s\n", dir, strerror(EISDIR));
	assert_string_equal(err, expected);
	free(err);

	write_file(path, "[policy p]\nmatch = udp\nrate = 5/s\n", 34);
	assert_int_equal(parse_file(path, &err), 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(cfg.policies[0].proto, IPPROTO_UDP);

	write_file(path, "[policy p]\nmatch = udp\nrate = 5/q\n", 34);
	assert_int_equal(parse_file(path, &err), -EINVAL);
	snprintf(expected, sizeof(expected), "%s:3: ", path);
	assert_memory_equal(err, expected, strlen(expected));
	free(err);

	write_file(path, nul, sizeof(nul) - 1);
	assert_int_equal(parse_file(path, &err), -EINVAL);
	snprintf(expected, sizeof(expected), "%s:3: ", path);
	assert_memory_equal(err, expected, strlen(expected));
	free(err);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A file is read up to FG_CONFIG_MAX_BYTES and no further: one byte more,
 * or an endless file, is "too large" (-EFBIG). */
static void test_file_size_cap(void **state)
{
	static const char head[] = "[policy p]\nmatch = udp\nrate = 5/s\n";
	char dir[] = "/tmp/fg-test-config-XXXXXX";
	char path[64], expected[160], *data, *err;
	size_t size = FG_CONFIG_MAX_BYTES;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fg.conf", dir);
	data = malloc(size + 1);
	assert_non_null(data);
	/* A valid config padded with a comment to exactly the cap. */
	memcpy(data, head, sizeof(head) - 1);
	memset(data + sizeof(head) - 1, '#', size - (sizeof(head) - 1));
	data[size - 1] = '\n';
	write_file(path, data, size);
	assert_int_equal(parse_file(path, &err), 0);
	assert_string_equal(err, "");
	free(err);

	data[size - 1] = '#';
	data[size] = '\n';
	write_file(path, data, size + 1);
	assert_int_equal(parse_file(path, &err), -EFBIG);
	snprintf(expected, sizeof(expected), "%s: too large (a config may have at most %d bytes)\n",
		 path, FG_CONFIG_MAX_BYTES);
	assert_string_equal(err, expected);
	free(err);

	assert_int_equal(parse_file("/dev/zero", &err), -EFBIG);
	assert_string_equal(err,
			    "/dev/zero: too large (a config may have at most 1048576 bytes)\n");
	free(err);

	free(data);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_quiet_and_names(void **state)
{
	struct fg_config *c = malloc(sizeof(*c));

	(void)state;
	assert_non_null(c);
	/* a NULL err is allowed and stays silent */
	assert_int_equal(fg_config_parse_string("x", "bogus\n", c, NULL), -EINVAL);
	assert_int_equal(fg_config_parse_string(NULL, POLR, c, NULL), 0);
	assert_int_equal(c->n_policies, 1);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_global_keys),
		cmocka_unit_test(test_full_policy),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_per),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_src),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_max_policies),
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_byte_order_mark),
		cmocka_unit_test(test_sample_file),
		cmocka_unit_test(test_policy_id),
		cmocka_unit_test(test_errors_structure),
		cmocka_unit_test(test_errors_globals),
		cmocka_unit_test(test_errors_match),
		cmocka_unit_test(test_algorithms),
		cmocka_unit_test(test_events_key),
		cmocka_unit_test(test_max_sources_ipv6),
		cmocka_unit_test(test_errors_max_sources_ipv6),
		cmocka_unit_test(test_max_bans),
		cmocka_unit_test(test_budget_and_clock),
		cmocka_unit_test(test_errors_budget_and_clock),
		cmocka_unit_test(test_match_clauses_and_keys),
		cmocka_unit_test(test_access_lists),
		cmocka_unit_test(test_errors_access_and_ban),
		cmocka_unit_test(test_errors_algorithms),
		cmocka_unit_test(test_errors_src_per),
		cmocka_unit_test(test_errors_rate),
		cmocka_unit_test(test_errors_burst),
		cmocka_unit_test(test_errors_too_many_policies),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_file_size_cap),
		cmocka_unit_test(test_quiet_and_names),
		cmocka_unit_test(test_fleet),
		cmocka_unit_test(test_errors_fleet),
		cmocka_unit_test(test_synproxy),
		cmocka_unit_test(test_errors_synproxy),
		cmocka_unit_test(test_synproxy_compile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
