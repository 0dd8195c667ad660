// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of feed files (user/config/feedfile.c): the line grammar,
 * hostile lines, FILE:LINE errors, file_errors = skip and the keys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/feedfile.h"
#include "config/filemode.h"

static enum fg_feed_line line_kind(const char *text, size_t len, struct fg_cidr *out)
{
	const char *why = NULL;
	enum fg_feed_line kind = fg_feed_parse_line(text, len, out, &why);

	if (kind == FG_FEED_BAD)
		assert_non_null(why);
	return kind;
}

static void expect_prefix(const char *text, __u8 family, __u8 prefix_len, const char *addr_hex)
{
	struct fg_cidr c;
	__u8 want[16] = {0};
	size_t i;

	if (line_kind(text, strlen(text), &c) != FG_FEED_PREFIX)
		fail_msg("'%s': expected a prefix", text);
	assert_int_equal(c.family, family);
	assert_int_equal(c.prefix_len, prefix_len);
	for (i = 0; i < strlen(addr_hex) / 2; i++)
		sscanf(addr_hex + 2 * i, "%2hhx", &want[i]);
	assert_memory_equal(c.addr, want, 16);
}

static void test_lines_as_published(void **state)
{
	struct fg_cidr c;

	(void)state;
	expect_prefix("1.2.3.0/24", FG_FAMILY_IPV4, 24, "01020300");
	expect_prefix("1.10.16.0/20 ; SBL256894", FG_FAMILY_IPV4, 20, "010a1000");
	expect_prefix("  192.0.2.7  # a host", FG_FAMILY_IPV4, 32, "c0000207");
	expect_prefix("2001:db8::/32 ; SBL1", FG_FAMILY_IPV6, 32, "20010db8");
	expect_prefix("10.0.0.0/8\r", FG_FAMILY_IPV4, 8, "0a");
	expect_prefix("::/0", FG_FAMILY_IPV6, 0, "");
	assert_int_equal(line_kind("", 0, &c), FG_FEED_EMPTY);
	assert_int_equal(line_kind("   \t\r", 5, &c), FG_FEED_EMPTY);
	assert_int_equal(line_kind("# FireHOL header", 16, &c), FG_FEED_EMPTY);
	assert_int_equal(line_kind("; Spamhaus DROP List", 20, &c), FG_FEED_EMPTY);
}

static void test_host_bits_normalised(void **state)
{
	struct fg_cidr c;

	(void)state;
	assert_int_equal(line_kind("10.1.2.3/8", 10, &c), FG_FEED_HOST_BITS);
	assert_int_equal(c.prefix_len, 8);
	assert_int_equal(c.addr[0], 10);
	assert_int_equal(c.addr[1], 0);
	assert_int_equal(c.addr[3], 0);
	assert_int_equal(line_kind("2001:db8::1/32", 14, &c), FG_FEED_HOST_BITS);
	assert_int_equal(c.addr[15], 0);
}

/* An IPv4-mapped line stays IPv6: the datapath keys an IPv6 packet by its
 * whole source. ::ffff:0:0/96 is an entry of the IPv6 bogon lists; read
 * as the IPv4 prefix it maps, it would be 0.0.0.0/0, every IPv4 source. */
static void test_mapped_lines(void **state)
{
	(void)state;
	expect_prefix("::ffff:0:0/96", FG_FAMILY_IPV6, 96, "00000000000000000000ffff");
	expect_prefix("::ffff:192.0.2.7", FG_FAMILY_IPV6, 128, "00000000000000000000ffffc0000207");
}

static void test_hostile_lines(void **state)
{
	static const char nul[] = "1.2.3.4\0junk";
	const char *bad[] = {"1.2.3.4/33", "::/129",	 "1.2.3.4 junk", "1.2.3.4/24x",
			     "1.2.3",	   "300.1.1.1",	 "::g",		 "1.2.3.4/",
			     "/24",	   "1.2.3.4/-1", "abc",		 "1.2.3.4,5.6.7.8"};
	struct fg_cidr c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (line_kind(bad[i], strlen(bad[i]), &c) != FG_FEED_BAD)
			fail_msg("'%s': expected a bad line", bad[i]);
	assert_int_equal(line_kind(nul, sizeof(nul) - 1, &c), FG_FEED_BAD);
}

/* Reads `text` (len bytes) as feed "f.netset". */
static int read_text(const char *text, size_t len, bool skip, struct fg_feed_list *list,
		     struct fg_err *err)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int ret;

	assert_non_null(f);
	memset(list, 0, sizeof(*list));
	memset(err, 0, sizeof(*err));
	ret = fg_feed_read_stream("f.netset", f, skip, list, err);
	fclose(f);
	return ret;
}

static void test_file_line_errors(void **state)
{
	static const char text[] =
		"# FireHOL\r\n1.2.3.0/24\r\n\r\n10.1.2.3/8\n1.2.3.4/33\n5.6.7.8\n";
	struct fg_feed_list list;
	struct fg_err err;

	(void)state;
	assert_int_equal(read_text(text, sizeof(text) - 1, false, &list, &err), -1);
	if (!strstr(err.msg, "f.netset:5: bad line '1.2.3.4/33'"))
		fail_msg("unexpected message: %s", err.msg);
	free(list.cidrs);

	assert_int_equal(read_text(text, sizeof(text) - 1, true, &list, &err), 0);
	assert_int_equal(list.n, 3);
	assert_int_equal(list.skipped, 1);
	assert_int_equal(list.normalised, 1);
	free(list.cidrs);
}

static void test_long_and_nul_lines(void **state)
{
	size_t len = 100000, at;
	char *text = malloc(len + 64);
	struct fg_feed_list list;
	struct fg_err err;

	(void)state;
	assert_non_null(text);
	memset(text, '1', len);
	at = len;
	at += (size_t)sprintf(text + at, "\n9.9.9.9\n");
	assert_int_equal(read_text(text, at, false, &list, &err), -1);
	if (!strstr(err.msg, "f.netset:1: ") || !strstr(err.msg, "too long"))
		fail_msg("unexpected message: %s", err.msg);
	free(list.cidrs);
	/* the rest of the long line is not taken for the next one */
	assert_int_equal(read_text(text, at, true, &list, &err), 0);
	assert_int_equal(list.n, 1);
	assert_int_equal(list.skipped, 1);
	free(list.cidrs);

	memcpy(text, "1.1.1.1\n2.2.2.2\0x\n3.3.3.3", 25);
	assert_int_equal(read_text(text, 25, false, &list, &err), -1);
	if (!strstr(err.msg, "f.netset:2: ") || !strstr(err.msg, "NUL"))
		fail_msg("unexpected message: %s", err.msg);
	free(list.cidrs);
	free(text);
}

/* A feed that never ends (a device under --insecure-config) fails once
 * it has given FG_FEED_MAX_BYTES, naming the feed and the line. */
static void test_endless_feed(void **state)
{
	FILE *f = fopen("/dev/zero", "r");
	struct fg_feed_list list = {0};
	struct fg_err err = {0};

	(void)state;
	assert_non_null(f);
	assert_int_equal(fg_feed_read_stream("zero", f, true, &list, &err), -1);
	fclose(f);
	assert_int_equal(err.kind, FG_ERR_CONFIG);
	if (!strstr(err.msg, "zero:1: larger than 1024 MiB"))
		fail_msg("unexpected message: %s", err.msg);
	free(list.cidrs);
}

/* A feed file that cannot be opened or read names the config's FILE:LINE:
 * of its `file =`, as every config error does, and is a config error. */
static void test_unreadable_feeds(void **state)
{
	static struct fg_config cfg;
	char dir[] = "/tmp/fg-feed-test.XXXXXX";
	struct fg_feeds feeds;
	struct fg_err err = {0};
	int ret;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.deny_files.path[0], FG_FEED_PATH_LEN, "/nonexistent/drop.netset");
	cfg.deny_files.line[0] = 7;
	cfg.deny_files.n = 1;
	assert_int_equal(fg_feeds_read("t.conf", &cfg, &feeds, &err), -1);
	assert_int_equal(err.kind, FG_ERR_CONFIG);
	assert_true(err.located);
	assert_string_equal(
		err.msg, "t.conf:7: feed file /nonexistent/drop.netset: No such file or directory");

	/* A folder opens (under --insecure-config, which skips the trust
	 * checks) but cannot be read. */
	assert_non_null(mkdtemp(dir));
	snprintf(cfg.deny_files.path[0], FG_FEED_PATH_LEN, "%s", dir);
	fg_insecure_config = true;
	memset(&err, 0, sizeof(err));
	ret = fg_feeds_read("t.conf", &cfg, &feeds, &err);
	fg_insecure_config = false;
	rmdir(dir);
	assert_int_equal(ret, -1);
	assert_int_equal(err.kind, FG_ERR_CONFIG);
	if (strncmp(err.msg, "t.conf:7: feed file /tmp/fg-feed-test.", 38) ||
	    !strstr(err.msg, "Is a directory"))
		fail_msg("unexpected message: %s", err.msg);
}

static void test_keys(void **state)
{
	static struct fg_config cfg;
	const char *base = "[policy p]\nmatch = any\nrate = 1/s\n";
	char text[1024], *msgs = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	snprintf(text, sizeof(text),
		 "%s[deny]\nfile = /etc/a.netset\nfile = /etc/b.txt\nfile_errors = skip\n"
		 "[allow]\nsrc = 192.0.2.1\nfile = /etc/c\n",
		 base);
	assert_int_equal(fg_config_parse_string("t.conf", text, &cfg, stderr), 0);
	assert_int_equal(cfg.deny_files.n, 2);
	assert_string_equal(cfg.deny_files.path[1], "/etc/b.txt");
	assert_int_equal(cfg.deny_files.line[0], 5);
	assert_true(cfg.deny_files.skip_errors);
	assert_int_equal(cfg.allow_files.n, 1);
	assert_false(cfg.allow_files.skip_errors);

	/* file_errors is the list's, in whichever of its sections: a later
	 * [deny] without it keeps it. */
	snprintf(text, sizeof(text),
		 "%s[deny]\nfile = /etc/a.netset\nfile_errors = skip\n[deny]\nsrc = 192.0.2.0/24\n",
		 base);
	assert_int_equal(fg_config_parse_string("t.conf", text, &cfg, stderr), 0);
	assert_true(cfg.deny_files.skip_errors);

	snprintf(text, sizeof(text), "%s[deny]\nfile = drop.netset\n", base);
	f = open_memstream(&msgs, &len);
	assert_int_equal(fg_config_parse_string("t.conf", text, &cfg, f), -EINVAL);
	fclose(f);
	if (!strstr(msgs, "t.conf:5: ") || !strstr(msgs, "absolute"))
		fail_msg("unexpected message: %s", msgs);
	free(msgs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_as_published),
		cmocka_unit_test(test_host_bits_normalised),
		cmocka_unit_test(test_mapped_lines),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_endless_feed),
		cmocka_unit_test(test_unreadable_feeds),
		cmocka_unit_test(test_file_line_errors),
		cmocka_unit_test(test_long_and_nul_lines),
		cmocka_unit_test(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
