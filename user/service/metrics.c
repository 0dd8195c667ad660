// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus metrics. A scrape opens the pins afresh and reads the maps
 * (per-CPU counters summed by maps/batch.h), so the endpoint follows
 * reloads and adoptions, and answers 503 while floodgate is not loaded.
 * Reading walks whole tables, so the text is made at most once a second
 * and served to every scrape of that second. Counters never go down while
 * the process lives (service/counter_floor.h).
 *
 * HTTP is libmicrohttpd's: no hand-written parser faces the network. A
 * thread per connection, a few connections per client address and a short
 * timeout: slow clients hold their own threads, not the endpoint.
 */
#define _GNU_SOURCE /* asprintf */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <microhttpd.h>
#include <pthread.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/pinned.h"
#include "service/counter_floor.h"
#include "service/crowdsec.h"
#include "service/metrics.h"

/* The text is made at most this often; scrapes in between get a copy. */
#define METRICS_CACHE_NS	1000000000ULL
/* Connections at once: in all, from one client address; seconds a
 * connection may stay idle before it is closed. */
#define METRICS_MAX_CONNECTIONS 64U
#define METRICS_MAX_PER_CLIENT	4U
#define METRICS_TIMEOUT_S	5U

struct fg_metrics {
	struct MHD_Daemon *daemon;
	char ifname[IF_NAMESIZE];
	pthread_mutex_t lock; /* the floors and the cache */
	struct fg_counter_floors *floors;
	char *text;    /* the last exposition, NULL after an error */
	size_t size;   /* of text */
	int error;     /* the last render's, 0 or a negative errno */
	__u64 made_ns; /* when text was made, 0: never */
};

/* A counter of include/fg_counters.h: where it is, and its metric. */
struct counter_metric {
	size_t offset;
	const char *name, *verdict, *help; /* verdict: NULL, or the label's value */
};

static const struct counter_metric global_counters[] = {
#define X(field, metric, help) {offsetof(struct fg_global_stats, field), metric, NULL, help},
	FG_GLOBAL_COUNTERS(X)
#undef X
};

static const struct counter_metric policy_counters[] = {
#define X(field, metric, verdict, help)                                                            \
	{offsetof(struct fg_policy_stats, field), metric, verdict[0] ? verdict : NULL, help},
	FG_POLICY_COUNTERS(X)
#undef X
};

static __u64 counter_value(const void *stats, const struct counter_metric *c)
{
	__u64 value;

	memcpy(&value, (const char *)stats + c->offset, sizeof(value));
	return value;
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP floodgate_%s %s\n# TYPE floodgate_%s %s\n", name, help, name, type);
}

/* Label values are policy and interface names: escape what the format
 * reserves all the same. */
static void label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* A counter's value as served: never below what was served before. */
static __u64 floored(struct fg_counter_floors *floors, const char *name, const char *policy,
		     const char *verdict, __u64 raw)
{
	char key[160];

	snprintf(key, sizeof(key), "%s{%s,%s}", name, policy ? policy : "", verdict ? verdict : "");
	return fg_counter_floor(floors, key, raw);
}

static void policy_sample(FILE *out, const char *name, const char *ifname, const char *policy,
			  const char *verdict, __u64 value)
{
	fprintf(out, "floodgate_%s{interface=\"", name);
	label_value(out, ifname);
	fputs("\",policy=\"", out);
	label_value(out, policy);
	if (verdict)
		fprintf(out, "\",verdict=\"%s", verdict);
	fprintf(out, "\"} %" PRIu64 "\n", (uint64_t)value);
}

/* Whether an earlier row of policy_counters has the same metric (the
 * family is written once, with the samples of every verdict). */
static bool family_written(size_t row)
{
	size_t i;

	for (i = 0; i < row; i++)
		if (!strcmp(policy_counters[i].name, policy_counters[row].name))
			return true;
	return false;
}

/* One family per metric of policy_counters; per policy, a sample per row
 * of the metric (verdict="..." for policy_packets_total and _bytes_). */
static void render_policy_counters(FILE *out, const char *ifname, const struct fg_policy_set *set,
				   const struct fg_policy_stats *ps, __u32 n,
				   struct fg_counter_floors *floors)
{
	size_t row, v;
	__u32 i;

	for (row = 0; row < ARRAY_SIZE(policy_counters); row++) {
		const struct counter_metric *c = &policy_counters[row];

		if (family_written(row))
			continue;
		family(out, c->name, "counter", c->help);
		for (i = 0; i < n; i++)
			for (v = row; v < ARRAY_SIZE(policy_counters); v++)
				if (!strcmp(policy_counters[v].name, c->name))
					policy_sample(out, c->name, ifname, set->policies[i].name,
						      policy_counters[v].verdict,
						      floored(floors, c->name,
							      set->policies[i].name,
							      policy_counters[v].verdict,
							      counter_value(&ps[i],
									    &policy_counters[v])));
	}
}

static int render_policies(FILE *out, const char *ifname, const struct fg_pinned *pinned,
			   const struct fg_policy_set *set, struct fg_counter_floors *floors)
{
	struct fg_policy_stats *ps = calloc(FG_MAX_POLICIES, sizeof(*ps));
	int err = ps ? 0 : -ENOMEM;
	__u32 i, n = set->count < FG_MAX_POLICIES ? set->count : FG_MAX_POLICIES;

	for (i = 0; !err && i < n; i++)
		err = fg_sum_percpu(pinned->maps.policy_stats,
				    pinned->rt.active_slot * FG_MAX_POLICIES + i, &ps[i],
				    sizeof(ps[i]));
	if (!err)
		render_policy_counters(out, ifname, set, ps, n, floors);
	free(ps);
	return err;
}

static void interface_sample(FILE *out, const char *name, const char *ifname, double value)
{
	fprintf(out, "floodgate_%s{interface=\"", name);
	label_value(out, ifname);
	fprintf(out, "\"} %.17g\n", value);
}

static int render_globals(FILE *out, const char *ifname, const struct fg_pinned *pinned,
			  struct fg_counter_floors *floors)
{
	struct fg_global_stats global;
	int err = fg_sum_percpu(pinned->global_stats, 0, &global, sizeof(global));
	size_t i;

	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(global_counters); i++) {
		family(out, global_counters[i].name, "counter", global_counters[i].help);
		fprintf(out, "floodgate_%s{interface=\"", global_counters[i].name);
		label_value(out, ifname);
		fprintf(out, "\"} %" PRIu64 "\n",
			(uint64_t)floored(floors, global_counters[i].name, NULL, NULL,
					  counter_value(&global, &global_counters[i])));
	}
	return 0;
}

static int count_entry(const void *key, const void *value, void *ctx)
{
	(void)key;
	(void)value;
	++*(__u64 *)ctx;
	return 0;
}

static __u32 capacity(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

struct ban_count {
	int fd;
	__u64 now, entries, active;
};

static int count_ban(const void *key, void *ctx)
{
	struct ban_count *count = ctx;
	struct fg_ban ban;

	count->entries++;
	if (!bpf_map_lookup_elem(count->fd, key, &ban) && ban.expires_ns > count->now)
		count->active++;
	return 0;
}

/* Entries of the bans trie, and how many of them are in force now. */
static void count_bans(int fd, __u64 *entries, __u64 *active)
{
	struct ban_count count = {.fd = fd, .now = fg_monotonic_ns()};

	fg_map_for_each_key(fd, sizeof(struct fg_src_lpm_key), count_ban, &count);
	*entries = count.entries;
	*active = count.active;
}

/* What `ban_count` says: the policies' share in use, and the bans from
 * outside the datapath that a full table refused. */
static int render_ban_count(FILE *out, const char *ifname, const struct fg_pinned *pinned)
{
	struct fg_ban_count count = {0};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pinned->ban_count, &zero, &count))
		return -errno;
	family(out, "policy_bans", "gauge",
	       "Bans of action = ban in their share of the bans table.");
	interface_sample(out, "policy_bans", ifname, (double)count.policy_bans);
	family(out, "policy_ban_share", "gauge",
	       "Bans action = ban may hold: max_bans less the share kept for bans from outside.");
	interface_sample(out, "policy_ban_share", ifname,
			 (double)fg_policy_ban_cap(capacity(pinned->bans)));
	family(out, "bans_refused_full_total", "counter",
	       "Bans from outside the datapath (by hand, the fleet, CrowdSec) a full bans table "
	       "refused.");
	interface_sample(out, "bans_refused_full_total", ifname, (double)count.outside_refused);
	return 0;
}

static int render_tables(FILE *out, const char *ifname, const struct fg_pinned *pinned)
{
	const __u32 key_size = sizeof(struct fg_source_key);
	const struct {
		const char *name;
		int fd;
		__u32 key_size, value_size;
	} tables[] = {
		{"sources4", pinned->sources4, sizeof(struct fg_source4_key),
		 sizeof(struct fg_source_state)},
		{"sources", pinned->sources, key_size, sizeof(struct fg_source_state)},
		{"windows", pinned->windows, key_size, sizeof(struct fg_window_entry)},
		{"logs", pinned->logs, key_size, sizeof(struct fg_log_entry)},
		{"known4", pinned->known4, sizeof(struct fg_source4_key),
		 sizeof(struct fg_source_state)},
	};
	/* One more than the tables: the bans. */
	__u64 entries[ARRAY_SIZE(tables) + 1] = {0}, active_bans;
	size_t i, n = ARRAY_SIZE(tables);
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = fg_map_for_each_batch(tables[i].fd, tables[i].key_size, tables[i].value_size,
					    4096, count_entry, &entries[i]);
	if (err)
		return err;
	count_bans(pinned->bans, &entries[n], &active_bans);
	family(out, "table_entries", "gauge", "Entries in use in a state table.");
	for (i = 0; i <= n; i++) {
		fprintf(out, "floodgate_table_entries{interface=\"");
		label_value(out, ifname);
		fprintf(out, "\",table=\"%s\"} %" PRIu64 "\n", i < n ? tables[i].name : "bans",
			(uint64_t)entries[i]);
	}
	family(out, "table_capacity", "gauge", "Entries a state table holds at most.");
	for (i = 0; i <= n; i++) {
		fprintf(out, "floodgate_table_capacity{interface=\"");
		label_value(out, ifname);
		fprintf(out, "\",table=\"%s\"} %u\n", i < n ? tables[i].name : "bans",
			capacity(i < n ? tables[i].fd : pinned->bans));
	}
	family(out, "bans_active", "gauge",
	       "Bans in force (expired records are kept for escalation).");
	interface_sample(out, "bans_active", ifname, (double)active_bans);
	return render_ban_count(out, ifname, pinned);
}

/* The fleet sync's state (scope = fleet), when a `run` syncs this
 * interface or did. `fleet_connected` only while one syncs: FloodgateFleetDown
 * fires on its 0, and a host whose [fleet] was removed is not down. */
static int render_fleet(FILE *out, const char *ifname, const struct fg_pinned *pinned)
{
	struct fg_fleet_state st;
	__u32 zero = 0;
	size_t i;

	if (bpf_map_lookup_elem(pinned->fleet_state, &zero, &st))
		return -errno;
	if (!st.syncing && !st.syncs)
		return 0;
	const struct {
		const char *name, *type, *help;
		double value;
		bool while_syncing; /* meaningless once no `run` syncs */
	} * row, rows[] = {
			 {"fleet_syncing", "gauge",
			  "1 while a `run` with a [fleet] section syncs this interface.",
			  st.syncing, false},
			 {"fleet_connected", "gauge",
			  "1 while the fleet sync reaches Redis (only while syncing).",
			  st.connected, true},
			 {"fleet_last_sync_timestamp_seconds", "gauge",
			  "When the last fleet sync ended (Unix time).", st.last_sync_ns / 1e9,
			  false},
			 {"fleet_sync_latency_seconds", "gauge",
			  "How long the last fleet sync took.", st.sync_latency_ns / 1e9, false},
			 {"fleet_keys_held", "gauge",
			  "Keys the fleet holds over their fleet-wide limit.", (double)st.keys_held,
			  false},
			 {"fleet_syncs_total", "counter", "Fleet syncs completed.",
			  (double)st.syncs, false},
			 {"fleet_outages_total", "counter", "Times Redis became unreachable.",
			  (double)st.outages, false},
			 {"fleet_bans_published_total", "counter",
			  "Local bans published to the fleet.", (double)st.bans_published, false},
			 {"fleet_bans_applied_total", "counter",
			  "Fleet bans copied into the bans table.", (double)st.bans_applied, false},
			 {"fleet_bans_refused_total", "counter",
			  "Fleet bans from Redis refused: too wide, malformed, covering an "
			  "[allow] prefix or an own address, past a reply's cap.",
			  (double)st.bans_refused, false},
			 {"fleet_holds_capped_total", "counter",
			  "Holds from Redis longer than 60 s, cut to 60 s.",
			  (double)st.holds_capped, false},
		 };

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		row = &rows[i];
		if (row->while_syncing && !st.syncing)
			continue;
		family(out, row->name, row->type, row->help);
		interface_sample(out, row->name, ifname, row->value);
	}
	return 0;
}

/* The CrowdSec bouncer's state, when this process runs one or did. */
static void render_crowdsec(FILE *out, const char *ifname)
{
	struct fg_crowdsec_stats st;

	if (!fg_crowdsec_stats_read(&st))
		return;
#define RENDER_CROWDSEC(field, metric, type, help)                                                 \
	family(out, metric, type, help);                                                           \
	interface_sample(out, metric, ifname, st.field);
	FG_CROWDSEC_STATS(RENDER_CROWDSEC)
#undef RENDER_CROWDSEC
}

int fg_metrics_render(const char *ifname, struct fg_counter_floors *floors, FILE *out)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_err e = {0};
	int err;

	if (!set)
		return -ENOMEM;
	err = fg_open_loaded(ifname, &pinned, &e) ? -ENOENT : 0;
	if (err)
		pr_warn("Error: %s\n", e.msg);
	if (!err)
		err = fg_read_active_set(&pinned, set);
	if (err)
		goto out;
	family(out, "build_info", "gauge", "floodgate's version; always 1.");
	fprintf(out, "floodgate_build_info{version=\"%s\"} 1\n", FG_VERSION);
	family(out, "loaded_timestamp_seconds", "gauge", "When floodgate was loaded (Unix time).");
	interface_sample(out, "loaded_timestamp_seconds", ifname, (double)pinned.rt.loaded_at);
	family(out, "policy_generation", "gauge", "Policy pushes since the load.");
	interface_sample(out, "policy_generation", ifname, (double)pinned.rt.generation);
	family(out, "policies", "gauge", "Policies in force.");
	interface_sample(out, "policies", ifname, (double)set->count);
	err = render_globals(out, ifname, &pinned, floors);
	if (!err)
		err = render_policies(out, ifname, &pinned, set, floors);
	if (!err)
		err = render_tables(out, ifname, &pinned);
	if (!err)
		err = render_fleet(out, ifname, &pinned);
	if (!err)
		render_crowdsec(out, ifname);
out:
	fg_pinned_close(&pinned);
	free(set);
	return err;
}

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned int status, char *body,
			       size_t size, const char *type)
{
	struct MHD_Response *response =
		MHD_create_response_from_buffer_with_free_callback(size, body, free);
	enum MHD_Result ret;

	if (!response) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return ret;
}

/* Makes the text anew when it is older than METRICS_CACHE_NS. Called with
 * the lock held: a scrape that comes while the text is being made waits
 * for it, and all of them cost one walk of the tables. */
static void refresh(struct fg_metrics *metrics)
{
	__u64 now = fg_monotonic_ns();
	FILE *out;

	if (metrics->made_ns && now - metrics->made_ns < METRICS_CACHE_NS)
		return;
	free(metrics->text);
	metrics->text = NULL;
	metrics->size = 0;
	out = open_memstream(&metrics->text, &metrics->size);
	if (!out) {
		metrics->error = -ENOMEM;
		return;
	}
	metrics->error = fg_metrics_render(metrics->ifname, metrics->floors, out);
	fclose(out);
	if (metrics->error) {
		free(metrics->text);
		metrics->text = NULL;
	}
	metrics->made_ns = fg_monotonic_ns();
}

/* A copy of the current text into *body, or the render's error. */
static int exposition(struct fg_metrics *metrics, char **body, size_t *size)
{
	int err;

	pthread_mutex_lock(&metrics->lock);
	refresh(metrics);
	err = metrics->error;
	*size = metrics->size;
	*body = err ? NULL : malloc(*size ? *size : 1);
	if (*body)
		memcpy(*body, metrics->text, *size);
	else if (!err)
		err = -ENOMEM;
	pthread_mutex_unlock(&metrics->lock);
	return err;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct fg_metrics *metrics = cls;
	char *body = NULL;
	size_t size = 0;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), 9,
			       "text/plain");
	if (strcmp(url, "/metrics"))
		return respond(connection, MHD_HTTP_NOT_FOUND, strdup("try /metrics\n"), 13,
			       "text/plain");
	err = exposition(metrics, &body, &size);
	if (err) {
		if (asprintf(&body, "floodgate is not readable on %s: %s\n", metrics->ifname,
			     strerror(-err)) < 0)
			return MHD_NO;
		return respond(connection, MHD_HTTP_SERVICE_UNAVAILABLE, body, strlen(body),
			       "text/plain");
	}
	return respond(connection, MHD_HTTP_OK, body, size, "text/plain; version=0.0.4");
}

/* ADDR:PORT or [ADDR6]:PORT, numeric only. */
static int parse_listen(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	const char *colon = strrchr(text, ':');
	char host[INET6_ADDRSTRLEN + 2], *end;
	unsigned long port;
	size_t len;

	if (!colon)
		return -1;
	port = strtoul(colon + 1, &end, 10);
	len = colon - text;
	if (*end || !colon[1] || !port || port > 65535 || len >= sizeof(host))
		return -1;
	memcpy(host, text, len);
	host[len] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && len > 2 && host[len - 1] == ']') {
		host[len - 1] = 0;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) == 1 ? 0 : -1;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

int fg_metrics_start(const char *addr_port, const char *ifname, struct fg_metrics **out,
		     struct fg_err *err)
{
	struct fg_metrics *metrics = calloc(1, sizeof(*metrics));
	struct sockaddr_storage ss;
	unsigned int flags =
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;

	*out = NULL;
	if (!metrics)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory starting the metrics endpoint");
	if (parse_listen(addr_port, &ss)) {
		free(metrics);
		return fg_fail(err, FG_ERR_USAGE,
			       "--metrics wants ADDR:PORT or [ADDR6]:PORT with a numeric address, "
			       "such as 127.0.0.1:9310, not '%s'",
			       addr_port);
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	snprintf(metrics->ifname, sizeof(metrics->ifname), "%s", ifname);
	pthread_mutex_init(&metrics->lock, NULL);
	metrics->floors = fg_counter_floors_new();
	metrics->daemon =
		metrics->floors
			? MHD_start_daemon(flags, 0, NULL, NULL, handle, metrics,
					   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
					   MHD_OPTION_CONNECTION_LIMIT, METRICS_MAX_CONNECTIONS,
					   MHD_OPTION_PER_IP_CONNECTION_LIMIT,
					   METRICS_MAX_PER_CLIENT, MHD_OPTION_CONNECTION_TIMEOUT,
					   METRICS_TIMEOUT_S, MHD_OPTION_END)
			: NULL;
	if (!metrics->daemon) {
		fg_fail(err, FG_ERR_ENV, "cannot serve metrics on %s: %s", addr_port,
			metrics->floors ? strerror(errno) : "out of memory");
		fg_metrics_stop(metrics);
		return -1;
	}
	*out = metrics;
	return 0;
}

void fg_metrics_stop(struct fg_metrics *metrics)
{
	if (!metrics)
		return;
	if (metrics->daemon)
		MHD_stop_daemon(metrics->daemon);
	pthread_mutex_destroy(&metrics->lock);
	fg_counter_floors_free(metrics->floors);
	free(metrics->text);
	free(metrics);
}
