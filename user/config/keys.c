// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every config key, one row each: its name, the sections it may appear
 * in, its type (the parser), the field it fills, its default, whether it
 * may repeat, and, for keys fixed at load, how a reload compares it. The
 * order of the rows is the order of the "expected one of" messages.
 *
 * A reloadable global key is a row here, a field of struct fg_config and
 * its use; the parser needs nothing else.
 */
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "base/util.h"
#include "config/feedfile.h"
#include "config/handlers.h"
#include "config/keys.h"
#include "config/match.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

#define MAX_SOURCES_LIMIT 16777216U

/* A key of a section and the field it fills in the section's struct: the
 * section and the struct are named together. Keys that fill several
 * fields name their section alone. */
#define FIELD(section, type, member)                                                               \
	.sections = section, .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define GLOBAL(member)	 FIELD(FG_IN_GLOBAL, struct fg_config, member)
#define POLICY(member)	 FIELD(FG_IN_POLICY, struct fg_policy_conf, member)
#define FLEET(member)	 FIELD(FG_IN_FLEET, struct fg_fleet_conf, member)
#define CROWDSEC(member) FIELD(FG_IN_CROWDSEC, struct fg_crowdsec_conf, member)
#define SYNPROXY(member) FIELD(FG_IN_SYNPROXY, struct fg_synproxy_conf, member)
#define RECORD(member)                                                                             \
	.record = offsetof(struct fg_runtime, member),                                             \
	.record_size = sizeof(((struct fg_runtime *)0)->member)
#define RUNS_WITH(member)                                                                          \
	.runs_with = offsetof(struct fg_runtime, member),                                          \
	.runs_with_size = sizeof(((struct fg_runtime *)0)->member)

/* --- the words of choices -------------------------------------------------- */

static const char *const hook_names[] = {"xdp", "tc", NULL};
static const __u8 hook_values[] = {FG_HOOK_XDP, FG_HOOK_TC};
static const struct fg_choice hooks = {hook_names, hook_values};

static const char *const mode_names[] = {"native", "generic", NULL};
static const __u8 mode_values[] = {FG_XDP_NATIVE, FG_XDP_GENERIC};
static const struct fg_choice modes = {mode_names, mode_values};

static const char *const verdict_names[] = {"pass", "drop", NULL};
static const __u8 verdict_values[] = {FG_VERDICT_PASS, FG_VERDICT_DROP};
static const struct fg_choice verdicts = {verdict_names, verdict_values};

static const char *const clock_names[] = {"precise", "coarse", NULL};
static const __u8 clock_values[] = {false, true};
static const struct fg_choice clocks = {clock_names, clock_values};

static const __u8 algorithm_values[] = {FG_ALG_TOKEN_BUCKET, FG_ALG_FIXED_WINDOW,
					FG_ALG_SLIDING_WINDOW, FG_ALG_SLIDING_LOG,
					FG_ALG_LEAKY_BUCKET};
static const struct fg_choice algorithms = {fg_algorithm_names, algorithm_values};

static const char *const scope_names[] = {"local", "host", "fleet", NULL};
static const __u8 scope_values[] = {FG_SCOPE_LOCAL, FG_SCOPE_HOST, FG_SCOPE_FLEET};
static const struct fg_choice scopes = {scope_names, scope_values};

static const char *const yes_no_names[] = {"no", "yes", NULL};
static const __u8 yes_no_values[] = {false, true};
static const struct fg_choice yes_no = {yes_no_names, yes_no_values};

static const char *const down_names[] = {"local", "closed", NULL};
static const __u8 down_values[] = {FG_REDIS_DOWN_LOCAL, FG_REDIS_DOWN_CLOSED};
static const struct fg_choice redis_downs = {down_names, down_values};

static const char *const crowdsec_scope_names[] = {"ip", "range", NULL};
static const __u8 crowdsec_scope_values[] = {FG_CROWDSEC_SCOPE_IP, FG_CROWDSEC_SCOPE_RANGE};
static const struct fg_choice crowdsec_scopes = {crowdsec_scope_names, crowdsec_scope_values};

#define ORIGIN_NAME(name, text) text,
#define ORIGIN_BIT(name, text)	(1U << FG_CROWDSEC_ORIGIN_##name),
static const char *const crowdsec_origin_names[] = {FG_CROWDSEC_ORIGINS(ORIGIN_NAME) NULL};
static const __u8 crowdsec_origin_values[] = {FG_CROWDSEC_ORIGINS(ORIGIN_BIT)};
static const struct fg_choice crowdsec_origins = {crowdsec_origin_names, crowdsec_origin_values};
_Static_assert(FG_CROWDSEC_ORIGIN_COUNT <= 8, "origin bits fit the choice values (__u8)");

/* Where the line of a secret's key is kept, for its check (handlers.h). */
static const size_t fleet_secret_line = offsetof(struct fg_fleet_conf, password_file_line);
static const size_t crowdsec_secret_line = offsetof(struct fg_crowdsec_conf, api_key_file_line);

/* --- bounds ---------------------------------------------------------------- */

static const struct fg_uint_range max_sources = {1, MAX_SOURCES_LIMIT};
/* The floor holds every policy's global and overflow keys: a smaller
 * table would let IPv6 sources evict them. */
static const struct fg_uint_range max_sources_ipv6 = {FG_MIN_SOURCES_IPV6, MAX_SOURCES_LIMIT};
static const struct fg_uint_range max_bans = {FG_MIN_MAX_BANS, FG_MAX_MAX_BANS};
static const struct fg_uint_range burst_count = {1, FG_MAX_BURST};
static const struct fg_uint_range ban_factor = {1, 1000};
/* The MSS a SYN-ACK may advertise: from the least every host must accept
 * (RFC 879's 536; IPv6's minimum MTU 1280 less 60) to a 64 KiB packet. */
static const struct fg_uint_range synproxy_mss = {536, 65495};
static const struct fg_uint_range synproxy_mss6 = {1220, 65475};
static const struct fg_uint_range synproxy_wscale = {0, FG_SYNPROXY_MAX_WSCALE};

static const struct fg_rate_or_off new_sources = {
	.max = FG_MAX_PACKET_RATE_PER_S,
	.example = "a rate of new sources such as 50000/s, up to 1000000000/s",
	.period_offset = offsetof(struct fg_config, new_sources_period_ns),
};
static const struct fg_rate_or_off synacks = {
	.max = FG_MAX_PACKET_RATE_PER_S,
	.example = "a rate of SYN-ACKs such as 100000/s, up to 1000000000/s",
	.period_offset = offsetof(struct fg_synproxy_conf, synacks_period_ns),
};
static const struct fg_rate_or_off events = {
	.max = FG_MAX_EVENTS_PER_S,
	.example = "a rate of events such as 100/s, up to 1000000/s",
	.period_offset = offsetof(struct fg_config, events_period_ns),
};

static const struct fg_duration_range sync_interval = {
	.min_ns = FG_FLEET_MIN_SYNC_NS,
	.max_ns = FG_FLEET_MAX_SYNC_NS,
	.expected = "a duration of 10ms..60s such as 250ms",
};

static const struct fg_uint_range ban_prefix4 = {0, 32};
static const struct fg_uint_range ban_prefix6 = {0, 128};
static const struct fg_duration_range fleet_max_ban = {
	.min_ns = 1000000000ULL,
	.max_ns = FG_FLEET_MAX_BAN_NS,
	.expected = "a duration of 1s..30d such as 24h",
};
static const struct fg_duration_range crowdsec_interval = {
	.min_ns = FG_CROWDSEC_MIN_INTERVAL,
	.max_ns = FG_CROWDSEC_MAX_INTERVAL,
	.expected = "a duration of 100ms..1h such as 10s",
};

/* --- what a reload cannot change ------------------------------------------- */

static const struct fg_fixed fixed_interface = {
	.kind = FG_FIXED_INTERFACE,
	.before = " (loaded on ",
	.after = ")",
};
/* --hook and --mode may override the config: a reload may keep either. */
static const struct fg_fixed fixed_hook = {
	.kind = FG_FIXED_RECORDED,
	RECORD(config_hook),
	RUNS_WITH(hook),
	.before = " (loaded at ",
	.after = "); unload and load",
};
static const struct fg_fixed fixed_xdp_mode = {
	.kind = FG_FIXED_RECORDED,
	RECORD(config_xdp_mode),
	RUNS_WITH(xdp_mode),
	.xdp_only = true,
	.before = " (loaded ",
	.after = "); unload and load",
};
static const struct fg_fixed fixed_clock = {
	.kind = FG_FIXED_RECORDED,
	RECORD(coarse_clock),
	.before = " (it is compiled into the loaded program); unload and load",
};
static const struct fg_fixed fixed_max_sources = {
	.kind = FG_FIXED_RECORDED,
	RECORD(max_sources),
	.before = ": it sizes the tables (loaded with ",
	.after = "); unload and load",
};
/* Compared with the size of `sources` by the reload (ops/loader.c). */
static const struct fg_fixed fixed_sources_table = {.kind = FG_FIXED_TABLE};
/* Compared with the size of `bans` by load and reload, which resize it
 * through the in-place upgrade (ops/upgrade.c). */
static const struct fg_fixed fixed_bans_table = {.kind = FG_FIXED_TABLE};

/* --- the keys -------------------------------------------------------------- */

const struct fg_key fg_keys[] = {
	{"interface", GLOBAL(interface), .type = &fg_type_interface, .example = "eth0",
	 .default_doc = "none: the IFACE of the command line", .fixed = &fixed_interface},
	{"hook", GLOBAL(hook), .type = &fg_type_choice, .arg = &hooks, .default_value = "xdp",
	 .example = "tc", .fixed = &fixed_hook},
	{"xdp_mode", GLOBAL(xdp_mode), .type = &fg_type_choice, .arg = &modes,
	 .default_value = "native", .example = "generic", .fixed = &fixed_xdp_mode},
	{"max_sources", GLOBAL(max_sources), .type = &fg_type_uint, .arg = &max_sources,
	 .default_value = STR(FG_DEFAULT_MAX_SOURCES), .example = "1048576",
	 .fixed = &fixed_max_sources},
	/* Default: fg_default_sources_ipv6(max_sources), once the file is read. */
	{"max_sources_ipv6", GLOBAL(max_sources_ipv6), .type = &fg_type_uint,
	 .arg = &max_sources_ipv6, .example = "2048",
	 .default_doc = "max_sources / 4, at least 1024", .fixed = &fixed_sources_table},
	{"malformed", GLOBAL(malformed), .type = &fg_type_choice, .arg = &verdicts,
	 .default_value = "drop", .example = "pass"},
	{"on_insert_failure", GLOBAL(table_full), .type = &fg_type_choice, .arg = &verdicts,
	 .default_value = "pass", .example = "drop"},
	{"new_sources", GLOBAL(new_sources_count), .type = &fg_type_rate_or_off,
	 .arg = &new_sources, .default_value = STR(FG_DEFAULT_NEW_SOURCES) "/s",
	 .example = "1000/ms"},
	/* Default 0: the COUNT of new_sources. */
	{"new_sources_burst", GLOBAL(new_sources_burst), .type = &fg_type_uint, .arg = &burst_count,
	 .example = "100000", .default_doc = "the COUNT of new_sources"},
	{"clock", GLOBAL(coarse_clock), .type = &fg_type_choice, .arg = &clocks,
	 .default_value = "precise", .example = "coarse", .fixed = &fixed_clock},
	{"events", GLOBAL(events_count), .type = &fg_type_rate_or_off, .arg = &events,
	 .default_value = STR(FG_DEFAULT_EVENTS) "/s", .example = "off"},
	{"max_bans", GLOBAL(max_bans), .type = &fg_type_uint, .arg = &max_bans,
	 .default_value = STR(FG_DEFAULT_MAX_BANS), .example = "131072",
	 .fixed = &fixed_bans_table},

	/* Required: match and rate (config/validate.c). */
	{"match", .sections = FG_IN_POLICY, .type = &fg_type_match, .example = "tcp dport 22 syn"},
	{"src", .sections = FG_IN_POLICY, .type = &fg_type_src,
	 .example = "10.0.0.0/8, 2001:db8::/32", .default_doc = "every source"},
	{"per", .sections = FG_IN_POLICY, .type = &fg_type_per, .default_value = "src/32 src/64",
	 .example = "src/24+dport"},
	{"algorithm", POLICY(algorithm), .type = &fg_type_choice, .arg = &algorithms,
	 .default_value = "token_bucket", .example = "fixed_window"},
	{"rate", .sections = FG_IN_POLICY, .type = &fg_type_rate, .example = "10MB/s"},
	/* Default: COUNT of the rate (config/validate.c). */
	{"burst", .sections = FG_IN_POLICY, .type = &fg_type_burst, .example = "64",
	 .default_doc = "the COUNT of the rate (leaky_bucket: 1 packet, or 1514 bytes)"},
	{"action", .sections = FG_IN_POLICY, .type = &fg_type_action, .default_value = "drop",
	 .example = "ban 10m"},
	/* ban_factor and ban_max: with action = ban; defaults 1 and the ban's
	 * length (config/validate.c). */
	{"ban_factor", POLICY(ban_factor), .type = &fg_type_uint, .arg = &ban_factor,
	 .example = "2", .example_needs = "action = ban 10m", .default_doc = "1"},
	{"ban_max", POLICY(ban_max_ns), .type = &fg_type_duration, .arg = &fg_ban_duration,
	 .example = "24h", .example_needs = "action = ban 10m",
	 .default_doc = "the DURATION of action = ban"},
	{"scope", POLICY(scope), .type = &fg_type_choice, .arg = &scopes, .default_value = "local",
	 .example = "host"},
	/* With action = ban: may a refusal of other traffic than TCP ban without
	 * evidence the source can receive? A spoofer can then ban any address. */
	{"ban_unverified", POLICY(ban_unverified), .type = &fg_type_choice, .arg = &yes_no,
	 .default_value = "no", .example = "yes", .example_needs = "action = ban 10m"},

	/* Required: redis (config/validate.c). */
	{"redis", .sections = FG_IN_FLEET, .type = &fg_type_redis, .example = "[::1]:6380"},
	{"sync", FLEET(sync_ns), .type = &fg_type_duration, .arg = &sync_interval,
	 .default_value = "250ms", .example = "1s"},
	{"key_prefix", FLEET(key_prefix), .type = &fg_type_key_prefix,
	 .default_value = FG_FLEET_DEFAULT_PREFIX, .example = "fg:"},
	{"on_redis_down", FLEET(on_redis_down), .type = &fg_type_choice, .arg = &redis_downs,
	 .default_value = "local", .example = "closed"},

	{"src", .sections = FG_IN_ACCESS, .type = &fg_type_access_src,
	 .example = "192.0.2.0/24, 2001:db8::/32", .default_doc = "none", .repeatable = true},

	/* [fleet] AUTH: the file is trust-checked by fg_config_read; user
	 * needs password_file (config/validate.c). */
	{"password_file", FLEET(password_file), .type = &fg_type_secret, .arg = &fleet_secret_line,
	 .example = "/etc/floodgate/redis.pass", .default_doc = "none: no AUTH"},
	{"user", FLEET(user), .type = &fg_type_key_prefix, .example = "floodgate",
	 .example_needs = "password_file = /etc/floodgate/redis.pass",
	 .default_doc = "none: AUTH with the password alone"},
	/* What a fleet ban from Redis must be to be applied. */
	{"min_ban_prefix", FLEET(min_ban_prefix), .type = &fg_type_uint, .arg = &ban_prefix4,
	 .default_value = "16", .example = "24"},
	{"min_ban_prefix6", FLEET(min_ban_prefix6), .type = &fg_type_uint, .arg = &ban_prefix6,
	 .default_value = "32", .example = "48"},
	{"max_ban", FLEET(max_ban_ns), .type = &fg_type_duration, .arg = &fleet_max_ban,
	 .default_value = "24h", .example = "1h"},

	/* [crowdsec] (docs/crowdsec.md, "CrowdSec"); required: url and api_key_file
	 * (config/validate.c), whose file is trust-checked by fg_config_read. */
	{"url", CROWDSEC(url), .type = &fg_type_url, .example = "http://127.0.0.1:8080/"},
	{"api_key_file", CROWDSEC(api_key_file), .type = &fg_type_secret,
	 .arg = &crowdsec_secret_line, .example = "/etc/floodgate/crowdsec.key"},
	{"interval", CROWDSEC(interval_ns), .type = &fg_type_duration, .arg = &crowdsec_interval,
	 .default_value = "10s", .example = "1s"},
	{"scopes", CROWDSEC(scopes), .type = &fg_type_flags, .arg = &crowdsec_scopes,
	 .default_value = "ip, range", .example = "ip"},
	/* Default: every origin. */
	{"origins", CROWDSEC(origins), .type = &fg_type_flags, .arg = &crowdsec_origins,
	 .example = "crowdsec, cscli", .default_doc = "every origin"},
	{"min_ban_prefix", CROWDSEC(min_ban_prefix), .type = &fg_type_uint, .arg = &ban_prefix4,
	 .default_value = "16", .example = "24"},
	{"min_ban_prefix6", CROWDSEC(min_ban_prefix6), .type = &fg_type_uint, .arg = &ban_prefix6,
	 .default_value = "32", .example = "48"},
	/* [synproxy] (docs/config.md, "SYN proxy"); required: ports
	 * (config/validate.c). The rest is what the SYN-ACK advertises. */
	{"ports", .sections = FG_IN_SYNPROXY, .type = &fg_type_synproxy_ports,
	 .example = "22, 443, 8000-8080"},
	{"mss", SYNPROXY(mss), .type = &fg_type_uint, .arg = &synproxy_mss,
	 .default_value = STR(FG_SYNPROXY_DEFAULT_MSS), .example = "1400"},
	{"mss6", SYNPROXY(mss6), .type = &fg_type_uint, .arg = &synproxy_mss6,
	 .default_value = STR(FG_SYNPROXY_DEFAULT_MSS6), .example = "1380"},
	{"wscale", SYNPROXY(wscale), .type = &fg_type_uint, .arg = &synproxy_wscale,
	 .default_value = STR(FG_SYNPROXY_DEFAULT_WSCALE), .example = "9"},
	{"sack", SYNPROXY(sack), .type = &fg_type_choice, .arg = &yes_no, .default_value = "yes",
	 .example = "no"},
	{"timestamps", SYNPROXY(timestamps), .type = &fg_type_choice, .arg = &yes_no,
	 .default_value = "yes", .example = "no"},
	/* Not the SYN-ACKs' options: how many spoofed SYNs may make the host
	 * answer their victims. */
	{"synacks", SYNPROXY(synacks_count), .type = &fg_type_rate_or_off, .arg = &synacks,
	 .default_value = "off", .example = "100000/s"},

	/* Feed files of [allow] and [deny] (config/feedfile.c), read when the
	 * policy is compiled; file_errors applies to all the list's files. */
	{"file", .sections = FG_IN_ACCESS, .type = &fg_type_feed_file,
	 .example = "/etc/floodgate/drop.netset", .default_doc = "none", .repeatable = true},
	{"file_errors", .sections = FG_IN_ACCESS, .type = &fg_type_file_errors,
	 .default_value = "fail", .example = "skip"},
};

const size_t fg_key_count = ARRAY_SIZE(fg_keys);

_Static_assert(ARRAY_SIZE(fg_keys) <= FG_MAX_KEYS, "FG_MAX_KEYS bounds the key table");

const struct fg_key *fg_key_find(unsigned int section, const char *name)
{
	size_t i;

	for (i = 0; i < fg_key_count; i++)
		if ((fg_keys[i].sections & section) && strcmp(fg_keys[i].name, name) == 0)
			return &fg_keys[i];
	return NULL;
}

const char *fg_key_list(unsigned int section, char *buf, size_t size)
{
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < fg_key_count && used < size; i++)
		if (fg_keys[i].sections & section)
			used += snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
					 fg_keys[i].name);
	return buf;
}
