// SPDX-License-Identifier: GPL-2.0-only
/* `events` as text and JSON lines, and the UTC times the printers show. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "base/clock.h"
#include "cli/print.h"

void fg_format_utc(__u64 ns, int decimals, char *buf, size_t size)
{
	time_t secs = (time_t)(ns / FG_NS_PER_S);
	__u64 fraction = ns % FG_NS_PER_S;
	struct tm tm;
	char day[32];
	int i;

	for (i = decimals; i < 9; i++)
		fraction /= 10;
	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%0*" PRIu64 "Z", day, decimals, (uint64_t)fraction);
}

#define EVENT_TIME_DECIMALS 3

void fg_print_event_text(const struct fg_event_view *event)
{
	char when[64], until[64] = "never";

	fg_format_utc(event->time_ns, EVENT_TIME_DECIMALS, when, sizeof(when));
	if (event->is_ban && !event->forever)
		fg_format_utc(event->expires_ns, EVENT_TIME_DECIMALS, until, sizeof(until));
	printf("%s %-16s %s", when, fg_event_name(event->type), event->source);
	if (event->dport)
		printf(" dport %u", event->dport);
	printf(" policy %s", event->policy ? event->policy : "(by hand)");
	if (event->is_ban)
		printf(" until %s", until);
	printf("\n");
	fflush(stdout);
}

json_t *fg_event_json(const struct fg_event_view *event)
{
	json_t *o = json_object();
	char when[64], until[64];

	fg_format_utc(event->time_ns, EVENT_TIME_DECIMALS, when, sizeof(when));
	fg_json_set(o, "time", json_string(when));
	fg_json_set(o, "type", json_string(fg_event_name(event->type)));
	fg_json_set(o, "source", json_string(event->source));
	fg_json_set(o, "dport", event->dport ? json_integer(event->dport) : json_null());
	fg_json_set(o, "policy", fg_json_text(event->policy));
	if (event->is_ban) {
		fg_format_utc(event->expires_ns, EVENT_TIME_DECIMALS, until, sizeof(until));
		fg_json_set(o, "expires", event->forever ? json_null() : json_string(until));
	}
	return o;
}
