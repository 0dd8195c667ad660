// SPDX-License-Identifier: GPL-2.0-only
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/sys.h"

__u64 fg_netns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u64)st.st_ino;
}

void fg_test_die_at(const char *step)
{
	const char *want = getenv("FG_TEST_DIE_AT");

	if (want && !strcmp(want, step))
		_exit(137);
}

void fg_test_stop_at(const char *step)
{
	const char *want = getenv("FG_TEST_STOP_AT");

	if (want && !strcmp(want, step))
		raise(SIGSTOP);
}
