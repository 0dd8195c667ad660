// SPDX-License-Identifier: GPL-2.0-only
/*
 * `floodgate replay -c FILE CAPTURE`: what would this config have done to
 * the traffic in this capture? Every frame goes through the real fg_xdp
 * program with BPF_PROG_TEST_RUN, with the injected clock (fg_test_clock)
 * set to the frame's capture timestamp, on private, unpinned maps. No
 * interface, pin or loaded instance is touched.
 *
 * The clock never moves backwards: a frame stamped earlier than one before
 * it is charged at the latest time seen, and counted. The verdicts of one
 * run are deterministic: the replay runs on one CPU (the per-CPU new-source
 * budget gets the whole machine's share, since every frame meets that CPU).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* pcap/bpf.h redefines struct bpf_insn of linux/bpf.h; replay needs neither
 * filters nor libpcap's BPF, only the reader and the link types. */
#define PCAP_DONT_INCLUDE_PCAP_BPF_H
struct bpf_program;
#include <pcap/dlt.h>
#include <pcap/pcap.h>

#include "base/clock.h"
#include "base/log.h"
#include "config/config.h"
#include "floodgate.h" /* the types of the skeleton's rodata */
#include "floodgate.skel.h"
#include "maps/batch.h"
#include "maps/pinned.h"
#include "maps/skeleton.h"
#include "policy/policy.h"
#include "views/replay.h"

/* Linux cooked capture headers (pcap-linktype(7)): SLL is what
 * `tcpdump -i any` wrote before libpcap 1.10, SLL2 since. */
#define SLL_HDR_LEN	  16
#define SLL2_HDR_LEN	  20
#define SLL_OUTGOING	  4    /* PACKET_OUTGOING */
#define PROGRESS_EVERY	  4096 /* frames between two looks at the clock */
#define SOURCES_MIN_SLOTS 1024

/*
 * Replay's skeleton: every map private (no pin path, so nothing under
 * /sys/fs/bpf is reused or created), the state tables sized as a load would
 * size them, the injected clock on, only fg_xdp loaded, and the policy
 * written and active in slot 0.
 */
static struct floodgate_bpf *replay_prepare_skeleton(const struct fg_config *cfg,
						     const struct fg_compiled *compiled,
						     struct fg_err *err)
{
	const struct fg_skel_opts opts = {.progs = FG_SKEL_XDP, .test_clock = true};
	struct floodgate_bpf *skel;
	int rc = fg_skel_prepare(cfg, &opts, compiled, NULL, &skel);

	if (rc) {
		fg_fail(err, FG_ERR_SYSTEM, "cannot load the BPF program or write its policy: %s",
			strerror(-rc));
		return NULL;
	}
	return skel;
}

static int read_config(const char *path, struct fg_config *cfg, struct fg_compiled *compiled,
		       struct fg_err *err)
{
	int ncpus = fg_online_cpus(), rc;
	struct fg_feeds feeds;

	/* The parser reports what is wrong on stderr itself, line by line:
	 * the failure carries no message of its own. */
	if (fg_config_parse_file(path, cfg, stderr))
		return fg_fail(err, FG_ERR_CONFIG, "%s", "");
	/* The feed files too: a replay judges by the lists a load would. */
	if (fg_feeds_read(path, cfg, &feeds, err))
		return -1;
	rc = fg_policy_compile_feeds(cfg, &feeds, 0, compiled);
	fg_feeds_free(&feeds);
	cfg->access_prefixes = rc ? 0 : compiled->access.n;
	if (rc == -E2BIG)
		return fg_fail(err, FG_ERR_CONFIG,
			       "%s: the policies' source CIDRs need more than %d trie entries",
			       path, FG_MAX_SRC_PREFIXES);
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot compile %s: %s", path, strerror(-rc));
	/* The compiled budget is one CPU's share (its interval is ncpus times
	 * the configured one); every replayed frame meets the same CPU, so it
	 * gets the configured rate. */
	if (ncpus > 1)
		compiled->budget.gcra.interval_fp /= (__u64)ncpus;
	return 0;
}

static pcap_t *open_capture(const char *path, int *linktype, struct fg_err *err)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pcap =
		pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);

	if (!pcap) {
		fg_fail(err, FG_ERR_CONFIG, "%s: not a readable pcap or pcapng capture: %s", path,
			errbuf);
		return NULL;
	}
	*linktype = pcap_datalink(pcap);
	if (*linktype != DLT_EN10MB && *linktype != DLT_LINUX_SLL && *linktype != DLT_LINUX_SLL2) {
		const char *name = pcap_datalink_val_to_name(*linktype);

		fg_fail(err, FG_ERR_CONFIG,
			"%s: link type %s (%d) is not supported; replay reads Ethernet (EN10MB) "
			"and Linux cooked captures (LINUX_SLL, LINUX_SLL2)",
			path, name ? name : "unknown", *linktype);
		pcap_close(pcap);
		return NULL;
	}
	return pcap;
}

/* One captured frame as fg_xdp will see it. */
struct replay_frame {
	const __u8 *data; /* an Ethernet frame */
	__u32 run_len;	  /* bytes handed to the test run */
	__u64 wire_len;	  /* the Ethernet frame's length on the wire */
	bool clipped;	  /* captured longer than FG_REPLAY_MAX_RUN_BYTES */
};

enum frame_kind { FRAME_RUN, FRAME_OUTGOING, FRAME_RUNT };

/*
 * Turns a record into an Ethernet frame. A cooked (SLL/SLL2) record gets an
 * Ethernet header built in front of its payload in `buf`, with the cooked
 * header's protocol as EtherType and its link-layer address as source.
 */
static enum frame_kind to_ethernet(int linktype, const struct pcap_pkthdr *hdr, const __u8 *data,
				   __u8 *buf, struct replay_frame *frame)
{
	__u32 wire = hdr->len > hdr->caplen ? hdr->len : hdr->caplen;
	__u32 cooked = linktype == DLT_LINUX_SLL ? SLL_HDR_LEN : SLL2_HDR_LEN;
	__u32 captured = hdr->caplen, payload;
	__u16 protocol, halen;
	__u8 pkttype;

	if (linktype == DLT_EN10MB) {
		if (captured < ETH_HLEN)
			return FRAME_RUNT;
		frame->data = data;
		frame->clipped = captured > FG_REPLAY_MAX_RUN_BYTES;
		frame->run_len = frame->clipped ? FG_REPLAY_MAX_RUN_BYTES : captured;
		frame->wire_len = wire;
		return FRAME_RUN;
	}
	if (captured < cooked)
		return FRAME_RUNT;
	if (linktype == DLT_LINUX_SLL) {
		pkttype = data[1]; /* a 16-bit field; the types are below 256 */
		halen = (__u16)(data[4] << 8 | data[5]);
		protocol = (__u16)(data[14] << 8 | data[15]);
	} else {
		pkttype = data[10];
		halen = data[11];
		protocol = (__u16)(data[0] << 8 | data[1]);
	}
	if (pkttype == SLL_OUTGOING)
		return FRAME_OUTGOING;
	memset(buf, 0, ETH_HLEN);
	if (halen == ETH_ALEN)
		memcpy(buf + ETH_ALEN, data + (linktype == DLT_LINUX_SLL ? 6 : 12), ETH_ALEN);
	buf[12] = protocol >> 8;
	buf[13] = protocol & 0xff;
	payload = captured - cooked;
	frame->clipped = payload > FG_REPLAY_MAX_RUN_BYTES - ETH_HLEN;
	if (frame->clipped)
		payload = FG_REPLAY_MAX_RUN_BYTES - ETH_HLEN;
	memcpy(buf + ETH_HLEN, data + cooked, payload);
	frame->data = buf;
	frame->run_len = ETH_HLEN + payload;
	frame->wire_len = (__u64)wire - cooked + ETH_HLEN;
	return FRAME_RUN;
}

/* The frame's IPv4 or IPv6 source, read as fg_xdp's parser reads it (up to
 * two VLAN tags). Returns the family, or 0 when there is no address. */
static __u8 frame_source(const __u8 *d, __u32 len, __u8 addr[16])
{
	__u32 off = ETH_HLEN;
	__u16 type = (__u16)(d[12] << 8 | d[13]);
	int i;

	for (i = 0; i < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
		if (len < off + 4)
			return 0;
		type = (__u16)(d[off + 2] << 8 | d[off + 3]);
		off += 4;
	}
	memset(addr, 0, 16);
	if (type == ETH_P_IP && len >= off + 20 && d[off] >> 4 == 4) {
		memcpy(addr, d + off + 12, 4);
		return FG_FAMILY_IPV4;
	}
	if (type == ETH_P_IPV6 && len >= off + 40 && d[off] >> 4 == 6) {
		memcpy(addr, d + off + 8, 16);
		return FG_FAMILY_IPV6;
	}
	return 0;
}

static size_t source_slot(const struct fg_replay_result *r, __u8 family, const __u8 addr[16])
{
	__u64 words[2], hash;
	size_t mask = r->sources_size - 1, i;

	memcpy(words, addr, 16);
	hash = (words[0] * 0x9e3779b97f4a7c15ULL ^ words[1]) * 0xff51afd7ed558ccdULL ^ family;
	hash ^= hash >> 29;
	for (i = hash & mask;; i = (i + 1) & mask) {
		const struct fg_replay_source *s = &r->sources[i];

		if (!s->family || (s->family == family && !memcmp(s->addr, addr, 16)))
			return i;
	}
}

/* Doubles the source table (kept at most half full). */
static int grow_sources(struct fg_replay_result *r)
{
	struct fg_replay_source *old = r->sources;
	size_t old_size = r->sources_size, i;

	r->sources_size = old_size ? old_size * 2 : SOURCES_MIN_SLOTS;
	r->sources = calloc(r->sources_size, sizeof(*r->sources));
	if (!r->sources) {
		r->sources = old;
		r->sources_size = old_size;
		return -ENOMEM;
	}
	for (i = 0; i < old_size; i++)
		if (old[i].family)
			r->sources[source_slot(r, old[i].family, old[i].addr)] = old[i];
	free(old);
	return 0;
}

static int count_source(struct fg_replay_result *r, const struct replay_frame *frame, bool dropped)
{
	struct fg_replay_source *s;
	__u8 addr[16], family = frame_source(frame->data, frame->run_len, addr);

	if (!family)
		return 0;
	if ((r->sources_used + 1) * 2 > r->sources_size && grow_sources(r))
		return -ENOMEM;
	s = &r->sources[source_slot(r, family, addr)];
	if (!s->family) {
		s->family = family;
		memcpy(s->addr, addr, 16);
		r->sources_used++;
	}
	if (dropped)
		s->dropped++;
	else
		s->passed++;
	return 0;
}

/* Runs one frame at `now`; returns 0 or a negative errno. */
static int run_frame(struct floodgate_bpf *skel, int prog_fd, const struct replay_frame *frame,
		     __u64 now, struct fg_replay_result *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame->data, .data_size_in = frame->run_len,
		    .repeat = 1);
	bool dropped;

	skel->bss->fg_test_now_ns = now;
	skel->bss->fg_test_wire_len = frame->wire_len;
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	dropped = opts.retval == XDP_DROP;
	r->run++;
	r->wire_bytes += frame->wire_len;
	if (dropped)
		r->dropped++;
	else if (opts.retval == XDP_TX)
		r->answered++;
	else
		r->passed++;
	return count_source(r, frame, dropped);
}

struct progress {
	bool enabled;
	FILE *file;
	off_t size;
	__u64 start_ns, last_ns;
	bool shown;
};

/* A line on stderr, rewritten once a second (the caller checks the clock
 * every PROGRESS_EVERY frames). */
static void show_progress(struct progress *pg, const struct fg_replay_result *r)
{
	__u64 now = fg_monotonic_ns();
	long pos = pg->file ? ftell(pg->file) : -1;
	double secs = (double)(now - pg->start_ns) / FG_NS_PER_S;

	if (!pg->enabled || now - pg->last_ns < FG_NS_PER_S)
		return;
	pg->last_ns = now;
	pg->shown = true;
	if (pos >= 0 && pg->size > 0)
		fprintf(stderr, "\rreplay: %5.1f%%, %" PRIu64 " frames, %.0f frames/s ",
			100.0 * pos / pg->size, (uint64_t)r->frames, r->frames / secs);
	else
		fprintf(stderr, "\rreplay: %" PRIu64 " frames, %.0f frames/s ", (uint64_t)r->frames,
			r->frames / secs);
}

static __u64 record_time_ns(const struct pcap_pkthdr *hdr)
{
	/* With nanosecond precision requested, tv_usec holds nanoseconds. */
	if (hdr->ts.tv_sec < 0)
		return 0;
	return (__u64)hdr->ts.tv_sec * FG_NS_PER_S + (__u64)hdr->ts.tv_usec;
}

/* Advances the replay clock to the record's time; never backwards. */
static __u64 replay_clock(struct fg_replay_result *r, const struct pcap_pkthdr *hdr)
{
	__u64 ts = record_time_ns(hdr);

	if (!r->frames++) {
		r->first_ns = r->last_ns = ts;
	} else if (ts < r->last_ns) {
		r->backwards++;
	} else {
		r->last_ns = ts;
	}
	return r->last_ns;
}

static int replay_frames(pcap_t *pcap, const char *path, struct floodgate_bpf *skel,
			 struct progress *pg, struct fg_replay_result *r, struct fg_err *err)
{
	__u8 buf[FG_REPLAY_MAX_RUN_BYTES]; /* a cooked frame, made Ethernet */
	int prog_fd = bpf_program__fd(skel->progs.fg_xdp), rc;
	struct replay_frame frame;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	__u64 now;

	while ((rc = pcap_next_ex(pcap, &hdr, &data)) == 1) {
		now = replay_clock(r, hdr);
		if (!(r->frames % PROGRESS_EVERY))
			show_progress(pg, r);
		switch (to_ethernet(r->linktype, hdr, data, buf, &frame)) {
		case FRAME_OUTGOING:
			r->outgoing_skipped++;
			continue;
		case FRAME_RUNT:
			r->runt_skipped++;
			continue;
		case FRAME_RUN:
			break;
		}
		r->truncated += hdr->caplen < hdr->len;
		r->clipped += frame.clipped;
		rc = run_frame(skel, prog_fd, &frame, now, r);
		if (rc)
			return fg_fail(err, FG_ERR_SYSTEM,
				       "the test run of frame %" PRIu64 " failed: %s",
				       (uint64_t)r->frames, strerror(-rc));
	}
	if (pg->shown)
		fprintf(stderr, "\r%60s\r", "");
	if (rc == PCAP_ERROR) {
		r->cut_short = true;
		pr_warn("%s: the capture stops after %" PRIu64 " frames (%s); the frames before "
			"are replayed\n",
			path, (uint64_t)r->frames, pcap_geterr(pcap));
	}
	if (!r->frames)
		return fg_fail(err, FG_ERR_CONFIG, "%s: the capture holds no frames", path);
	return 0;
}

static int read_counters(struct floodgate_bpf *skel, struct fg_replay_result *r, struct fg_err *err)
{
	__u32 i, zero = 0;
	int rc = fg_sum_percpu(bpf_map__fd(skel->maps.global_stats), zero, &r->global,
			       sizeof(r->global));

	for (i = 0; !rc && i < r->set->count && i < FG_MAX_POLICIES; i++)
		rc = fg_sum_percpu(bpf_map__fd(skel->maps.policy_stats), i, &r->policies[i],
				   sizeof(r->policies[i]));
	if (rc)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the counters: %s", strerror(-rc));
	return 0;
}

/* Runs the capture on one CPU, so that per-CPU state (the new-source
 * budget, LRU free lists) is one sequence, as the capture's clock is. */
static int replay_on_one_cpu(pcap_t *pcap, const struct fg_replay_opts *opts,
			     struct floodgate_bpf *skel, struct fg_replay_result *r,
			     struct fg_err *err)
{
	struct progress pg = {.enabled = opts->progress, .file = pcap_file(pcap)};
	cpu_set_t before, one;
	bool pinned = !sched_getaffinity(0, sizeof(before), &before);
	struct stat st;
	int cpu = sched_getcpu(), ret;

	if (pinned && cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pinned = !sched_setaffinity(0, sizeof(one), &one);
	}
	if (!stat(opts->capture_path, &st))
		pg.size = st.st_size;
	pg.start_ns = pg.last_ns = fg_monotonic_ns();
	ret = replay_frames(pcap, opts->capture_path, skel, &pg, r, err);
	r->elapsed_ns = fg_monotonic_ns() - pg.start_ns;
	if (!ret)
		ret = read_counters(skel, r, err);
	if (pinned)
		sched_setaffinity(0, sizeof(before), &before);
	return ret;
}

int fg_replay(const struct fg_replay_opts *opts, struct fg_replay_result *r, struct fg_err *err)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct fg_compiled *compiled = calloc(1, sizeof(*compiled));
	struct floodgate_bpf *skel = NULL;
	pcap_t *pcap = NULL;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->set = malloc(sizeof(*r->set));
	if (!cfg || !compiled || !r->set || grow_sources(r)) {
		fg_fail(err, FG_ERR_SYSTEM, "out of memory preparing the replay");
		goto out;
	}
	if (read_config(opts->config_path, cfg, compiled, err))
		goto out;
	pcap = open_capture(opts->capture_path, &r->linktype, err);
	if (!pcap)
		goto out;
	r->linktype_name = pcap_datalink_val_to_name(r->linktype);
	if (!r->linktype_name)
		r->linktype_name = "?";
	skel = replay_prepare_skeleton(cfg, compiled, err);
	if (!skel)
		goto out;
	*r->set = compiled->set;
	ret = replay_on_one_cpu(pcap, opts, skel, r, err);
out:
	if (ret)
		fg_replay_result_free(r);
	floodgate_bpf__destroy(skel);
	if (pcap)
		pcap_close(pcap);
	fg_compiled_free(compiled);
	free(cfg);
	return ret;
}

void fg_replay_result_free(struct fg_replay_result *r)
{
	free(r->sources);
	free(r->set);
	r->sources = NULL;
	r->set = NULL;
	r->sources_size = r->sources_used = 0;
}

/* ---- the sources with the most drops ------------------------------------ */

/* Most drops first, then most passed, then by address. */
static int compare_sources(const void *a, const void *b)
{
	const struct fg_replay_source *x = *(const struct fg_replay_source *const *)a;
	const struct fg_replay_source *y = *(const struct fg_replay_source *const *)b;

	if (x->dropped != y->dropped)
		return x->dropped > y->dropped ? -1 : 1;
	if (x->passed != y->passed)
		return x->passed > y->passed ? -1 : 1;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->addr, y->addr, 16);
}

/* The top_n sources by drops; *n is how many there are. */
const struct fg_replay_source **fg_replay_top_sources(const struct fg_replay_result *r,
						      size_t top_n, size_t *n)
{
	const struct fg_replay_source **all = calloc(r->sources_used + 1, sizeof(*all));
	size_t i, used = 0;

	*n = 0;
	if (!all)
		return NULL;
	for (i = 0; i < r->sources_size; i++)
		if (r->sources[i].family)
			all[used++] = &r->sources[i];
	qsort(all, used, sizeof(*all), compare_sources);
	*n = top_n < used ? top_n : used;
	return all;
}
