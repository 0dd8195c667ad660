// SPDX-License-Identifier: GPL-2.0-only
/*
 * AUTH on every connection to the fleet's Redis, before SCRIPT LOAD: with
 * [fleet] password_file (and user, for an ACL user). The file is read
 * again at each connect, so a changed password is picked up at the next
 * reconnect, and trust-checked each time as at `check`. The password is
 * never logged, and is wiped from our buffers once sent.
 */
#include <stdio.h>
#include <string.h>
#include <hiredis/hiredis.h>

#include "config/filemode.h"
#include "service/fleet_internal.h"

bool fg_fleet_auth(struct fg_fleet *f)
{
	char secret[FG_SECRET_MAX];
	struct fg_err err = {0};
	redisReply *reply;
	bool ok;

	if (!f->conf.password_file[0])
		return true;
	if (fg_secret_read(f->conf.password_file, "password_file", secret, sizeof(secret), &err) <
	    0) {
		snprintf(f->failure, sizeof(f->failure), "%s", err.msg);
		return false;
	}
	reply = f->conf.user[0] ? redisCommand(f->redis, "AUTH %s %s", f->conf.user, secret)
				: redisCommand(f->redis, "AUTH %s", secret);
	explicit_bzero(secret, sizeof(secret));
	ok = reply && reply->type == REDIS_REPLY_STATUS;
	if (!reply)
		snprintf(f->failure, sizeof(f->failure), "%s", f->redis->errstr);
	else if (!ok)
		snprintf(f->failure, sizeof(f->failure), "AUTH%s%s refused: %s",
			 f->conf.user[0] ? " as user " : "", f->conf.user,
			 reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
	freeReplyObject(reply);
	return ok;
}
