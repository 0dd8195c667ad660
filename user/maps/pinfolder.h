/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pin folder FG_PIN_BASE: the bpffs under it, who may own it, and the
 * lock that serialises the commands that change it.
 */
#ifndef FG_PINFOLDER_H
#define FG_PINFOLDER_H

#include <stdbool.h>

#include "base/err.h"

/* Seconds a command waits for another one's lock (FG_LOCK_WAIT overrides). */
#define FG_LOCK_WAIT_DEFAULT 10

/*
 * Makes sure FG_PIN_BASE exists on a bpffs whose pins outlive the command,
 * and that what already exists there is root's alone. Mounts bpffs only in
 * the init mount namespace: anywhere else (`ip netns exec` remounts /sys)
 * the pins would vanish with the command and orphan its program, so that is
 * refused. Returns 0, or -1 with `err` (FG_ERR_ENV).
 */
int fg_pinfolder_prepare(struct fg_err *err);

/* Refuses (-1, FG_ERR_ENV) a pin folder that exists but is not a directory
 * owned by root and writable by root alone; 0 otherwise. */
int fg_pinfolder_check_owned(const char *path, struct fg_err *err);

/* Takes the lock on FG_PIN_BASE, waiting at most FG_LOCK_WAIT seconds and
 * naming the holder when it gives up. Returns the fd that holds the lock
 * (closing it releases it), or -1 with `err`. */
int fg_pinfolder_lock(struct fg_err *err);

/* Adds to `err`, when it is so, that /sys/fs/bpf is no bpffs in this mount
 * namespace (why a command finds nothing loaded). */
void fg_pinfolder_explain_missing(struct fg_err *err);

#endif /* FG_PINFOLDER_H */
