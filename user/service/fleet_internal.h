/* SPDX-License-Identifier: GPL-2.0-only */
/* The fleet sync's own state, shared by its rate half (user/service/fleet.c)
 * and its bans half (user/service/fleet_bans.c). Not for other modules. */
#ifndef FG_FLEET_INTERNAL_H
#define FG_FLEET_INTERNAL_H

#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <hiredis/hiredis.h>

#include "config/config.h"
#include "maps/pinned.h"

#define MAX_BACKOFF_NS (5ULL * FG_NS_PER_S)
#define MAX_TIMEOUT_NS FG_NS_PER_S
#define REDIS_KEY_LEN  (FG_FLEET_PREFIX_LEN + FG_POLICY_NAME_LEN + 80)
#define MEMBER_LEN     (INET6_ADDRSTRLEN + 8)
#define PERMANENT      (~0ULL)
/* New local bans are looked for this often between syncs, in tables of up
 * to BAN_POLL_MAX entries. */
#define BAN_POLL_NS    (50ULL * 1000 * 1000)
#define BAN_POLL_MAX   4096

/* One fleet-scoped key's admissions in the epoch just closed. */
struct fleet_item {
	struct fg_source_key key;
	__u64 cost; /* packets, or bytes for a byte rate */
	const struct fg_policy *policy;
	long long hold_us; /* the rate script's answer; -1: none */
};

/* A local ban sent to the fleet, to withdraw it if it is lifted here. */
struct published_ban {
	char member[MEMBER_LEN];
	__u64 expires_ns;
};

struct fg_fleet {
	char ifname[IF_NAMESIZE];
	struct fg_fleet_conf conf;
	char where[FG_FLEET_HOST_LEN + FG_FLEET_UNIX_PATH_LEN + 8]; /* for messages */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct fg_pinned pinned;
	struct fg_policy_set *set;
	redisContext *redis;
	char rate_sha[41], bans_sha[41];
	bool down;		      /* an outage is in progress (logged once) */
	char failure[FG_ERR_MSG_LEN]; /* why the last AUTH or SCRIPT LOAD failed */
	__u64 next_connect_ns, backoff_ns;
	struct fg_fleet_state state; /* what fleet_state holds */
	struct fleet_item *items;
	size_t n_items, cap_items;
	struct published_ban *published;
	size_t n_published;
};

/* A command's arguments, for redisAppendCommandArgv. */
struct fleet_argv {
	char **v;
	size_t n, cap;
};

/* EVALSHA SHA 1 PREFIXbans and this host's bans in force (those it made
 * itself), and those it published before and has lifted since (time left
 * 0). Updates f->published. Returns 0 or a negative errno (args freed). */
int fg_fleet_bans_command(struct fg_fleet *f, struct fleet_argv *args);

/* Applies the bans script's answer: the fleet's bans in force. */
void fg_fleet_apply_bans(struct fg_fleet *f, const redisReply *reply);

/* Has this host a ban in force that it has not published yet? */
bool fg_fleet_unpublished_ban(struct fg_fleet *f);

void fg_fleet_free_argv(struct fleet_argv *a);

/* AUTH [user] password on a new connection, when password_file is set.
 * Returns true, or false with f->failure (never the password). */
bool fg_fleet_auth(struct fg_fleet *f);

#endif /* FG_FLEET_INTERNAL_H */
