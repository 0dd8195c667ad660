// SPDX-License-Identifier: GPL-2.0-only
/*
 * build/tests/test_prog: BPF_PROG_TEST_RUN tests of the real XDP and tc
 * programs, and of the read models over them: one cmocka group per feature
 * file (prog_test.h says how a file declares its tests). The list of tests
 * is generated (build/tests/prog_tests.h); `test_prog --list` prints it.
 *
 *   test_prog [--list] [PATTERN...]
 *
 * runs the tests whose feature or name matches one of the shell patterns
 * (all of them without one): `test_prog bans 'test_two_cpus_*'`.
 */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "prog_test.h"

struct prog_entry {
	const char *feature;
	struct CMUnitTest test;
};

struct prog_group {
	const char *feature;
	CMFixtureFunction setup, teardown;
};

/* The declarations of every test and fixture the list names. */
#define FG_PROG_ENTRY(feature, name) void name(void **state);
#define FG_PROG_ENTRY_WITH(feature, name, fixture)                                                 \
	void name(void **state);                                                                   \
	FG_PROG_GROUP_FIXTURE(fixture);
#define FG_PROG_GROUP(feature, fixture) FG_PROG_GROUP_FIXTURE(fixture);
#include "prog_tests.h"
#undef FG_PROG_ENTRY
#undef FG_PROG_ENTRY_WITH
#undef FG_PROG_GROUP

static const struct prog_entry entries[] = {
#define FG_PROG_ENTRY(feature, name) {#feature, cmocka_unit_test(name)},
#define FG_PROG_ENTRY_WITH(feature, name, fixture)                                                 \
	{#feature, cmocka_unit_test_setup_teardown(name, fg_fixture_##fixture##_setup,             \
						   fg_fixture_##fixture##_teardown)},
#define FG_PROG_GROUP(feature, fixture)
#include "prog_tests.h"
#undef FG_PROG_ENTRY
#undef FG_PROG_ENTRY_WITH
#undef FG_PROG_GROUP
};

static const struct prog_group groups[] = {
#define FG_PROG_ENTRY(feature, name)
#define FG_PROG_ENTRY_WITH(feature, name, fixture)
#define FG_PROG_GROUP(feature, fixture)                                                            \
	{#feature, fg_fixture_##fixture##_setup, fg_fixture_##fixture##_teardown},
#include "prog_tests.h"
	{NULL, NULL, NULL},
#undef FG_PROG_ENTRY
#undef FG_PROG_ENTRY_WITH
#undef FG_PROG_GROUP
};

static bool selected(const struct prog_entry *e, char **patterns, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!fnmatch(patterns[i], e->feature, 0) || !fnmatch(patterns[i], e->test.name, 0))
			return true;
	return n == 0;
}

static const struct prog_group *group_of(const char *feature)
{
	const struct prog_group *g;

	for (g = groups; g->feature; g++)
		if (!strcmp(g->feature, feature))
			return g;
	return NULL;
}

/* Runs the selected tests of `feature` as one group; returns how many
 * failed, and adds how many ran to *ran. */
static int run_feature(const char *feature, char **patterns, int n_patterns, size_t *ran)
{
	static struct CMUnitTest tests[ARRAY_SIZE(entries)];
	const struct prog_group *g = group_of(feature);
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(entries); i++)
		if (!strcmp(entries[i].feature, feature) &&
		    selected(&entries[i], patterns, n_patterns))
			tests[n++] = entries[i].test;
	if (!n)
		return 0;
	*ran += n;
	printf("[ FEATURE  ] %s\n", feature);
	fflush(stdout);
	return _cmocka_run_group_tests(feature, tests, n, g ? g->setup : NULL,
				       g ? g->teardown : NULL);
}

static bool first_of_its_feature(size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(entries[j].feature, entries[i].feature))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	int n_patterns = argc - 1, failed = 0;
	char **patterns = argv + 1;
	size_t i, ran = 0;

	if (argc > 1 && (!strcmp(argv[1], "--list") || !strcmp(argv[1], "-l"))) {
		for (i = 0; i < ARRAY_SIZE(entries); i++)
			if (selected(&entries[i], patterns + 1, n_patterns - 1))
				printf("%s %s\n", entries[i].feature, entries[i].test.name);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s [--list] [PATTERN...]: the tests whose feature or name "
		       "matches a pattern (all without one)\n",
		       argv[0]);
		return 0;
	}
	if (!fg_is_root()) {
		fprintf(stderr, "test_prog: needs root for BPF_PROG_TEST_RUN; skipped\n");
		return 77;
	}
	for (i = 0; i < ARRAY_SIZE(entries); i++)
		if (first_of_its_feature(i))
			failed += run_feature(entries[i].feature, patterns, n_patterns, &ran);
	if (!ran) {
		fprintf(stderr, "test_prog: no test matches; `test_prog --list` lists them\n");
		return 1;
	}
	printf("test_prog: %zu tests run, %d failed\n", ran, failed);
	return failed ? 1 : 0;
}
