/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bans made by hand, kept in a state file so that they survive `unload`
 * and a reboot: FLOODGATE_STATE_DIR/IFACE.bans (default /var/lib/floodgate).
 * `ban` and `unban` write it, `load` (and so `run`) restores the unexpired
 * ones. The map counts time on CLOCK_MONOTONIC, which restarts at boot: the
 * file holds the expiry as wall-clock (Unix) time. One ban a line:
 *
 *   PREFIX expires_unix_ns=NS|never duration_ns=NS strikes=N
 */
#ifndef FG_BANSTORE_H
#define FG_BANSTORE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"
#include "config/values.h"
#include "floodgate.h"

#define FG_STATE_DIR	  "/var/lib/floodgate"
#define FG_STATE_DIR_ENV  "FLOODGATE_STATE_DIR"
#define FG_BANSTORE_NEVER (~0ULL) /* expires_unix_ns of a ban until unbanned */

struct fg_stored_ban {
	struct fg_cidr cidr;
	__u64 expires_unix_ns; /* FG_BANSTORE_NEVER: until unbanned */
	__u64 duration_ns;
	__u32 strikes;
};

struct fg_banstore {
	struct fg_stored_ban *bans;
	size_t count, cap;
};

/* IFACE's state file: FLOODGATE_STATE_DIR/IFACE.bans. */
void fg_banstore_path(const char *ifname, char *buf, size_t size);

/* Parses a state file read from `in`; `name` is its path for the messages.
 * Returns 0, or -1 with `err` (FG_ERR_CONFIG, "NAME:LINE: ..."). */
int fg_banstore_parse(const char *name, FILE *in, struct fg_banstore *store, struct fg_err *err);
/* Writes `store` in the format fg_banstore_parse() reads. */
int fg_banstore_format(FILE *out, const struct fg_banstore *store);
void fg_banstore_free(struct fg_banstore *store);

/* A map expiry (CLOCK_MONOTONIC ns, ~0 = never) as Unix time, and back:
 * false for a ban whose expiry has passed. The clocks are the caller's,
 * read once, so that tests can set them. */
__u64 fg_banstore_unix_of(__u64 expires_ns, __u64 mono_now, __u64 unix_now);
bool fg_banstore_mono_of(__u64 expires_unix_ns, __u64 mono_now, __u64 unix_now, __u64 *expires_ns);

/* Reads IFACE's state file (none: no bans) after the trust check the
 * config has. Returns 0, or -1 with `err`. */
int fg_banstore_read(const char *ifname, struct fg_banstore *store, struct fg_err *err);

/* `ban`: records the ban (replacing one of the same prefix); `unban`:
 * removes it. Both rewrite the file atomically and drop expired bans.
 * Return 0, or -1 with `err`, the file unchanged. */
int fg_banstore_record(const char *ifname, const struct fg_cidr *cidr, const struct fg_ban *ban,
		       struct fg_err *err);
int fg_banstore_forget(const char *ifname, const struct fg_cidr *cidr, struct fg_err *err);

/* `load`: writes IFACE's unexpired bans into the `bans` map `bans_fd`
 * (an active ban there that lasts longer stays). Returns 0, or -1 with
 * `err`. */
int fg_banstore_restore(const char *ifname, int bans_fd, struct fg_err *err);

#endif /* FG_BANSTORE_H */
