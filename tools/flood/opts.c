// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate-flood's command line. Each option is one row of `options`: its
 * name, whether it takes a value, and the function that checks and stores
 * it. Checks that need several options (the address family, the frame size,
 * the batch under --rate) run once all are read, in finish_opts().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood.h"
#include "opts.h"

/* A printf format: %u is FLOOD_DEFAULT_BATCH, so the text cannot go stale. */
static const char usage_format[] =
	"Usage: floodgate-flood --dev IFACE --dst ADDR (--count N | --duration SECONDS)\n"
	"                       [--src SPEC] [--proto udp|tcp|tcp-ack] [--sport N] [--dport N]\n"
	"                       [--size BYTES] [--rate PPS] [--threads N] [--batch N]\n"
	"                       [--dst-mac MAC] [--src-mac MAC] [--seed N] [--repeat N]\n"
	"                       [--sender auto|xdp|socket] [--hold IFACE] [--json]\n"
	"\n"
	"Sends frames out of IFACE with BPF_PROG_TEST_RUN live frames and XDP_TX, so\n"
	"for a veth they arrive at its peer. The peer must run a native XDP program or\n"
	"have GRO on (ethtool -K PEER gro on), or the frames are dropped silently.\n"
	"Where the kernel refuses live frames, see --sender.\n"
	"\n"
	"  --dev IFACE         the sending device, in this network namespace\n"
	"  --dst ADDR          destination IPv4 or IPv6 address\n"
	"  --src SPEC          ADDR            one source (default 10.0.0.1 or fd00::1)\n"
	"                      ADDR+K          K consecutive sources; frame i (counted over\n"
	"                                      all threads) uses ADDR + (i mod K)\n"
	"                      ADDR+K:shuffle  the same K sources in a fixed pseudo-random\n"
	"                                      order (see --seed); K <= 16777216\n"
	"                      PREFIX/LEN      a uniformly random source in PREFIX per frame\n"
	"                      PREFIX/LEN+K    K distinct sources scattered over PREFIX (drawn\n"
	"                                      from --seed), round-robin; IPv6 /96 or longer\n"
	"                      IPv6 +K counts in the low 32 bits. The family must match --dst.\n"
	"  --proto udp|tcp|tcp-ack\n"
	"                      default udp; tcp sends SYNs with sequence number i;\n"
	"                      tcp-ack sends ACKs with sequence number i and one made-up\n"
	"                      acknowledgment number (as a forged SYN cookie would)\n"
	"  --sport N           default 1024\n"
	"  --dport N           default 9\n"
	"  --size BYTES        frame size without FCS, from the headers (42 IPv4/UDP,\n"
	"                      54 IPv4/TCP, 62 IPv6/UDP, 74 IPv6/TCP) to 1514; default\n"
	"                      60 or the headers if larger. The payload is zeros.\n"
	"  --count N           frames in total, over all threads\n"
	"  --duration SECONDS  or: stop sending after this long (decimals allowed)\n"
	"  --rate PPS          cap on the total rate (paced per batch, no drift)\n"
	"  --threads N         default 1; thread i is pinned to the (i mod n)-th of the\n"
	"                      n CPUs this process may run on\n"
	"  --batch N           frames per test_run call, default %u; with --rate at\n"
	"                      most PPS/1000 (the socket sender's unit of pacing)\n"
	"  --dst-mac MAC       required unless IFACE is a veth whose peer is in this\n"
	"                      namespace; then the peer's address is the default\n"
	"  --src-mac MAC       default: IFACE's address\n"
	"  --seed N            seed of the :shuffle order and of scattered sources\n"
	"                      (default 1)\n"
	"  --repeat N          send each source N frames in a row, per CPU (default 1):\n"
	"                      a spoofer whose sources come back at once\n"
	"  --sender auto|xdp|socket\n"
	"                      xdp: live frames, as above; socket: frames built here\n"
	"                      and written to an AF_PACKET socket on IFACE (slower; no\n"
	"                      receiver requirement); auto (default): xdp, or socket\n"
	"                      when the kernel refuses live frames (EPERM, EOPNOTSUPP)\n"
	"  --hold IFACE        attach the program in generic mode to IFACE (in this\n"
	"                      namespace) rather than to --dev, for the length of the\n"
	"                      run, which spares each batch an RCU grace period: for\n"
	"                      a --dev that already runs an XDP program in native mode\n"
	"  --json              print one JSON object: sent, elapsed_ns, start_ns, end_ns\n"
	"                      (CLOCK_MONOTONIC: the first frame's batch to the last's;\n"
	"                      elapsed_ns counts from the run's start, before the first\n"
	"                      batch), max_batch_ns, threads, sources (0 when random),\n"
	"                      batch, rate, size, sender (xdp or socket), tx_dropped\n"
	"                      (-1 when unknown), held_on (the device the program is\n"
	"                      held on, or \"\") and per_source (fixed, +K and\n"
	"                      scattered sources, in address order, when K <= 1048576)\n"
	"\n"
	"Exit codes: 0 ok, 1 runtime failure, 2 bad usage.\n";

int flood_usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "Error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'floodgate-flood --help' for usage.\n");
	return FLOOD_EXIT_USAGE;
}

/* ---- values ------------------------------------------------------------ */

static bool parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_mac(const char *s, __u8 mac[ETH_ALEN])
{
	unsigned int b[ETH_ALEN];
	int n = 0, i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n) !=
		    6 ||
	    n != 17 || s[n])
		return false;
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = (__u8)b[i];
	return true;
}

/* Returns AF_INET or AF_INET6, or 0. */
static int parse_addr(const char *s, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return AF_INET6;
	return 0;
}

int flood_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

__u32 flood_low_word(const __u8 *addr, int family)
{
	__u32 w;

	memcpy(&w, addr + (family == AF_INET ? 0 : 12), 4);
	return ntohl(w);
}

static int parse_src(struct flood_opts *o)
{
	const char *spec =
		o->src_str ? o->src_str : (o->family == AF_INET ? "10.0.0.1" : "fd00::1");
	char buf[128], *sep;
	int family, i;

	if (strlen(spec) >= sizeof(buf))
		return flood_usage_err("--src '%s' is too long", spec);
	strcpy(buf, spec);
	o->nsrc = 1;
	o->src_mode = FLOOD_SRC_SEQ;

	if ((sep = strchr(buf, '/'))) {
		char *plus = strchr(sep + 1, '+');
		__u64 len, k;
		int host_bits;

		*sep = '\0';
		if (plus)
			*plus = '\0';
		family = parse_addr(buf, o->src);
		if (!family)
			return flood_usage_err("--src '%s': '%s' is not an IPv4 or IPv6 address",
					       spec, buf);
		if (!parse_u64(sep + 1, 0, family == AF_INET ? 32 : 128, &len))
			return flood_usage_err("--src '%s': prefix length must be 0-%d", spec,
					       family == AF_INET ? 32 : 128);
		o->prefix_len = (int)len;
		for (i = 0; i < flood_addr_len(family); i++) {
			int bits = o->prefix_len - 8 * i;

			if (bits <= 0)
				o->src[i] = 0;
			else if (bits < 8)
				o->src[i] &= (__u8)(0xff << (8 - bits));
		}
		host_bits = flood_addr_len(family) * 8 - o->prefix_len;
		if (plus) {
			/* The offsets are drawn in the word +K counts in. */
			if (host_bits > 32)
				return flood_usage_err("--src '%s': scattered IPv6 sources need a "
						       "prefix of /96 or longer",
						       spec);
			if (!parse_u64(plus + 1, 1, FLOOD_MAX_SHUFFLE, &k))
				return flood_usage_err(
					"--src '%s': K must be an integer from 1 to %u", spec,
					FLOOD_MAX_SHUFFLE);
			if (host_bits < 32 && k > 1ULL << host_bits)
				return flood_usage_err("--src '%s': /%d holds only %llu addresses",
						       spec, o->prefix_len, 1ULL << host_bits);
			o->nsrc = (__u32)k;
			o->src_mode = FLOOD_SRC_SCATTER;
		} else if (host_bits > 0) {
			/* A full-length prefix is one fixed source. */
			o->src_mode = FLOOD_SRC_RANDOM;
		}
	} else if ((sep = strchr(buf, '+'))) {
		char *shuffle;
		__u64 k;

		*sep = '\0';
		shuffle = strchr(sep + 1, ':');
		if (shuffle) {
			*shuffle++ = '\0';
			if (strcmp(shuffle, "shuffle"))
				return flood_usage_err(
					"--src '%s': unknown suffix ':%s' (only ':shuffle')", spec,
					shuffle);
		}
		family = parse_addr(buf, o->src);
		if (!family)
			return flood_usage_err("--src '%s': '%s' is not an IPv4 or IPv6 address",
					       spec, buf);
		if (!parse_u64(sep + 1, 1, UINT32_MAX, &k))
			return flood_usage_err("--src '%s': K must be an integer from 1 to %u",
					       spec, UINT32_MAX);
		if ((__u64)flood_low_word(o->src, family) + k - 1 > UINT32_MAX)
			return flood_usage_err("--src '%s': ADDR+K runs past the end of the %s",
					       spec,
					       family == AF_INET ? "address space" : "low 32 bits");
		if (shuffle && k > FLOOD_MAX_SHUFFLE)
			return flood_usage_err("--src '%s': at most %u shuffled sources", spec,
					       FLOOD_MAX_SHUFFLE);
		o->nsrc = (__u32)k;
		if (shuffle && k > 1)
			o->src_mode = FLOOD_SRC_SHUFFLE;
	} else {
		family = parse_addr(buf, o->src);
		if (!family)
			return flood_usage_err("--src '%s' is not an IPv4 or IPv6 address", spec);
	}
	if (family != o->family)
		return flood_usage_err(
			"--src '%s' and --dst '%s' are of different address families", spec,
			o->dst_str);
	return 0;
}

__u32 flood_headers_len(const struct flood_opts *o)
{
	return ETH_HLEN + (o->family == AF_INET ? 20 : 40) + (o->proto == IPPROTO_TCP ? 20 : 8);
}

/* ---- one function per option ------------------------------------------- */

/* The options kept as given, checked once the others are known. */
static int opt_text(struct flood_opts *o, const char *name, const char *v)
{
	const char **field = !strcmp(name, "dev")    ? &o->dev
			     : !strcmp(name, "hold") ? &o->hold
			     : !strcmp(name, "dst")  ? &o->dst_str
			     : !strcmp(name, "src")  ? &o->src_str
						     : &o->size_str;

	*field = v;
	return 0;
}

static int opt_proto(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!strcmp(v, "udp"))
		o->proto = IPPROTO_UDP;
	else if (!strcmp(v, "tcp") || !strcmp(v, "tcp-ack"))
		o->proto = IPPROTO_TCP;
	else
		return flood_usage_err("--proto must be udp, tcp or tcp-ack, not '%s'", v);
	o->tcp_ack = !strcmp(v, "tcp-ack");
	return 0;
}

static int opt_port(struct flood_opts *o, const char *name, const char *v)
{
	__u64 port;

	if (!parse_u64(v, 0, 65535, &port))
		return flood_usage_err("--%s must be a port number 0-65535, not '%s'", name, v);
	*(!strcmp(name, "sport") ? &o->sport : &o->dport) = (__u16)port;
	return 0;
}

static int opt_count(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!parse_u64(v, 1, UINT64_MAX / 2, &o->count))
		return flood_usage_err("--count must be a positive integer, not '%s'", v);
	return 0;
}

static int opt_duration(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!parse_double(v, 0, 1e7, &o->duration) || o->duration <= 0)
		return flood_usage_err("--duration must be a positive number of seconds, not '%s'",
				       v);
	return 0;
}

static int opt_rate(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!parse_double(v, 0, 1e10, &o->rate) || o->rate <= 0)
		return flood_usage_err(
			"--rate must be a positive number of frames per second, not '%s'", v);
	return 0;
}

static int opt_sender(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!strcmp(v, "auto"))
		o->sender = FLOOD_SENDER_AUTO;
	else if (!strcmp(v, "xdp"))
		o->sender = FLOOD_SENDER_XDP;
	else if (!strcmp(v, "socket"))
		o->sender = FLOOD_SENDER_SOCKET;
	else
		return flood_usage_err("--sender must be auto, xdp or socket, not '%s'", v);
	return 0;
}

/* --threads, --batch and --repeat: counts from 1 to their own maximum. */
static int opt_amount(struct flood_opts *o, const char *name, const char *v)
{
	bool threads = !strcmp(name, "threads"), batch = !strcmp(name, "batch");
	__u64 max = threads ? FLOOD_MAX_THREADS : batch ? FLOOD_MAX_BATCH : FLOOD_MAX_REPEAT, n;

	if (!parse_u64(v, 1, max, &n))
		return flood_usage_err("--%s must be 1-%llu, not '%s'", name,
				       (unsigned long long)max, v);
	*(threads ? &o->threads : batch ? &o->batch : &o->repeat) = (__u32)n;
	return 0;
}

static int opt_mac(struct flood_opts *o, const char *name, const char *v)
{
	bool dst = !strcmp(name, "dst-mac");

	if (!parse_mac(v, dst ? o->dst_mac : o->src_mac))
		return flood_usage_err("--%s must look like 02:00:00:00:00:01, not '%s'", name, v);
	*(dst ? &o->have_dst_mac : &o->have_src_mac) = true;
	return 0;
}

static int opt_seed(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	if (!parse_u64(v, 0, UINT64_MAX, &o->seed))
		return flood_usage_err("--seed must be a non-negative integer, not '%s'", v);
	return 0;
}

static int opt_json(struct flood_opts *o, const char *name, const char *v)
{
	(void)name;
	(void)v;
	o->json = true;
	return 0;
}

static int opt_help(struct flood_opts *o, const char *name, const char *v)
{
	(void)o;
	(void)name;
	(void)v;
	printf(usage_format, FLOOD_DEFAULT_BATCH);
	return -1;
}

struct flood_option {
	const char *name;
	bool takes_value;
	int (*apply)(struct flood_opts *o, const char *name, const char *value);
};

static const struct flood_option options[] = {
	{"dev", true, opt_text},	  {"dst", true, opt_text},
	{"src", true, opt_text},	  {"proto", true, opt_proto},
	{"sport", true, opt_port},	  {"dport", true, opt_port},
	{"size", true, opt_text},	  {"count", true, opt_count},
	{"duration", true, opt_duration}, {"rate", true, opt_rate},
	{"threads", true, opt_amount},	  {"batch", true, opt_amount},
	{"dst-mac", true, opt_mac},	  {"src-mac", true, opt_mac},
	{"seed", true, opt_seed},	  {"json", false, opt_json},
	{"help", false, opt_help},	  {"repeat", true, opt_amount},
	{"sender", true, opt_sender},	  {"hold", true, opt_text},
};

#define N_OPTIONS  (sizeof(options) / sizeof(options[0]))
#define FIRST_CODE 256 /* getopt_long's value for options[i] is FIRST_CODE + i */

/* ---- after all options are read ---------------------------------------- */

static int finish_size(struct flood_opts *o)
{
	__u32 min = flood_headers_len(o);
	__u64 v;

	if (!o->size_str) {
		o->size = min > FLOOD_MIN_FRAME ? min : FLOOD_MIN_FRAME;
		return 0;
	}
	if (!parse_u64(o->size_str, min, FLOOD_MAX_FRAME, &v))
		return flood_usage_err("--size must be %u-%u for %s over %s, not '%s'", min,
				       FLOOD_MAX_FRAME, o->proto == IPPROTO_TCP ? "TCP" : "UDP",
				       o->family == AF_INET ? "IPv4" : "IPv6", o->size_str);
	o->size = (__u32)v;
	return 0;
}

static int finish_opts(struct flood_opts *o)
{
	int ret;

	if (!o->dev)
		return flood_usage_err("--dev IFACE is required");
	if (!o->dst_str)
		return flood_usage_err("--dst ADDR is required");
	if (!o->count == !(o->duration > 0))
		return flood_usage_err("give exactly one of --count N and --duration SECONDS");
	o->family = parse_addr(o->dst_str, o->dst);
	if (!o->family)
		return flood_usage_err("--dst '%s' is not an IPv4 or IPv6 address", o->dst_str);
	ret = parse_src(o);
	if (!ret)
		ret = finish_size(o);
	if (ret)
		return ret;
	/* Paced runs send at most one millisecond's frames per call. */
	if (o->rate > 0) {
		double per_ms = floor(o->rate / 1000);

		if (per_ms < 1)
			per_ms = 1;
		if (per_ms < o->batch)
			o->batch = (__u32)per_ms;
	}
	return 0;
}

int flood_parse_opts(int argc, char **argv, struct flood_opts *o)
{
	struct option long_opts[N_OPTIONS + 1];
	size_t i;
	int code, ret;

	for (i = 0; i < N_OPTIONS; i++)
		long_opts[i] = (struct option){
			options[i].name, options[i].takes_value ? required_argument : no_argument,
			NULL, FIRST_CODE + (int)i};
	long_opts[N_OPTIONS] = (struct option){NULL, 0, NULL, 0};
	*o = (struct flood_opts){.proto = IPPROTO_UDP,
				 .sport = 1024,
				 .dport = 9,
				 .threads = 1,
				 .batch = FLOOD_DEFAULT_BATCH,
				 .repeat = 1,
				 .seed = 1};
	optind = 0; /* full getopt reinitialisation (glibc) */
	opterr = 0;
	while ((code = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		const struct flood_option *opt;

		if (code == 'h')
			return opt_help(o, "help", NULL);
		if (code == ':')
			return flood_usage_err("%s needs a value", argv[optind - 1]);
		if (code < FIRST_CODE || code >= FIRST_CODE + (int)N_OPTIONS)
			return flood_usage_err("unknown option '%s'", argv[optind - 1]);
		opt = &options[code - FIRST_CODE];
		ret = opt->apply(o, opt->name, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return flood_usage_err("unexpected argument '%s'", argv[optind]);
	return finish_opts(o);
}
