// SPDX-License-Identifier: GPL-2.0-only
/*
 * The clock: what makes the datapath read it (an injected clock counts the
 * reads).
 */
#include "fixtures.h"

/* The clock is read at most once a packet, and only when something needs
 * it: a policy matched, or the source met a ban entry. A packet that meets
 * neither (bulk TCP data under the built-in policy) skips the costliest
 * step. Counted through the injected clock's read counter. */
FG_PROG_TEST(test_clock_read_only_when_needed)
{
	struct floodgate_bpf *skel =
		load_with("[policy a]\nmatch = udp\nrate = 1/s\nburst = 2\n"
			  "action = ban 10s\nban_unverified = yes\n"
			  "[policy b]\nmatch = udp\nper = src/24\nrate = 1000/s\n"
			  "[policy c]\nmatch = udp\nper = global\nrate = 1000/s\n");
	struct pkt_spec tcp_a = udp_a, tcp_stranger = udp_a;
	__u64 reads;

	tcp_a.proto = IPPROTO_TCP;
	tcp_stranger.proto = IPPROTO_TCP;
	tcp_stranger.src = "10.0.1.1";
	reads = skel->bss->fg_test_clock_reads;
	assert_int_equal(xdp_at(skel, T0, &tcp_a), XDP_PASS);
	assert_int_equal(skel->bss->fg_test_clock_reads, reads); /* no policy, no ban */
	assert_int_equal(xdp_at(skel, T0, &udp_a), XDP_PASS);
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 1); /* three layers, one read */
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 1);	     /* the refusal bans it */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 3);
	assert_int_equal(global_stats(skel).bans_added, 1);
	assert_int_equal(xdp_at(skel, T0, &tcp_a), XDP_DROP); /* met its ban entry */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 4);
	assert_int_equal(xdp_at(skel, T0, &tcp_stranger), XDP_PASS); /* no entry of its own */
	assert_int_equal(skel->bss->fg_test_clock_reads, reads + 4);
	assert_int_equal(global_stats(skel).unmatched, 2);
	floodgate_bpf__destroy(skel);
}
