// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate-flood: the traffic generator. Runs flood.bpf.c with
 * BPF_PROG_TEST_RUN in live-frames mode, ingress_ifindex = --dev, so every
 * repeat is one frame that the program rewrites and sends with XDP_TX. On
 * a kernel that refuses live frames, the socket sender (below) builds the
 * same frames here and writes them to an AF_PACKET socket on --dev.
 *
 * Sequence numbers. Frame i of a run (i counted over all threads) uses
 * source index i mod K (round-robin, or the i mod K-th entry of a fixed
 * permutation) and, for TCP, sequence number i. Each test_run call gets a
 * disjoint range [base, base + n) of the one global sequence, reserved with
 * an atomic add on a userspace counter (one atomic per call, none per frame),
 * and the program reads base from its CPU's slot in .bss. Every reserved
 * range is sent in full, so the frames sent are exactly 0 .. sent-1 and each
 * of K sources gets floor(sent / K) or ceil(sent / K) frames, however many
 * threads there are. A per-frame atomic in BPF would also be exact, but its
 * cache line would bounce between the sending CPUs on every frame.
 *
 * This needs each thread to stay on one CPU (it is pinned) and the threads
 * that share a CPU to take turns (a mutex per CPU).
 *
 * Pacing (--rate R): the range starting at frame `base` is not sent before
 * start + base / R, with clock_nanosleep on CLOCK_MONOTONIC absolute
 * deadlines, so a late batch is not followed by a catch-up burst and the
 * schedule does not drift. Batches are then at most R / 1000 frames (one
 * per millisecond) and at least 1.
 *
 * Batches. A test_run call has a fixed cost besides its frames (it sets up
 * and tears down a page pool; docs/traffic-generator.md has the figures),
 * so small calls cap the rate: unpaced runs use 4096 frames per call by
 * default. Inside a call
 * the kernel still recycles its default 64 pages. And while the program is
 * attached nowhere, every call with repeat > 1 adds it to the global XDP
 * dispatcher and removes it again, which waits for an RCU grace period under
 * a global mutex (tens of ms per call, and it stalls every other test_run
 * user on the machine): hold_in_dispatcher() avoids that.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flood.h"
#include "flood.skel.h"
#include "base/log.h"
#include "opts.h"

#define META_LEN 8 /* the cookie */
#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() can return */
#endif
#define PER_SOURCE_MAX (1U << 20) /* larger K: per_source is left out */

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* splitmix64: the generator of the permutation and the scattered sources
 * (reproducible from --seed), and of the socket sender's random sources. */
static __u64 splitmix64(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- the device, over rtnetlink ---------------------------------------- */

struct link_info {
	__u8 mac[ETH_ALEN];
	bool has_mac;
	bool is_veth;
	int link;	  /* IFLA_LINK: the veth peer's ifindex */
	bool other_netns; /* IFLA_LINK_NETNSID: the peer is elsewhere */
	__u64 tx_dropped;
	bool has_stats;
};

static void parse_linkinfo(struct rtattr *nest, struct link_info *li)
{
	int len = RTA_PAYLOAD(nest);
	struct rtattr *a;

	for (a = RTA_DATA(nest); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_INFO_KIND && RTA_PAYLOAD(a) == sizeof("veth") &&
		    !memcmp(RTA_DATA(a), "veth", sizeof("veth")))
			li->is_veth = true;
}

static int link_query(int ifindex, struct link_info *li)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST,
		       .nlmsg_seq = 1},
		.ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex},
	};
	static __u8 buf[65536] __attribute__((aligned(8)));
	struct nlmsghdr *nh;
	int fd, ret = -EIO;
	ssize_t n;

	memset(li, 0, sizeof(*li));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
		struct ifinfomsg *ifi;
		struct rtattr *a;
		int len;

		if (nh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(nh);

			ret = e->error ? e->error : -EIO;
			goto out;
		}
		if (nh->nlmsg_type != RTM_NEWLINK)
			continue;
		ifi = NLMSG_DATA(nh);
		len = IFLA_PAYLOAD(nh);
		for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			switch (a->rta_type) {
			case IFLA_ADDRESS:
				if (RTA_PAYLOAD(a) == ETH_ALEN) {
					memcpy(li->mac, RTA_DATA(a), ETH_ALEN);
					li->has_mac = true;
				}
				break;
			case IFLA_LINK:
				memcpy(&li->link, RTA_DATA(a), sizeof(li->link));
				break;
			case IFLA_LINK_NETNSID:
				li->other_netns = true;
				break;
			case IFLA_LINKINFO:
				parse_linkinfo(a, li);
				break;
			case IFLA_STATS64: {
				struct rtnl_link_stats64 st;

				if (RTA_PAYLOAD(a) >= sizeof(st)) {
					memcpy(&st, RTA_DATA(a), sizeof(st));
					li->tx_dropped = st.tx_dropped;
					li->has_stats = true;
				}
				break;
			}
			}
		}
		ret = 0;
		break;
	}
out:
	close(fd);
	return ret;
}

/* ---- the frame --------------------------------------------------------- */

/* One's complement sum of native-order 16-bit loads, folded to 16 bits. */
static __u32 sum16(const void *p, size_t len)
{
	const __u8 *b = p;
	__u64 s = 0;
	__u16 v;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		memcpy(&v, b + i, 2);
		s += v;
	}
	if (len & 1) {
		v = 0;
		memcpy(&v, b + len - 1, 1);
		s += v;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u32)s;
}

static void put16(__u8 *p, __u16 v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

/* flood_zeros holds the longest payload: the longest frame's after the
 * shortest headers (IPv4/UDP). */
_Static_assert(FLOOD_MAX_FRAME - (ETH_HLEN + 20 + 8) <= FLOOD_MAX_PAYLOAD,
	       "flood_zeros is shorter than the longest payload");

/* Writes the whole frame (headers for the first source, zero payload) and
 * the template and partial sums the program needs. */
static void build_frame(const struct flood_opts *o, __u8 *frame, struct flood_bpf__rodata *rd)
{
	int alen = flood_addr_len(o->family), l3len = o->family == AF_INET ? 20 : 40;
	__u32 l4len = o->size - ETH_HLEN - l3len, hlen = flood_headers_len(o);
	__u8 *ip = frame + ETH_HLEN, *l4 = ip + l3len, pseudo[40];
	int i;

	memset(frame, 0, o->size);
	memcpy(frame, o->dst_mac, ETH_ALEN);
	memcpy(frame + ETH_ALEN, o->src_mac, ETH_ALEN);
	put16(frame + 12, o->family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
	if (o->family == AF_INET) {
		ip[0] = 0x45;
		put16(ip + 2, (__u16)(o->size - ETH_HLEN));
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = (__u8)o->proto;
		memcpy(ip + 16, o->dst, 4);
		rd->cfg_l3_sum = sum16(ip, 20); /* source and checksum still zero */
		memcpy(ip + 12, o->src, 4);
	} else {
		ip[0] = 0x60;
		put16(ip + 4, (__u16)l4len);
		ip[6] = (__u8)o->proto;
		ip[7] = 64;
		memcpy(ip + 8, o->src, 16);
		memcpy(ip + 24, o->dst, 16);
	}
	put16(l4, o->sport);
	put16(l4 + 2, o->dport);
	if (o->proto == IPPROTO_TCP) {
		l4[12] = 5 << 4;		   /* data offset */
		l4[13] = o->tcp_ack ? 0x10 : 0x02; /* ACK or SYN */
		if (o->tcp_ack)
			memcpy(l4 + 8, "\x5e\xed\xc0\xde", 4); /* a cookie no SYN was given */
		put16(l4 + 14, 64240);
	} else {
		put16(l4 + 4, (__u16)l4len);
	}

	/* Pseudo-header with a zero source, then the L4 header and payload
	 * with zero checksum and sequence number. */
	memset(pseudo, 0, sizeof(pseudo));
	if (o->family == AF_INET) {
		memcpy(pseudo + 4, o->dst, 4);
		pseudo[9] = (__u8)o->proto;
		put16(pseudo + 10, (__u16)l4len);
		rd->cfg_l4_sum = sum16(pseudo, 12) + sum16(l4, l4len);
	} else {
		__u32 be = htonl(l4len);

		memcpy(pseudo + 16, o->dst, 16);
		memcpy(pseudo + 32, &be, 4);
		pseudo[39] = (__u8)o->proto;
		rd->cfg_l4_sum = sum16(pseudo, 40) + sum16(l4, l4len);
	}

	memcpy((void *)rd->cfg_tmpl.b, frame, hlen);
	rd->cfg_payload_len = o->size - hlen;
	rd->cfg_family = o->family == AF_INET ? 4 : 6;
	rd->cfg_proto = (__u8)o->proto;
	rd->cfg_src_mode = (__u8)o->src_mode;
	rd->cfg_nsrc = o->nsrc;
	rd->cfg_repeat = o->repeat;
	rd->cfg_src_low = flood_low_word(o->src, o->family);
	for (i = 0; i < alen / 4; i++) {
		int bits = o->prefix_len - 32 * i;
		__u32 host = bits <= 0 ? 0xffffffff : bits >= 32 ? 0 : 0xffffffff >> bits;

		memcpy((void *)&rd->cfg_src_be[i], o->src + 4 * i, 4);
		rd->cfg_rand_mask[i] = o->src_mode == FLOOD_SRC_RANDOM ? htonl(host) : 0;
	}
}

/* ---- the run ----------------------------------------------------------- */

struct hole {
	__u64 start, end;
};

struct run {
	struct flood_bpf *skel;
	int prog_fd;
	int ifindex;
	const __u8 *frame; /* the cookie (metadata), then the frame */
	__u32 size;	   /* of the frame */
	__u32 batch;
	__u32 nsrc;
	__u64 count;  /* 0: until end_ns */
	__u64 end_ns; /* duration mode */
	double rate;
	__u64 t0;
	__u64 next; /* the global sequence: next frame to hand out */
	int stop;
	int *cpus;
	int ncpus;
	pthread_mutex_t *cpu_lock; /* one per entry of cpus[] */
	pthread_mutex_t go_lock;   /* with go_cond: the start signal */
	pthread_cond_t go_cond;
	bool go;
	pthread_mutex_t lock; /* protects holes */
	struct hole *holes;
	size_t nholes, holes_cap;
	int sender;			    /* FLOOD_SENDER_XDP or _SOCKET; auto may switch */
	bool sender_auto;		    /* --sender auto */
	const struct flood_bpf__rodata *rd; /* the socket sender's settings */
	const __u32 *perm;		    /* SHUFFLE, SCATTER: flood_perm's copy */
};

struct worker {
	struct run *r;
	pthread_t tid;
	int cpu_idx;
	bool started;
	__u64 first_ns, last_ns, max_batch_ns;
	__u64 frames; /* per the program's slot, summed over calls */
	__u64 calls;
	int err;	/* of BPF_PROG_TEST_RUN, or of the socket */
	int err_sender; /* which of the two: FLOOD_SENDER_XDP or _SOCKET */
	int pin_err;	/* of pthread_setaffinity_np */
	int sock;	/* the socket sender's AF_PACKET socket, or -1 */
	__u64 prng;	/* the socket sender's random sources */
};

static volatile sig_atomic_t flood_signalled;

static void on_signal(int sig)
{
	(void)sig;
	flood_signalled = 1;
}

static bool stopping(struct run *r)
{
	if (flood_signalled)
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

/* When the frame with sequence number seq is due, rounded up. */
static __u64 due_ns(const struct run *r, __u64 seq)
{
	return r->t0 + (__u64)ceil((double)seq * 1e9 / r->rate);
}

/* Hands out the next range of the global sequence. Every range handed out
 * is sent, so the frames sent are exactly 0 .. next-1 (minus any holes
 * recorded after a failed call). */
static bool reserve(struct run *r, __u64 *base, __u32 *n)
{
	__u64 b;

	if (stopping(r))
		return false;
	if (r->count) {
		__u64 want;

		b = __atomic_load_n(&r->next, __ATOMIC_RELAXED);
		do {
			if (b >= r->count)
				return false;
			want = r->count - b < r->batch ? r->count - b : r->batch;
		} while (!__atomic_compare_exchange_n(&r->next, &b, b + want, false,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		*base = b;
		*n = (__u32)want;
		return true;
	}
	if (r->rate > 0) {
		/* Stop at the first range that would be due after the end. */
		b = __atomic_load_n(&r->next, __ATOMIC_RELAXED);
		if (due_ns(r, b) >= r->end_ns)
			return false;
	} else if (mono_ns() >= r->end_ns) {
		return false;
	}
	*base = __atomic_fetch_add(&r->next, r->batch, __ATOMIC_RELAXED);
	*n = r->batch;
	return true;
}

static void add_hole(struct run *r, __u64 start, __u64 end)
{
	pthread_mutex_lock(&r->lock);
	if (r->nholes == r->holes_cap) {
		size_t cap = r->holes_cap ? 2 * r->holes_cap : 16;
		struct hole *h = realloc(r->holes, cap * sizeof(*h));

		if (!h) {
			pthread_mutex_unlock(&r->lock);
			__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
			return;
		}
		r->holes = h;
		r->holes_cap = cap;
	}
	r->holes[r->nholes++] = (struct hole){start, end};
	pthread_mutex_unlock(&r->lock);
}

/* Sleeps until `ns` (CLOCK_MONOTONIC), waking every 100 ms to see whether
 * the run is being stopped. Returns false if it is. */
static bool sleep_until(struct run *r, __u64 ns)
{
	for (;;) {
		__u64 now = mono_ns(), until = ns;
		struct timespec ts;

		if (stopping(r))
			return false;
		if (now >= ns)
			return true;
		if (ns - now > 100000000ULL)
			until = now + 100000000ULL;
		ts = (struct timespec){.tv_sec = (time_t)(until / 1000000000ULL),
				       .tv_nsec = (long)(until % 1000000000ULL)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* ---- the socket sender ------------------------------------------------ */

/* Frames per sendmmsg call. */
#define SOCKET_CHUNK	64
/* How long a socket whose buffer stays full is retried before the run
 * fails (its frames counted as not sent). */
#define SOCKET_STUCK_NS 5000000000ULL

/* Source word i (network order) of the frame, as flood.bpf.c's src_word. */
static __u32 socket_src_word(struct worker *w, int i, __u32 idx)
{
	const struct flood_bpf__rodata *rd = w->r->rd;

	if (rd->cfg_src_mode == FLOOD_SRC_RANDOM) {
		if (!rd->cfg_rand_mask[i])
			return rd->cfg_src_be[i];
		return rd->cfg_src_be[i] | ((__u32)splitmix64(&w->prng) & rd->cfg_rand_mask[i]);
	}
	if (i == (rd->cfg_family == 4 ? 0 : 3))
		return htonl(rd->cfg_src_low + idx);
	return rd->cfg_src_be[i];
}

/* Writes the next frame of this CPU's slot into `out`: the same frame, with
 * the same slot bookkeeping, as flood.bpf.c makes of a live frame. */
static void socket_make_frame(struct worker *w, volatile struct flood_slot *s, __u8 *out)
{
	const struct run *r = w->r;
	const struct flood_bpf__rodata *rd = r->rd;
	__u32 pos = s->pos, idx = 0, l4_off, word, i;
	__u64 seq = s->seq++, l4_sum = rd->cfg_l4_sum;
	bool repeat = false;
	__u16 c;

	if (s->repeats_left) {
		s->repeats_left--;
		repeat = true;
	} else {
		s->repeats_left = rd->cfg_repeat - 1;
		s->pos = pos + 1 >= rd->cfg_nsrc ? 0 : pos + 1;
	}
	if (rd->cfg_src_mode == FLOOD_SRC_SEQ)
		idx = pos;
	else if (rd->cfg_src_mode == FLOOD_SRC_SHUFFLE || rd->cfg_src_mode == FLOOD_SRC_SCATTER)
		idx = r->perm[pos];

	memcpy(out, r->frame + META_LEN, r->size);
	if (rd->cfg_family == 4) {
		__u64 l3_sum = rd->cfg_l3_sum;

		word = repeat ? s->last_src[0] : socket_src_word(w, 0, idx);
		s->last_src[0] = word;
		memcpy(out + ETH_HLEN + 12, &word, 4);
		l3_sum += flood_halves(word);
		l4_sum += flood_halves(word);
		c = flood_csum_fold(l3_sum);
		memcpy(out + ETH_HLEN + 10, &c, 2);
		l4_off = ETH_HLEN + 20;
	} else {
		for (i = 0; i < 4; i++) {
			word = repeat ? s->last_src[i] : socket_src_word(w, (int)i, idx);
			s->last_src[i] = word;
			memcpy(out + ETH_HLEN + 8 + 4 * i, &word, 4);
			l4_sum += flood_halves(word);
		}
		l4_off = ETH_HLEN + 40;
	}
	if (rd->cfg_proto == IPPROTO_TCP) {
		word = htonl((__u32)seq);
		memcpy(out + l4_off + 4, &word, 4);
		l4_sum += flood_halves(word);
		c = flood_csum_fold(l4_sum);
		memcpy(out + l4_off + 16, &c, 2);
	} else {
		c = flood_csum_fold(l4_sum);
		/* 0 means "no checksum" in UDP (and is invalid over IPv6). */
		if (!c)
			c = 0xffff;
		memcpy(out + l4_off + 6, &c, 2);
	}
}

/* An AF_PACKET socket that writes frames straight to the device's driver. */
static int socket_open(int ifindex)
{
	struct sockaddr_ll addr = {.sll_family = AF_PACKET, .sll_ifindex = ifindex};
	int fd, one = 1;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Sends frames slot->seq .. slot->seq + n - 1 through the socket; leaves
 * slot->seq after the last frame the socket took, which is all of them
 * unless it failed (then returns its error). Retries while the socket's
 * buffer is full. */
static int socket_send(struct worker *w, volatile struct flood_slot *slot, __u32 n)
{
	static __thread __u8 buf[SOCKET_CHUNK][FLOOD_MAX_FRAME];
	struct mmsghdr msgs[SOCKET_CHUNK];
	struct iovec iov[SOCKET_CHUNK];
	__u32 done = 0, m, i;
	__u64 stuck_since = 0;

	if (w->sock < 0) {
		w->sock = socket_open(w->r->ifindex);
		if (w->sock < 0)
			return w->sock;
	}
	while (done < n) {
		__u64 first = slot->seq;
		__u32 sent = 0;

		m = n - done < SOCKET_CHUNK ? n - done : SOCKET_CHUNK;
		for (i = 0; i < m; i++) {
			socket_make_frame(w, slot, buf[i]);
			iov[i] = (struct iovec){.iov_base = buf[i], .iov_len = w->r->size};
			msgs[i] =
				(struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
		}
		while (sent < m) {
			int k = sendmmsg(w->sock, msgs + sent, m - sent, 0);

			/* A full buffer empties as the device takes frames;
			 * one that stays full for seconds never will. */
			if (k < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) &&
			    !stopping(w->r)) {
				__u64 now = mono_ns();

				if (!stuck_since)
					stuck_since = now;
				if (now - stuck_since < SOCKET_STUCK_NS) {
					sched_yield();
					continue;
				}
			}
			if (k < 0) {
				/* Asked to stop: what is unsent becomes a hole,
				 * as a cut-short test_run's frames do. */
				int err = stopping(w->r) ? -EINTR : -errno;

				slot->sent += sent;
				slot->seq = first + sent;
				return err;
			}
			sent += (__u32)k;
			stuck_since = 0;
		}
		slot->sent += m;
		done += m;
	}
	return 0;
}

/* Whether an error of the first live-frames call means the kernel refuses
 * them (so auto falls back to the socket). */
static bool live_frames_refused(int err)
{
	return err == -EPERM || err == -EOPNOTSUPP || err == -ENOTSUPP;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	int cpu = r->cpus[w->cpu_idx];
	volatile struct flood_slot *slot = &r->skel->bss->slots[cpu];
	struct xdp_md ctx = {.data = META_LEN,
			     .data_end = META_LEN + r->size + FLOOD_TRIM_LEN,
			     .ingress_ifindex = r->ifindex};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = r->frame,
		    .data_size_in = META_LEN + r->size + FLOOD_TRIM_LEN, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	cpu_set_t set;
	__u64 base;
	__u32 n;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	w->pin_err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_mutex_lock(&r->go_lock);
	while (!r->go)
		pthread_cond_wait(&r->go_cond, &r->go_lock);
	pthread_mutex_unlock(&r->go_lock);
	if (w->pin_err) {
		fprintf(stderr, "Error: cannot pin a thread to CPU %d: %s\n", cpu,
			strerror(w->pin_err));
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
		return NULL;
	}

	while (reserve(r, &base, &n)) {
		__u64 t1, t2, done;
		int err, sender;

		if (r->rate > 0 && !sleep_until(r, due_ns(r, base))) {
			add_hole(r, base, base + n); /* stopped: never sent */
			break;
		}
		pthread_mutex_lock(&r->cpu_lock[w->cpu_idx]);
		slot->seq = base;
		slot->pos = (__u32)(base % r->nsrc);
		opts.repeat = n;
		t1 = mono_ns();
		sender = __atomic_load_n(&r->sender, __ATOMIC_RELAXED);
		if (sender == FLOOD_SENDER_XDP) {
			err = bpf_prog_test_run_opts(r->prog_fd, &opts);
			/* auto: a kernel that refuses live frames sent none of
			 * these; send them (and the rest) through the socket. */
			if (err && live_frames_refused(err) && slot->seq == base &&
			    r->sender_auto) {
				__atomic_store_n(&r->sender, FLOOD_SENDER_SOCKET, __ATOMIC_RELAXED);
				sender = FLOOD_SENDER_SOCKET;
				slot->pos = (__u32)(base % r->nsrc);
				err = socket_send(w, slot, n);
			}
		} else {
			err = socket_send(w, slot, n);
		}
		t2 = mono_ns();
		done = slot->seq - base;
		pthread_mutex_unlock(&r->cpu_lock[w->cpu_idx]);

		if (!w->started) {
			w->started = true;
			w->first_ns = t1;
		}
		w->last_ns = t2;
		if (t2 - t1 > w->max_batch_ns)
			w->max_batch_ns = t2 - t1;
		w->calls++;
		w->frames += done;
		if (done != n)
			add_hole(r, base + (done < n ? done : n), base + n);
		if (err && err != -EINTR) {
			w->err = err;
			w->err_sender = sender;
			__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (w->sock >= 0)
		close(w->sock);
	return NULL;
}

/* The CPUs this process may run on (ids below FLOOD_MAX_CPUS). */
static int allowed_cpus(int **out)
{
	cpu_set_t set;
	int i, n = 0, *cpus;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	cpus = calloc(CPU_SETSIZE, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (i = 0; i < CPU_SETSIZE && i < FLOOD_MAX_CPUS; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	if (!n) {
		free(cpus);
		return -ENOENT;
	}
	*out = cpus;
	return n;
}

/* The device the run holds its program on: --hold's, else --dev. */
static const char *hold_device(const struct flood_opts *o)
{
	return o->hold ? o->hold : o->dev;
}

/* Attaches the program in generic mode to hold_device() for the length of
 * the run (see flood.bpf.c): while it is attached somewhere, test_run finds
 * it in the XDP dispatcher and does not wait for an RCU grace period on
 * every call. Any device will do, since only the attachment counts: --hold
 * serves a --dev that already runs a native program (one mode at a time).
 * The link goes away with the process. */
static int hold_in_dispatcher(struct flood_bpf *skel, const char *dev)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_SKB_MODE);
	int fd = bpf_link_create(bpf_program__fd(skel->progs.flood_xdp), (int)if_nametoindex(dev),
				 BPF_XDP, &opts);

	if (fd < 0)
		pr_warn("Warning: cannot attach the generator to '%s' in generic mode (%s), so "
			"each batch waits for an RCU grace period: expect a low rate (--hold)\n",
			dev, strerror(errno));
	return fd;
}

/* A bijection of the integers below 2^bits (bits <= 32), keyed by `state`:
 * three rounds of add, multiply by an odd number and xorshift, each
 * invertible modulo 2^bits, so distinct inputs give distinct offsets. */
static __u32 scatter_offset(__u32 i, int bits, const __u64 keys[3])
{
	__u32 mask = bits >= 32 ? 0xffffffff : (1U << bits) - 1, x = i;
	int r, shift = (bits + 1) / 2;

	for (r = 0; r < 3; r++) {
		x = (x + (__u32)keys[r]) & mask;
		x = (x * ((__u32)(keys[r] >> 32) | 1)) & mask;
		if (shift)
			x ^= x >> shift;
	}
	return x;
}

/* Fills flood_perm with what each position i < nsrc adds to the base: a
 * Fisher-Yates shuffle of 0 .. nsrc-1 (:shuffle), or nsrc distinct offsets
 * scattered over the prefix's host bits (PREFIX/LEN+K), both reproducible
 * from --seed. Keeps a copy for the per-source report. */
static int fill_perm(struct flood_bpf *skel, const struct flood_opts *o, __u32 **copy)
{
	__u32 nsrc = o->nsrc;
	size_t len = (size_t)nsrc * sizeof(__u32);
	size_t map_len = (len + (size_t)getpagesize() - 1) & ~((size_t)getpagesize() - 1);
	__u64 state = o->seed, keys[3];
	__u32 *perm, i;

	perm = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    bpf_map__fd(skel->maps.flood_perm), 0);
	if (perm == MAP_FAILED)
		return -errno;
	if (o->src_mode == FLOOD_SRC_SCATTER) {
		for (i = 0; i < 3; i++)
			keys[i] = splitmix64(&state);
		for (i = 0; i < nsrc; i++)
			perm[i] = scatter_offset(i, flood_addr_len(o->family) * 8 - o->prefix_len,
						 keys);
	} else {
		for (i = 0; i < nsrc; i++)
			perm[i] = i;
		for (i = nsrc - 1; i > 0; i--) {
			__u32 j = (__u32)(splitmix64(&state) % ((__u64)i + 1)), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	*copy = malloc(len);
	if (*copy)
		memcpy(*copy, perm, len);
	munmap(perm, map_len);
	return *copy ? 0 : -ENOMEM;
}

static void format_addr(const struct flood_opts *o, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(o->family, o->src, a, sizeof(a));
	if (o->src_mode == FLOOD_SRC_RANDOM)
		snprintf(buf, size, "%s/%d (random)", a, o->prefix_len);
	else if (o->src_mode == FLOOD_SRC_SCATTER)
		snprintf(buf, size, "%s/%d+%u (scattered)", a, o->prefix_len, o->nsrc);
	else if (o->nsrc > 1)
		snprintf(buf, size, "%s+%u%s", a, o->nsrc,
			 o->src_mode == FLOOD_SRC_SHUFFLE ? ":shuffle" : "");
	else
		snprintf(buf, size, "%s", a);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Frames per source, in address order, from the sequence numbers sent. */
static __u64 *per_source(const struct flood_opts *o, const struct run *r, const __u32 *perm)
{
	__u64 *pos_cnt, *cnt, *order, k = o->nsrc, q = r->next / k, rem = r->next % k;
	size_t i;
	__u64 s;

	pos_cnt = calloc(k, sizeof(*pos_cnt));
	cnt = calloc(k, sizeof(*cnt));
	if (!pos_cnt || !cnt) {
		free(pos_cnt);
		free(cnt);
		return NULL;
	}
	for (i = 0; i < k; i++)
		pos_cnt[i] = q + (i < rem);
	for (i = 0; i < r->nholes; i++)
		for (s = r->holes[i].start; s < r->holes[i].end; s++)
			pos_cnt[s % k]--;
	if (!perm) {
		memcpy(cnt, pos_cnt, k * sizeof(*cnt));
		free(pos_cnt);
		return cnt;
	}
	/* Position i sends base + perm[i]: sort the positions by it. */
	order = malloc(k * sizeof(*order));
	if (!order) {
		free(pos_cnt);
		free(cnt);
		return NULL;
	}
	for (i = 0; i < k; i++)
		order[i] = (__u64)perm[i] << 32 | i;
	qsort(order, k, sizeof(*order), cmp_u64);
	for (i = 0; i < k; i++)
		cnt[i] = pos_cnt[(__u32)order[i]];
	free(order);
	free(pos_cnt);
	return cnt;
}

/* ---- one invocation ---------------------------------------------------- */

/* Everything one invocation owns; session_free() releases it. */
struct session {
	struct flood_opts o;
	int ifindex;
	struct flood_bpf *skel;
	int hold;    /* the generic-mode link (hold_in_dispatcher), or -1 */
	__u32 *perm; /* SHUFFLE, SCATTER: flood_perm, for the per-source report */
	__u8 frame[META_LEN + FLOOD_MAX_FRAME + FLOOD_TRIM_LEN] __attribute__((aligned(8)));
	struct run r;
	struct worker *workers;
	__u32 started; /* threads created */
	struct link_info before;
	bool stats_ok; /* the device's counters were read before the run */
};

/* What the run did, as reported. */
struct result {
	__u64 sent; /* frames the program returned XDP_TX for, or the socket took */
	__u64 start_ns, end_ns, elapsed_ns, max_batch_ns;
	bool stats_ok;
	__u64 tx_dropped;
	__u64 *counts;	     /* frames per source, or NULL */
	int sender;	     /* how the frames left: FLOOD_SENDER_XDP or _SOCKET */
	const char *held_on; /* hold_device(), or "" when the program is held nowhere */
};

/* Finds --dev and fills in the MAC addresses not given. */
static int resolve_device(struct flood_opts *o, int *ifindex)
{
	struct link_info dev_li, peer_li;
	int err;

	*ifindex = (int)if_nametoindex(o->dev);
	if (!*ifindex)
		return flood_usage_err("--dev '%s': no such device in this network namespace",
				       o->dev);
	if (o->hold && !if_nametoindex(o->hold))
		return flood_usage_err("--hold '%s': no such device in this network namespace",
				       o->hold);
	err = link_query(*ifindex, &dev_li);
	if (err) {
		fprintf(stderr, "Error: cannot query device '%s': %s\n", o->dev, strerror(-err));
		return FLOOD_EXIT_FAIL;
	}
	if (!o->have_src_mac) {
		if (!dev_li.has_mac)
			return flood_usage_err("--dev '%s' has no Ethernet address: give --src-mac",
					       o->dev);
		memcpy(o->src_mac, dev_li.mac, ETH_ALEN);
	}
	if (!o->have_dst_mac) {
		if (!dev_li.is_veth || dev_li.other_netns || dev_li.link <= 0 ||
		    link_query(dev_li.link, &peer_li) || !peer_li.has_mac ||
		    peer_li.link != *ifindex)
			return flood_usage_err(
				"need --dst-mac: '%s' is not a veth whose peer is in "
				"this network namespace",
				o->dev);
		memcpy(o->dst_mac, peer_li.mac, ETH_ALEN);
	}
	return FLOOD_EXIT_OK;
}

/* Opens the program, writes the frame and its template, loads it, and
 * fills the permutation of a shuffled range. */
static int prepare_program(struct session *s)
{
	const struct flood_opts *o = &s->o;
	__u64 cookie;
	int err;

	s->skel = flood_bpf__open();
	if (!s->skel) {
		fprintf(stderr, "Error: cannot open the flood BPF object: %s\n", strerror(errno));
		return FLOOD_EXIT_FAIL;
	}
	if (bpf_map__value_size(s->skel->maps.bss) != sizeof(*s->skel->bss) ||
	    bpf_map__value_size(s->skel->maps.rodata) != sizeof(*s->skel->rodata)) {
		fprintf(stderr, "Error: build/flood.skel.h does not match tools/flood/flood.h; "
				"rebuild\n");
		return FLOOD_EXIT_FAIL;
	}
	if (getrandom(&cookie, sizeof(cookie), 0) != sizeof(cookie))
		cookie = mono_ns() ^ ((__u64)getpid() << 32);
	s->skel->rodata->cfg_cookie = cookie;
	memcpy(s->frame, &cookie, META_LEN);
	build_frame(o, s->frame + META_LEN, s->skel->rodata);
	if (o->src_mode == FLOOD_SRC_SHUFFLE || o->src_mode == FLOOD_SRC_SCATTER)
		bpf_map__set_max_entries(s->skel->maps.flood_perm, (o->nsrc + 1) / 2);
	err = flood_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "Error: cannot load the flood BPF program: %s\n", strerror(-err));
		return FLOOD_EXIT_FAIL;
	}
	/* A single-frame test run never touches the dispatcher; leave the
	 * device free for another generator that needs it. */
	if (o->batch > 1 && o->sender != FLOOD_SENDER_SOCKET)
		s->hold = hold_in_dispatcher(s->skel, hold_device(o));
	if (o->src_mode == FLOOD_SRC_SHUFFLE || o->src_mode == FLOOD_SRC_SCATTER) {
		err = fill_perm(s->skel, o, &s->perm);
		if (err) {
			fprintf(stderr, "Error: cannot fill the source permutation: %s\n",
				strerror(-err));
			return FLOOD_EXIT_FAIL;
		}
	}
	return FLOOD_EXIT_OK;
}

/* The shared state of the workers: CPUs, their locks, the start signal. */
static int prepare_run(struct session *s)
{
	const struct flood_opts *o = &s->o;
	struct run *r = &s->r;
	int i;

	*r = (struct run){.skel = s->skel,
			  .prog_fd = bpf_program__fd(s->skel->progs.flood_xdp),
			  .ifindex = s->ifindex,
			  .frame = s->frame,
			  .size = o->size,
			  .batch = o->batch,
			  .nsrc = o->nsrc,
			  .count = o->count,
			  .rate = o->rate,
			  .sender = o->sender == FLOOD_SENDER_SOCKET ? FLOOD_SENDER_SOCKET
								     : FLOOD_SENDER_XDP,
			  .sender_auto = o->sender == FLOOD_SENDER_AUTO,
			  .rd = s->skel->rodata,
			  .perm = s->perm};
	r->ncpus = allowed_cpus(&r->cpus);
	if (r->ncpus < 0) {
		fprintf(stderr, "Error: cannot list the CPUs to run on: %s\n", strerror(-r->ncpus));
		return FLOOD_EXIT_FAIL;
	}
	r->cpu_lock = calloc((size_t)r->ncpus, sizeof(*r->cpu_lock));
	s->workers = calloc(o->threads, sizeof(*s->workers));
	if (!r->cpu_lock || !s->workers) {
		fprintf(stderr, "Error: out of memory\n");
		return FLOOD_EXIT_FAIL;
	}
	for (i = 0; i < r->ncpus; i++)
		pthread_mutex_init(&r->cpu_lock[i], NULL);
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->go_lock, NULL);
	pthread_cond_init(&r->go_cond, NULL);
	return FLOOD_EXIT_OK;
}

/* Starts the workers, releases them together, and waits for them. */
static int run_workers(struct session *s)
{
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	const struct flood_opts *o = &s->o;
	struct run *r = &s->r;
	sigset_t block, old_mask;
	__u32 i;
	int err;

	/* Workers never take SIGINT/SIGTERM, so a test_run call is not cut
	 * short; this thread takes them and asks the workers to stop. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old_mask);
	flood_signalled = 0;
	for (i = 0; i < o->threads; i++) {
		s->workers[i] = (struct worker){.r = r,
						.cpu_idx = (int)(i % (__u32)r->ncpus),
						.sock = -1,
						.prng = o->seed ^ ((__u64)i << 32) ^ mono_ns()};
		err = pthread_create(&s->workers[i].tid, NULL, worker_main, &s->workers[i]);
		if (err) {
			fprintf(stderr, "Error: cannot start thread %u: %s\n", i, strerror(err));
			r->stop = 1; /* the ones started see it once released */
			break;
		}
		s->started++;
	}
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	s->stats_ok = link_query(s->ifindex, &s->before) == 0 && s->before.has_stats;

	pthread_mutex_lock(&r->go_lock);
	r->t0 = mono_ns();
	r->end_ns = o->count ? 0 : r->t0 + (__u64)(o->duration * 1e9);
	r->go = true;
	pthread_cond_broadcast(&r->go_cond);
	pthread_mutex_unlock(&r->go_lock);
	for (i = 0; i < s->started; i++)
		pthread_join(s->workers[i].tid, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return s->started == o->threads ? FLOOD_EXIT_OK : FLOOD_EXIT_FAIL;
}

/* Sums the workers into `res`. The window is from the first frame to the
 * last: a thread can wake well after t0 on a busy machine, and tests derive
 * bounds from this. Returns FLOOD_EXIT_FAIL if a worker failed. */
static int sum_workers(const struct session *s, struct result *res, __u64 *frames)
{
	const struct run *r = &s->r;
	int ret = FLOOD_EXIT_OK;
	__u32 i;

	res->start_ns = ~0ULL;
	res->end_ns = r->t0;
	res->sender = r->sender;
	for (i = 0; i < s->o.threads; i++) {
		const struct worker *w = &s->workers[i];

		if (w->err) {
			fprintf(stderr, "Error: %s on '%s' failed: %s\n",
				w->err_sender == FLOOD_SENDER_XDP
					? "BPF_PROG_TEST_RUN"
					: "sending to an AF_PACKET socket",
				s->o.dev, strerror(-w->err));
			ret = FLOOD_EXIT_FAIL;
		}
		if (w->pin_err)
			ret = FLOOD_EXIT_FAIL;
		*frames += w->frames;
		if (w->started && w->first_ns < res->start_ns)
			res->start_ns = w->first_ns;
		if (w->started && w->last_ns > res->end_ns)
			res->end_ns = w->last_ns;
		if (w->max_batch_ns > res->max_batch_ns)
			res->max_batch_ns = w->max_batch_ns;
	}
	if (res->start_ns == ~0ULL)
		res->start_ns = r->t0;
	/* elapsed runs from the schedule origin, which pacing is measured
	 * against; start_ns..end_ns spans the frames actually sent. */
	res->elapsed_ns = res->end_ns - r->t0;
	return ret;
}

/* Fills `res` after the run and cross-checks the frames sent (XDP_TX, or
 * taken by the socket) against the sequence numbers consumed and the ranges
 * handed out.
 * Returns FLOOD_EXIT_FAIL on a disagreement or a failed worker, or -ENOMEM
 * when the per-source counts cannot be made (then nothing is reported). */
static int collect(const struct session *s, struct result *res)
{
	const struct run *r = &s->r;
	__u64 frames = 0, hole_frames = 0;
	struct link_info after;
	int ret;
	__u32 i;

	res->stats_ok = s->stats_ok && link_query(s->ifindex, &after) == 0 && after.has_stats;
	if (res->stats_ok)
		res->tx_dropped = after.tx_dropped - s->before.tx_dropped;
	ret = sum_workers(s, res, &frames);
	for (i = 0; i < FLOOD_MAX_CPUS; i++)
		res->sent += s->skel->bss->slots[i].sent;
	for (i = 0; i < r->nholes; i++)
		hole_frames += r->holes[i].end - r->holes[i].start;
	if (res->sent != frames || frames != r->next - hole_frames) {
		fprintf(stderr,
			"Error: frame counts disagree: %llu sent, %llu run, %llu handed "
			"out\n",
			(unsigned long long)res->sent, (unsigned long long)frames,
			(unsigned long long)(r->next - hole_frames));
		ret = FLOOD_EXIT_FAIL;
	}
	/* With --repeat > 1 a frame's source is no longer its sequence number
	 * mod K (each CPU holds a source for R frames from where its batch
	 * starts), so the counts are not derived. */
	if (s->o.src_mode != FLOOD_SRC_RANDOM && s->o.nsrc <= PER_SOURCE_MAX && s->o.repeat == 1) {
		res->counts = per_source(&s->o, r, s->perm);
		if (!res->counts) {
			fprintf(stderr, "Error: out of memory\n");
			return -ENOMEM;
		}
	}
	return ret;
}

static void report_json(const struct flood_opts *o, const struct result *res)
{
	__u32 i;

	printf("{\"sent\": %llu, \"elapsed_ns\": %llu, \"start_ns\": %llu, \"end_ns\": %llu, "
	       "\"max_batch_ns\": %llu, \"threads\": %u, \"sources\": %u, \"batch\": %u, "
	       "\"rate\": %.17g, \"size\": %u, \"sender\": \"%s\", \"tx_dropped\": %lld, "
	       "\"held_on\": \"%s\"",
	       (unsigned long long)res->sent, (unsigned long long)res->elapsed_ns,
	       (unsigned long long)res->start_ns, (unsigned long long)res->end_ns,
	       (unsigned long long)res->max_batch_ns, o->threads,
	       o->src_mode == FLOOD_SRC_RANDOM ? 0 : o->nsrc, o->batch, o->rate, o->size,
	       res->sender == FLOOD_SENDER_XDP ? "xdp" : "socket",
	       res->stats_ok ? (long long)res->tx_dropped : -1LL, res->held_on);
	if (res->counts) {
		printf(", \"per_source\": [");
		for (i = 0; i < o->nsrc; i++)
			printf("%s%llu", i ? ", " : "", (unsigned long long)res->counts[i]);
		printf("]");
	}
	printf("}\n");
}

static void report_text(const struct flood_opts *o, const struct result *res)
{
	double secs = (double)res->elapsed_ns / 1e9;
	char src[96], dst[INET6_ADDRSTRLEN];
	__u64 lo = UINT64_MAX, hi = 0;
	__u32 i;

	format_addr(o, src, sizeof(src));
	inet_ntop(o->family, o->dst, dst, sizeof(dst));
	printf("sent %llu frames of %u bytes (%s, %s -> %s port %u -> %u) in %.6f s\n",
	       (unsigned long long)res->sent, o->size, o->proto == IPPROTO_TCP ? "tcp" : "udp", src,
	       dst, o->sport, o->dport, secs);
	printf("rate %.3f Mpps, %.3f Gbit/s; %u thread%s, batch %u, longest batch %.1f us; %s "
	       "sender\n",
	       secs > 0 ? (double)res->sent / secs / 1e6 : 0.0,
	       secs > 0 ? (double)res->sent * o->size * 8 / secs / 1e9 : 0.0, o->threads,
	       o->threads == 1 ? "" : "s", o->batch, (double)res->max_batch_ns / 1e3,
	       res->sender == FLOOD_SENDER_XDP ? "xdp" : "socket");
	if (!res->counts)
		return;
	for (i = 0; i < o->nsrc; i++) {
		lo = res->counts[i] < lo ? res->counts[i] : lo;
		hi = res->counts[i] > hi ? res->counts[i] : hi;
	}
	printf("%u source%s, %llu to %llu frames each\n", o->nsrc, o->nsrc == 1 ? "" : "s",
	       (unsigned long long)lo, (unsigned long long)hi);
}

static void session_free(struct session *s)
{
	free(s->perm);
	free(s->workers);
	free(s->r.cpu_lock);
	free(s->r.cpus);
	free(s->r.holes);
	if (s->hold >= 0)
		close(s->hold);
	flood_bpf__destroy(s->skel);
	free(s);
}

/* Exit codes: 0 ok, 1 runtime failure, 2 bad usage (see the usage text). */
int main(int argc, char **argv)
{
	struct result res = {0};
	struct session *s;
	int ret;

	fg_log_setup_libs();
	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "Error: out of memory\n");
		return FLOOD_EXIT_FAIL;
	}
	s->hold = -1;
	ret = flood_parse_opts(argc, argv, &s->o);
	if (ret) {
		ret = ret < 0 ? FLOOD_EXIT_OK : ret; /* -1: the help was asked for */
		goto out;
	}
	ret = resolve_device(&s->o, &s->ifindex);
	if (!ret)
		ret = prepare_program(s);
	if (!ret)
		ret = prepare_run(s);
	if (!ret)
		ret = run_workers(s);
	if (ret)
		goto out;
	ret = collect(s, &res);
	if (ret < 0) {
		ret = FLOOD_EXIT_FAIL;
		goto out;
	}
	res.held_on = s->hold >= 0 ? hold_device(&s->o) : "";
	if (s->o.json)
		report_json(&s->o, &res);
	else
		report_text(&s->o, &res);
	if (res.stats_ok && res.tx_dropped)
		fprintf(stderr,
			"Warning: '%s' dropped %llu frames on transmit (is the peer down, or "
			"without XDP program and GRO?)\n",
			s->o.dev, (unsigned long long)res.tx_dropped);
	if (flood_signalled)
		fprintf(stderr, "floodgate-flood: interrupted\n");
out:
	free(res.counts);
	session_free(s);
	return ret;
}
