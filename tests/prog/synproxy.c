// SPDX-License-Identifier: GPL-2.0-only
/*
 * [synproxy] (bpf/fg_synproxy.h): a SYN to a proxied port gets a cookie
 * SYN-ACK from the hook (XDP_TX, or a redirect at tc) with the configured
 * options and ack = seq + 1; the ACK that echoes the cookie passes and is
 * charged to the policies, a forged one is dropped; SYNs are never
 * charged; other ports, denied and banned sources and malformed TCP get no
 * SYN-ACK. Conntrack knows none of these crafted connections, so its
 * lookup answers "no connection" and the cookie decides; but for one,
 * which the ct_confirm fixture puts in the table.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ct_confirm.skel.h"
#include "fixtures.h"
#include "policy/policy.h"
#include "policy/synproxy.h"

#define SYNPROXY_22 "[synproxy]\nports = 22, 8000-8080\n"

/* A TCP segment, built as a client sends it. */
struct segment {
	int family;	 /* 4 or 6 */
	const char *src; /* NULL: 10.0.0.1 or 2001:db8:2::1 */
	uint16_t dport;
	uint8_t flags; /* TCP flag byte: 0x02 SYN, 0x10 ACK, 0x04 RST, 0x01 FIN */
	uint32_t seq, ack_seq;
	const uint8_t *options; /* copied after the header */
	size_t options_len;	/* a multiple of 4 */
	int doff;		/* 0: from options_len; else written as given */
};

#define TCP_SYN 0x02
#define TCP_ACK 0x10
#define TCP_RST 0x04

/* The options of a Linux client's SYN: MSS 1460, SACK-permitted,
 * timestamps (tsval 12345), NOP, window scale 7. */
static const uint8_t linux_syn_options[20] = {2,    4,	  0x05, 0xb4, 4, 2, 8, 10, 0, 0,
					      0x30, 0x39, 0,	0,    0, 0, 1, 3,  3, 7};
static const uint8_t mss_only_options[4] = {2, 4, 0x05, 0xb4};

/* The one's complement sum of `len` bytes, as the checksums use it. */
static uint32_t sum16(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* The one's complement sum of the TCP pseudo-header of the IP packet at
 * `l3` and of its segment, which a valid checksum makes 0xffff; *th is
 * the segment's header. */
static uint16_t tcp_sum(const uint8_t *l3, int family, struct tcphdr **th)
{
	size_t tcp_len;
	uint32_t pseudo;

	if (family == 6) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)l3;

		tcp_len = ntohs(ip6->payload_len);
		*th = (struct tcphdr *)(ip6 + 1);
		pseudo = sum16(&ip6->saddr, 32, tcp_len + IPPROTO_TCP);
	} else {
		const struct iphdr *ip = (const struct iphdr *)l3;

		tcp_len = ntohs(ip->tot_len) - sizeof(*ip);
		*th = (struct tcphdr *)(ip + 1);
		pseudo = sum16(&ip->saddr, 8, tcp_len + IPPROTO_TCP);
	}
	return fold(sum16(*th, tcp_len, pseudo));
}

static size_t build_segment(uint8_t *buf, const struct segment *s)
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	size_t l4 = sizeof(*eth), tcp_len = sizeof(struct tcphdr) + s->options_len;
	struct tcphdr *th;

	memset(buf, 0, PKT_BUF_SIZE);
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", 6);
	if (s->family == 6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(buf + l4);

		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->payload_len = htons(tcp_len);
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, s->src ? s->src : "2001:db8:2::1", &ip6->saddr);
		inet_pton(AF_INET6, "2001:db8::1", &ip6->daddr);
		l4 += sizeof(*ip6);
	} else {
		struct iphdr *ip = (struct iphdr *)(buf + l4);

		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(*ip) + tcp_len);
		ip->ttl = 64;
		ip->protocol = IPPROTO_TCP;
		inet_pton(AF_INET, s->src ? s->src : "10.0.0.1", &ip->saddr);
		inet_pton(AF_INET, "192.0.2.1", &ip->daddr);
		l4 += sizeof(*ip);
	}
	th = (struct tcphdr *)(buf + l4);
	th->source = htons(40000);
	th->dest = htons(s->dport);
	th->seq = htonl(s->seq);
	th->ack_seq = htonl(s->ack_seq);
	th->doff = s->doff ? (size_t)s->doff : tcp_len / 4;
	((uint8_t *)th)[13] = s->flags;
	th->window = htons(64240);
	memcpy(th + 1, s->options, s->options_len);
	th->check = htons(~tcp_sum(buf + sizeof(*eth), s->family, &th));
	return l4 + tcp_len;
}

/* What came back from a run: the verdict and the frame as it left. */
struct reply {
	int verdict;
	uint8_t frame[PKT_BUF_SIZE];
	size_t len;
};

static void run_segment(int prog_fd, const struct segment *s, struct reply *out)
{
	uint8_t buf[PKT_BUF_SIZE];
	size_t len = build_segment(buf, s);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len,
		    .data_out = out->frame, .data_size_out = sizeof(out->frame), .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
	out->verdict = opts.retval;
	out->len = opts.data_size_out;
}

static int xdp_fd(struct floodgate_bpf *skel)
{
	return bpf_program__fd(skel->progs.fg_xdp);
}

static struct floodgate_bpf *load_synproxy(const char *config, int progs)
{
	const struct fg_skel_opts opts = {.progs = progs, .test_clock = true};
	struct floodgate_bpf *skel = prepare_skel(config, &opts);

	assert_non_null(skel);
	skel->bss->fg_test_now_ns = T0;
	return skel;
}

/* The SYN-ACK in `r`: its TCP header, after checking that the IP and TCP
 * checksums hold and that the addresses, ports and MACs are the SYN's
 * turned around. */
static const struct tcphdr *synack_of(const struct reply *r, const struct segment *syn)
{
	const struct ethhdr *eth = (const struct ethhdr *)r->frame;
	const uint8_t *l3 = r->frame + sizeof(*eth);
	struct tcphdr *th;
	size_t tcp_len;

	assert_memory_equal(eth->h_dest, "\x02\x00\x00\x00\x00\x01", 6);
	assert_memory_equal(eth->h_source, "\x02\x00\x00\x00\x00\x02", 6);
	if (syn->family == 6) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)l3;
		struct in6_addr client;

		inet_pton(AF_INET6, syn->src ? syn->src : "2001:db8:2::1", &client);
		assert_memory_equal(&ip6->daddr, &client, 16);
		assert_int_equal(ip6->nexthdr, IPPROTO_TCP);
		tcp_len = ntohs(ip6->payload_len);
	} else {
		const struct iphdr *ip = (const struct iphdr *)l3;
		struct in_addr client;

		inet_pton(AF_INET, syn->src ? syn->src : "10.0.0.1", &client);
		assert_memory_equal(&ip->daddr, &client, 4);
		assert_int_equal(ip->ihl, 5);
		assert_int_equal(fold(sum16(ip, sizeof(*ip), 0)), 0xffff);
		tcp_len = ntohs(ip->tot_len) - sizeof(*ip);
	}
	assert_int_equal(tcp_sum(l3, syn->family, &th), 0xffff);
	assert_int_equal(r->len, (const uint8_t *)th + tcp_len - r->frame);
	assert_int_equal(th->doff * 4, tcp_len);
	assert_int_equal(ntohs(th->source), syn->dport);
	assert_int_equal(ntohs(th->dest), 40000);
	assert_true(th->syn && th->ack && !th->rst && !th->fin);
	assert_int_equal(ntohl(th->ack_seq), syn->seq + 1);
	return th;
}

/* The ACK a client sends back for the SYN-ACK `th`; with `forge` bits
 * flipped in the cookie, a forged one (bits above the low ones, which
 * hold the MSS index: a cookie off by one may still be valid). */
static struct segment echo_of(const struct segment *syn, const struct tcphdr *th, uint32_t forge)
{
	struct segment ack = *syn;

	ack.flags = TCP_ACK;
	ack.seq = syn->seq + 1;
	ack.ack_seq = (ntohl(th->seq) ^ forge) + 1;
	ack.options = NULL;
	ack.options_len = 0;
	return ack;
}

static void handshake(int family)
{
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	struct segment syn = {.family = family,
			      .dport = 22,
			      .flags = TCP_SYN,
			      .seq = 0xfffffff0, /* ack = seq + 1 wraps around */
			      .options = linux_syn_options,
			      .options_len = sizeof(linux_syn_options)};
	struct segment ack, forged;
	struct reply r;
	const struct tcphdr *th;
	struct fg_global_stats g;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	th = synack_of(&r, &syn);
	g = global_stats(skel);
	assert_int_equal(g.synproxy_synacks, 1);

	ack = echo_of(&syn, th, 0);
	forged = echo_of(&syn, th, 0x00ff0000);
	run_segment(xdp_fd(skel), &forged, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	g = global_stats(skel);
	assert_int_equal(g.synproxy_cookies_accepted, 1);
	assert_int_equal(g.synproxy_cookies_refused, 1);
	assert_int_equal(g.synproxy_established, 0);
	assert_int_equal(g.synproxy_malformed, 0);
	release_skel(skel);
}

FG_PROG_TEST(test_synproxy_ipv4_handshake)
{
	handshake(4);
}

FG_PROG_TEST(test_synproxy_ipv6_handshake)
{
	handshake(6);
}

/* Runs, against the SYN-ACK of `syn`, a forged copy of `probe` and one
 * carrying data (both dropped), then `probe` itself: it passes as the ACK
 * it stands for, with seq + 1, the same ack and a valid checksum. */
static void probe_passes_as_ack(struct floodgate_bpf *skel, const struct segment *syn,
				const struct segment *probe)
{
	struct segment forged = *probe, with_data = *probe;
	uint8_t options_and_data[16];
	struct tcphdr *passed;
	struct reply r;

	assert_true(probe->options_len + 4 <= sizeof(options_and_data));
	forged.ack_seq ^= 0x00ff0000;
	if (probe->options_len)
		memcpy(options_and_data, probe->options, probe->options_len);
	memcpy(options_and_data + probe->options_len, "data", 4);
	with_data.options = options_and_data;
	with_data.options_len = probe->options_len + 4;
	with_data.doff = 5 + probe->options_len / 4;

	run_segment(xdp_fd(skel), &forged, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	run_segment(xdp_fd(skel), &with_data, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	run_segment(xdp_fd(skel), probe, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(tcp_sum(r.frame + sizeof(struct ethhdr), syn->family, &passed), 0xffff);
	assert_int_equal(ntohl(passed->seq), syn->seq + 1);
	assert_int_equal(ntohl(passed->ack_seq), probe->ack_seq);
}

/* The handshake's ACK lost (a full receive ring under the flood), a Linux
 * client probes the zero window the SYN-ACK offered with bare ACKs one
 * below its next sequence number: such a probe passes as the ACK it stands
 * for, its sequence number and checksum rewritten to that ACK's; a forged
 * probe, or one carrying data, does not. The SYN offers the largest MSS,
 * the cookie's top MSS index: with a lower one, a sequence number one
 * below reads as the next index, a valid cookie of its own. */
static void probe_in_place_of_ack(int family)
{
	static const uint8_t largest_mss[4] = {2, 4, 0xff, 0xff};
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	struct segment syn = {.family = family,
			      .dport = 22,
			      .flags = TCP_SYN,
			      /* the probe's seq + 1 carries into the high half (and
			       * changes the checksum: from 0xffffffff, ones'
			       * complement 0, to 0, it would not) */
			      .seq = 0x1234ffff,
			      .options = largest_mss,
			      .options_len = sizeof(largest_mss)};
	struct segment probe;
	struct reply r;
	struct fg_global_stats g;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	probe = echo_of(&syn, synack_of(&r, &syn), 0);
	probe.seq = syn.seq; /* snd_una - 1 */
	probe_passes_as_ack(skel, &syn, &probe);
	g = global_stats(skel);
	assert_int_equal(g.synproxy_cookies_accepted, 1);
	assert_int_equal(g.synproxy_cookies_refused, 2);
	release_skel(skel);
}

FG_PROG_TEST(test_synproxy_ipv4_probe_for_lost_ack)
{
	probe_in_place_of_ack(4);
}

FG_PROG_TEST(test_synproxy_ipv6_probe_for_lost_ack)
{
	probe_in_place_of_ack(6);
}

/* The timestamp option of a client's ACK, NOP, NOP, timestamp (tsval
 * 12346), echoing the SYN-ACK's `synack_tsval`, as Linux sends it. */
static void echo_timestamp(uint8_t options[12], const uint8_t synack_tsval[4])
{
	static const uint8_t head[8] = {1, 1, 8, 10, 0, 0, 0x30, 0x3a};

	memcpy(options, head, sizeof(head));
	memcpy(options + sizeof(head), synack_tsval, 4);
}

/* With timestamps, a probe is told from the ACK by the timestamp the
 * client echoes, whatever its MSS: the SYN-ACK's carries the ACK's
 * sequence number above the option bits. The SYN offers 1400 bytes, a
 * lower MSS index than the largest (IPv4's 1300 step, IPv6's 1220): a
 * probe's seq then reads to the kernel's check as the next index's valid
 * cookie, and passed unchanged before the timestamp told it apart; the
 * listener's side then opened one byte off. The ACK passes as sent. */
static void probe_told_by_timestamp(int family)
{
	uint8_t syn_options[sizeof(linux_syn_options)], echoed[12];
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	struct segment syn = {.family = family,
			      .dport = 22,
			      .flags = TCP_SYN,
			      .seq = 0x1234ffff,
			      .options = syn_options,
			      .options_len = sizeof(syn_options)};
	struct segment ack, probe;
	const struct tcphdr *synack;
	struct tcphdr *passed;
	uint32_t tsval;
	struct reply r;
	struct fg_global_stats g;

	memcpy(syn_options, linux_syn_options, sizeof(syn_options));
	syn_options[2] = 1400 >> 8;
	syn_options[3] = 1400 & 0xff;
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	synack = synack_of(&r, &syn);
	memcpy(&tsval, (const uint8_t *)(synack + 1) + 8, 4);
	assert_int_equal(ntohl(tsval) >> 6, (syn.seq + 1) & 0x3ffffff);
	echo_timestamp(echoed, (const uint8_t *)&tsval);
	ack = echo_of(&syn, synack, 0);
	ack.options = echoed;
	ack.options_len = sizeof(echoed);
	probe = ack;
	probe.seq = syn.seq; /* snd_una - 1 */
	probe_passes_as_ack(skel, &syn, &probe);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(tcp_sum(r.frame + sizeof(struct ethhdr), family, &passed), 0xffff);
	assert_int_equal(ntohl(passed->seq), syn.seq + 1);
	g = global_stats(skel);
	assert_int_equal(g.synproxy_cookies_accepted, 2);
	assert_int_equal(g.synproxy_cookies_refused, 2);
	release_skel(skel);
}

FG_PROG_TEST(test_synproxy_ipv4_probe_told_by_timestamp)
{
	probe_told_by_timestamp(4);
}

FG_PROG_TEST(test_synproxy_ipv6_probe_told_by_timestamp)
{
	probe_told_by_timestamp(6);
}

/* The SYN-ACK's options: the config's MSS, SACK and window scale, and the
 * cookie timestamp echoing the client's; the window scale and SACK only
 * with timestamps, which carry them. */
FG_PROG_TEST(test_synproxy_synack_options)
{
	static const uint8_t defaults[20] = {2, 4, 0x05, 0xb4, 4,    2,	   8, 10, 0, 0,
					     0, 0, 0,	 0,    0x30, 0x39, 1, 3,  3, 7};
	static const uint8_t custom[20] = {2, 4, 0x05, 0x78, 1,	   1,	 8, 10, 0, 0,
					   0, 0, 0,    0,    0x30, 0x39, 1, 3,	3, 9};
	struct segment syn = {.family = 4,
			      .dport = 8080,
			      .flags = TCP_SYN,
			      .seq = 1000,
			      .options = linux_syn_options,
			      .options_len = sizeof(linux_syn_options)};
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	const uint8_t *options;
	const struct tcphdr *th;
	struct reply r;
	uint32_t tsval;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	th = synack_of(&r, &syn);
	options = (const uint8_t *)(th + 1);
	assert_int_equal(th->doff, 10);
	/* The timestamp is the cookie's: compare all but its value, then its
	 * low bits: window scale 7, SACK (bit 4), no ECN (bit 5). */
	assert_memory_equal(options, defaults, 8);
	assert_memory_equal(options + 12, defaults + 12, 8);
	memcpy(&tsval, options + 8, 4);
	assert_int_equal(ntohl(tsval) & 0x3f, 7 | 1 << 4);

	/* IPv6 takes mss6. */
	syn.family = 6;
	run_segment(xdp_fd(skel), &syn, &r);
	th = synack_of(&r, &syn);
	assert_int_equal(((const uint8_t *)(th + 1))[2] << 8 | ((const uint8_t *)(th + 1))[3],
			 1440);

	/* A client without timestamps gets the MSS alone. */
	syn.family = 4;
	syn.options = mss_only_options;
	syn.options_len = sizeof(mss_only_options);
	run_segment(xdp_fd(skel), &syn, &r);
	th = synack_of(&r, &syn);
	assert_int_equal(th->doff, 6);
	release_skel(skel);

	skel = load_synproxy("[synproxy]\nports = 22\nmss = 1400\nwscale = 9\nsack = no\n",
			     FG_SKEL_XDP);
	syn.dport = 22;
	syn.options = linux_syn_options;
	syn.options_len = sizeof(linux_syn_options);
	run_segment(xdp_fd(skel), &syn, &r);
	th = synack_of(&r, &syn);
	options = (const uint8_t *)(th + 1);
	assert_memory_equal(options, custom, 8);
	assert_memory_equal(options + 12, custom + 12, 8);
	memcpy(&tsval, options + 8, 4);
	assert_int_equal(ntohl(tsval) & 0x3f, 7); /* no SACK bit */
	release_skel(skel);

	skel = load_synproxy("[synproxy]\nports = 22\ntimestamps = no\n", FG_SKEL_XDP);
	run_segment(xdp_fd(skel), &syn, &r);
	th = synack_of(&r, &syn);
	assert_int_equal(th->doff, 6);
	assert_memory_equal(th + 1, defaults, 4);
	release_skel(skel);
}

/* Other ports, and traffic that is not TCP, go on to the policies as
 * before: no SYN-ACK, nothing counted by the proxy. */
FG_PROG_TEST(test_synproxy_leaves_other_ports)
{
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	struct segment syn = {.family = 4, .dport = 23, .flags = TCP_SYN, .seq = 1};
	struct segment ack = {.family = 4, .dport = 8081, .flags = TCP_ACK, .seq = 1, .ack_seq = 9};
	struct fg_global_stats g;
	struct reply r;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(xdp_at(skel, T0, &udp_a), XDP_PASS);
	g = global_stats(skel);
	assert_int_equal(g.synproxy_synacks + g.synproxy_cookies_refused +
				 g.synproxy_cookies_accepted + g.synproxy_malformed,
			 0);
	release_skel(skel);
}

/* The lists and bans come first: a denied or banned source gets no
 * SYN-ACK, an allowed one goes to the stack untouched. */
FG_PROG_TEST(test_synproxy_after_lists_and_bans)
{
	struct floodgate_bpf *skel = load_synproxy(
		"[deny]\nsrc = 10.0.0.0/24\n[allow]\nsrc = 10.0.2.0/24\n" SYNPROXY_22, FG_SKEL_XDP);
	struct segment syn = {.family = 4, .src = "10.0.0.1", .dport = 22, .flags = TCP_SYN};
	struct fg_global_stats g;
	struct reply r;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	put_ban(skel, 4, "10.0.1.0", 24, T0 + 60 * SEC);
	syn.src = "10.0.1.5";
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	syn.src = "10.0.2.5";
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	g = global_stats(skel);
	assert_int_equal(g.denied, 1);
	assert_int_equal(g.banned, 1);
	assert_int_equal(g.allowed, 1);
	assert_int_equal(g.synproxy_synacks, 0);
	syn.src = "10.0.3.5";
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	release_skel(skel);
}

/* SYNs are never charged: a flood of them past a policy of one packet
 * each gets its SYN-ACKs; the ACK with a valid cookie is charged. */
FG_PROG_TEST(test_synproxy_charges_the_ack_not_the_syn)
{
	struct floodgate_bpf *skel = load_synproxy(
		SYNPROXY_22 "[policy ssh]\nmatch = tcp dport 22\nrate = 1/s\nburst = 1\n",
		FG_SKEL_XDP);
	struct segment syn = {.family = 4, .dport = 22, .flags = TCP_SYN, .seq = 7};
	struct segment ack;
	const struct tcphdr *th;
	struct reply r;
	int i;

	for (i = 0; i < 5; i++) {
		run_segment(xdp_fd(skel), &syn, &r);
		assert_int_equal(r.verdict, XDP_TX);
	}
	th = synack_of(&r, &syn);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 0);
	assert_int_equal(global_stats(skel).sources_created, 0);
	ack = echo_of(&syn, th, 0);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	/* The second valid ACK is over the policy's burst of 1. */
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 2);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 1);
	assert_int_equal(global_stats(skel).synproxy_cookies_accepted, 2);
	release_skel(skel);
}

/* A policy on new connections (`syn`) judges the ACK with a valid cookie
 * in place of the SYN it never sees: the second new connection from one
 * source is over a burst of 1. A packet conntrack knows is not new. */
FG_PROG_TEST(test_synproxy_cookie_ack_is_the_new_connection)
{
	struct floodgate_bpf *skel = load_synproxy(
		SYNPROXY_22 "[policy ssh]\nmatch = tcp dport 22 syn\nrate = 1/s\nburst = 1\n",
		FG_SKEL_XDP);
	struct segment syn = {.family = 4, .dport = 22, .flags = TCP_SYN, .seq = 7};
	struct segment ack;
	struct reply r;

	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	ack = echo_of(&syn, synack_of(&r, &syn), 0);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 2);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 1);
	release_skel(skel);
}

/* Bad TCP never gets a SYN-ACK and never crashes: a header shorter than
 * 20 bytes, options past the packet's end, a SYN with RST; each dropped
 * and counted. So are the headers the proxy cannot turn around: IPv4
 * options, a fragment, IPv6 extension headers. */
FG_PROG_TEST(test_synproxy_malformed_tcp)
{
	static const uint8_t runaway_options[4] = {8, 40, 1, 1}; /* a length past the header */
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_XDP);
	struct segment bad[] = {
		{.family = 4, .dport = 22, .flags = TCP_SYN, .doff = 4},
		{.family = 4, .dport = 22, .flags = TCP_ACK, .doff = 0xf},
		{.family = 6, .dport = 22, .flags = TCP_SYN, .doff = 8},
		{.family = 4, .dport = 22, .flags = TCP_SYN | TCP_RST},
	};
	const struct pkt_spec unanswerable[] = {
		{.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22, .ihl = 6},
		{.family = 4,
		 .src = "10.0.0.1",
		 .proto = IPPROTO_TCP,
		 .dport = 22,
		 .frag_off = 0x2000},
		{.family = 6,
		 .src = "2001:db8:2::1",
		 .proto = IPPROTO_TCP,
		 .dport = 22,
		 .n_ext = 1},
	};
	struct segment odd = {.family = 4,
			      .dport = 22,
			      .flags = TCP_SYN,
			      .options = runaway_options,
			      .options_len = sizeof(runaway_options)};
	struct reply r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_segment(xdp_fd(skel), &bad[i], &r);
		if (r.verdict != XDP_DROP)
			fail_msg("bad segment %zu: verdict %d", i, r.verdict);
	}
	assert_int_equal(global_stats(skel).synproxy_malformed, 4);
	for (i = 0; i < sizeof(unanswerable) / sizeof(unanswerable[0]); i++)
		if (run_prog(xdp_fd(skel), &unanswerable[i], 0) != XDP_DROP)
			fail_msg("unanswerable SYN %zu passed", i);
	assert_int_equal(global_stats(skel).synproxy_malformed, 4 + 3);
	assert_int_equal(global_stats(skel).synproxy_synacks, 0);
	/* Options that lie about their length inside a sound header: the
	 * walk stops, and the SYN-ACK carries the MSS alone. */
	run_segment(xdp_fd(skel), &odd, &r);
	assert_int_equal(r.verdict, XDP_TX);
	assert_int_equal(synack_of(&r, &odd)->doff, 6);
	release_skel(skel);
}

/* At tc the SYN-ACK is redirected out of the interface the SYN came in
 * on; the cookie ACK passes. */
FG_PROG_TEST(test_synproxy_tc)
{
	/* tc alone: under emulation each program's verification is tens of
	 * seconds (docs/kernels.md). */
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_TC);
	int fd = bpf_program__fd(skel->progs.fg_tc);
	struct segment syn = {.family = 6,
			      .dport = 22,
			      .flags = TCP_SYN,
			      .seq = 99,
			      .options = linux_syn_options,
			      .options_len = sizeof(linux_syn_options)};
	struct segment ack;
	const struct tcphdr *th;
	struct reply r;

	run_segment(fd, &syn, &r);
	assert_int_equal(r.verdict, TC_ACT_REDIRECT);
	th = synack_of(&r, &syn);
	ack = echo_of(&syn, th, 0);
	run_segment(fd, &ack, &r);
	assert_int_equal(r.verdict, TC_ACT_OK);
	ack.ack_seq ^= 0x00ff0000;
	run_segment(fd, &ack, &r);
	assert_int_equal(r.verdict, TC_ACT_SHOT);
	assert_int_equal(global_stats(skel).synproxy_synacks, 1);
	assert_int_equal(global_stats(skel).synproxy_cookies_accepted, 1);
	assert_int_equal(global_stats(skel).synproxy_cookies_refused, 1);
	release_skel(skel);
}

/* Without [synproxy] the proxy's programs stay unloaded (the kernel may
 * lack what they call) and the prog arrays empty. */
FG_PROG_TEST(test_synproxy_loads_only_when_asked)
{
	struct floodgate_bpf *skel = load_synproxy(test_config, FG_SKEL_EVERY_PROG);
	__u32 zero = 0, id;

	assert_true(bpf_program__fd(skel->progs.fg_xdp_synproxy) < 0);
	assert_true(bpf_program__fd(skel->progs.fg_tc_synproxy) < 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.synproxy_xdp), &zero, &id),
			     0);
	release_skel(skel);
}

/* Puts the connection SRC:40000 -> 192.0.2.1:22 in conntrack's table of
 * the test's network namespace, confirmed, through the ct_confirm fixture. */
static void confirm_connection(struct ct_confirm_bpf *ct, const char *src)
{
	uint8_t frame[64] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = 1);

	inet_pton(AF_INET, src, &ct->bss->tuple.ipv4.saddr);
	inet_pton(AF_INET, "192.0.2.1", &ct->bss->tuple.ipv4.daddr);
	ct->bss->tuple.ipv4.sport = htons(40000);
	ct->bss->tuple.ipv4.dport = htons(22);
	ct->bss->tuple_size = sizeof(ct->bss->tuple.ipv4);
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(ct->progs.ct_confirm), &opts), 0);
	assert_int_equal(opts.retval, 0);
}

/* A packet of a connection conntrack has confirmed needs no cookie: it
 * goes on to the policies, at both hooks. The connection is put in the
 * table of the test's network namespace for a second, from a source of
 * this run's own. */
FG_PROG_TEST(test_synproxy_passes_known_connections)
{
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_EVERY_PROG);
	struct ct_confirm_bpf *ct = ct_confirm_bpf__open_and_load();
	char src[INET_ADDRSTRLEN];
	struct segment ack = {.family = 4, .src = src, .dport = 22, .flags = TCP_ACK, .seq = 5};
	struct reply r;

	assert_non_null(ct);
	snprintf(src, sizeof(src), "10.0.%d.%d", 100 + getpid() % 100, 1 + getpid() % 250);

	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	confirm_connection(ct, src);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(bpf_program__fd(skel->progs.fg_tc), &ack, &r);
	assert_int_equal(r.verdict, TC_ACT_OK);
	assert_int_equal(global_stats(skel).synproxy_established, 2);
	assert_int_equal(global_stats(skel).synproxy_cookies_refused, 1);
	assert_int_equal(global_stats(skel).synproxy_cookies_accepted, 0);
	ct_confirm_bpf__destroy(ct);
	release_skel(skel);
}

/* Writes to `sharer` an address of 10.3.0.0/16 whose connection from
 * port 40000 to 192.0.2.1:22 (confirm_connection's) takes the same
 * synproxy_flows slot as `src`'s. */
static void find_slot_sharer(const char *src, char *sharer)
{
	__u32 saddr[4] = {0}, daddr[4] = {0}, other[4] = {0}, slot, i;

	inet_pton(AF_INET, src, &saddr[0]);
	inet_pton(AF_INET, "192.0.2.1", &daddr[0]);
	slot = fg_synproxy_flow_slot_of(saddr, daddr, 40000, 22);
	for (i = 0; i < 65536; i++) {
		other[0] = htonl(0x0a030000 | i);
		if (fg_synproxy_flow_slot_of(other, daddr, 40000, 22) == slot)
			break;
	}
	assert_true(i < 65536);
	inet_ntop(AF_INET, &other[0], sharer, INET_ADDRSTRLEN);
}

/* This CPU remembers a connection conntrack confirmed for
 * FG_SYNPROXY_FLOW_NS (bpf/fg_synproxy.h, synproxy_flows): its next
 * packets pass at either hook without the lookup, then the lookup comes
 * back; a connection not looked up is never served from the cache, and
 * a SYN never is. */
FG_PROG_TEST(test_synproxy_remembers_known_connections)
{
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22, FG_SKEL_EVERY_PROG);
	struct ct_confirm_bpf *ct = ct_confirm_bpf__open_and_load();
	cpu_set_t all = stay_on_cpu0(); /* the cache is per CPU */
	char src[INET_ADDRSTRLEN], stranger[INET_ADDRSTRLEN];
	struct segment ack = {.family = 4, .src = src, .dport = 22, .flags = TCP_ACK, .seq = 5};
	struct segment unknown = ack, syn = ack;
	struct reply r;

	assert_non_null(ct);
	/* Sources of this run's own, unlike the other tests' (their entries
	 * may still be in the table); the entry outlives any slow moment of
	 * the test, so every miss below is the cache's, not conntrack's. */
	snprintf(src, sizeof(src), "10.2.%d.%d", 100 + getpid() % 100, 1 + getpid() % 250);
	/* A stranger whose connection shares the slot: only the tuple tells
	 * them apart. */
	find_slot_sharer(src, stranger);
	unknown.src = stranger;
	syn.flags = TCP_SYN;
	ct->data->timeout_ms = 60000;
	confirm_connection(ct, src);

	run_segment(xdp_fd(skel), &ack, &r); /* looked up, remembered */
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(skel->bss->fg_test_known_flows, 0);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(bpf_program__fd(skel->progs.fg_tc), &ack, &r);
	assert_int_equal(r.verdict, TC_ACT_OK);
	skel->bss->fg_test_now_ns = T0 + FG_SYNPROXY_FLOW_NS - 1;
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(skel->bss->fg_test_known_flows, 3);
	assert_int_equal(global_stats(skel).synproxy_established, 4);

	/* A second on: looked up again, and remembered again. */
	skel->bss->fg_test_now_ns = T0 + FG_SYNPROXY_FLOW_NS;
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(skel->bss->fg_test_known_flows, 3);
	run_segment(xdp_fd(skel), &ack, &r);
	assert_int_equal(skel->bss->fg_test_known_flows, 4);
	assert_int_equal(global_stats(skel).synproxy_established, 6);

	run_segment(xdp_fd(skel), &unknown, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_int_equal(global_stats(skel).synproxy_cookies_refused, 1);
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	assert_int_equal(global_stats(skel).synproxy_synacks, 1);
	assert_int_equal(skel->bss->fg_test_known_flows, 4);

	sched_setaffinity(0, sizeof(all), &all);
	ct_confirm_bpf__destroy(ct);
	release_skel(skel);
}

/* synacks caps the SYN-ACKs each CPU sends at its share of the rate, with
 * its share of the burst: with 10 a second per CPU, a CPU answers 10
 * SYNs at once, drops and counts the rest, and answers one more each
 * 100 ms (include/fg_gcra.h: exactly `burst` fit, then one per interval). */
FG_PROG_TEST(test_synproxy_caps_synacks)
{
	int ncpus = fg_online_cpus(), i, answered = 0;
	cpu_set_t all = stay_on_cpu0(); /* the cap's buckets are per CPU */
	char config[128];
	struct floodgate_bpf *skel;
	struct segment syn = {.family = 4,
			      .dport = 22,
			      .flags = TCP_SYN,
			      .seq = 1,
			      .options = linux_syn_options,
			      .options_len = sizeof(linux_syn_options)};
	struct reply r;

	snprintf(config, sizeof(config), "[synproxy]\nports = 22\nsynacks = %d/s\n", 10 * ncpus);
	skel = load_synproxy(config, FG_SKEL_XDP);
	for (i = 0; i < 12; i++) {
		run_segment(xdp_fd(skel), &syn, &r);
		answered += r.verdict == XDP_TX;
		assert_true(r.verdict == XDP_TX || r.verdict == XDP_DROP);
	}
	assert_int_equal(answered, 10);
	assert_int_equal(global_stats(skel).synproxy_synacks, 10);
	assert_int_equal(global_stats(skel).synproxy_synacks_capped, 2);

	skel->bss->fg_test_now_ns = T0 + 100 * 1000000ULL - 1;
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	skel->bss->fg_test_now_ns = T0 + 100 * 1000000ULL;
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_TX);
	run_segment(xdp_fd(skel), &syn, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_int_equal(global_stats(skel).synproxy_synacks, 11);
	assert_int_equal(global_stats(skel).synproxy_synacks_capped, 4);

	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* `status` reads the settings back from the running proxy's read-only
 * data (maps/skeleton.c), and prints its ports as the config wrote them. */
FG_PROG_TEST(test_synproxy_settings_read_back)
{
	struct floodgate_bpf *skel = load_synproxy(
		"[synproxy]\nports = 22, 443, 8000-8080\nmss = 1400\nmss6 = 1380\nwscale = 9\n"
		"sack = no\nsynacks = 5/min\n",
		FG_SKEL_XDP);
	struct fg_synproxy_params params;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char ports[64];

	assert_int_equal(
		bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.fg_xdp_synproxy), &info, &len),
		0);
	assert_int_equal(fg_skel_read_synproxy(info.id, &params), 0);
	assert_int_equal(params.enabled, 1);
	fg_synproxy_ports_text(&params, ports, sizeof(ports));
	assert_string_equal(ports, "22, 443, 8000-8080");
	assert_int_equal(params.mss4.bytes[2] << 8 | params.mss4.bytes[3], 1400);
	assert_int_equal(params.mss6.bytes[2] << 8 | params.mss6.bytes[3], 1380);
	assert_int_equal(params.wscale.bytes[3], 9);
	assert_int_equal(params.sack, 0);
	assert_int_equal(params.timestamps, 1);
	assert_int_equal(params.synacks_count, 5);
	assert_int_equal(params.synacks_period_ns, 60 * SEC);
	release_skel(skel);
}

#define BAN_TCP                                                                                    \
	"[policy b]\nmatch = tcp\nper = src/32 src/128\nrate = 1/s\nburst = 1\naction = ban 10s\n"

static bool banned(struct floodgate_bpf *skel, int family, const char *addr)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + (family == 4 ? 32 : 128),
				     .family = family};
	struct fg_ban ban;

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban);
}

/* A valid cookie is evidence the source receives (it answered our
 * SYN-ACK), though its connection is no socket yet: an ACK with one that
 * a ban policy refuses bans its source, at both hooks. A forged cookie
 * never reaches the policies; a refused ACK to a port the proxy leaves
 * alone, with no socket behind it, or one of a connection conntrack has
 * confirmed (the ct_confirm fixture), bans no one (bans_unverified). */
FG_PROG_TEST(test_synproxy_cookie_is_ban_evidence)
{
	struct floodgate_bpf *skel = load_synproxy(SYNPROXY_22 BAN_TCP, FG_SKEL_EVERY_PROG);
	struct ct_confirm_bpf *ct = ct_confirm_bpf__open_and_load();
	int tc = bpf_program__fd(skel->progs.fg_tc);
	struct segment syn4 = {.family = 4, .dport = 22, .flags = TCP_SYN, .seq = 7};
	struct segment syn6 = {.family = 6, .dport = 22, .flags = TCP_SYN, .seq = 7};
	struct segment ack4, ack6, forged, other_port, known;
	char src[INET_ADDRSTRLEN];
	struct fg_global_stats g;
	struct reply r;

	run_segment(xdp_fd(skel), &syn4, &r);
	assert_int_equal(r.verdict, XDP_TX);
	ack4 = echo_of(&syn4, synack_of(&r, &syn4), 0);
	run_segment(tc, &syn6, &r);
	assert_int_equal(r.verdict, TC_ACT_REDIRECT);
	ack6 = echo_of(&syn6, synack_of(&r, &syn6), 0);
	/* The first valid ACK is within the burst; the second is refused,
	 * and bans. */
	run_segment(xdp_fd(skel), &ack4, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(xdp_fd(skel), &ack4, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_true(banned(skel, 4, "10.0.0.1"));
	run_segment(tc, &ack6, &r);
	assert_int_equal(r.verdict, TC_ACT_OK);
	run_segment(tc, &ack6, &r);
	assert_int_equal(r.verdict, TC_ACT_SHOT);
	assert_true(banned(skel, 6, "2001:db8:2::1"));
	g = global_stats(skel);
	assert_int_equal(g.bans_added, 2);
	assert_int_equal(g.bans_unverified, 0);
	assert_int_equal(g.synproxy_cookies_accepted, 4);

	/* A forged cookie is dropped by the proxy, uncharged. */
	forged = ack4;
	forged.src = "10.0.0.2";
	forged.ack_seq ^= 0x00ff0000;
	run_segment(xdp_fd(skel), &forged, &r);
	run_segment(xdp_fd(skel), &forged, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_false(banned(skel, 4, "10.0.0.2"));
	/* An ACK to a port the proxy leaves alone, no socket behind it. */
	other_port = forged;
	other_port.src = "10.0.0.3";
	other_port.dport = 23;
	run_segment(xdp_fd(skel), &other_port, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(xdp_fd(skel), &other_port, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_false(banned(skel, 4, "10.0.0.3"));
	g = global_stats(skel);
	assert_int_equal(g.synproxy_cookies_refused, 2);
	assert_int_equal(g.bans_unverified, 1);

	/* A connection conntrack confirmed passes the proxy without a
	 * cookie, which proves nothing about its source. */
	assert_non_null(ct);
	/* Not test_synproxy_passes_known_connections' source, whose entry
	 * may still be in the table. */
	snprintf(src, sizeof(src), "10.1.%d.%d", 100 + getpid() % 100, 1 + getpid() % 250);
	confirm_connection(ct, src);
	known = (struct segment){.family = 4, .src = src, .dport = 22, .flags = TCP_ACK, .seq = 5};
	run_segment(xdp_fd(skel), &known, &r);
	assert_int_equal(r.verdict, XDP_PASS);
	run_segment(xdp_fd(skel), &known, &r);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_false(banned(skel, 4, src));
	g = global_stats(skel);
	assert_int_equal(g.synproxy_established, 2);
	assert_int_equal(g.bans_unverified, 2);
	assert_int_equal(g.bans_added, 2);
	ct_confirm_bpf__destroy(ct);
	release_skel(skel);
}
