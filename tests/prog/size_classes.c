// SPDX-License-Identifier: GPL-2.0-only
/*
 * `match = ... size LO-HI` at both hooks, and the built-in policy built
 * on it.
 */
#include <stdio.h>

#include "config/config.h"
#include "fixtures.h"

/* Runs one packet n times through fg_xdp in one BPF_PROG_TEST_RUN call at
 * `now` and returns the last verdict: n separate runs cost a system call
 * each, seconds under emulation (`make test-kernels`). */
static int xdp_repeat(struct floodgate_bpf *skel, __u64 now, const struct pkt_spec *spec, __u32 n)
{
	uint8_t buf[1600];
	size_t len = build_packet(buf, spec);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = n);

	skel->bss->fg_test_now_ns = now;
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_xdp), &opts), 0);
	return opts.retval;
}

/* `match = ... size LO-HI` at both hooks: the class boundaries are exact
 * (frame length, Ethernet header included), and a packet outside the range
 * is not charged. */
FG_PROG_TEST(test_size_classes)
{
	static const char config[] = "[policy mid]\nmatch = udp size 64-127\nrate = 1/s\n"
				     "burst = 1000\n"
				     "[policy big]\nmatch = any size 1024-max\nrate = 1/s\n"
				     "burst = 1\n";
	/* 42 bytes of headers: pad 21 makes a 63-byte frame */
	static const struct {
		size_t pad;
		int passed_mid, passed_big; /* of 3 sent, at the hook; -1: not matched */
	} rows[] = {
		{21, -1, -1},  {22, 3, -1},  {85, 3, -1},   {86, -1, -1},
		{981, -1, -1}, {982, -1, 1}, {1472, -1, 1},
	};
	/* One skeleton; each row is a source of its own, judged on fresh
	 * state, and the counters are compared by difference. */
	struct floodgate_bpf *skel = load_sized(config, FG_SKEL_EVERY_PROG, 1024, 1024, false);
	struct pkt_spec spec = udp_a;
	char source[INET_ADDRSTRLEN];
	size_t i;
	int tc;

	spec.src = source;
	for (tc = 0; tc <= 1; tc++) {
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			struct fg_policy_stats mid = policy_stats(skel, 0),
					       big = policy_stats(skel, 1);
			__u64 unmatched = global_stats(skel).unmatched;
			int expect = 3;

			snprintf(source, sizeof(source), "10.9.%d.%zu", tc, i + 1);
			spec.pad = rows[i].pad;
			if (rows[i].passed_big >= 0)
				expect = rows[i].passed_big;
			assert_int_equal(hook_passed(skel, tc, T0, &spec, 3), expect);
			assert_int_equal(policy_stats(skel, 0).matched_packets -
						 mid.matched_packets,
					 rows[i].passed_mid < 0 ? 0 : 3);
			assert_int_equal(policy_stats(skel, 1).matched_packets -
						 big.matched_packets,
					 rows[i].passed_big < 0 ? 0 : 3);
			assert_int_equal(global_stats(skel).unmatched - unmatched,
					 rows[i].passed_mid < 0 && rows[i].passed_big < 0 ? 3 : 0);
		}
	}
	release_skel(skel);
}

/* The built-in policy (docs/config.md "The built-in policy"), with a frozen clock so
 * that every count is a burst: small floods are held per source, large
 * datagrams and bulk TCP segments are never charged. */
FG_PROG_TEST(test_builtin_policy)
{
	struct floodgate_bpf *skel = load_sized(fg_default_config, FG_SKEL_XDP, 1024, 1024, false);
	struct pkt_spec small_udp = udp_a, vpn = udp_a, syn = udp_a, ack = udp_a;
	struct pkt_spec segment, ping6 = {.family = 6, .src = "fd00::1", .proto = IPPROTO_ICMPV6};

	/* Never charged: unmatched, so not one of 200000 frames was dropped
	 * (global_stats.unmatched counts them; below), and the last passes. */
	vpn.pad = 1400; /* a 1442-byte frame: a VPN tunnel's datagram */
	assert_int_equal(xdp_repeat(skel, T0, &vpn, 200000), XDP_PASS);
	assert_int_equal(global_stats(skel).unmatched, 200000);
	small_udp.src = "10.0.0.2";
	assert_int_equal(hook_passed(skel, false, T0, &small_udp, 60000), 50000);
	syn.src = "10.0.0.3";
	syn.proto = IPPROTO_TCP;
	assert_int_equal(hook_passed(skel, false, T0, &syn, 3000), 2000);
	ack = syn; /* SYN+ACK: not a new connection, charged as a small frame */
	ack.src = "10.0.0.4";
	ack.ack = 1;
	assert_int_equal(hook_passed(skel, false, T0, &ack, 110000), 100000);
	segment = ack; /* a 1514-byte TCP segment of a bulk transfer */
	segment.pad = 1460;
	assert_int_equal(xdp_repeat(skel, T0, &segment, 200000), XDP_PASS);
	assert_int_equal(hook_passed(skel, false, T0, &ping6, 1500), 1000);
	assert_int_equal(global_stats(skel).unmatched, 400000);
	release_skel(skel);
}
