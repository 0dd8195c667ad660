/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Option rows, in the style of xdp-tools' lib/util/params.h: a row names an
 * option, its kind, the field of struct fg_cli_args it fills, its metavar
 * and its help. getopt's arrays, each command's --help, `help --list` and
 * the checks of option values are all derived from the rows.
 */
#ifndef FG_CLI_OPTIONS_H
#define FG_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

enum fg_cli_option_kind {
	FG_OPT_FLAG,	/* sets a bool */
	FG_OPT_STRING,	/* keeps the word: const char * */
	FG_OPT_ENUM,	/* one of .words: its value, in an int */
	FG_OPT_UINT,	/* a number in .min...max: an unsigned long */
	FG_OPT_VERBOSE, /* raises the log level (no field) */
	FG_OPT_HELP,	/* prints the command's usage (no field) */
};

/* A word an enum option accepts and the value it stands for. */
struct fg_cli_word {
	const char *word;
	int value;
};

struct fg_cli_option {
	const char *name; /* --name */
	char letter;	  /* -l, or 0: none */
	enum fg_cli_option_kind kind;
	size_t field; /* offsetof(struct fg_cli_args, ...) */
	const char *metavar;
	const char *help;
	bool required;			 /* the command refuses to run without it */
	long def;			 /* ENUM, UINT: the value when not given */
	const struct fg_cli_word *words; /* ENUM: ends with {NULL} */
	unsigned long min, max;		 /* UINT: max 0 is no limit */
	const char *what;		 /* UINT without a limit: "a number of ..." */
};

/* How many options a command may take, the common ones included. */
#define FG_CLI_MAX_OPTIONS 16

/* The options every command takes, after its own: -h, -v. */
extern const struct fg_cli_option fg_cli_common_options[];

/* The index'th option of `options` followed by the common ones, or NULL. */
const struct fg_cli_option *fg_cli_option_at(const struct fg_cli_option *options, size_t index);
/* Fills getopt's arrays from `options` and the common ones: `longs` has
 * FG_CLI_MAX_OPTIONS + 1 entries, `shorts` 2 * FG_CLI_MAX_OPTIONS + 2
 * chars. An option without a letter is returned as 256 + its index. */
void fg_cli_getopt_arrays(const struct fg_cli_option *options, struct option *longs, char *shorts);
/* The option getopt_long returned `val` for. */
const struct fg_cli_option *fg_cli_option_of(const struct fg_cli_option *options, int val);

/* Puts each option's default into `args`. */
void fg_cli_option_defaults(const struct fg_cli_option *options, void *args);
/* Stores `value` in the option's field of `args`. Returns 0, or -1 after
 * printing "Error: ..." (without the "Run ..." line) for a bad value. */
int fg_cli_option_apply(const struct fg_cli_option *o, const char *value, void *args);
/* True when the option's field of `args` holds something (a required one). */
bool fg_cli_option_present(const struct fg_cli_option *o, const void *args);

/* How the option is written: "-c" or "--hook". */
const char *fg_cli_option_label(const struct fg_cli_option *o, char *buf, size_t size);
/* Its value as a synopsis shows it: "FILE", "xdp|tc", or "" for a flag. */
const char *fg_cli_option_value(const struct fg_cli_option *o, char *buf, size_t size);
/* Its term in a command's --help, "-c, --config FILE", and its help there,
 * with the range and default of a number. */
const char *fg_cli_option_term(const struct fg_cli_option *o, char *buf, size_t size);
const char *fg_cli_option_help(const struct fg_cli_option *o, char *buf, size_t size);

#endif /* FG_CLI_OPTIONS_H */
