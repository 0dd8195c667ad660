// SPDX-License-Identifier: GPL-2.0-only
/*
 * The parser: VLAN tags, truncation at every byte, non-IP frames, IPv6
 * extension headers, IPv4 options, and IP headers that lie about
 * themselves; a malformed frame is counted and never XDP_ABORTED.
 */
#include <stdio.h>
#include <string.h>

#include "fixtures.h"

FG_PROG_TEST_WITH(test_vlan_tags, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec plain = {.family = 4, .src = "10.9.9.9", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec one = plain, two = plain, two6 = plain;

	one.vlans = 1;
	two.vlans = 2;
	two6.family = 6;
	two6.src = "2001:db8::99";
	two6.vlans = 2;
	/* the same source behind 0, 1 or 2 tags is one key */
	assert_int_equal(xdp_passed(skel, T0, &plain, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &one, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &two, 4), 1);
	assert_int_equal(xdp_passed(skel, T0, &two6, 6), 5);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 14);
	assert_int_equal(global_stats(skel).malformed, 0);
}

FG_PROG_TEST_WITH(test_truncated_and_malformed, policies)
{
	struct floodgate_bpf *skel = *state;
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec tcp4 = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec tcp6 = {
		.family = 6, .src = "2001:db8::1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec vlan2 = tcp4, bad_ihl = tcp4;
	/* cut inside each header: IPv4, TCP; IPv6, TCP; VLAN tags. (The kernel
	 * refuses test frames shorter than Ethernet.) */
	const struct {
		const struct pkt_spec *spec;
		size_t len;
	} cases[] = {
		{&tcp4, 14 + 19},     {&tcp4, 14 + 20 + 19}, {&tcp6, 14 + 39},
		{&tcp6, 14 + 40 + 7}, {&vlan2, 14 + 2},	     {&vlan2, 14 + 4 + 3},
	};
	size_t i;

	vlan2.vlans = 2;
	bad_ihl.ihl = 4;
	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(run_prog(xdp, cases[i].spec, cases[i].len), XDP_DROP);
	assert_int_equal(run_prog(xdp, &bad_ihl, 0), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 7);
	assert_int_equal(global_stats(skel).parsed, 0);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);

	/* With malformed = pass the same packets pass, still counted. */
	assert_int_equal(push_config(skel, "malformed = pass\n[policy a]\nmatch = any\n"
					   "rate = 1/s\n"),
			 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(run_prog(xdp, cases[i].spec, cases[i].len), XDP_PASS);
	assert_int_equal(global_stats(skel).malformed, 7 + 6);
}

/* Every cut of several packet shapes, one byte at a time: a cut inside any
 * header is malformed (dropped here), a cut in the payload is not, and no cut
 * ever gets XDP_ABORTED. */
FG_PROG_TEST_WITH(test_truncation_at_every_byte, policies)
{
	struct floodgate_bpf *skel = *state;
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	const struct {
		struct pkt_spec spec;
		size_t headers; /* bytes up to the end of the L4 header */
	} shapes[] = {
		{{.family = 4, .src = "192.0.2.50", .proto = IPPROTO_TCP, .dport = 22, .pad = 8},
		 14 + 20 + 20},
		{{.family = 4,
		  .src = "192.0.2.51",
		  .proto = IPPROTO_UDP,
		  .dport = 53,
		  .vlans = 2,
		  .ihl = 7,
		  .pad = 8},
		 14 + 8 + 28 + 8},
		{{.family = 6,
		  .src = "2001:db8:9::1",
		  .proto = IPPROTO_TCP,
		  .dport = 22,
		  .n_ext = 3,
		  .ext = {0, 43, 60},
		  .pad = 8},
		 14 + 40 + 24 + 20},
	};
	struct fg_global_stats before, after;
	uint8_t buf[1600];
	size_t i, cut, len;
	int verdict;

	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		len = build_packet(buf, &shapes[i].spec);
		assert_int_equal(len, shapes[i].headers + 8);
		for (cut = 14; cut < len; cut++) {
			before = global_stats(skel);
			verdict = run_prog(xdp, &shapes[i].spec, cut);
			after = global_stats(skel);
			assert_true(verdict == XDP_PASS || verdict == XDP_DROP);
			if (cut < shapes[i].headers) {
				assert_int_equal(verdict, XDP_DROP);
				assert_int_equal(after.malformed, before.malformed + 1);
			} else {
				assert_int_equal(after.malformed, before.malformed);
			}
		}
	}
}

FG_PROG_TEST_WITH(test_non_ip_passes, policies)
{
	struct floodgate_bpf *skel = *state;
	uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = arp, .data_size_in = sizeof(arp));
	int i;

	for (i = 0; i < 50; i++) {
		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_xdp), &opts),
				 0);
		assert_int_equal(opts.retval, XDP_PASS);
	}
	assert_int_equal(global_stats(skel).non_ip, 50);
	assert_int_equal(global_stats(skel).packets, 50);
}

FG_PROG_TEST(test_ipv6_extension_headers)
{
	struct floodgate_bpf *skel =
		load_with("[policy port9]\nmatch = udp dport 9\n"
			  "rate = 1/s\nburst = 1\n"
			  "[policy all]\nmatch = any\nrate = 1/s\nburst = 1000\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec two = {.family = 6,
			       .src = "2001:db8::7",
			       .proto = IPPROTO_UDP,
			       .dport = 9,
			       .n_ext = 2,
			       .ext = {0, 60}};
	struct pkt_spec four = two, later = two, six = two, seven = two;
	size_t cut[] = {14 + 40 + 1, 14 + 40 + 8 + 1, 14 + 40 + 16 + 7};
	size_t i;

	four.src = "2001:db8:0:8::8"; /* another /64, another bucket */
	four.n_ext = 4;
	memcpy(four.ext, (uint8_t[]){0, 43, 60, 44}, 4);
	later.src = "2001:db8::9";
	later.n_ext = 1;
	later.ext[0] = 44;
	later.ext_frag = 100 << 3;
	six.src = "2001:db8:0:6::6";
	six.n_ext = 6;
	memcpy(six.ext, (uint8_t[]){0, 60, 43, 60, 60, 60}, 6);
	seven.n_ext = 7;
	memcpy(seven.ext, (uint8_t[]){0, 60, 60, 60, 60, 60, 60}, 7);
	skel->bss->fg_test_now_ns = T0;
	/* the walk finds the UDP port behind the chain */
	assert_int_equal(xdp_passed(skel, T0, &two, 3), 1);
	assert_int_equal(xdp_passed(skel, T0, &four, 3), 1); /* a first fragment */
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6);
	/* a later fragment has no ports: its first unseen, it is dropped
	 * while a policy matches on ports (port9), before any policy */
	assert_int_equal(xdp_passed(skel, T0, &later, 3), 0);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6);
	assert_int_equal(policy_stats(skel, 1).matched_packets, 2);
	assert_int_equal(global_stats(skel).fragment_orphans, 3);
	/* exactly 6 headers, the walk's bound, still reach the port: a bound
	 * off by one (5) would call them malformed and pass none */
	assert_int_equal(xdp_passed(skel, T0, &six, 3), 1);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 6 + 3);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 0);
	/* a chain longer than the walk's bound (6) is malformed (drop here) */
	assert_int_equal(xdp_passed(skel, T0, &seven, 2), 0);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 2);
	/* ... but one from a banned source is counted as banned, not twice */
	put_ban(skel, 6, "2001:db8:bad::", 48, ~0ULL);
	seven.src = "2001:db8:bad::1";
	assert_int_equal(xdp_passed(skel, T0, &seven, 3), 0);
	assert_int_equal(global_stats(skel).banned, 3);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 2);
	seven.src = "2001:db8::7";
	/* truncated inside each extension header and inside UDP */
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		assert_int_equal(run_prog(xdp, &two, cut[i]), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 2 + 3);
	release_skel(skel);
}

/* Runs a raw frame through a program and returns its verdict. */
static int run_raw(int prog_fd, const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
	return opts.retval;
}

/* IP headers whose version disagrees with the ethertype, or whose total
 * length is below their own header length, are malformed (dropped under
 * malformed = drop, and counted). A parser that trusted the ethertype alone
 * or read ports past a too-short total length would pass them. Each bad
 * frame is a one-field edit of a good one, which passes (the control). */
FG_PROG_TEST(test_bad_ip_headers_are_malformed)
{
	struct floodgate_bpf *skel = load_with(
		"malformed = drop\n[policy all]\nmatch = any\nrate = 1/s\nburst = 1000\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	const struct pkt_spec v4 = udp_a;
	const struct pkt_spec v6 = {
		.family = 6, .src = "2001:db8::7", .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600];
	size_t len;
	int version;

	skel->bss->fg_test_now_ns = T0;
	len = build_packet(buf, &v4);
	assert_int_equal(run_raw(xdp, buf, len), XDP_PASS);
	len = build_packet(buf, &v6);
	assert_int_equal(run_raw(xdp, buf, len), XDP_PASS);
	assert_int_equal(global_stats(skel).malformed, 0);
	/* versions 0, 5, 6, 15 behind an IPv4 ethertype */
	for (version = 0; version < 16; version += 5) {
		len = build_packet(buf, &v4);
		buf[14] = (uint8_t)(version == 4 ? 6 << 4 : version << 4) | 5;
		assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	}
	/* version 4 behind an IPv6 ethertype */
	len = build_packet(buf, &v6);
	buf[14] = 4 << 4;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	/* total length 19, below IHL's 20 bytes (and 0) */
	len = build_packet(buf, &v4);
	buf[14 + 2] = 0;
	buf[14 + 3] = 19;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	buf[14 + 3] = 0;
	assert_int_equal(run_raw(xdp, buf, len), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 4 + 1 + 2);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 2);
	release_skel(skel);
}

FG_PROG_TEST(test_ipv4_options)
{
	struct floodgate_bpf *skel =
		load_with("[policy ssh]\nmatch = tcp dport 22 syn\nrate = 1/s\nburst = 2\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec opts = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22, .ihl = 15};

	/* 40 bytes of options, and the port is still found */
	assert_int_equal(xdp_passed(skel, T0, &opts, 4), 2);
	/* options cut short, and the TCP header cut short after them */
	assert_int_equal(run_prog(xdp, &opts, 14 + 30), XDP_DROP);
	assert_int_equal(run_prog(xdp, &opts, 14 + 60 + 10), XDP_DROP);
	assert_int_equal(global_stats(skel).malformed, 2);
	release_skel(skel);
}

/* A later IPv6 fragment (offset ≠ 0) whose fragment header names a
 * hop-by-hop header: what follows is payload, which the sender chooses.
 * Built with `payload` (up to 64 bytes) written after the fragment header. */
static size_t later_fragment6(uint8_t *buf, const char *src, const uint8_t *payload, size_t len)
{
	const struct pkt_spec spec = {.family = 6,
				      .src = src,
				      .proto = IPPROTO_HOPOPTS, /* the fragment's next header */
				      .n_ext = 1,
				      .ext = {44},
				      .ext_frag = 100 << 3,
				      .pad = 56};
	size_t frame = build_packet(buf, &spec);

	memcpy(buf + 14 + 40 + 8, payload, len);
	return frame;
}

/* The walk stops at a later fragment: its protocol is the fragment header's
 * next header, with no ports. Walking on would read the payload as headers,
 * so the sender would choose the protocol the policies see (a fake
 * hop-by-hop header, then TCP to port 22), or a fake header cut short,
 * which `malformed = pass` let past every policy. */
FG_PROG_TEST(test_ipv6_later_fragment_stops_the_walk)
{
	/* no policy with ports: one would drop these fragments, whose first
	 * was not seen (test_orphan_fragments_dropped_under_port_policies) */
	struct floodgate_bpf *skel =
		load_with("malformed = pass\n"
			  "[policy tcp]\nmatch = tcp\nrate = 1/min\nburst = 1000\n"
			  "[policy all]\nmatch = any\nrate = 1/min\nburst = 2\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	/* hop-by-hop (next: TCP, 8 bytes), then a TCP SYN to port 22 */
	const uint8_t fake_tcp[8 + 20] = {
		IPPROTO_TCP, 0, 0, 0, 0, 0, 0, 0, 0x9c, 0x40, 0, 22, [20] = 5 << 4, [21] = 0x02};
	/* hop-by-hop (next: destination options, 2048 bytes): past the end */
	const uint8_t fake_cut[8] = {IPPROTO_DSTOPTS, 255};
	uint8_t buf[1600];
	size_t len;
	int i, passed = 0;

	skel->bss->fg_test_now_ns = T0;
	len = later_fragment6(buf, "2001:db8:13::1", fake_tcp, sizeof(fake_tcp));
	for (i = 0; i < 5; i++)
		passed += run_raw(xdp, buf, len) == XDP_PASS;
	assert_int_equal(passed, 2);				    /* `all` (burst 2) binds it */
	assert_int_equal(policy_stats(skel, 0).matched_packets, 0); /* not TCP */
	assert_int_equal(policy_stats(skel, 1).matched_packets, 5);

	len = later_fragment6(buf, "2001:db8:14::1", fake_cut, sizeof(fake_cut));
	for (i = passed = 0; i < 5; i++)
		passed += run_raw(xdp, buf, len) == XDP_PASS;
	assert_int_equal(passed, 2);
	assert_int_equal(policy_stats(skel, 1).matched_packets, 10);
	assert_int_equal(global_stats(skel).malformed, 0);
	release_skel(skel);
}
