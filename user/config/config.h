/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The floodgate config file: flat `key = value` lines, `#` comments,
 * global keys first, then `[policy NAME]` sections evaluated in file order.
 * This is the parsed, validated form; policy/policy.c compiles it into the maps.
 */
#ifndef FG_CONFIG_H
#define FG_CONFIG_H

#include <stdbool.h>
#include <stdio.h>
#include <net/if.h>

#include "floodgate.h"
#include "config/values.h"

#define FG_MAX_PORT_RANGES  16	 /* per policy */
#define FG_MAX_SRC_CIDRS    16	 /* per policy */
#define FG_MAX_ACCESS_CIDRS 1024 /* in [allow], and in [deny] */
#define FG_MAX_FEED_FILES   16	 /* file = PATH, in [allow], and in [deny] */
#define FG_FEED_PATH_LEN    256

/* Bounds beyond values.h's rate bounds; each key's bounds and default are
 * in its row of config/keys.c. */
#define FG_DEFAULT_NEW_SOURCES 50000 /* per second */
#define FG_DEFAULT_EVENTS      100   /* datapath events per second */
#define FG_MAX_EVENTS_PER_S    1000000
#define FG_MAX_BURST	       1000000000ULL
/* The largest config file read, in bytes: a bound on memory and time. */
#define FG_CONFIG_MAX_BYTES    (1 << 20)

/* [fleet]: bounds and defaults (docs/fleet.md, "Fleet-wide limits"). */
#define FG_FLEET_MIN_SYNC_NS	(10ULL * 1000 * 1000)
#define FG_FLEET_MAX_SYNC_NS	(60ULL * 1000 * 1000 * 1000)
#define FG_FLEET_DEFAULT_PREFIX "floodgate:"
#define FG_FLEET_PREFIX_LEN	64
#define FG_FLEET_HOST_LEN	256
#define FG_FLEET_UNIX_PATH_LEN	108 /* sun_path */
#define FG_FLEET_PASS_PATH_LEN	256
#define FG_FLEET_USER_LEN	64
#define FG_FLEET_MAX_BAN_NS	(30ULL * 24 * 3600 * 1000 * 1000 * 1000)

/* A policy's scope: whose traffic its rate spans. */
enum fg_scope {
	FG_SCOPE_LOCAL = 0, /* this interface (the default) */
	FG_SCOPE_FLEET = 1, /* every host syncing to the [fleet] Redis */
	FG_SCOPE_HOST = 2,  /* every interface floodgate protects on this host */
};

/* What fleet-scoped policies do while Redis cannot be reached. */
enum fg_redis_down {
	FG_REDIS_DOWN_LOCAL = 0,  /* each host enforces the full fleet rate alone */
	FG_REDIS_DOWN_CLOSED = 1, /* fleet-scoped keys are refused (fail closed) */
};

/* The [fleet] section: where the fleet's shared state lives. */
struct fg_fleet_conf {
	bool enabled;		      /* a [fleet] section was given */
	int line;		      /* of the [fleet] header */
	char host[FG_FLEET_HOST_LEN]; /* redis = HOST:PORT; "" with a unix socket */
	__u16 port;
	char unix_path[FG_FLEET_UNIX_PATH_LEN]; /* redis = unix:/path */
	__u64 sync_ns;
	char key_prefix[FG_FLEET_PREFIX_LEN];
	__u8 on_redis_down; /* enum fg_redis_down */
	/* AUTH [user] PASSWORD, the password read from password_file (its
	 * trust is checked with the config's, config/filemode.c); "": none. */
	char password_file[FG_FLEET_PASS_PATH_LEN];
	int password_file_line;
	char user[FG_FLEET_USER_LEN];
	/* What a fleet ban from Redis must be to be applied (docs/fleet.md, "What
	 * the fleet may ban"): at least this long a prefix, and at most
	 * max_ban_ns long (longer ones, and "until unbanned", are cut to it). */
	__u8 min_ban_prefix;
	__u8 min_ban_prefix6;
	__u64 max_ban_ns;
};

/* [crowdsec]: floodgate as a CrowdSec bouncer (docs/crowdsec.md, "CrowdSec"). */
#define FG_CROWDSEC_URL_LEN	 256
#define FG_CROWDSEC_MIN_INTERVAL (100ULL * 1000 * 1000)
#define FG_CROWDSEC_MAX_INTERVAL (3600ULL * 1000 * 1000 * 1000)

/* The scopes of decisions a [crowdsec] section may take (scopes = ...). */
enum fg_crowdsec_scope {
	FG_CROWDSEC_SCOPE_IP = 1 << 0,
	FG_CROWDSEC_SCOPE_RANGE = 1 << 1,
};

/* The [crowdsec] section: the Local API whose decisions become bans. */
struct fg_crowdsec_conf {
	bool enabled; /* a [crowdsec] section was given */
	int line;     /* of the [crowdsec] header */
	char url[FG_CROWDSEC_URL_LEN];
	/* The bouncer's API key; trust-checked as the fleet's password_file. */
	char api_key_file[FG_FLEET_PASS_PATH_LEN];
	int api_key_file_line;
	__u64 interval_ns;
	__u8 scopes;   /* enum fg_crowdsec_scope bits */
	__u32 origins; /* 1 << enum fg_crowdsec_origin bits; 0: every origin */
	/* What a decision must be to become a ban, as a fleet ban from Redis. */
	__u8 min_ban_prefix;
	__u8 min_ban_prefix6;
};

/* [synproxy]: SYN cookies answered at the hook for TCP ports (docs/config.md,
 * "SYN proxy"). The SYN-ACK's options must match what the listener would
 * send, or a connection the cookie admits runs with other parameters. */
#define FG_SYNPROXY_DEFAULT_MSS	   1460 /* Ethernet: 1500 - IPv4 20 - TCP 20 */
#define FG_SYNPROXY_DEFAULT_MSS6   1440 /* Ethernet: 1500 - IPv6 40 - TCP 20 */
#define FG_SYNPROXY_DEFAULT_WSCALE 7	/* Linux's for a default rmem */

struct fg_synproxy_conf {
	bool enabled; /* a [synproxy] section was given */
	int line;     /* of the [synproxy] header */
	unsigned int n_ports;
	struct fg_port_range ports[FG_MAX_PORT_RANGES]; /* TCP destination ports */
	__u16 mss;					/* advertised to IPv4 clients */
	__u16 mss6;					/* advertised to IPv6 clients */
	__u8 wscale;
	bool sack;
	bool timestamps;
	__u64 synacks_count; /* SYN-ACKs a period, machine-wide (burst too); 0 = no cap */
	__u64 synacks_period_ns;
};

struct fg_policy_conf {
	char name[FG_POLICY_NAME_LEN];
	int line;	       /* line of the [policy NAME] header, for later messages */
	__u8 proto;	       /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6; 0 = any */
	unsigned int n_dports; /* 0 = any port */
	struct fg_port_range dports[FG_MAX_PORT_RANGES];
	unsigned int n_sports; /* 0 = any port */
	struct fg_port_range sports[FG_MAX_PORT_RANGES];
	bool syn_only;	     /* match = tcp ... syn: SYN set, ACK clear */
	bool has_size;	     /* match = ... size LO-HI */
	__u8 size_lo_class;  /* first frame-length class (FG_SIZE_CLASS_SHIFT) matched */
	__u8 size_hi_class;  /* last one; FG_SIZE_CLASSES - 1 is open-ended */
	bool key_dport;	     /* per = src/N+dport */
	unsigned int n_srcs; /* 0 = any source */
	struct fg_cidr srcs[FG_MAX_SRC_CIDRS];
	__u8 key_kind;	/* enum fg_key_kind */
	__u8 prefix_v4; /* for FG_KEY_SOURCE */
	__u8 prefix_v6;
	__u8 algorithm;	      /* enum fg_algorithm */
	__u8 action;	      /* enum fg_action */
	__u64 ban_ns;	      /* action = ban DURATION */
	__u32 ban_factor;     /* each repeat ban is this many times longer (default 1) */
	__u64 ban_max_ns;     /* the longest ban (default: ban_ns) */
	bool ban_unverified;  /* action = ban bans other traffic than TCP without evidence */
	bool bytes;	      /* rate and burst count bytes */
	__u64 rate_count;     /* COUNT of COUNT/PERIOD, in packets or bytes */
	__u64 rate_period_ns; /* PERIOD */
	__u64 burst;	      /* in the same unit as rate_count */
	__u8 scope;	      /* enum fg_scope */
};

/* The feed files of [allow] or [deny] (config/feedfile.h), read when the
 * policy is compiled. */
struct fg_feed_files {
	unsigned int n;
	char path[FG_MAX_FEED_FILES][FG_FEED_PATH_LEN];
	int line[FG_MAX_FEED_FILES]; /* of each file = PATH */
	bool skip_errors;	     /* file_errors = skip */
};

struct fg_config {
	char interface[IF_NAMESIZE]; /* "" when not set */
	__u8 hook;		     /* enum fg_hook */
	__u8 xdp_mode;		     /* enum fg_xdp_mode */
	__u8 malformed;		     /* enum fg_verdict */
	__u8 table_full;	     /* enum fg_verdict */
	bool coarse_clock;	     /* clock = coarse */
	__u32 max_sources;	     /* entries of `sources4`: IPv4 keys of local policies */
	__u32 max_sources_ipv6;	     /* entries of `sources`: IPv6, global and overflow keys */
	__u64 new_sources_count;     /* new per-source entries per period; 0 = no budget */
	__u64 new_sources_period_ns;
	__u64 new_sources_burst; /* 0 = new_sources_count */
	__u64 events_count;	 /* datapath events per period (burst too); 0 = off */
	__u64 events_period_ns;
	__u32 max_bans; /* entries of `bans` (include/floodgate_lists.h) */
	unsigned int n_policies;
	struct fg_policy_conf policies[FG_MAX_POLICIES];
	unsigned int n_allow; /* [allow] src = ... */
	struct fg_cidr allow[FG_MAX_ACCESS_CIDRS];
	unsigned int n_deny; /* [deny] src = ... */
	struct fg_cidr deny[FG_MAX_ACCESS_CIDRS];
	struct fg_fleet_conf fleet;
	struct fg_crowdsec_conf crowdsec;
	struct fg_synproxy_conf synproxy;
	struct fg_feed_files allow_files; /* [allow] file = ... */
	struct fg_feed_files deny_files;  /* [deny] file = ... */
	/* The prefixes of both lists, feed files included: set when the
	 * policy is compiled (ops/steps.c); it sizes `access_lists` at load. */
	__u32 access_prefixes;
};

/* max_sources_ipv6 when the config does not set it: a quarter of
 * max_sources (most sources of a flood are IPv4), and never fewer than
 * FG_MIN_SOURCES_IPV6, which holds the global and overflow keys of every
 * policy with room to spare for IPv6 sources. */
#define FG_MIN_SOURCES_IPV6 1024U
static inline __u32 fg_default_sources_ipv6(__u32 max_sources)
{
	return max_sources / 4 > FG_MIN_SOURCES_IPV6 ? max_sources / 4 : FG_MIN_SOURCES_IPV6;
}

/* The policy `floodgate load IFACE` applies without -c (see README). */
extern const char fg_default_config[];

/* Parse `text` (named `source` in messages). On error print
 * "SOURCE:LINE: what is wrong (what was expected)" to `err`, and return
 * -EINVAL. `cfg` is fully overwritten either way. */
int fg_config_parse_string(const char *source, const char *text, struct fg_config *cfg, FILE *err);

/* Read and parse a file. An unreadable file is reported as "FILE: reason". */
int fg_config_parse_file(const char *path, struct fg_config *cfg, FILE *err);

/* The same for a file already open (read to its end, not closed), named
 * `source` in messages: what `floodgate` reads after its trust check. */
int fg_config_parse_stream(const char *source, FILE *f, struct fg_config *cfg, FILE *err);

#endif /* FG_CONFIG_H */
