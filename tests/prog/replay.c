// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate replay` against captures this test writes itself with
 * libpcap's pcap_dump: known, irregular nanosecond timestamps, IPv4 and
 * IPv6 sources, token_bucket and sliding_log policies. The expected passed
 * counts come from a reference written here from the algorithms' textbook
 * definitions (a bucket of tokens; a log of admission times), not from
 * include/fg_gcra.h or fg_algos.h, plus hand-computed cases.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#define PCAP_DONT_INCLUDE_PCAP_BPF_H
struct bpf_program;
#include <pcap/dlt.h>
#include <pcap/pcap.h>

#include "cli/exit.h"
#include "packets.h"
#include "prog_test.h"
#include "views/replay.h"

#define MS  1000000ULL
#define SEC 1000000000ULL
/* The capture's first timestamp: a real epoch time, on no round number. */
#define T0  (1700000000ULL * SEC + 123456789ULL)

static char workdir[] = "/tmp/fg-replay-test.XXXXXX";
/* The work folder, made once for the feature's tests. */
FG_PROG_GROUP_FIXTURE(workdir);

struct frame {
	__u64 t_ns;
	struct pkt_spec pkt;
	__u32 wire_len;	 /* 0: as built; else the length on the wire (caplen < len) */
	int sll_pkttype; /* cooked captures: 0 host, 4 outgoing */
};

/* A frame at time t; OUTGOING: sent by the capturing host (cooked only). */
#define AT(t, spec)                                                                                \
	{                                                                                          \
		.t_ns = (t), .pkt = (spec)                                                         \
	}
#define OUTGOING(t, spec)                                                                          \
	{                                                                                          \
		.t_ns = (t), .pkt = (spec), .sll_pkttype = 4                                       \
	}

/* A path in the work folder, from a ring of four buffers: good until the
 * fourth call after. */
static const char *work_path(const char *name)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, 256, "%s/%s", workdir, name);
	return p;
}

static const char *write_file(const char *name, const char *text)
{
	const char *path = work_path(name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Prepends a Linux cooked header (SLL or SLL2) to an Ethernet frame's
 * payload. Returns the new length. */
static size_t to_cooked(int linktype, const uint8_t *eth, size_t len, int pkttype, uint8_t *out)
{
	size_t hdr = linktype == DLT_LINUX_SLL ? 16 : 20;

	memset(out, 0, hdr);
	if (linktype == DLT_LINUX_SLL) {
		out[1] = pkttype;
		out[3] = 1; /* ARPHRD_ETHER */
		out[5] = 6;
		memcpy(out + 6, eth + 6, 6);
		memcpy(out + 14, eth + 12, 2);
	} else {
		memcpy(out, eth + 12, 2);
		out[7] = 2; /* ifindex */
		out[9] = 1;
		out[10] = pkttype;
		out[11] = 6;
		memcpy(out + 12, eth + 6, 6);
	}
	memcpy(out + hdr, eth + 14, len - 14);
	return hdr + len - 14;
}

static const char *write_capture(const char *name, int linktype, const struct frame *frames,
				 size_t n)
{
	const char *path = work_path(name);
	pcap_t *dead =
		pcap_open_dead_with_tstamp_precision(linktype, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *dumper = pcap_dump_open(dead, path);
	uint8_t eth[1600], out[1600];
	size_t i, len;

	assert_non_null(dumper);
	for (i = 0; i < n; i++) {
		struct pcap_pkthdr hdr = {0};

		len = build_packet(eth, &frames[i].pkt);
		hdr.ts.tv_sec = frames[i].t_ns / SEC;
		hdr.ts.tv_usec = frames[i].t_ns % SEC; /* nanoseconds at this precision */
		if (linktype != DLT_EN10MB)
			len = to_cooked(linktype, eth, len, frames[i].sll_pkttype, out);
		else
			memcpy(out, eth, len);
		hdr.caplen = len;
		hdr.len = frames[i].wire_len ? frames[i].wire_len : len;
		pcap_dump((u_char *)dumper, &hdr, out);
	}
	pcap_dump_close(dumper);
	pcap_close(dead);
	return path;
}

/* pcapng, which libpcap reads but does not write: a section header, one
 * Ethernet interface with nanosecond timestamps (if_tsresol = 9), and an
 * enhanced packet block per frame. Little-endian, as written here. */
static void put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

static const char *write_pcapng(const char *name, const struct frame *frames, size_t n)
{
	static const uint8_t header[] = {
		0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0,    0,	   0x4d, 0x3c,
		0x2b, 0x1a, 1,	  0,	0,  0, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 28, 0, 0,    0, /* section */
		1,    0,    0,	  0,	32, 0, 0,    0,	   1,	 0,
		0,    0,    0xff, 0xff, 0,  0, /* interface */
		9,    0,    1,	  0,	9,  0, 0,    0,	   0,	 0,
		0,    0,    32,	  0,	0,  0, /* if_tsresol 9 */
	};
	const char *path = work_path(name);
	FILE *f = fopen(path, "wb");
	uint8_t eth[1600] = {0};
	size_t i, len, padded;

	assert_non_null(f);
	fwrite(header, sizeof(header), 1, f);
	for (i = 0; i < n; i++) {
		len = build_packet(eth, &frames[i].pkt);
		padded = (len + 3) & ~(size_t)3;
		put32(f, 6);
		put32(f, 32 + padded);
		put32(f, 0);
		put32(f, frames[i].t_ns >> 32);
		put32(f, (uint32_t)frames[i].t_ns);
		put32(f, len);
		put32(f, len);
		fwrite(eth, padded, 1, f); /* build_packet zeroes past the frame */
		put32(f, 32 + padded);
	}
	fclose(f);
	return path;
}

static int replay(const char *config, const char *capture, struct fg_replay_result *r)
{
	struct fg_replay_opts opts = {.config_path = write_file("test.conf", config),
				      .capture_path = capture};

	struct fg_err err = {0};

	return fg_replay(&opts, r, &err) ? fg_exit_code(err.kind) : FG_EXIT_OK;
}

/* ---- the reference: textbook definitions --------------------------------- */

/* A bucket of `burst` tokens, starting full, gaining `count` tokens per
 * `period_ns`; a packet takes one token. In units of 1/count token-ns so
 * that every quantity is an integer: a token is period_ns units, and each
 * ns adds count units. */
struct ref_bucket {
	__u64 level;
	__u64 last_ns;
	bool used;
};

static bool ref_bucket_admit(struct ref_bucket *b, __u64 count, __u64 period_ns, __u64 burst,
			     __u64 now)
{
	__u64 capacity = burst * period_ns;

	if (!b->used) {
		b->used = true;
		b->level = capacity;
	} else {
		__u64 refill = (now - b->last_ns) * count;

		b->level = b->level + refill > capacity ? capacity : b->level + refill;
	}
	b->last_ns = now;
	if (b->level < period_ns)
		return false;
	b->level -= period_ns;
	return true;
}

/* At most `count` admissions in any window of period_ns: an admission at
 * time t still counts at now when now - t < period_ns. */
#define REF_LOG_MAX 4096
struct ref_log {
	__u64 admitted[REF_LOG_MAX];
	size_t n;
};

static bool ref_log_admit(struct ref_log *log, __u64 count, __u64 period_ns, __u64 now)
{
	size_t i, recent = 0;

	for (i = 0; i < log->n; i++)
		recent += now - log->admitted[i] < period_ns;
	if (recent >= count)
		return false;
	assert_true(log->n < REF_LOG_MAX);
	log->admitted[log->n++] = now;
	return true;
}

/* ---- tests --------------------------------------------------------------- */

static const char two_policies[] = "[policy dns]\n"
				   "match = udp dport 53\n"
				   "per = src/32 src/128\n"
				   "rate = 10/s\n"
				   "burst = 2\n"
				   "[policy login]\n"
				   "match = tcp dport 22\n"
				   "per = src/32 src/128\n"
				   "algorithm = sliding_log\n"
				   "rate = 2/s\n";

/* Worked by hand. dns is a bucket of 2 tokens refilled every 100 ms; login
 * admits 2 in any second. Times are offsets from T0. */
static void check_hand_computed(bool pcapng)
{
	struct pkt_spec dns = {.family = 4, .src = "10.1.0.1", .proto = IPPROTO_UDP, .dport = 53};
	struct pkt_spec ssh = {
		.family = 6, .src = "2001:db8::7", .proto = IPPROTO_TCP, .dport = 22};
	const struct frame frames[] = {
		AT(T0, dns),		  /* 2 tokens -> 1: pass */
		AT(T0 + 1000, dns),	  /* 1 -> 0 (+0.00001 token): pass */
		AT(T0 + 2000, ssh),	  /* log empty: pass */
		AT(T0 + 3000, dns),	  /* 0.00003 tokens: drop */
		AT(T0 + 99999999, dns),	  /* 0.99999999 tokens: drop */
		AT(T0 + 100000000, dns),  /* 0.00001 + 0.99999 = exactly 1 token: pass */
		AT(T0 + 500000000, ssh),  /* 1 in the last second: pass */
		AT(T0 + 1000001999, ssh), /* 2 within 1 s (1st is 1 ns short): drop */
		AT(T0 + 1000002000, ssh), /* 1st is exactly 1 s old: pass */
		AT(T0 + 1000002001, dns), /* bucket full again: pass */
		AT(T0 + 1000002002, dns), /* pass */
		AT(T0 + 1000002003, dns), /* drop */
		AT(T0 + 1200000000, ssh), /* 0.5 s and 1.0 s ones count: drop */
		AT(T0 + 1500000000, ssh), /* 0.5 s one is exactly 1 s old: pass */
	};
	const size_t n = sizeof(frames) / sizeof(frames[0]);
	struct fg_replay_result r;

	assert_int_equal(replay(two_policies,
				pcapng ? write_pcapng("hand.pcapng", frames, n)
				       : write_capture("hand.pcap", DLT_EN10MB, frames, n),
				&r),
			 FG_EXIT_OK);
	assert_int_equal(r.policies[0].matched_packets, 8);
	assert_int_equal(r.policies[0].passed_packets, 5);
	assert_int_equal(r.policies[0].dropped_packets, 3);
	assert_int_equal(r.policies[1].matched_packets, 6);
	assert_int_equal(r.policies[1].passed_packets, 4);
	assert_int_equal(r.passed, 9);
	assert_int_equal(r.dropped, 5);
	assert_int_equal(r.first_ns, T0);
	assert_int_equal(r.last_ns, T0 + 1500000000);
	assert_int_equal(r.global.packets, 14);
	fg_replay_result_free(&r);
}

FG_PROG_TEST(test_hand_computed)
{
	(void)state;
	check_hand_computed(false);
}

FG_PROG_TEST(test_hand_computed_pcapng)
{
	(void)state;
	check_hand_computed(true);
}

#define N_SOURCES 5
static const char *const sources[N_SOURCES] = {"10.1.0.1", "10.1.0.2", "192.0.2.77",
					       "2001:db8:1::1", "2001:db8:2::99"};

static __u64 lcg(__u64 *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return *seed >> 33;
}

/* Each source's passed and dropped counts, as replay counted them from the
 * verdicts, against the reference's. */
static void check_sources(const struct fg_replay_result *r, const __u64 *sent,
			  const __u64 *admitted)
{
	size_t i, slot, found = 0;
	__u8 addr[16];

	for (i = 0; i < N_SOURCES; i++) {
		int family = strchr(sources[i], ':') ? 6 : 4;

		memset(addr, 0, sizeof(addr));
		inet_pton(family == 6 ? AF_INET6 : AF_INET, sources[i], addr);
		for (slot = 0; slot < r->sources_size; slot++) {
			const struct fg_replay_source *s = &r->sources[slot];

			if (s->family != family || memcmp(s->addr, addr, 16))
				continue;
			assert_int_equal(s->passed, admitted[i]);
			assert_int_equal(s->dropped, sent[i] - admitted[i]);
			found++;
		}
	}
	assert_int_equal(found, N_SOURCES);
}

/* Several thousand frames from five sources over a few seconds, each to
 * one of the two policies, with gaps of 1 ns to 9 ms: both policies both
 * admit and refuse, and the reference says exactly how many. */
FG_PROG_TEST(test_against_reference)
{
	enum { N = 6000 };
	struct frame *frames = calloc(N, sizeof(*frames));
	struct ref_bucket buckets[N_SOURCES] = {0};
	struct ref_log *logs = calloc(N_SOURCES, sizeof(*logs));
	__u64 t = T0, seed = 42, expect_dns = 0, expect_login = 0, n_dns = 0;
	__u64 sent[N_SOURCES] = {0}, admitted[N_SOURCES] = {0};
	struct fg_replay_result r;
	size_t i;
	bool ok;

	(void)state;
	assert_non_null(frames);
	assert_non_null(logs);
	for (i = 0; i < N; i++) {
		int src = lcg(&seed) % N_SOURCES, is_dns = lcg(&seed) % 3 != 0;

		t += 1 + lcg(&seed) % (9 * MS);
		frames[i].t_ns = t;
		frames[i].pkt = (struct pkt_spec){.family = strchr(sources[src], ':') ? 6 : 4,
						  .src = sources[src],
						  .proto = is_dns ? IPPROTO_UDP : IPPROTO_TCP,
						  .dport = is_dns ? 53 : 22};
		if (is_dns) {
			n_dns++;
			ok = ref_bucket_admit(&buckets[src], 10, SEC, 2, t);
			expect_dns += ok;
		} else {
			ok = ref_log_admit(&logs[src], 2, SEC, t);
			expect_login += ok;
		}
		sent[src]++;
		admitted[src] += ok;
	}
	assert_int_equal(replay(two_policies, write_capture("ref.pcap", DLT_EN10MB, frames, N), &r),
			 FG_EXIT_OK);
	printf("    reference: dns %llu of %llu pass, login %llu of %llu pass\n",
	       (unsigned long long)expect_dns, (unsigned long long)n_dns,
	       (unsigned long long)expect_login, (unsigned long long)(N - n_dns));
	/* The test means something only if both policies both pass and drop. */
	assert_true(expect_dns > 0 && expect_dns < n_dns);
	assert_true(expect_login > 0 && expect_login < N - n_dns);
	assert_int_equal(r.policies[0].matched_packets, n_dns);
	assert_int_equal(r.policies[0].passed_packets, expect_dns);
	assert_int_equal(r.policies[1].matched_packets, N - n_dns);
	assert_int_equal(r.policies[1].passed_packets, expect_login);
	assert_int_equal(r.sources_used, N_SOURCES);
	assert_int_equal(r.passed, expect_dns + expect_login);
	check_sources(&r, sent, admitted);
	fg_replay_result_free(&r);
	free(frames);
	free(logs);
}

/* snaplen: a frame captured with 64 of its 500 bytes is charged 500 bytes. */
FG_PROG_TEST(test_truncated_frames_cost_wire_length)
{
	struct pkt_spec big = {.family = 4, .src = "10.2.0.1", .proto = IPPROTO_UDP, .dport = 9};
	struct frame frames[4];
	struct fg_replay_result r;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		frames[i] = (struct frame){.t_ns = T0 + i * 1000, .pkt = big, .wire_len = 500};
	assert_int_equal(replay("[policy bytes]\nmatch = udp\nrate = 1000B/s\nburst = 1500\n",
				write_capture("snap.pcap", DLT_EN10MB, frames, 4), &r),
			 FG_EXIT_OK);
	assert_int_equal(r.truncated, 4);
	assert_int_equal(r.wire_bytes, 2000);
	assert_int_equal(r.policies[0].matched_bytes, 2000);
	assert_int_equal(r.policies[0].passed_packets, 3); /* 3 x 500 = the 1500-byte burst */
	assert_int_equal(r.policies[0].dropped_bytes, 500);
	fg_replay_result_free(&r);
}

/* With [synproxy], the proxy answers a SYN to its port (XDP_TX): the
 * replay counts it answered, not passed, and other traffic as before. */
FG_PROG_TEST(test_synproxy_answers_counted)
{
	struct pkt_spec syn = {.family = 4, .src = "10.2.0.3", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec udp = {.family = 4, .src = "10.2.0.3", .proto = IPPROTO_UDP, .dport = 9};
	struct frame frames[] = {AT(T0, syn), AT(T0 + MS, udp), AT(T0 + 2 * MS, syn),
				 AT(T0 + 3 * MS, syn)};
	struct fg_replay_result r;

	(void)state;
	assert_int_equal(replay("[synproxy]\nports = 22\n",
				write_capture("syn.pcap", DLT_EN10MB, frames, 4), &r),
			 FG_EXIT_OK);
	assert_int_equal(r.run, 4);
	assert_int_equal(r.answered, 3);
	assert_int_equal(r.passed, 1);
	assert_int_equal(r.dropped, 0);
	fg_replay_result_free(&r);
}

/* Cooked captures (tcpdump -i any): incoming frames run, outgoing skipped. */
static void check_cooked(int linktype)
{
	struct pkt_spec a = {.family = 4, .src = "10.3.0.1", .proto = IPPROTO_UDP, .dport = 53};
	struct pkt_spec b = {.family = 6, .src = "2001:db8::3", .proto = IPPROTO_UDP, .dport = 53};
	const struct frame frames[] = {
		AT(T0, a),	OUTGOING(T0 + 10, a), AT(T0 + 20, b),
		AT(T0 + 30, a), OUTGOING(T0 + 40, b), AT(T0 + 50, a),
	};
	struct fg_replay_result r;

	assert_int_equal(
		replay(two_policies, write_capture("cooked.pcap", linktype, frames, 6), &r),
		FG_EXIT_OK);
	assert_int_equal(r.frames, 6);
	assert_int_equal(r.outgoing_skipped, 2);
	assert_int_equal(r.run, 4);
	assert_int_equal(r.global.parsed, 4);
	assert_int_equal(r.policies[0].matched_packets, 4);
	assert_int_equal(r.policies[0].passed_packets, 3); /* a: 2 tokens, 3 frames */
	/* As Ethernet frames: three IPv4/UDP of 42 bytes, one IPv6/UDP of 62. */
	assert_int_equal(r.policies[0].matched_bytes, 3 * 42 + 62);
	fg_replay_result_free(&r);
}

FG_PROG_TEST(test_sll)
{
	(void)state;
	check_cooked(DLT_LINUX_SLL);
}

FG_PROG_TEST(test_sll2)
{
	(void)state;
	check_cooked(DLT_LINUX_SLL2);
}

/*
 * A frame stamped earlier than the one before it is charged at the latest
 * time seen. B's bucket (1/s, burst 1) was charged at 0.9 s, so at 2 s (the
 * latest time, from A's frame) it has a token again; at its own 1.5 s it
 * would not.
 */
FG_PROG_TEST(test_backwards_timestamps)
{
	struct pkt_spec a = {.family = 4, .src = "10.4.0.1", .proto = IPPROTO_UDP, .dport = 53};
	struct pkt_spec b = {.family = 4, .src = "10.4.0.2", .proto = IPPROTO_UDP, .dport = 53};
	const struct frame frames[] = {
		AT(T0 + 900 * MS, b),
		AT(T0 + 2000 * MS, a),
		AT(T0 + 1500 * MS, b),
	};
	struct fg_replay_result r;

	(void)state;
	assert_int_equal(replay("[policy dns]\nmatch = udp\nrate = 1/s\nburst = 1\n",
				write_capture("back.pcap", DLT_EN10MB, frames, 3), &r),
			 FG_EXIT_OK);
	assert_int_equal(r.backwards, 1);
	assert_int_equal(r.policies[0].passed_packets, 3);
	assert_int_equal(r.first_ns, T0 + 900 * MS);
	assert_int_equal(r.last_ns, T0 + 2000 * MS);
	fg_replay_result_free(&r);
}

FG_PROG_TEST(test_bad_captures)
{
	struct pkt_spec a = {.family = 4, .src = "10.5.0.1", .proto = IPPROTO_UDP, .dport = 53};
	const struct frame frames[] = {AT(T0, a), AT(T0 + 1, a), AT(T0 + 2, a)};
	const char *path, *cut;
	struct fg_replay_result r;
	char cmd[600];
	pcap_t *dead;

	(void)state;
	assert_int_equal(replay(two_policies, write_file("text.pcap", "not a capture\n"), &r),
			 FG_EXIT_CONFIG);
	assert_int_equal(replay(two_policies, write_file("zero.pcap", ""), &r), FG_EXIT_CONFIG);
	assert_int_equal(replay(two_policies, work_path("missing.pcap"), &r), FG_EXIT_CONFIG);
	/* Empty: a valid header and no frame. */
	assert_int_equal(
		replay(two_policies, write_capture("empty.pcap", DLT_EN10MB, frames, 0), &r),
		FG_EXIT_CONFIG);
	/* A link type replay does not read (raw IP). */
	dead = pcap_open_dead(DLT_RAW, 65535);
	path = work_path("raw.pcap");
	pcap_dump_close(pcap_dump_open(dead, path));
	pcap_close(dead);
	assert_int_equal(replay(two_policies, path, &r), FG_EXIT_CONFIG);
	/* Cut in the middle of the third record: the first two are replayed. */
	path = write_capture("whole.pcap", DLT_EN10MB, frames, 3);
	cut = work_path("cut.pcap");
	snprintf(cmd, sizeof(cmd), "head -c -20 %s > %s", path, cut);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(replay(two_policies, cut, &r), FG_EXIT_OK);
	assert_true(r.cut_short);
	assert_int_equal(r.run, 2);
	assert_int_equal(r.policies[0].matched_packets, 2);
	fg_replay_result_free(&r);
	/* A broken config is the config's error, FILE:LINE. */
	assert_int_equal(replay("[policy x]\nmatch = udp\nrate = 0/s\n", path, &r), FG_EXIT_CONFIG);
}

/* A frame shorter than an Ethernet header cannot reach XDP: skipped, counted. */
FG_PROG_TEST(test_runt_frames)
{
	const char *path = work_path("runt.pcap");
	pcap_t *dead =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *dumper = pcap_dump_open(dead, path);
	struct pcap_pkthdr hdr = {.caplen = 10, .len = 10};
	uint8_t runt[10] = {0};
	struct fg_replay_result r;

	(void)state;
	hdr.ts.tv_sec = T0 / SEC;
	pcap_dump((u_char *)dumper, &hdr, runt);
	pcap_dump_close(dumper);
	pcap_close(dead);
	assert_int_equal(replay(two_policies, path, &r), FG_EXIT_OK);
	assert_int_equal(r.runt_skipped, 1);
	assert_int_equal(r.run, 0);
	fg_replay_result_free(&r);
}

int fg_fixture_workdir_setup(void **state)
{
	(void)state;
	if (!mkdtemp(workdir))
		return -1;
	return 0;
}

int fg_fixture_workdir_teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
	return system(cmd) ? -1 : 0;
}
