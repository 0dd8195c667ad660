// SPDX-License-Identifier: GPL-2.0-only
/* The command table of user/cli/commands.c, row by row: what the parser and
 * the usage texts derive from a row holds together (a letter or a long name
 * taken twice, an enum without words, a number without its range or its
 * words for the error, an argument without what to call it when missing,
 * more options than getopt's arrays hold). tests/integration/test_usage.sh
 * tries the derived command line itself. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "cli/options.h"

static size_t option_count(const struct fg_cli_command *cmd)
{
	size_t n = 0;

	while (fg_cli_option_at(cmd->options, n))
		n++;
	return n;
}

static void test_commands(void **state)
{
	const struct fg_cli_command *cmd;
	size_t i, j;

	(void)state;
	assert_true(fg_cli_command_count > 0);
	for (i = 0; i < fg_cli_command_count; i++) {
		cmd = &fg_cli_commands[i];
		print_message("%s\n", cmd->name);
		assert_non_null(cmd->run);
		assert_non_null(cmd->help);
		assert_non_null(cmd->options);
		assert_true(cmd->iface == FG_CLI_NO_IFACE || cmd->iface == FG_CLI_IFACE_OPTIONAL ||
			    cmd->iface == FG_CLI_IFACE_REQUIRED);
		assert_int_equal(cmd->arg == NULL, cmd->arg_what == NULL);
		assert_true(option_count(cmd) <= FG_CLI_MAX_OPTIONS);
		assert_ptr_equal(fg_cli_find_command(cmd->name), cmd);
		for (j = 0; j < i; j++)
			assert_string_not_equal(fg_cli_commands[j].name, cmd->name);
	}
	assert_null(fg_cli_find_command("flood"));
}

static void check_option(const struct fg_cli_option *o)
{
	const struct fg_cli_word *w;

	assert_non_null(o->help);
	assert_true(o->field < sizeof(struct fg_cli_args));
	/* the parser can tell only a string that was not given */
	assert_true(!o->required || o->kind == FG_OPT_STRING);
	switch (o->kind) {
	case FG_OPT_ENUM:
		assert_non_null(o->words);
		assert_non_null(o->words[0].word);
		for (w = o->words; w->word; w++)
			assert_true(w->value != o->def); /* the default is "not given" */
		break;
	case FG_OPT_UINT:
		assert_non_null(o->metavar);
		if (o->max)
			assert_true(o->min <= (unsigned long)o->def &&
				    (unsigned long)o->def <= o->max);
		else
			assert_non_null(o->what);
		break;
	case FG_OPT_STRING:
		assert_non_null(o->metavar);
		break;
	case FG_OPT_FLAG:
	case FG_OPT_VERBOSE:
	case FG_OPT_HELP:
		assert_null(o->metavar);
		break;
	}
}

static void test_options(void **state)
{
	const struct fg_cli_option *o, *p;
	size_t c, i, j;

	(void)state;
	for (c = 0; c < fg_cli_command_count; c++) {
		const struct fg_cli_command *cmd = &fg_cli_commands[c];

		for (i = 0; (o = fg_cli_option_at(cmd->options, i)); i++) {
			print_message("%s --%s\n", cmd->name, o->name);
			check_option(o);
			assert_ptr_equal(fg_cli_option_of(cmd->options,
							  o->letter ? o->letter : 256 + (int)i),
					 o);
			for (j = 0; j < i; j++) {
				p = fg_cli_option_at(cmd->options, j);
				assert_string_not_equal(p->name, o->name);
				assert_true(!o->letter || p->letter != o->letter);
			}
		}
	}
}

/* getopt's arrays: every option once, a ':' after each letter that takes a
 * value, and ':' first (a missing value is ':', not '?'). */
static void test_getopt_arrays(void **state)
{
	const struct fg_cli_command *load = fg_cli_find_command("load");
	struct option longs[FG_CLI_MAX_OPTIONS + 1];
	char shorts[2 * FG_CLI_MAX_OPTIONS + 2];
	size_t n = option_count(load);

	(void)state;
	fg_cli_getopt_arrays(load->options, longs, shorts);
	assert_string_equal(shorts, ":c:hv");
	assert_string_equal(longs[0].name, "config");
	assert_int_equal(longs[0].has_arg, required_argument);
	assert_string_equal(longs[n - 1].name, "verbose");
	assert_int_equal(longs[n - 1].has_arg, no_argument);
	assert_null(longs[n].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_getopt_arrays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
