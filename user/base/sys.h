/* SPDX-License-Identifier: GPL-2.0-only */
/* Facts about this process that several layers ask for. */
#ifndef FG_SYS_H
#define FG_SYS_H

#include <linux/types.h>

/* The inode of this process's network namespace (0 if unknown). */
__u64 fg_netns_inode(void);

/* Test-only: with FG_TEST_DIE_AT=STEP in the environment, the process
 * _exit(137)s at the step of that name, as `kill -9` would. Inert without
 * the variable. */
void fg_test_die_at(const char *step);

/* Test-only: with FG_TEST_STOP_AT=STEP, the process stops itself (SIGSTOP)
 * at that step, so that a test can change the world at a known moment and
 * then SIGCONT it. Inert without the variable. */
void fg_test_stop_at(const char *step);

#endif /* FG_SYS_H */
