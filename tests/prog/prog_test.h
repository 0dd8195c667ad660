/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How a feature file of build/tests/test_prog declares its tests. Every
 * file of tests/prog/ but main.c and fixtures.c is one feature, run as one cmocka
 * group named after the file. tests/prog/list-tests.sh reads these macros,
 * each at the start of its own line, into build/tests/prog_tests.h, from
 * which main.c builds the groups: a test is registered by being written.
 */
#ifndef FG_PROG_TEST_H
#define FG_PROG_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* A test that sets up what it needs itself. */
#define FG_PROG_TEST(name) void name(void **state __attribute__((unused)))

/* A test run between fg_fixture_<fixture>_setup and _teardown, which leave
 * and take back their state in *state (fixtures.h lists the shared ones). */
#define FG_PROG_TEST_WITH(name, fixture) void name(void **state)

/* The feature's group fixture: fg_fixture_<fixture>_setup runs once before
 * the feature's first selected test and _teardown after its last; each test
 * finds the setup's state in *state. Written as a declaration:
 * FG_PROG_GROUP_FIXTURE(tables); */
#define FG_PROG_GROUP_FIXTURE(fixture)                                                             \
	int fg_fixture_##fixture##_setup(void **state);                                            \
	int fg_fixture_##fixture##_teardown(void **state)

#endif
