// SPDX-License-Identifier: GPL-2.0-only
/*
 * Matching and keys under the fixtures' five-layer config: burst then rate,
 * prefix keys per family, port and source clauses, monitor, per = global,
 * fragments, sport, SYN and per-port keys.
 */
#include "fixtures.h"

FG_PROG_TEST_WITH(test_ipv4_burst_then_rate, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec b = a;
	struct fg_policy_stats s;

	b.src = "10.0.9.2";
	/* burst 5, then nothing at the same instant */
	assert_int_equal(xdp_passed(skel, T0, &a, 8), 5);
	/* 10/s: one token per 100ms, exactly at the boundary */
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS - 1, &a, 1), 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &a, 3), 1);
	/* idle time refills to the burst, never beyond */
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &a, 20), 5);
	/* another /32 has its own bucket */
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &b, 8), 5);
	/* every ssh packet that passed was charged to the default layer too;
	 * the refused ones were not */
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 5 + 1 + 5 + 5);

	s = policy_stats(skel, P_SSH);
	assert_int_equal(s.matched_packets, 8 + 1 + 3 + 20 + 8);
	assert_int_equal(s.passed_packets, 5 + 0 + 1 + 5 + 5);
	assert_int_equal(s.dropped_packets, 3 + 1 + 2 + 15 + 3);
	assert_int_equal(s.would_drop_packets, 0);
	assert_int_equal(global_stats(skel).parsed, 40);
}

FG_PROG_TEST_WITH(test_ipv6_and_prefix_keys, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec a = {
		.family = 6, .src = "2001:db8:5:6::1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec same64 = a, other64 = a;
	struct pkt_spec v4a = {.family = 4, .src = "10.1.2.3", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec v4b = v4a;

	same64.src = "2001:db8:5:6:ffff::9";
	other64.src = "2001:db8:5:7::1";
	v4b.src = "10.1.2.200";
	/* default policy keys IPv6 by /64: the two /64 siblings share burst 10 */
	assert_int_equal(xdp_passed(skel, T0, &a, 6), 6);
	assert_int_equal(xdp_passed(skel, T0, &same64, 6), 4);
	assert_int_equal(xdp_passed(skel, T0, &other64, 12), 10);
	/* and IPv4 by /24 */
	assert_int_equal(xdp_passed(skel, T0, &v4a, 7), 7);
	assert_int_equal(xdp_passed(skel, T0, &v4b, 7), 3);
	assert_int_equal(policy_stats(skel, P_DEFAULT).passed_packets, 30);
}

FG_PROG_TEST_WITH(test_port_match_and_fallthrough, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec telnet = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 23};
	struct pkt_spec partner = {
		.family = 4, .src = "192.0.2.7", .proto = IPPROTO_UDP, .dport = 1500};
	struct pkt_spec stranger = partner, partner6 = partner, edge = partner;

	stranger.src = "198.51.100.1";
	partner6.family = 6;
	partner6.src = "2001:db8:1:ff::5";
	edge.dport = 2001;
	/* port 23 is not ssh's: it falls through to the default policy */
	assert_int_equal(xdp_passed(skel, T0, &telnet, 12), 10);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 12);
	/* the source restriction: inside -> partners (burst 3), outside -> default */
	assert_int_equal(xdp_passed(skel, T0, &partner, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &partner6, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &stranger, 5), 5);
	assert_int_equal(policy_stats(skel, P_PARTNERS).matched_packets, 10);
	/* one past the range end */
	assert_int_equal(xdp_passed(skel, T0, &edge, 1), 1);
	assert_int_equal(policy_stats(skel, P_PARTNERS).matched_packets, 10);
}

FG_PROG_TEST_WITH(test_monitor_passes_and_counts, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec dns = {
		.family = 4, .src = "10.0.0.1", .proto = IPPROTO_UDP, .dport = 53, .pad = 20};
	struct fg_policy_stats s;

	/* 12 packets: the monitor layer (burst 2) refuses 10 but passes them
	 * on, and the walk goes on to the default layer (burst 10), which drops
	 * 2. A monitor that ended the walk with PASS would pass all 12; one
	 * that dropped would pass 2. */
	assert_int_equal(xdp_passed(skel, T0, &dns, 12), 10);
	s = policy_stats(skel, P_DNS);
	assert_int_equal(s.matched_packets, 12);
	assert_int_equal(s.passed_packets, 12);
	assert_int_equal(s.would_drop_packets, 10);
	assert_int_equal(s.dropped_packets, 0);
	assert_int_equal(s.would_drop_bytes, 10 * (14 + 20 + 8 + 20));
	s = policy_stats(skel, P_DEFAULT);
	assert_int_equal(s.matched_packets, 12);
	assert_int_equal(s.dropped_packets, 2);
	assert_int_equal(s.would_drop_packets, 0);
}

FG_PROG_TEST_WITH(test_global_key_and_fragments, policies)
{
	struct floodgate_bpf *skel = *state;
	struct pkt_spec ping = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_ICMP};
	struct pkt_spec ping2 = ping;
	struct pkt_spec frag = {
		.family = 4, .src = "10.7.7.7", .proto = IPPROTO_TCP, .dport = 22, .frag_off = 100};
	/* a first fragment (more-fragments set, offset 0) carries the ports */
	struct pkt_spec first = {.family = 4,
				 .src = "10.8.8.8",
				 .proto = IPPROTO_TCP,
				 .dport = 22,
				 .frag_off = 0x2000};

	ping2.src = "172.16.0.1";
	/* per = global: every source draws on one bucket of 4 */
	assert_int_equal(xdp_passed(skel, T0, &ping, 3), 3);
	assert_int_equal(xdp_passed(skel, T0, &ping2, 3), 1);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &ping2, 3), 1);
	/* a later fragment has no ports: its first unseen, it is dropped
	 * (ssh matches on ports), before any layer */
	assert_int_equal(xdp_passed(skel, T0, &frag, 12), 0);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 0);
	/* the 5 pings that passed the ping layer met the default layer too */
	assert_int_equal(policy_stats(skel, P_DEFAULT).matched_packets, 5);
	assert_int_equal(xdp_passed(skel, T0, &first, 8), 5);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 8);
	/* a later fragment of that datagram is ssh's, as its first */
	frag.src = first.src;
	assert_int_equal(xdp_passed(skel, T0, &frag, 2), 0);
	assert_int_equal(policy_stats(skel, P_SSH).matched_packets, 10);
}

FG_PROG_TEST(test_sport_syn_and_port_keys)
{
	struct floodgate_bpf *skel = load_with("[policy syn22]\nmatch = tcp dport 22 syn\n"
					       "rate = 1/s\nburst = 2\n"
					       "[policy from53]\nmatch = udp sport 53\n"
					       "rate = 1/s\nburst = 3\n"
					       "[policy perport]\nmatch = udp dport 1000-1001\n"
					       "per = src/32+dport\nrate = 1/s\nburst = 2\n");
	struct pkt_spec syn = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct pkt_spec synack = syn, dns = udp_a, other = udp_a, p1000 = udp_a, p1001 = udp_a;

	synack.ack = 1;
	dns.sport = 53;
	other.sport = 54;
	p1000.dport = 1000;
	p1001.dport = 1001;
	assert_int_equal(xdp_passed(skel, T0, &syn, 5), 2);
	assert_int_equal(xdp_passed(skel, T0, &synack, 5), 5); /* not a bare SYN */
	assert_int_equal(xdp_passed(skel, T0, &dns, 5), 3);
	assert_int_equal(xdp_passed(skel, T0, &other, 5), 5);
	/* one bucket per source and destination port */
	assert_int_equal(xdp_passed(skel, T0, &p1000, 5), 2);
	assert_int_equal(xdp_passed(skel, T0, &p1001, 5), 2);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 5);
	assert_int_equal(global_stats(skel).unmatched, 5 + 5);
	release_skel(skel);
}
