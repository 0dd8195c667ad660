// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CrowdSec bouncer's thread (service/crowdsec.h): every interval, a
 * GET of /v1/decisions/stream with the bouncer's key in X-Api-Key
 * (libcurl), parsed (crowdsec_decisions.c) and applied
 * (crowdsec_apply.c). The first pull, and the first after an outage or a
 * reply it could not apply, asks for the whole set (startup=true): a
 * Local API that restarted, or lost its database, is followed without
 * duplicates, and bans lifted meanwhile go. While the Local API cannot be
 * reached, the bans from it keep to their expiry; the outage is logged
 * once, with its end, and the pulls back off up to MAX_BACKOFF_NS.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "base/clock.h"
#include "base/log.h"
#include "config/filemode.h"
#include "maps/pinfolder.h"
#include "service/crowdsec.h"

#define FIRST_BACKOFF_NS (500ULL * FG_NS_PER_MS)
#define MAX_BACKOFF_NS	 (30ULL * FG_NS_PER_S)
#define CONNECT_TIMEOUT	 5L   /* s */
#define REPLY_TIMEOUT	 120L /* s: a whole set of 500,000 decisions, on a slow host */

struct fg_crowdsec {
	char ifname[IF_NAMESIZE];
	struct fg_crowdsec_conf conf;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct fg_pinned pinned;
	struct fg_crowdsec_applier applier;
	CURL *curl;
	char *body; /* the reply being read */
	size_t len, cap;
	bool too_long;	  /* the reply passed FG_CROWDSEC_MAX_REPLY */
	bool whole_set;	  /* the next pull asks for startup=true */
	bool down;	  /* an outage is in progress (logged once) */
	__u64 down_ns;	  /* when it began */
	__u64 backoff_ns; /* the wait before the next try while down */
	__u64 last_ok_ns; /* the last reply applied */
};

/* What /metrics shows: the bouncer of this process, or the last one. */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fg_crowdsec_stats stats;
static __u64 stats_last_ok_ns;
static bool stats_valid;

bool fg_crowdsec_stats_read(struct fg_crowdsec_stats *out)
{
	bool valid;

	pthread_mutex_lock(&stats_lock);
	*out = stats;
	valid = stats_valid;
	out->last_pull_age_s = stats_last_ok_ns ? (fg_monotonic_ns() - stats_last_ok_ns) / 1e9 : -1;
	pthread_mutex_unlock(&stats_lock);
	return valid;
}

static size_t take_reply(char *data, size_t size, size_t n, void *ctx)
{
	struct fg_crowdsec *cs = ctx;
	size_t more = size * n, cap;
	char *grown;

	if (cs->len + more > FG_CROWDSEC_MAX_REPLY) {
		cs->too_long = true;
		return 0; /* curl ends the transfer */
	}
	if (cs->len + more > cs->cap) {
		cap = cs->cap ? cs->cap : 1 << 16;
		while (cap < cs->len + more)
			cap *= 2;
		grown = realloc(cs->body, cap);
		if (!grown)
			return 0;
		cs->body = grown;
		cs->cap = cap;
	}
	memcpy(cs->body + cs->len, data, more);
	cs->len += more;
	return more;
}

/* Ends a transfer when `run` stops. */
static int keep_going(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		      curl_off_t ulnow)
{
	struct fg_crowdsec *cs = ctx;
	bool stop;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	pthread_mutex_lock(&cs->lock);
	stop = cs->stop;
	pthread_mutex_unlock(&cs->lock);
	return stop;
}

/* GET the stream. Returns 0 with the reply in cs->body, or -1 with `why`. */
static int fetch(struct fg_crowdsec *cs, char *why, size_t why_size)
{
	char url[FG_CROWDSEC_URL_LEN + 64], header[FG_SECRET_MAX + 16], key[FG_SECRET_MAX];
	size_t url_len = strlen(cs->conf.url);
	struct curl_slist *headers;
	struct fg_err err = {0};
	CURLcode rc;
	long status = 0;

	if (fg_secret_read(cs->conf.api_key_file, "api_key_file", key, sizeof(key), &err) < 0) {
		snprintf(why, why_size, "%s", err.msg);
		return -1;
	}
	snprintf(header, sizeof(header), "X-Api-Key: %s", key);
	explicit_bzero(key, sizeof(key));
	headers = curl_slist_append(NULL, header);
	explicit_bzero(header, sizeof(header));
	snprintf(url, sizeof(url), "%s%sv1/decisions/stream?startup=%s", cs->conf.url,
		 url_len && cs->conf.url[url_len - 1] == '/' ? "" : "/",
		 cs->whole_set ? "true" : "false");
	cs->len = 0;
	cs->too_long = false;
	curl_easy_setopt(cs->curl, CURLOPT_URL, url);
	curl_easy_setopt(cs->curl, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(cs->curl);
	curl_easy_setopt(cs->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers); /* curl keeps no copy of the key past the call */
	curl_easy_getinfo(cs->curl, CURLINFO_RESPONSE_CODE, &status);
	if (cs->too_long)
		snprintf(why, why_size, "the reply is longer than %lu MiB",
			 FG_CROWDSEC_MAX_REPLY >> 20);
	else if (rc != CURLE_OK)
		snprintf(why, why_size, "%s", curl_easy_strerror(rc));
	else if (status != 200)
		snprintf(why, why_size, "HTTP status %ld%s", status,
			 status == 403 ? " (is api_key_file the key 'cscli bouncers add' gave?)"
				       : "");
	else
		return 0;
	return -1;
}

static void outage(struct fg_crowdsec *cs, const char *why)
{
	cs->whole_set = true;
	cs->backoff_ns = cs->down ? cs->backoff_ns * 2 : FIRST_BACKOFF_NS;
	if (cs->backoff_ns > MAX_BACKOFF_NS)
		cs->backoff_ns = MAX_BACKOFF_NS;
	if (cs->down)
		return;
	cs->down = true;
	cs->down_ns = fg_monotonic_ns();
	pr_warn("crowdsec: the Local API at %s cannot be reached: %s; the bans from it stay until "
		"they end; retrying\n",
		cs->conf.url, why);
	pthread_mutex_lock(&stats_lock);
	stats.up = 0;
	stats.outages++;
	pthread_mutex_unlock(&stats_lock);
}

static void count(const struct fg_crowdsec_applied *done, const struct fg_crowdsec_reply *r,
		  __u64 started_ns, __u64 replied_ns, __u64 now)
{
	pthread_mutex_lock(&stats_lock);
	stats.up = 1;
	stats.pulls++;
	stats.applied += (double)done->applied;
	stats.lifted += (double)done->lifted;
	stats.ignored += (double)r->ignored;
	stats.refused += (double)done->refused;
	stats.table_full += (double)done->table_full;
	stats.pull_seconds = (now - started_ns) / 1e9;
	stats.apply_seconds = (now - replied_ns) / 1e9;
	stats_last_ok_ns = now;
	pthread_mutex_unlock(&stats_lock);
}

/* One pull; false when the Local API could not be reached. */
static bool pull(struct fg_crowdsec *cs)
{
	__u64 started_ns = fg_monotonic_ns(), replied_ns, now;
	struct fg_crowdsec_applied done;
	struct fg_crowdsec_reply reply;
	char why[FG_ERR_MSG_LEN];
	bool whole = cs->whole_set;

	if (fetch(cs, why, sizeof(why))) {
		if (!cs->too_long) {
			outage(cs, why);
			return false;
		}
		pr_warn("crowdsec: a reply not applied: %s\n", why);
		cs->whole_set = true;
		pthread_mutex_lock(&stats_lock);
		stats.bad_replies++;
		pthread_mutex_unlock(&stats_lock);
		return true;
	}
	replied_ns = fg_monotonic_ns();
	if (cs->down)
		pr_warn("crowdsec: the Local API at %s answers again, after %.1f s\n", cs->conf.url,
			(fg_monotonic_ns() - cs->down_ns) / 1e9);
	cs->down = false;
	if (fg_crowdsec_parse(cs->body, cs->len, cs->conf.scopes, cs->conf.origins, &reply)) {
		pr_warn("crowdsec: a reply not applied: not a decision stream (%zu bytes)\n",
			cs->len);
		fg_crowdsec_reply_free(&reply);
		cs->whole_set = true; /* what it held is lost: ask for the whole set */
		pthread_mutex_lock(&stats_lock);
		stats.bad_replies++;
		stats.up = 1;
		pthread_mutex_unlock(&stats_lock);
		return true;
	}
	fg_crowdsec_apply(&cs->applier, &reply, whole, &done);
	now = fg_monotonic_ns();
	count(&done, &reply, started_ns, replied_ns, now);
	if (whole || reply.n_bans > 1000)
		pr_info("crowdsec: %zu new bans of %zu ban decisions, %zu lifted; a reply of %zu "
			"bytes in %.2f s, applied in %.2f s\n",
			done.applied, reply.n_bans, done.lifted, cs->len,
			(replied_ns - started_ns) / 1e9, (now - replied_ns) / 1e9);
	fg_crowdsec_reply_free(&reply);
	cs->whole_set = false;
	return true;
}

static void *crowdsec_main(void *arg)
{
	struct fg_crowdsec *cs = arg;
	struct timespec deadline;
	__u64 next;

	pthread_mutex_lock(&cs->lock);
	while (!cs->stop) {
		pthread_mutex_unlock(&cs->lock);
		next = fg_monotonic_ns();
		next += pull(cs) ? cs->conf.interval_ns : cs->backoff_ns;
		pthread_mutex_lock(&cs->lock);
		deadline.tv_sec = (time_t)(next / FG_NS_PER_S);
		deadline.tv_nsec = (long)(next % FG_NS_PER_S);
		while (!cs->stop &&
		       pthread_cond_timedwait(&cs->wake, &cs->lock, &deadline) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

static void crowdsec_free(struct fg_crowdsec *cs)
{
	if (cs->curl)
		curl_easy_cleanup(cs->curl);
	fg_ban_guard_free(&cs->applier.guard);
	fg_pinned_close(&cs->pinned);
	free(cs->body);
	free(cs);
}

static CURL *new_curl(struct fg_crowdsec *cs)
{
	CURL *curl = curl_easy_init();

	if (!curl)
		return NULL;
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "floodgate-bouncer/" FG_VERSION);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, REPLY_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, take_reply);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, cs);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, keep_going);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, cs);
	return curl;
}

int fg_crowdsec_start(const char *ifname, const struct fg_crowdsec_conf *conf,
		      struct fg_crowdsec **out)
{
	struct fg_crowdsec *cs = calloc(1, sizeof(*cs));
	char pin_dir[PATH_MAX];
	struct fg_err e = {0};
	pthread_condattr_t attr;
	int err;

	*out = NULL;
	if (!cs)
		return -ENOMEM;
	snprintf(cs->ifname, sizeof(cs->ifname), "%s", ifname);
	cs->conf = *conf;
	cs->whole_set = true;
	cs->applier = (struct fg_crowdsec_applier){.pinned = &cs->pinned,
						   .guard = {.who = "crowdsec",
							     .min_prefix4 = conf->min_ban_prefix,
							     .min_prefix6 = conf->min_ban_prefix6}};
	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	err = fg_pinned_open(pin_dir, &cs->pinned, &e);
	if (err) {
		pr_warn("Error: %s\n", e.msg);
		crowdsec_free(cs);
		return err;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT); /* before the thread: it is not thread-safe */
	cs->curl = new_curl(cs);
	if (!cs->curl) {
		crowdsec_free(cs);
		return -ENOMEM;
	}
	pthread_mutex_init(&cs->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&cs->wake, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_lock(&stats_lock);
	stats_valid = true;
	stats.up = 0;
	pthread_mutex_unlock(&stats_lock);
	err = pthread_create(&cs->thread, NULL, crowdsec_main, cs);
	if (err) {
		crowdsec_free(cs);
		return -err;
	}
	pr_warn("crowdsec: pulling the decisions of %s every %.3g s\n", conf->url,
		conf->interval_ns / 1e9);
	*out = cs;
	return 0;
}

void fg_crowdsec_stop(struct fg_crowdsec *cs)
{
	if (!cs)
		return;
	pthread_mutex_lock(&cs->lock);
	cs->stop = true;
	pthread_cond_signal(&cs->wake);
	pthread_mutex_unlock(&cs->lock);
	pthread_join(cs->thread, NULL);
	pthread_mutex_lock(&stats_lock);
	stats.up = 0;
	pthread_mutex_unlock(&stats_lock);
	crowdsec_free(cs);
	curl_global_cleanup();
}
