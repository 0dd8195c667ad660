// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walks the key table (user/config/keys.c): every key parses with its
 * example in each section it may appear in, fills what its row says,
 * appears in its section's "expected one of" message, and gets its default
 * when absent; the keys fixed at load are recorded in, and checked against,
 * the runtime record (user/maps/runtime.c).
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

#include "config/keys.h"
#include "maps/runtime.h"

static const unsigned int sections[] = {FG_IN_GLOBAL, FG_IN_POLICY,   FG_IN_FLEET,
					FG_IN_ACCESS, FG_IN_CROWDSEC, FG_IN_SYNPROXY};

/* What each section needs to be valid, before the line under test. */
static const char *const required_policy[] = {"match = any", "rate = 10/s", NULL};
static const char *const required_fleet[] = {"redis = 127.0.0.1:6379", NULL};
static const char *const required_crowdsec[] = {"url = http://127.0.0.1:8080/",
						"api_key_file = /etc/floodgate/crowdsec.key", NULL};
static const char *const required_synproxy[] = {"ports = 22", NULL};

static struct fg_config absent, with_value;

static bool named(const char *line, const char *name)
{
	size_t len = strlen(name);

	return strncmp(line, name, len) == 0 && line[len] == ' ';
}

/* Appends the required lines of a section, the one named like `line`
 * replaced by `line`; `line` itself goes last otherwise. */
static void section_lines(char *buf, size_t size, const char *const *required, const char *name,
			  const char *needs, const char *line)
{
	bool placed = false;
	int i;

	for (i = 0; required && required[i]; i++) {
		bool here = name && named(required[i], name);

		snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", here ? line : required[i]);
		placed |= here;
	}
	if (needs)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", needs);
	if (!placed)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", line);
}

/*
 * A valid config with `line` in `section`: global keys, one policy, and a
 * [fleet] or [allow] section when the line goes there. A line replaces the
 * required line of the same key; lines keep their numbers across calls.
 */
static void build(char *buf, size_t size, const struct fg_key *key, unsigned int section,
		  const char *line)
{
	const char *needs = key ? key->example_needs : NULL, *name = key ? key->name : NULL;

	buf[0] = '\0';
	if (section == FG_IN_GLOBAL)
		section_lines(buf, size, NULL, name, needs, line);
	snprintf(buf + strlen(buf), size - strlen(buf), "[policy p]\n");
	if (section == FG_IN_POLICY)
		section_lines(buf, size, required_policy, name, needs, line);
	else
		section_lines(buf, size, required_policy, NULL, NULL, "# policy");
	if (section == FG_IN_FLEET) {
		snprintf(buf + strlen(buf), size - strlen(buf), "[fleet]\n");
		section_lines(buf, size, required_fleet, name, needs, line);
	}
	if (section == FG_IN_ACCESS) {
		snprintf(buf + strlen(buf), size - strlen(buf), "[allow]\n");
		section_lines(buf, size, NULL, name, needs, line);
	}
	if (section == FG_IN_CROWDSEC) {
		snprintf(buf + strlen(buf), size - strlen(buf), "[crowdsec]\n");
		section_lines(buf, size, required_crowdsec, name, needs, line);
	}
	if (section == FG_IN_SYNPROXY) {
		snprintf(buf + strlen(buf), size - strlen(buf), "[synproxy]\n");
		section_lines(buf, size, required_synproxy, name, needs, line);
	}
}

static bool required(const struct fg_key *key, unsigned int section)
{
	const char *const *lines = section == FG_IN_POLICY     ? required_policy
				   : section == FG_IN_FLEET    ? required_fleet
				   : section == FG_IN_CROWDSEC ? required_crowdsec
				   : section == FG_IN_SYNPROXY ? required_synproxy
							       : NULL;
	int i;

	for (i = 0; lines && lines[i]; i++)
		if (named(lines[i], key->name))
			return true;
	return false;
}

/* Parses `key = value` (or, value NULL, a comment in its place) into cfg. */
static void parse_key(const struct fg_key *key, unsigned int section, const char *value,
		      struct fg_config *cfg)
{
	char line[256], text[2048];
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	int ret;

	assert_non_null(f);
	if (value)
		snprintf(line, sizeof(line), "%s = %s", key->name, value);
	else
		snprintf(line, sizeof(line), "# no %s", key->name);
	build(text, sizeof(text), key, section, line);
	ret = fg_config_parse_string("t.conf", text, cfg, f);
	fclose(f);
	if (ret || err[0])
		fail_msg("%s (section %u): expected success, got %d and \"%s\" for:\n%s", key->name,
			 section, ret, err, text);
	free(err);
}

/* The struct a section fills, in a parsed config. */
static const void *section_struct(const struct fg_config *cfg, unsigned int section)
{
	if (section == FG_IN_POLICY)
		return &cfg->policies[0];
	if (section == FG_IN_FLEET)
		return &cfg->fleet;
	if (section == FG_IN_CROWDSEC)
		return &cfg->crowdsec;
	if (section == FG_IN_SYNPROXY)
		return &cfg->synproxy;
	return cfg;
}

static void test_rows_are_complete(void **state)
{
	size_t i, j;

	(void)state;
	assert_true(fg_key_count > 0);
	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];

		if (!key->name || !key->sections || !key->type || !key->type->parse ||
		    !key->type->syntax || !key->example)
			fail_msg("row %zu (%s) lacks a name, sections, type (with its syntax, "
				 "for floodgate.conf(5)) or example",
				 i, key->name ? key->name : "?");
		if (key->default_value && strcmp(key->default_value, key->example) == 0)
			fail_msg("%s: the example is the default, which proves nothing", key->name);
		if (key->fixed && key->fixed->kind == FG_FIXED_RECORDED &&
		    (!key->type->format || !key->size))
			fail_msg("%s: recorded at load, but without a field or a format",
				 key->name);
		for (j = 0; j < i; j++)
			if ((fg_keys[j].sections & key->sections) &&
			    strcmp(fg_keys[j].name, key->name) == 0)
				fail_msg("%s: two rows in one section", key->name);
	}
}

static void test_every_key_parses_and_fills_its_field(void **state)
{
	size_t i, s;

	(void)state;
	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];

		for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
			unsigned int section = sections[s];
			const char *field_absent, *field_set;

			if (!(key->sections & section))
				continue;
			parse_key(key, section, key->example, &with_value);
			if (required(key, section))
				continue;
			parse_key(key, section, NULL, &absent);
			if (memcmp(&absent, &with_value, sizeof(absent)) == 0)
				fail_msg("%s = %s changes nothing", key->name, key->example);
			field_absent = (const char *)section_struct(&absent, section) + key->offset;
			field_set =
				(const char *)section_struct(&with_value, section) + key->offset;
			if (key->size && memcmp(field_absent, field_set, key->size) == 0)
				fail_msg("%s = %s leaves its row's field unchanged", key->name,
					 key->example);
		}
	}
}

static void test_every_default_is_applied(void **state)
{
	size_t i, s;

	(void)state;
	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];

		for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
			if (!(key->sections & sections[s]) || !key->default_value)
				continue;
			parse_key(key, sections[s], NULL, &absent);
			parse_key(key, sections[s], key->default_value, &with_value);
			if (memcmp(&absent, &with_value, sizeof(absent)) != 0)
				fail_msg("%s: absent is not the same as %s = %s", key->name,
					 key->name, key->default_value);
		}
	}
}

/* Whether `name` is an item of the list in `msg` (between ": " or ", "
 * and ", ", ";", ")" or " ="). */
static bool listed(const char *msg, const char *name)
{
	size_t len = strlen(name);
	const char *at;

	for (at = strstr(msg, name); at; at = strstr(at + 1, name)) {
		bool starts = at - msg >= 2 && (at[-2] == ':' || at[-2] == ',') && at[-1] == ' ';
		bool starts_expected = at - msg >= 9 && strncmp(at - 9, "expected ", 9) == 0;
		const char *end = at + len;

		if ((starts || starts_expected) &&
		    (*end == ',' || *end == ';' || *end == ')' || strncmp(end, " =", 2) == 0))
			return true;
	}
	return false;
}

static void test_every_key_is_expected(void **state)
{
	size_t i, s;

	(void)state;
	for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		char text[2048], *err = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&err, &len);

		assert_non_null(f);
		build(text, sizeof(text), NULL, sections[s], "no_such_key = 1");
		assert_int_equal(fg_config_parse_string("t.conf", text, &absent, f), -EINVAL);
		fclose(f);
		if (!strstr(err, "unknown key 'no_such_key'"))
			fail_msg("section %u: unexpected message \"%s\"", sections[s], err);
		for (i = 0; i < fg_key_count; i++)
			if ((fg_keys[i].sections & sections[s]) && !listed(err, fg_keys[i].name))
				fail_msg("%s is not in \"%s\"", fg_keys[i].name, err);
		free(err);
	}
}

/* --- the keys fixed at load ------------------------------------------------- */

/* The record a load of the minimal config writes (ops/loader.c). */
static void load_record(struct fg_runtime *rt)
{
	parse_key(&fg_keys[0], FG_IN_GLOBAL, NULL, &absent);
	memset(rt, 0, sizeof(*rt));
	fg_runtime_record_config(rt, &absent);
	rt->hook = absent.hook;
	rt->xdp_mode = absent.xdp_mode;
}

static void expect_refusal(const struct fg_runtime *rt, const char *ifname, const char *exact,
			   struct fg_err *err)
{
	fg_err_clear(err);
	assert_int_equal(fg_runtime_check_reload(rt, ifname, "t.conf", &with_value, err), -1);
	assert_int_equal(err->kind, FG_ERR_CONFIG);
	if (exact)
		assert_string_equal(err->msg, exact);
}

static void test_fixed_keys_refuse_a_reload(void **state)
{
	struct fg_runtime rt;
	struct fg_err err = {0};
	size_t i;

	(void)state;
	load_record(&rt);
	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];
		char start[128];

		if (!key->fixed || key->fixed->kind == FG_FIXED_TABLE)
			continue;
		parse_key(key, FG_IN_GLOBAL, NULL, &with_value);
		assert_int_equal(fg_runtime_check_reload(&rt, "eth1", "t.conf", &with_value, &err),
				 0);
		parse_key(key, FG_IN_GLOBAL, key->example, &with_value);
		expect_refusal(&rt, "eth1", NULL, &err);
		snprintf(start, sizeof(start), "t.conf: %s = %s cannot change by reload", key->name,
			 key->example);
		if (strncmp(err.msg, start, strlen(start)) != 0)
			fail_msg("expected \"%s...\", got \"%s\"", start, err.msg);
		fg_err_clear(&err);
	}
}

static void test_fixed_key_messages(void **state)
{
	const struct fg_key *hook = fg_key_find(FG_IN_GLOBAL, "hook");
	struct fg_runtime rt;
	struct fg_err err = {0};

	(void)state;
	load_record(&rt);
	parse_key(hook, FG_IN_GLOBAL, "tc", &with_value);
	expect_refusal(&rt, "eth0",
		       "t.conf: hook = tc cannot change by reload (loaded at xdp); unload and load",
		       &err);
	parse_key(fg_key_find(FG_IN_GLOBAL, "xdp_mode"), FG_IN_GLOBAL, "generic", &with_value);
	expect_refusal(&rt, "eth0",
		       "t.conf: xdp_mode = generic cannot change by reload (loaded native); unload "
		       "and load",
		       &err);
	parse_key(fg_key_find(FG_IN_GLOBAL, "clock"), FG_IN_GLOBAL, "coarse", &with_value);
	expect_refusal(&rt, "eth0",
		       "t.conf: clock = coarse cannot change by reload (it is compiled into the "
		       "loaded program); unload and load",
		       &err);
	parse_key(fg_key_find(FG_IN_GLOBAL, "max_sources"), FG_IN_GLOBAL, "1000", &with_value);
	expect_refusal(&rt, "eth0",
		       "t.conf: max_sources = 1000 cannot change by reload: it sizes the tables "
		       "(loaded with 262144); unload and load",
		       &err);
	parse_key(fg_key_find(FG_IN_GLOBAL, "interface"), FG_IN_GLOBAL, "eth0", &with_value);
	expect_refusal(&rt, "eth1",
		       "t.conf: interface = eth0 cannot change by reload (loaded on eth1)", &err);
	assert_int_equal(fg_runtime_check_reload(&rt, "eth0", "t.conf", &with_value, &err), 0);

	/* Loaded with --hook tc: a config saying tc, or still xdp, is accepted;
	 * the mode of the XDP hook no longer matters. */
	rt.hook = FG_HOOK_TC;
	parse_key(hook, FG_IN_GLOBAL, "tc", &with_value);
	assert_int_equal(fg_runtime_check_reload(&rt, "eth0", "t.conf", &with_value, &err), 0);
	parse_key(hook, FG_IN_GLOBAL, "xdp", &with_value);
	assert_int_equal(fg_runtime_check_reload(&rt, "eth0", "t.conf", &with_value, &err), 0);
	parse_key(fg_key_find(FG_IN_GLOBAL, "xdp_mode"), FG_IN_GLOBAL, "generic", &with_value);
	assert_int_equal(fg_runtime_check_reload(&rt, "eth0", "t.conf", &with_value, &err), 0);
}

static void test_record_follows_the_config(void **state)
{
	struct fg_runtime rt;

	(void)state;
	parse_key(fg_key_find(FG_IN_GLOBAL, "clock"), FG_IN_GLOBAL, "coarse", &with_value);
	memset(&rt, 0xff, sizeof(rt));
	fg_runtime_record_config(&rt, &with_value);
	assert_int_equal(rt.coarse_clock, 1);
	assert_int_equal(rt.config_hook, FG_HOOK_XDP);
	assert_int_equal(rt.config_xdp_mode, FG_XDP_NATIVE);
	assert_int_equal(rt.max_sources, FG_DEFAULT_MAX_SOURCES);
	/* What the record does not take from the config is left alone. */
	assert_int_equal(rt.hook, 0xffffffff);
	assert_int_equal(rt.active_slot, 0xffffffff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_are_complete),
		cmocka_unit_test(test_every_key_parses_and_fills_its_field),
		cmocka_unit_test(test_every_default_is_applied),
		cmocka_unit_test(test_every_key_is_expected),
		cmocka_unit_test(test_fixed_keys_refuse_a_reload),
		cmocka_unit_test(test_fixed_key_messages),
		cmocka_unit_test(test_record_follows_the_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
