// SPDX-License-Identifier: GPL-2.0-only
/*
 * The [allow] and [deny] lists, longest prefix first, before everything
 * else.
 */
#include "fixtures.h"

FG_PROG_TEST(test_allow_and_deny_lists)
{
	struct floodgate_bpf *skel = load_with("[allow]\nsrc = 10.1.0.0/16, 2001:db8:a::/48\n"
					       "[deny]\nsrc = 10.0.0.0/8, 2001:db8::/32\n"
					       "[policy p]\nmatch = any\nrate = 1/s\nburst = 1\n");
	int xdp = bpf_program__fd(skel->progs.fg_xdp);
	struct pkt_spec allowed = udp_a, denied = udp_a, other = udp_a;
	struct pkt_spec allowed6 = {
		.family = 6, .src = "2001:db8:a::1", .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec denied6 = allowed6,
			denied_tcp = {
				.family = 4, .src = "10.9.9.9", .proto = IPPROTO_TCP, .dport = 22};

	allowed.src = "10.1.2.3"; /* inside the deny /8, but the allow /16 is longer */
	denied.src = "10.2.0.1";
	other.src = "192.0.2.1";
	denied6.src = "2001:db8:b::1";
	assert_int_equal(xdp_passed(skel, T0, &allowed, 10), 10);
	assert_int_equal(xdp_passed(skel, T0, &allowed6, 10), 10);
	assert_int_equal(xdp_passed(skel, T0, &denied, 10), 0);
	assert_int_equal(xdp_passed(skel, T0, &denied6, 10), 0);
	assert_int_equal(xdp_passed(skel, T0, &other, 10), 1);
	/* a damaged packet from a denied source still meets the list first */
	skel->bss->fg_test_now_ns = T0;
	assert_int_equal(run_prog(xdp, &denied_tcp, 14 + 20 + 5), XDP_DROP);
	assert_int_equal(global_stats(skel).allowed, 20);
	assert_int_equal(global_stats(skel).denied, 21);
	assert_int_equal(global_stats(skel).malformed, 0);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 10);
	floodgate_bpf__destroy(skel);
}
