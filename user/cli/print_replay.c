// SPDX-License-Identifier: GPL-2.0-only
/* `replay` as text and JSON. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/clock.h"
#include "cli/print.h"

#define REPLAY_TIME_DECIMALS 9 /* the capture's own precision */

/* The replay's own counts, as both outputs name them. */
/* clang-format off */
#define REPLAY_FIELDS(X) \
	X(frames) X(run) X(passed) X(dropped) X(answered) X(outgoing_skipped) X(runt_skipped) \
	X(truncated) X(clipped) X(backwards) X(wire_bytes)
/* clang-format on */

static void format_source(const struct fg_replay_source *s, char *buf, size_t size)
{
	if (!inet_ntop(s->family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, s->addr, buf, size))
		snprintf(buf, size, "?");
}

struct time_span {
	char first[64], last[64];
	double seconds;
};

static struct time_span describe_span(const struct fg_replay_result *r)
{
	struct time_span span = {.seconds = (double)(r->last_ns - r->first_ns) / FG_NS_PER_S};

	fg_format_utc(r->first_ns, REPLAY_TIME_DECIMALS, span.first, sizeof(span.first));
	fg_format_utc(r->last_ns, REPLAY_TIME_DECIMALS, span.last, sizeof(span.last));
	return span;
}

void fg_print_replay_text(const char *capture, const struct fg_replay_result *r,
			  const struct fg_replay_source **top, size_t n_top)
{
	struct time_span span = describe_span(r);
	char addr[INET6_ADDRSTRLEN];
	size_t i;

	printf("%s (%s): %" PRIu64 " frames from %s to %s (%.3f s)%s\n", capture, r->linktype_name,
	       (uint64_t)r->frames, span.first, span.last, span.seconds,
	       r->cut_short ? ", CUT SHORT" : "");
	printf("  replayed in %.3f s (%.0f frames/s)\n", (double)r->elapsed_ns / FG_NS_PER_S,
	       r->elapsed_ns ? r->frames * (double)FG_NS_PER_S / r->elapsed_ns : 0.0);
#define X(f) printf("  %-16s %" PRIu64 "\n", #f, (uint64_t)r->f);
	REPLAY_FIELDS(X)
#undef X
	printf("\n");
	fg_print_counters_text(&r->global, r->set, r->policies);
	if (!n_top)
		return;
	printf("\n  %-40s %12s %12s\n", "SOURCE", "PASSED", "DROPPED");
	for (i = 0; i < n_top; i++) {
		format_source(top[i], addr, sizeof(addr));
		printf("  %-40s %12" PRIu64 " %12" PRIu64 "\n", addr, (uint64_t)top[i]->passed,
		       (uint64_t)top[i]->dropped);
	}
}

static json_t *span_json(const struct fg_replay_result *r)
{
	struct time_span span = describe_span(r);
	json_t *o = json_object();

	fg_json_set(o, "first_ns", fg_json_u64(r->first_ns));
	fg_json_set(o, "last_ns", fg_json_u64(r->last_ns));
	fg_json_set(o, "first", json_string(span.first));
	fg_json_set(o, "last", json_string(span.last));
	fg_json_set(o, "seconds", fg_json_real(span.seconds, 9));
	return o;
}

json_t *fg_replay_json(const char *capture, const struct fg_replay_result *r,
		       const struct fg_replay_source **top, size_t n_top)
{
	json_t *o = json_object(), *sources = json_array();
	char addr[INET6_ADDRSTRLEN];
	size_t i;

	fg_json_set(o, "capture", fg_json_text(capture));
	fg_json_set(o, "linktype", json_string(r->linktype_name));
#define X(f) fg_json_set(o, #f, fg_json_u64(r->f));
	REPLAY_FIELDS(X)
#undef X
	fg_json_set(o, "cut_short", json_boolean(r->cut_short));
	fg_json_set(o, "time_span", span_json(r));
	fg_json_set(o, "elapsed_ns", fg_json_u64(r->elapsed_ns));
	fg_counters_json(o, &r->global, r->set, r->policies);
	for (i = 0; i < n_top; i++) {
		json_t *s = json_object();

		format_source(top[i], addr, sizeof(addr));
		fg_json_set(s, "source", json_string(addr));
		fg_json_set(s, "passed", fg_json_u64(top[i]->passed));
		fg_json_set(s, "dropped", fg_json_u64(top[i]->dropped));
		json_array_append_new(sources, s);
	}
	fg_json_set(o, "top_sources", sources);
	return o;
}
