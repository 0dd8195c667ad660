// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "base/clock.h"
#include "base/log.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"

#define BPFFS "/sys/fs/bpf"

static bool bpffs_mounted(void)
{
	struct statfs fs;

	return !statfs(BPFFS, &fs) && fs.f_type == BPF_FS_MAGIC;
}

/* The inode of the initial mount namespace, fixed since Linux 6.18 (uapi
 * linux/nsfs.h); dynamic namespace inodes start at 0xF0000000, so no other
 * namespace has it on older kernels either. */
#define MNT_NS_INIT_INO 0xEFFFFFF8U

/* Is this process in the initial mount namespace (where a bpffs mounted
 * now stays mounted after the command)? Without access to PID 1's
 * namespace (no CAP_SYS_PTRACE) and on kernels before 6.18, it cannot be
 * told: then no. */
static bool in_init_mount_ns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/mnt", &self))
		return false;
	if (!stat("/proc/1/ns/mnt", &init))
		return self.st_dev == init.st_dev && self.st_ino == init.st_ino;
	return self.st_ino == MNT_NS_INIT_INO;
}

void fg_pinfolder_explain_missing(struct fg_err *err)
{
	if (!bpffs_mounted())
		fg_err_hint(
			err,
			"Note: %s is no bpffs in this mount namespace (as under `ip netns exec`, "
			"which remounts /sys): floodgate's pins are not visible here; run the "
			"command with `nsenter --net=/run/netns/NS floodgate ...` instead",
			BPFFS);
}

int fg_pinfolder_check_owned(const char *path, struct fg_err *err)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0
				       : fg_fail(err, FG_ERR_ENV, "cannot inspect %s: %s", path,
						 strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fg_fail(err, FG_ERR_ENV,
			       "%s is not a directory: floodgate does not trust it; remove it and "
			       "retry",
			       path);
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return fg_fail(err, FG_ERR_ENV,
			       "%s is %s: anyone may create entries in a bpffs mounted with mode "
			       "1777, so floodgate does not trust it; remove it (rm -r %s) and "
			       "retry",
			       path,
			       st.st_uid ? "not owned by root" : "writable by group or others",
			       path);
	return 0;
}

int fg_pinfolder_prepare(struct fg_err *err)
{
	if (!bpffs_mounted()) {
		if (!in_init_mount_ns())
			return fg_fail(
				err, FG_ERR_ENV,
				"%s is no bpffs, and this is not the initial mount "
				"namespace (as under `ip netns exec`, which remounts /sys): a "
				"bpffs "
				"mounted here would vanish when floodgate exits, taking the pins "
				"and leaving its program attached with no way to unload it. Run "
				"floodgate in the network namespace without a new mount namespace "
				"(nsenter --net=/run/netns/NS floodgate ...), or mount bpffs at %s "
				"yourself in a mount namespace that outlives floodgate",
				BPFFS, BPFFS);
		pr_info("mounting bpffs at %s\n", BPFFS);
		if ((mkdir(BPFFS, 0755) && errno != EEXIST) ||
		    mount("bpf", BPFFS, "bpf", 0, "mode=0700"))
			return fg_fail(err, FG_ERR_ENV, "cannot mount bpffs at %s: %s", BPFFS,
				       strerror(errno));
	}
	if (mkdir(FG_PIN_BASE, 0700) && errno != EEXIST)
		return fg_fail(err, FG_ERR_ENV, "cannot create %s: %s", FG_PIN_BASE,
			       strerror(errno));
	return fg_pinfolder_check_owned(FG_PIN_BASE, err);
}

/* The process holding a flock on the inode of `fd`, from /proc/locks, as
 * "PID (COMM)"; "another process" when it cannot be told. */
static void describe_holder(int fd, char *buf, size_t size)
{
	unsigned int major, minor;
	unsigned long ino;
	char line[256], type[16], comm[64] = "", path[64];
	struct stat st;
	FILE *locks;
	int pid = 0;

	snprintf(buf, size, "another process");
	if (fstat(fd, &st) || !(locks = fopen("/proc/locks", "r")))
		return;
	while (!pid && fgets(line, sizeof(line), locks))
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &pid, &major, &minor,
			   &ino) != 5 ||
		    strcmp(type, "FLOCK") || major != major(st.st_dev) ||
		    minor != minor(st.st_dev) || ino != st.st_ino)
			pid = 0;
	fclose(locks);
	if (!pid)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	locks = fopen(path, "r");
	if (locks) {
		if (fgets(comm, sizeof(comm), locks))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(locks);
	}
	snprintf(buf, size, "process %d (%s)", pid, comm[0] ? comm : "?");
}

static double lock_wait_seconds(void)
{
	const char *env = getenv("FG_LOCK_WAIT");
	char *end;
	double s;

	if (!env)
		return FG_LOCK_WAIT_DEFAULT;
	s = strtod(env, &end);
	return *env && !*end && s >= 0 && s <= 3600 ? s : FG_LOCK_WAIT_DEFAULT;
}

static double now_seconds(void)
{
	return (double)fg_monotonic_ns() / FG_NS_PER_S;
}

int fg_pinfolder_lock(struct fg_err *err)
{
	const struct timespec pause = {.tv_nsec = 50 * 1000 * 1000};
	double deadline = now_seconds() + lock_wait_seconds();
	int fd = open(FG_PIN_BASE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char holder[96];

	if (fd < 0)
		return fg_fail(err, FG_ERR_ENV, "cannot open %s: %s", FG_PIN_BASE, strerror(errno));
	for (;;) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			fg_fail(err, FG_ERR_SYSTEM, "cannot lock %s: %s", FG_PIN_BASE,
				strerror(errno));
			break;
		}
		if (now_seconds() >= deadline) {
			describe_holder(fd, holder, sizeof(holder));
			/* Exit 1, as before: a stuck command is a failure to
			 * get on, not a state of floodgate's to act on. */
			fg_fail(err, FG_ERR_SYSTEM,
				"%s is locked by %s, which has held it for more than "
				"%.0f s: giving up (is another floodgate command stuck?)",
				FG_PIN_BASE, holder, lock_wait_seconds());
			break;
		}
		nanosleep(&pause, NULL);
	}
	close(fd);
	return -1;
}
