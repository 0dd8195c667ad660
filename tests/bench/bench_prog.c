// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF_PROG_TEST_RUN micro-benchmark: ns/packet of the floodgate XDP program
 * (production settings: real clock, CAS and locks) beside a bare XDP_DROP
 * program measured in the same run, interleaved, medians of several rounds.
 * It covers every algorithm on a hot key, 4k keys and 1M keys, the two
 * clocks, the map types for the per-source table, and a random-source flood
 * with and without the new-source budget; and it reports the kernel's
 * memory per tracked source in sources4 (IPv4) and sources (the rest);
 * `bench_prog --memory` prints only that, and `bench_prog TEXT` times only
 * the scenarios whose names contain TEXT (to compare two builds of one
 * change quickly). The simplest limiter (tests/bench/simplest.bpf.c) is timed
 * beside them on a hot key and 1k keys. Not a test: it asserts nothing about speed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "baseline.skel.h"
#include "simplest.skel.h"
#include "fg_bench_source.h"
#include "config/config.h"
#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "policy/policy.h"
#include "maps/skeleton.h"
#include "../prog/packets.h"

/* Many short rounds rather than a few long ones: this VM's speed drifts by
 * tens of ns over seconds, and a round runs every scenario within about
 * two seconds, so each step is taken as the median of its per-round
 * differences, each measured close together in time. */
#define ROUNDS		  15
#define REPEAT		  300000
#define MAX_SCENARIOS	  48
#define KEYS_1K		  (1024 - 1)
#define KEYS_4K		  (4096 - 1)
#define KEYS_1M		  ((1 << 20) - 1)
#define KEYS_1K_SCATTERED (KEYS_1K | FG_BENCH_SCATTERED)
#define RANDOM_16M	  FG_BENCH_RANDOM

/* The packet a scenario times: the UDP datagram every limit is measured
 * with, the same from an IPv6 source, or a TCP SYN or ACK to port 22 (the
 * SYN proxy's). A SYN only without [synproxy]: the proxy rewrites it into
 * its SYN-ACK in place, and the test run's repeats would time that. */
enum bench_packet { BENCH_UDP, BENCH_UDP6, BENCH_TCP_SYN, BENCH_TCP_ACK };

struct scenario {
	char name[64];
	char config[1024];
	__u32 source_mask; /* 0: one key; KEYS_*: that many; RANDOM_16M
			    * (include/fg_bench_source.h) */
	__u32 max_sources; /* 0: the config's */
	__u32 map_type;	   /* 0: LRU hash */
	__u32 map_flags;
	bool frozen_clock; /* the test clock: what bpf_ktime_get_ns costs */
	bool coarse_clock;
	bool one_ban;	     /* a ban elsewhere: the ban trie is walked, not empty */
	__u32 flood_seconds; /* >0: the presence filter as a flood that long
			      * leaves it (fill_presence) */
	enum bench_packet packet;
	/* the SYN proxy found the ACK's connection in conntrack: its
	 * synproxy_flows entry, planted, never expires */
	bool known_flow;
	/* packets sent before each round's timing: they spend the burst
	 * that the idle time since the last round gave back, so a round
	 * times the flood's refusals, not that burst's admissions */
	__u32 drain;
	struct floodgate_bpf *skel;
	double ns[ROUNDS]; /* by round, in run order */
};

/* Bare XDP_DROP, by round: the baseline of every ratio; and the same
 * through one subprogram call, and with one helper call. */
static double bare_ns[ROUNDS], subprogram_ns[ROUNDS], helper_ns[ROUNDS];

/* The simplest limiter (tests/bench/simplest.bpf.c), issue 25's baseline:
 * on a hot key and on 1k keys, each timed in the same rounds. */
static const struct {
	const char *name;
	__u32 source_mask;
} simplest_cases[] = {{"simplest limiter, hot key", 0},
		      {"simplest limiter, 1k keys", KEYS_1K},
		      {"simplest limiter, 1k scattered keys", KEYS_1K_SCATTERED}};
#define N_SIMPLEST (sizeof(simplest_cases) / sizeof(simplest_cases[0]))
static struct simplest_bpf *simplest[N_SIMPLEST];
static double simplest_ns[N_SIMPLEST][ROUNDS];

static struct scenario scenarios[MAX_SCENARIOS];
static int n_scenarios;

static struct scenario *add(const char *name, const char *config, __u32 mask)
{
	struct scenario *s = &scenarios[n_scenarios++];

	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->config, sizeof(s->config), "%s", config);
	s->source_mask = mask;
	return s;
}

/* The keys a set's mask names: the number its warm-up sends. */
static __u32 keys_in(__u32 mask)
{
	return (mask & ~FG_BENCH_SCATTERED) + 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *values)
{
	double sorted[ROUNDS];

	memcpy(sorted, values, sizeof(sorted));
	qsort(sorted, ROUNDS, sizeof(double), cmp_double);
	return sorted[ROUNDS / 2];
}

/* The source and ports of every timed packet. */
#define BENCH_SRC   "10.0.0.1"
#define BENCH_SRC6  "2001:db8:2::1"
#define BENCH_SPORT 40000

static double run_ns(int prog_fd, __u32 repeat, enum bench_packet packet)
{
	struct pkt_spec spec = {.family = packet == BENCH_UDP6 ? 6 : 4,
				.src = packet == BENCH_UDP6 ? BENCH_SRC6 : BENCH_SRC,
				.sport = BENCH_SPORT,
				.proto = packet >= BENCH_TCP_SYN ? IPPROTO_TCP : IPPROTO_UDP,
				.dport = packet >= BENCH_TCP_SYN ? 22 : 9};
	uint8_t buf[1600];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .repeat = repeat);
	struct tcphdr *th;

	opts.data_size_in = build_packet(buf, &spec);
	if (packet == BENCH_TCP_ACK) { /* build_packet writes a SYN */
		th = (struct tcphdr *)(buf + sizeof(struct ethhdr) + sizeof(struct iphdr));
		th->syn = 0;
		th->ack = 1;
	}
	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		fprintf(stderr, "test run failed: %s\n", strerror(errno));
		exit(1);
	}
	return opts.duration; /* the kernel's average ns per repeat */
}

/* Plants the timed ACK's connection in every CPU's synproxy_flows, as the
 * proxy's conntrack lookup would write it, serving for ever: the cost of
 * the check every packet of a known connection makes, not of the
 * lookup it makes once a second. */
static void plant_known_flow(const struct scenario *s)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.synproxy_flows);
	struct fg_synproxy_flow flow = {
		.sport = BENCH_SPORT, .dport = 22, .family = FG_FAMILY_IPV4, .until_ns = ~0ULL};
	__u32 saddr[4] = {0}, daddr[4] = {0}, slot;
	struct fg_synproxy_flow *each;
	int cpu;

	inet_pton(AF_INET, BENCH_SRC, &saddr[0]);
	inet_pton(AF_INET, "192.0.2.1", &daddr[0]); /* build_packet's */
	memcpy(flow.saddr, saddr, sizeof(flow.saddr));
	memcpy(flow.daddr, daddr, sizeof(flow.daddr));
	slot = fg_synproxy_flow_slot_of(saddr, daddr, BENCH_SPORT, 22);
	each = calloc(ncpus, sizeof(*each));
	if (!each)
		exit(1);
	for (cpu = 0; cpu < ncpus; cpu++)
		each[cpu] = flow;
	if (bpf_map_update_elem(fd, &slot, each, BPF_ANY)) {
		fprintf(stderr, "%s: cannot plant the connection\n", s->name);
		exit(1);
	}
	free(each);
}

/* The connections the proxy passed as known, on every CPU. */
static __u64 known_connections(const struct scenario *s)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct fg_global_stats *each = calloc(ncpus, sizeof(*each));
	__u32 zero = 0;
	__u64 known = 0;

	if (!each || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.global_stats), &zero, each))
		exit(1);
	for (cpu = 0; cpu < ncpus; cpu++)
		known += each[cpu].synproxy_established;
	free(each);
	return known;
}

/* xorshift64: the same fill every run */
static double uniform(__u64 *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (double)(*state >> 11) / (1ULL << 53);
}

/* The presence filter as a random-source flood leaves it after
 * s->flood_seconds at the default new-source budget: each state the budget
 * lets a spoofed source make is noted, and notes last two generations
 * (2 x 69 s), so that after 69 s a level holds a generation's 3.4 M notes
 * and from 138 s on twice that, the most it holds. A level of B bits then
 * has each bit set with probability 1 - e^(-notes / B). Written before each
 * round, by construction, rather than waited for (the run's own budget
 * would take those minutes). All are written as the current generation's,
 * so that a generation that turns during the round reads them as the
 * older set, with the same density. (In the first moments of a generation
 * the program's coarse reading may still name the last one, for which
 * these words hold nothing: a few ms in 69 s.) */
static void fill_presence(const struct scenario *s)
{
	static __u32 keys[FG_PRESENCE_WORDS];
	static __u64 words[FG_PRESENCE_WORDS];
	const double notes = (double)FG_DEFAULT_NEW_SOURCES * s->flood_seconds;
	const struct {
		int fd;
		__u32 count;
	} levels[] = {{bpf_map__fd(s->skel->maps.presence4_first), FG_PRESENCE_FIRST_WORDS},
		      {bpf_map__fd(s->skel->maps.presence4), FG_PRESENCE_WORDS}};
	__u64 random = 0x9e3779b97f4a7c15ULL, gen;
	struct timespec now;
	size_t l;
	__u32 i, bit;

	clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns's clock */
	gen = fg_presence_gen((__u64)now.tv_sec * 1000000000ULL + now.tv_nsec);
	for (l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		const double set = 1 - exp(-notes / ((double)levels[l].count * FG_PRESENCE_BITS));
		__u32 count = levels[l].count;

		for (i = 0; i < count; i++) {
			keys[i] = i;
			words[i] = gen << 56;
			for (bit = 0; bit < FG_PRESENCE_BITS; bit++) {
				if (uniform(&random) < set)
					words[i] |= 1ULL << bit;
			}
		}
		if (bpf_map_update_batch(levels[l].fd, keys, words, &count, NULL)) {
			fprintf(stderr, "%s: cannot fill the presence filter: %s\n", s->name,
				strerror(errno));
			exit(1);
		}
	}
}

static void load(struct scenario *s)
{
	const struct fg_skel_opts opts = {
		.progs = FG_SKEL_XDP,
		.test_clock = s->frozen_clock,
		.bench_source_mask = s->source_mask,
		.sources_entries = s->max_sources,
		.windows_entries = s->max_sources,
		.sources_map_type = s->map_type,
		.sources_map_flags = s->map_flags,
	};
	char config[sizeof(s->config) + 32];

	/* The clock is a config key: the benchmark's switch goes through it. */
	snprintf(config, sizeof(config), "%s%s", s->coarse_clock ? "clock = coarse\n" : "",
		 s->config);
	if (fg_skel_prepare_text(config, &opts, &s->skel)) {
		fprintf(stderr, "%s: cannot load\n", s->name);
		exit(1);
	}
	if (s->one_ban) {
		struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 24,
					     .family = FG_FAMILY_IPV4,
					     .addr = {198, 51, 100}};
		struct fg_ban ban = {
			.expires_ns = ~0ULL, .family = FG_FAMILY_IPV4, .prefix_len = 24};

		/* As every writer of `bans`: the runtime record's flag first. */
		if (fg_runtime_mark_bans(bpf_map__fd(s->skel->maps.runtime)) ||
		    bpf_map_update_elem(bpf_map__fd(s->skel->maps.bans), &key, &ban, BPF_ANY)) {
			fprintf(stderr, "%s: cannot add the ban\n", s->name);
			exit(1);
		}
	}
	if (s->known_flow) {
		plant_known_flow(s);
		/* the premise: the planted entry is what passes the ACK */
		run_ns(bpf_program__fd(s->skel->progs.fg_xdp), 1, s->packet);
		if (known_connections(s) != 1) {
			fprintf(stderr, "%s: the planted connection is not found\n", s->name);
			exit(1);
		}
	}
	/* Warm up: every key of a key set gets its state before timing. */
	if (s->source_mask && s->source_mask != RANDOM_16M)
		run_ns(bpf_program__fd(s->skel->progs.fg_xdp), keys_in(s->source_mask), s->packet);
}

/* Loads the simplest limiter for each case whose name contains `text`
 * (NULL: every case), and warms its keys up. */
static void load_simplest(const char *text)
{
	size_t i;

	for (i = 0; i < N_SIMPLEST; i++) {
		if (text && !strstr(simplest_cases[i].name, text))
			continue;
		simplest[i] = simplest_bpf__open();
		if (!simplest[i])
			exit(1);
		simplest[i]->rodata->bench_source_mask = simplest_cases[i].source_mask;
		if (simplest_bpf__load(simplest[i])) {
			fprintf(stderr, "%s: cannot load\n", simplest_cases[i].name);
			exit(1);
		}
		run_ns(bpf_program__fd(simplest[i]->progs.simplest),
		       keys_in(simplest_cases[i].source_mask), BENCH_UDP);
	}
}

/* The kernel's own accounting of a map's memory (fdinfo "memlock"). */
static unsigned long long map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &bytes) == 1)
			break;
	if (f)
		fclose(f);
	return bytes;
}

/* The kernel's memory per tracked source in each per-source table, at
 * max_sources = 1048576 and its default max_sources_ipv6 (262144): both
 * powers of two, so the kernel's buckets match the entries. Only the maps
 * are created, no program. */
static void print_memory(void)
{
	static const char config[] = "max_sources = 1048576\n[policy p]\nmatch = udp\n"
				     "rate = 10/s\n";
	const struct fg_skel_opts opts = {.progs = FG_SKEL_XDP};
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	const struct bpf_map *maps[2];
	struct floodgate_bpf *skel = NULL;
	struct bpf_program *prog;
	int i;

	if (!cfg || fg_config_parse_string("bench", config, cfg, stderr) ||
	    !(skel = fg_skel_open(cfg, &opts))) {
		fprintf(stderr, "bench_prog: cannot open the object\n");
		exit(1);
	}
	bpf_object__for_each_program (prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	if (floodgate_bpf__load(skel)) {
		fprintf(stderr, "bench_prog: cannot create the maps\n");
		exit(1);
	}
	maps[0] = skel->maps.sources4;
	maps[1] = skel->maps.sources;
	printf("\nmemory per tracked source (fdinfo memlock / entries, LRU hash)\n");
	for (i = 0; i < 2; i++) {
		__u32 entries = bpf_map__max_entries(maps[i]);
		unsigned long long memlock = map_memlock(bpf_map__fd(maps[i]));

		printf("%-10s %-36s %8u entries, memlock %10llu: %8.4f bytes\n",
		       bpf_map__name(maps[i]),
		       i ? "(IPv6, global, overflow; 24-B key)" : "(IPv4; 12-B key)", entries,
		       memlock, (double)memlock / entries);
	}
	floodgate_bpf__destroy(skel);
	free(cfg);
}

static void build_scenarios(void)
{
	static const struct {
		const char *name, *config;
	} algorithms[] = {
		{"token_bucket", "[policy p]\nmatch = udp\nrate = 10/s\n"},
		{"fixed_window",
		 "[policy p]\nmatch = udp\nalgorithm = fixed_window\nrate = 10/s\n"},
		{"sliding_window",
		 "[policy p]\nmatch = udp\nalgorithm = sliding_window\nrate = 10/s\n"},
		{"sliding_log", "[policy p]\nmatch = udp\nalgorithm = sliding_log\nrate = 10/s\n"},
		{"leaky_bucket",
		 "[policy p]\nmatch = udp\nalgorithm = leaky_bucket\nrate = 10/s\n"},
	};
	static const struct {
		const char *name;
		__u32 mask;
	} keys[] = {{"hot key", 0}, {"4k keys", KEYS_4K}, {"1M keys", KEYS_1M}};
	char name[64], config[256];
	struct scenario *s;
	size_t a, k;

	for (a = 0; a < sizeof(algorithms) / sizeof(algorithms[0]); a++) {
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			snprintf(name, sizeof(name), "%s, %s", algorithms[a].name, keys[k].name);
			snprintf(config, sizeof(config), "new_sources = off\n%s",
				 algorithms[a].config);
			s = add(name, config, keys[k].mask);
			/* twice the keys, a power of two: no eviction, and the
			 * kernel sizes its buckets to the entries */
			s->max_sources = keys[k].mask ? 2 * (keys[k].mask + 1) : 0;
		}
	}
	/* beside "simplest limiter, 1k keys" (issue 25's 1k-source goal) */
	s = add("token_bucket, 1k keys",
		"new_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n", KEYS_1K);
	s->max_sources = 2 * (KEYS_1K + 1);
	/* the same keys scattered: some share a slot of the refusal cache */
	s = add("token_bucket, 1k scattered keys",
		"new_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n", KEYS_1K_SCATTERED);
	s->max_sources = 2 * (KEYS_1K + 1);
	/* A sources4 of fewer than 256 entries turns the refusal cache off
	 * (fg_refusal_churn_limit): every refusal looks its state up. */
	s = add("token_bucket, hot key, no refusal cache", "[policy p]\nmatch = udp\nrate = 10/s\n",
		0);
	s->max_sources = 128;
	s = add("clock: coarse, hot key", "[policy p]\nmatch = udp\nrate = 10/s\n", 0);
	s->coarse_clock = true;
	s = add("clock: none (frozen), hot key", "[policy p]\nmatch = udp\nrate = 10/s\n", 0);
	s->frozen_clock = true;

	/* Per-packet steps, each beside "token_bucket, hot key": the lists'
	 * LPM walk (skipped when there are none), the ban trie's walk with an
	 * entry elsewhere, and the clock (frozen and coarse, above). */
	add("step: [deny] list of 1 prefix walked, hot key",
	    "[deny]\nsrc = 198.51.100.0/24\n[policy p]\nmatch = udp\nrate = 10/s\n", 0);
	s = add("step: ban trie of 1 entry walked, hot key",
		"[policy p]\nmatch = udp\nrate = 10/s\n", 0);
	s->one_ban = true;
	add("step: no policy matches (parse, lists, bans)",
	    "[policy p]\nmatch = tcp\nrate = 10/s\n", 0);

	s = add("map: LRU no_common_lru, 1M keys",
		"new_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n", KEYS_1M);
	s->max_sources = 2 * (KEYS_1M + 1);
	s->map_flags = BPF_F_NO_COMMON_LRU;
	s = add("map: plain hash, 1M keys",
		"new_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n", KEYS_1M);
	s->max_sources = 2 * (KEYS_1M + 1);
	s->map_type = BPF_MAP_TYPE_HASH;

	s = add("16M random, 64k LRU, budget 50k/s",
		"max_sources = 65536\n[policy p]\nmatch = udp\nrate = 10/s\n", RANDOM_16M);
	/* the same flood minutes on (make bench's churn cells last seconds) */
	s = add("16M random, 64k LRU, budget, 69 s in",
		"max_sources = 65536\n[policy p]\nmatch = udp\nrate = 10/s\n", RANDOM_16M);
	s->flood_seconds = 69;
	s = add("16M random, 64k LRU, budget, 138 s in",
		"max_sources = 65536\n[policy p]\nmatch = udp\nrate = 10/s\n", RANDOM_16M);
	s->flood_seconds = 138;
	s = add("16M random, 64k LRU, no budget",
		"max_sources = 65536\nnew_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n",
		RANDOM_16M);
	s = add("16M random, 64k no_common_lru, no budget",
		"max_sources = 65536\nnew_sources = off\n[policy p]\nmatch = udp\nrate = 10/s\n",
		RANDOM_16M);
	s->map_flags = BPF_F_NO_COMMON_LRU;
	/* An IPv6 source refused on a hot key: its state is in `sources`,
	 * which the refusal cache (IPv4 keys) does not front. */
	s = add("ipv6: token_bucket, hot key", "[policy p]\nmatch = udp\nrate = 10/s\n", 0);
	s->packet = BENCH_UDP6;
	s = add("ipv6: token_bucket, hot key, per = src/64",
		"[policy p]\nmatch = udp\nper = src/64\nrate = 10/s\n", 0);
	s->packet = BENCH_UDP6;
	/* The built-in policy (floodgate load without a config), under the
	 * floods its layers are for: a small datagram meets "small-udp" and
	 * "small", a SYN "syn" and "small"; the first refuses. Their bursts
	 * (50,000 and 2,000) refill between rounds, hence the drain. */
	s = add("built-in policy: udp flood, hot key", fg_default_config, 0);
	s->drain = 200000;
	s = add("built-in policy: syn flood, hot key", fg_default_config, 0);
	s->packet = BENCH_TCP_SYN;
	s->drain = 200000;
	/* The SYN proxy's check of this CPU's known connections, which every
	 * packet of an established connection to its ports makes, beside the
	 * same packet refused by the policy alone. */
	s = add("tcp: ack, hot key", "[policy p]\nmatch = tcp\nrate = 10/s\n", 0);
	s->packet = BENCH_TCP_ACK;
	s = add("tcp: ack, hot key, synproxy, known connection",
		"[synproxy]\nports = 22\n[policy p]\nmatch = tcp\nrate = 10/s\n", 0);
	s->packet = BENCH_TCP_ACK;
	s->known_flow = true;
	s = add("3 layers (ip, /24, global), hot key",
		"[policy a]\nmatch = udp\nrate = 1000000000/s\n[policy b]\nmatch = any\n"
		"per = src/24\nrate = 1000000000/s\n[policy c]\nmatch = any\nper = global\n"
		"rate = 1000000000/s\n",
		0);
}

/* Drops the scenarios whose names do not contain `text`. */
static void keep_scenarios_named(const char *text)
{
	int i, kept = 0;

	for (i = 0; i < n_scenarios; i++)
		if (strstr(scenarios[i].name, text))
			scenarios[kept++] = scenarios[i];
	n_scenarios = kept;
}

#define SUBPROGRAM_CASE "bare XDP_DROP through a subprogram call"
#define HELPER_CASE	"bare XDP_DROP with a helper call"

/* The per-round figures of the scenario named `name`, or NULL. */
static const double *rounds_of(const char *name)
{
	size_t j;
	int i;

	if (!strcmp(name, SUBPROGRAM_CASE))
		return subprogram_ns;
	if (!strcmp(name, HELPER_CASE))
		return helper_ns;

	for (i = 0; i < n_scenarios; i++)
		if (!strcmp(scenarios[i].name, name))
			return scenarios[i].ns;
	for (j = 0; j < N_SIMPLEST; j++)
		if (simplest[j] && !strcmp(simplest_cases[j].name, name))
			return simplest_ns[j];
	return NULL;
}

/* Each per-packet step as the difference of two variants, taken round by
 * round (the two ran moments apart), and the median of those. */
static void print_steps(void)
{
	const char *hot = "token_bucket, hot key", *frozen = "clock: none (frozen), hot key";
	const char *no_match = "step: no policy matches (parse, lists, bans)";
	const struct {
		const char *step, *with, *without;
		double divisor;
	} steps[] = {
		{"a BPF-to-BPF call (a subprogram's call and return)", SUBPROGRAM_CASE, NULL, 1},
		{"a helper call (bpf_ktime_get_coarse_ns())", HELPER_CASE, NULL, 1},
		{"bpf_ktime_get_ns()", hot, frozen, 1},
		{"bpf_ktime_get_coarse_ns()", "clock: coarse, hot key", frozen, 1},
		{"[allow]/[deny] LPM walk (skipped with no list)",
		 "step: [deny] list of 1 prefix walked, hot key", hot, 1},
		{"ban trie walk, 1 entry elsewhere (vs none yet)",
		 "step: ban trie of 1 entry walked, hot key", hot, 1},
		{"parse, lists, bans, match (no policy, no clock)", no_match, NULL, 1},
		{"one layer: clock, key, refusal cache, GCRA, stats", hot, no_match, 1},
		{"sources4 lookup the refusal cache saves",
		 "token_bucket, hot key, no refusal cache", hot, 1},
		{"each further layer", "3 layers (ip, /24, global), hot key", hot, 2},
		{"a spoofed packet 69 s into a flood (vs at once)",
		 "16M random, 64k LRU, budget, 69 s in", "16M random, 64k LRU, budget 50k/s", 1},
		{"a spoofed packet 138 s into a flood (vs at once)",
		 "16M random, 64k LRU, budget, 138 s in", "16M random, 64k LRU, budget 50k/s", 1},
		{"an IPv6 source refused, over an IPv4 one (hot key)",
		 "ipv6: token_bucket, hot key", hot, 1},
		{"the built-in policy's UDP flood refusal, over one layer's",
		 "built-in policy: udp flood, hot key", hot, 1},
		{"the built-in policy's SYN flood refusal, over one layer's",
		 "built-in policy: syn flood, hot key", hot, 1},
		{"the SYN proxy's known-connection check (an ack)",
		 "tcp: ack, hot key, synproxy, known connection", "tcp: ack, hot key", 1},
		{"floodgate over bare, refusal on a hot key", hot, NULL, 1},
		{"floodgate over bare, 4k keys", "token_bucket, 4k keys", NULL, 1},
		{"simplest limiter over bare, hot key", "simplest limiter, hot key", NULL, 1},
		{"floodgate over the simplest limiter, hot key", hot, "simplest limiter, hot key",
		 1},
		{"floodgate over the simplest limiter, 1k keys", "token_bucket, 1k keys",
		 "simplest limiter, 1k keys", 1},
		{"floodgate over the simplest limiter, 1k scattered keys",
		 "token_bucket, 1k scattered keys", "simplest limiter, 1k scattered keys", 1},
	};
	size_t i;
	int r;

	printf("\nper-packet steps (median of per-round differences of two variants, ns/packet)\n");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const double *with = rounds_of(steps[i].with);
		const double *without = steps[i].without ? rounds_of(steps[i].without) : bare_ns;
		double diff[ROUNDS];

		if (!with || !without)
			continue; /* a scenario left out by `bench_prog TEXT` */
		for (r = 0; r < ROUNDS; r++)
			diff[r] = (with[r] - without[r]) / steps[i].divisor;
		printf("%-56s %8.1f\n", steps[i].step, median(diff));
	}
}

int main(int argc, char **argv)
{
	struct baseline_bpf *baseline;
	double bare, med;
	size_t j;
	int r, i;

	if (geteuid() != 0) {
		fprintf(stderr, "bench_prog: needs root and BPF\n");
		return 77;
	}
	/* --memory: the memory figures alone, in a second, without timing */
	if (argc > 1 && !strcmp(argv[1], "--memory")) {
		print_memory();
		return 0;
	}
	baseline = baseline_bpf__open_and_load();
	if (!baseline) {
		fprintf(stderr, "bench_prog: needs root and BPF\n");
		return 77;
	}
	build_scenarios();
	if (argc > 1)
		keep_scenarios_named(argv[1]);
	for (i = 0; i < n_scenarios; i++)
		load(&scenarios[i]);
	load_simplest(argc > 1 ? argv[1] : NULL);
	for (r = 0; r < ROUNDS; r++) {
		bare_ns[r] =
			run_ns(bpf_program__fd(baseline->progs.baseline_drop), REPEAT, BENCH_UDP);
		subprogram_ns[r] = run_ns(bpf_program__fd(baseline->progs.baseline_subprogram),
					  REPEAT, BENCH_UDP);
		helper_ns[r] =
			run_ns(bpf_program__fd(baseline->progs.baseline_helper), REPEAT, BENCH_UDP);
		for (j = 0; j < N_SIMPLEST; j++)
			if (simplest[j])
				simplest_ns[j][r] =
					run_ns(bpf_program__fd(simplest[j]->progs.simplest), REPEAT,
					       BENCH_UDP);
		for (i = 0; i < n_scenarios; i++) {
			if (scenarios[i].flood_seconds)
				fill_presence(&scenarios[i]);
			if (scenarios[i].drain)
				run_ns(bpf_program__fd(scenarios[i].skel->progs.fg_xdp),
				       scenarios[i].drain, scenarios[i].packet);
			scenarios[i].ns[r] =
				run_ns(bpf_program__fd(scenarios[i].skel->progs.fg_xdp), REPEAT,
				       scenarios[i].packet);
		}
	}
	bare = median(bare_ns);
	printf("BPF_PROG_TEST_RUN, %d repeats x %d interleaved rounds, medians\n", REPEAT, ROUNDS);
	printf("%-44s %8s %10s\n", "program", "ns/pkt", "x XDP_DROP");
	printf("%-44s %8.1f %10.2f\n", "bare XDP_DROP (baseline)", bare, 1.0);
	med = median(subprogram_ns);
	printf("%-44s %8.1f %10.2f\n", SUBPROGRAM_CASE, med, med / bare);
	med = median(helper_ns);
	printf("%-44s %8.1f %10.2f\n", HELPER_CASE, med, med / bare);
	for (j = 0; j < N_SIMPLEST; j++) {
		if (!simplest[j])
			continue;
		med = median(simplest_ns[j]);
		printf("%-44s %8.1f %10.2f\n", simplest_cases[j].name, med, med / bare);
	}
	for (i = 0; i < n_scenarios; i++) {
		med = median(scenarios[i].ns);
		printf("%-44s %8.1f %10.2f\n", scenarios[i].name, med, med / bare);
	}
	print_steps();
	if (argc == 1)
		print_memory();
	for (i = 0; i < n_scenarios; i++)
		floodgate_bpf__destroy(scenarios[i].skel);
	for (j = 0; j < N_SIMPLEST; j++)
		simplest_bpf__destroy(simplest[j]);
	baseline_bpf__destroy(baseline);
	return 0;
}
