/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * floodgate as a CrowdSec bouncer, in `floodgate run` (docs/crowdsec.md, "CrowdSec"):
 * a thread pulls the Local API's decision stream every [crowdsec]
 * interval (the whole set first, then what changed) and turns `ban`
 * decisions of scope Ip and Range into bans tagged with their origin
 * (crowdsec_apply.c); what the replies hold is parsed by
 * crowdsec_decisions.c. The datapath never waits for it, and an outage
 * leaves the bans in force to their expiry.
 */
#ifndef FG_CROWDSEC_H
#define FG_CROWDSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "config/config.h"
#include "config/values.h"
#include "floodgate.h"
#include "maps/pinned.h"
#include "ops/banguard.h"

/* The largest reply read: about 500,000 decisions. A longer one is
 * counted in bad_replies and not applied. */
#define FG_CROWDSEC_MAX_REPLY (64UL << 20)

/* The bouncer's state for /metrics, X(field, metric, type, help); the
 * fields are doubles of struct fg_crowdsec_stats. */
#define FG_CROWDSEC_STATS(X)                                                                       \
	X(up, "crowdsec_up", "gauge",                                                              \
	  "1 while the CrowdSec Local API answers the decision stream.")                           \
	X(last_pull_age_s, "crowdsec_last_pull_age_seconds", "gauge",                              \
	  "Seconds since the last decision stream reply was applied (-1: none yet).")              \
	X(pulls, "crowdsec_pulls_total", "counter", "Decision stream replies applied.")            \
	X(outages, "crowdsec_outages_total", "counter",                                            \
	  "Times the Local API became unreachable or answered with an error.")                     \
	X(bad_replies, "crowdsec_bad_replies_total", "counter",                                    \
	  "Replies not applied: not JSON, not a decision stream, or longer than the cap.")         \
	X(applied, "crowdsec_decisions_applied_total", "counter",                                  \
	  "Ban decisions that became (or renewed) bans.")                                          \
	X(lifted, "crowdsec_decisions_lifted_total", "counter",                                    \
	  "Deleted decisions that lifted a ban from CrowdSec.")                                    \
	X(ignored, "crowdsec_decisions_ignored_total", "counter",                                  \
	  "Decisions of another type, scope or origin than [crowdsec] takes.")                     \
	X(refused, "crowdsec_decisions_refused_total", "counter",                                  \
	  "Ban decisions refused: malformed, too wide, covering an [allow] prefix or an own "      \
	  "address, or without time left.")                                                        \
	X(table_full, "crowdsec_decisions_table_full_total", "counter",                            \
	  "Ban decisions the full bans table could not take.")                                     \
	X(pull_seconds, "crowdsec_pull_seconds", "gauge",                                          \
	  "How long the last pull took, reply and apply.")                                         \
	X(apply_seconds, "crowdsec_apply_seconds", "gauge",                                        \
	  "How long the last reply took to parse and apply, from its last byte.")

struct fg_crowdsec_stats {
#define FG_CROWDSEC_STAT_MEMBER(field, ...) double field;
	FG_CROWDSEC_STATS(FG_CROWDSEC_STAT_MEMBER)
#undef FG_CROWDSEC_STAT_MEMBER
};

/* --- the decision stream (crowdsec_decisions.c) ---------------------------- */

/* A Go duration as the Local API writes them ("3h59m58.5s", "-26ms",
 * "1.5µs"), into ns. Returns 0, or -EINVAL (not a duration, or beyond
 * the range of ns in 64 bits). */
int fg_crowdsec_duration_ns(const char *text, __s64 *ns);

/* A ban or a lift the stream asks for. */
struct fg_crowdsec_decision {
	struct fg_cidr cidr;
	__u64 left_ns; /* the ban's time left; 0 for a lift */
	__u8 origin;   /* enum fg_crowdsec_origin */
};

/* What one reply asks, in the order to apply it: lifts, then bans. */
struct fg_crowdsec_reply {
	struct fg_crowdsec_decision *lifts, *bans;
	size_t n_lifts, n_bans;
	size_t ignored; /* another type, scope or origin */
	size_t refused; /* malformed, or no time left */
	/* A few refused decisions, for the log. */
	char first_refusal[160];
};

/* Parses a decision stream reply ({"new": [...], "deleted": [...]}, each
 * null or an array) of `len` bytes, keeping the ban decisions of the
 * scopes (enum fg_crowdsec_scope bits) and origins (bits; 0: all) asked.
 * Returns 0, -EINVAL when the reply is not a decision stream (nothing to
 * apply), or -ENOMEM. Release with fg_crowdsec_reply_free either way. */
int fg_crowdsec_parse(const char *body, size_t len, __u8 scopes, __u32 origins,
		      struct fg_crowdsec_reply *reply);
void fg_crowdsec_reply_free(struct fg_crowdsec_reply *reply);

/* --- into `bans` (crowdsec_apply.c) ---------------------------------------- */

/* What applying replies needs and keeps. */
struct fg_crowdsec_applier {
	const struct fg_pinned *pinned;
	struct fg_ban_guard guard; /* what a ban from CrowdSec may not be */
};

/* What one reply did. */
struct fg_crowdsec_applied {
	size_t applied, lifted, refused, table_full;
	size_t malformed; /* of the refused: by the parser */
};

/* Applies a parsed reply: its lifts (of bans from CrowdSec only), then its
 * bans, checked by the guard, in batches; a ban already in force the same
 * is left as it is, so a reply applied twice changes nothing. `startup`:
 * the reply is the whole set, and the bans from CrowdSec it does not hold
 * are lifted. Logs what it refused and what a full table could not take. */
void fg_crowdsec_apply(struct fg_crowdsec_applier *a, const struct fg_crowdsec_reply *reply,
		       bool startup, struct fg_crowdsec_applied *done);

/* --- the bouncer (crowdsec.c) ---------------------------------------------- */

struct fg_crowdsec;

/* Starts pulling the Local API of `conf` (enabled) for the floodgate
 * loaded on `ifname`. The Local API need not be reachable: the thread
 * retries. Returns 0 or a negative errno (no pins, no thread). */
int fg_crowdsec_start(const char *ifname, const struct fg_crowdsec_conf *conf,
		      struct fg_crowdsec **out);
/* Stops the thread; the bans stay. NULL is a no-op. */
void fg_crowdsec_stop(struct fg_crowdsec *cs);

/* The state of the bouncer this process runs, or ran: false when none. */
bool fg_crowdsec_stats_read(struct fg_crowdsec_stats *stats);

#endif /* FG_CROWDSEC_H */
