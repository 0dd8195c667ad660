// SPDX-License-Identifier: GPL-2.0-only
/*
 * Framing: no VLAN stack, fragment or header trick skips a check.
 */
#include <stdio.h>
#include <string.h>

#include "fixtures.h"

static const char framing_config[] =
	"malformed = pass\n"
	"[deny]\nsrc = 10.66.0.0/16, 2001:db8:66::/48\n"
	"[policy port9]\nmatch = udp dport 9\nrate = 1/min\nburst = 2\n"
	"[policy all]\nmatch = any\nrate = 1/min\nburst = 3\n";

/* Tag stacks: all 802.1Q, all 802.1ad, alternating, priority-only VID 0. */
#define VLAN_KINDS 4
static void set_tags(struct pkt_spec *spec, int kind, int tags)
{
	spec->vlans = tags;
	spec->ad_tags = kind == 1 ? ~0u : kind == 2 ? 0x55555555u : 0;
	if (kind == 0 || kind == 3) /* ad_tags 0 would mean classic QinQ */
		spec->ad_tags = 0x80000000u;
	spec->vid0 = kind == 3;
}

/* One family at one hook behind `tags` tags of one kind: the deny list, a
 * ban and both policies see through the stack, for whole datagrams and
 * for fragments (a later one carries the source but no ports). */
static void check_framing(struct floodgate_bpf *skel, bool tc, int family, int kind, int tags)
{
	struct pkt_spec whole = {.family = family, .proto = IPPROTO_UDP, .dport = 9};
	struct pkt_spec later, first;
	char denied[64], banned[64], fresh[64], fresh_frag[64];

	if (family == 4) {
		snprintf(denied, sizeof(denied), "10.66.%d.%d", kind, tags);
		snprintf(banned, sizeof(banned), "10.67.%d.%d", kind, tags);
		snprintf(fresh, sizeof(fresh), "10.%d.%d.%d", 100 + tc, kind, tags);
		snprintf(fresh_frag, sizeof(fresh_frag), "10.%d.%d.%d", 110 + tc, kind, tags);
	} else {
		snprintf(denied, sizeof(denied), "2001:db8:66::%d:%d", kind, tags);
		snprintf(banned, sizeof(banned), "2001:db8:67::%d:%d", kind, tags);
		/* one /64 each: the default key of IPv6 */
		snprintf(fresh, sizeof(fresh), "2001:db8:%d:%d::1", 100 + tc, kind * 16 + tags);
		snprintf(fresh_frag, sizeof(fresh_frag), "2001:db8:%d:%d::1", 110 + tc,
			 kind * 16 + tags);
	}
	set_tags(&whole, kind, tags);
	later = whole;
	if (family == 4) {
		later.frag_off = 100;
	} else {
		later.n_ext = 1;
		later.ext[0] = 44;
		later.ext_frag = 100 << 3;
	}
	first = later;
	first.frag_off = family == 4 ? 0x2000 : 0; /* offset 0, more follow */
	first.ext_frag = family == 4 ? 0 : 1;
	whole.src = later.src = denied;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 3), 0);
	assert_int_equal(hook_passed(skel, tc, T0, &later, 3), 0);
	whole.src = later.src = banned;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 3), 0);
	assert_int_equal(hook_passed(skel, tc, T0, &later, 3), 0);
	/* port9 (burst 2) binds whole datagrams, and a fragmented one whole:
	 * later fragments are judged as their first */
	whole.src = fresh;
	assert_int_equal(hook_passed(skel, tc, T0, &whole, 5), 2);
	first.src = later.src = fresh_frag;
	assert_int_equal(hook_passed(skel, tc, T0, &first, 1), 1);
	assert_int_equal(hook_passed(skel, tc, T0, &later, 4), 1);
}

FG_PROG_TEST(test_vlan_stacks_meet_lists_bans_policies)
{
	struct floodgate_bpf *skel = load_sized(framing_config, FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec deep = {.family = 4, .src = "10.5.5.5", .proto = IPPROTO_UDP, .dport = 9};
	int tc, family, kind, tags, combos = 0;
	struct fg_global_stats g;

	put_ban(skel, 4, "10.67.0.0", 16, ~0ULL);
	put_ban(skel, 6, "2001:db8:67::", 48, ~0ULL);
	for (tc = 0; tc < 2; tc++)
		for (family = 4; family <= 6; family += 2)
			for (kind = 0; kind < VLAN_KINDS; kind++)
				for (tags = 1; tags <= 8; tags++, combos++)
					check_framing(skel, tc, family, kind, tags);
	g = global_stats(skel);
	assert_int_equal(g.denied, combos * 6);
	assert_int_equal(g.banned, combos * 6);
	assert_int_equal(g.malformed, 0);
	assert_int_equal(g.non_ip, 0);
	/* deeper than the walk: dropped though malformed = pass, at both hooks */
	for (tags = 9; tags <= PKT_MAX_VLANS; tags++) {
		set_tags(&deep, 3, tags);
		assert_int_equal(hook_passed(skel, false, T0, &deep, 1), 0);
		assert_int_equal(hook_passed(skel, true, T0, &deep, 1), 0);
		deep.family = 6;
		deep.src = "2001:db8:5::5";
		assert_int_equal(hook_passed(skel, true, T0, &deep, 1), 0);
		deep.family = 4;
		deep.src = "10.5.5.5";
	}
	g = global_stats(skel);
	assert_int_equal(g.vlan_overflow, 3 * (PKT_MAX_VLANS - 8));
	assert_int_equal(g.malformed, 3 * (PKT_MAX_VLANS - 8));
	release_skel(skel);
}

/* A TCP SYN split into an 8-byte first fragment and the rest hides its
 * flags from a `syn` match; reassembled, the kernel would deliver it. Such
 * a first fragment is dropped whatever `malformed` says. */
FG_PROG_TEST(test_tiny_first_fragments_dropped)
{
	struct floodgate_bpf *skel =
		load_sized("malformed = pass\n"
			   "[policy syn]\nmatch = tcp dport 80 syn\nrate = 1/min\nburst = 1\n",
			   FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec syn = {.family = 4, .src = "10.1.0.1", .proto = IPPROTO_TCP, .dport = 80};
	struct pkt_spec tiny = syn, first = syn, cut = syn, syn6, tiny6, seven6;
	int tc;

	tiny.frag_off = 0x2000; /* more fragments, offset 0 */
	tiny.l4_cut = 8;
	first.frag_off = 0x2000; /* a first fragment with the whole header */
	cut.l4_cut = 8;		 /* no fragment: the kernel drops it itself */
	syn6 = syn;
	syn6.family = 6;
	syn6.src = "2001:db8:1::1";
	tiny6 = syn6;
	tiny6.n_ext = 1;
	tiny6.ext[0] = 44;
	tiny6.ext_frag = 1; /* M set, offset 0 */
	tiny6.l4_cut = 8;
	seven6 = syn6;
	seven6.n_ext = 7;
	memcpy(seven6.ext, (uint8_t[]){0, 60, 60, 60, 60, 60, 60}, 7);
	for (tc = 0; tc < 2; tc++) {
		tiny.vlans = tiny6.vlans = tc; /* and behind a tag */
		assert_int_equal(hook_passed(skel, tc, T0, &tiny, 5), 0);
		assert_int_equal(hook_passed(skel, tc, T0, &tiny6, 5), 0);
		/* an IPv6 chain longer than the walk is delivered by the
		 * kernel: dropped too, not passed as malformed */
		assert_int_equal(hook_passed(skel, tc, T0, &seven6, 2), 0);
	}
	assert_int_equal(global_stats(skel).tiny_fragments, 20);
	assert_int_equal(global_stats(skel).ipv6_ext_overflow, 4);
	/* the SYN limit holds for whole SYNs and whole first fragments */
	assert_int_equal(hook_passed(skel, false, T0, &syn, 5), 1);
	assert_int_equal(hook_passed(skel, true, T0, &syn6, 5), 1);
	first.src = "10.1.0.2";
	assert_int_equal(hook_passed(skel, false, T0, &first, 5), 1);
	/* a cut header that is not a fragment stays `malformed` (pass here) */
	assert_int_equal(hook_passed(skel, false, T0, &cut, 2), 2);
	assert_int_equal(global_stats(skel).malformed, 20 + 4 + 2);
	release_skel(skel);
}

/* Runs one frame through fg_tc as a GRO/GSO super-packet of `segs`
 * segments (skb->gso_segs); returns 1 if it passed. */
static int tc_super_packet(struct floodgate_bpf *skel, const struct pkt_spec *spec, __u32 segs)
{
	struct __sk_buff ctx = {.gso_segs = segs, .gso_size = segs ? 1000 : 0};
	uint8_t buf[1600];
	size_t len = build_packet(buf, spec);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_tc), &opts), 0);
	assert_true(opts.retval == TC_ACT_OK || opts.retval == TC_ACT_SHOT);
	return opts.retval == TC_ACT_OK;
}

/* At tc, after GRO, one skb may stand for many wire packets: a packet
 * limit charges it its segment count, so a limit of 10 admits two
 * super-packets of 4 segments and then two single packets. Charged 1 each,
 * the super-packets would let 10 of them (40 packets) through. */
FG_PROG_TEST(test_tc_super_packets_cost_their_segments)
{
	struct floodgate_bpf *skel =
		load_sized("[policy p]\nmatch = udp dport 9\nrate = 1/min\nburst = 10\n",
			   FG_SKEL_TC, 0, 0, false);
	int i, passed = 0;

	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < 5; i++)
		passed += tc_super_packet(skel, &udp_a, 4);
	assert_int_equal(passed, 2);
	for (i = passed = 0; i < 3; i++)
		passed += tc_super_packet(skel, &udp_a, i == 0 ? 1 : 0); /* 0: not GSO */
	assert_int_equal(passed, 2);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 8);
	release_skel(skel);
}

/* Headers that end far past fg_tc's first pull of 256 bytes (six 200-byte
 * extension headers, the port at byte 1254) are parsed at both hooks: the
 * port policy binds them and nothing is malformed. (BPF_PROG_TEST_RUN
 * hands fg_tc a linear frame: test_framing.sh sends one in paged data.) */
FG_PROG_TEST(test_long_ipv6_chains_parsed_at_both_hooks)
{
	struct floodgate_bpf *skel =
		load_sized("malformed = pass\n"
			   "[policy port9]\nmatch = udp dport 9\nrate = 1/min\nburst = 2\n",
			   FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec chain = {.family = 6,
				 .src = "2001:db8:24::1",
				 .proto = IPPROTO_UDP,
				 .dport = 9,
				 .n_ext = 6,
				 .ext = {0, 60, 43, 60, 60, 60},
				 .ext_size = 200};
	uint8_t buf[PKT_BUF_SIZE];

	assert_int_equal(build_packet(buf, &chain), 14 + 40 + 6 * 200 + 8);
	assert_int_equal(hook_passed(skel, true, T0, &chain, 5), 2);
	chain.src = "2001:db8:25::1";
	assert_int_equal(hook_passed(skel, false, T0, &chain, 5), 2);
	assert_int_equal(global_stats(skel).malformed, 0);
	assert_int_equal(policy_stats(skel, 0).matched_packets, 10);
	release_skel(skel);
}

/* The fragments of one datagram: first (offset 0, more follow), middle,
 * last; `pad` payload bytes each after a UDP-sized first chunk. */
static void datagram_fragments(const struct pkt_spec *base, uint32_t id, struct pkt_spec frags[3])
{
	int i;

	for (i = 0; i < 3; i++) {
		uint16_t offset = i * (8 + base->pad) / 8; /* in 8-byte units */

		frags[i] = *base;
		frags[i].frag_id = id;
		if (base->family == 4) {
			frags[i].frag_off = offset | (i < 2 ? 0x2000 : 0);
		} else {
			frags[i].n_ext = 1;
			frags[i].ext[0] = 44;
			frags[i].ext_frag = offset << 3 | (i < 2 ? 1 : 0);
			/* later fragments: whatever their header says, the
			 * kernel reassembles them by the first's */
			if (i)
				frags[i].proto = 59;
		}
	}
}

static const char fragment_config[] =
	"[policy bytes]\nmatch = udp dport 9\nrate = 1000B/min\nburst = 2500B\n"
	"[policy any]\nmatch = any\nrate = 1/min\nburst = 1000\n";

/* A byte policy with `dport` charges every fragment of a datagram as its
 * first: three 1042-byte fragments spend 3126 bytes (the third is over a
 * 2500-byte burst), not the first's 1042. IPv4 and IPv6, at both hooks. */
FG_PROG_TEST(test_fragments_charged_as_their_first)
{
	struct floodgate_bpf *skel = load_sized(fragment_config, FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec base = {.proto = IPPROTO_UDP, .dport = 9, .pad = 1000}, frags[3];
	char src[64];
	uint8_t buf[PKT_BUF_SIZE];
	size_t lens = 0;
	int family, tc, i, passed, rounds = 0;

	for (family = 4; family <= 6; family += 2)
		for (tc = 0; tc < 2; tc++, rounds++) {
			base.family = family;
			snprintf(src, sizeof(src), family == 4 ? "10.12.0.%d" : "2001:db8:12:%d::1",
				 tc + 1);
			base.src = src;
			datagram_fragments(&base, 1000 + rounds, frags);
			for (i = passed = 0; i < 3; i++) {
				passed += hook_passed(skel, tc, T0, &frags[i], 1);
				lens += build_packet(buf, &frags[i]);
			}
			assert_int_equal(passed, 2);
		}
	assert_int_equal(policy_stats(skel, 0).matched_packets, 3 * rounds);
	assert_int_equal(policy_stats(skel, 0).matched_bytes, lens);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, rounds);
	assert_int_equal(global_stats(skel).fragment_orphans, 0);
	release_skel(skel);
}

/* A later fragment whose first floodgate has not seen (out of order, or
 * spoofed) would escape the port policies (reversed, a datagram spent one
 * fragment's bytes): it is dropped while a TCP or UDP policy matches on
 * ports, counted in fragment_orphans. Its first fragment, arriving after
 * it, is judged as usual. Without such a policy it meets the port-less
 * ones, as ever. */
FG_PROG_TEST(test_orphan_fragments_dropped_under_port_policies)
{
	struct floodgate_bpf *skel = load_with(fragment_config);
	struct pkt_spec base = {.src = "10.12.1.1", .proto = IPPROTO_UDP, .dport = 9, .pad = 1000};
	struct pkt_spec frags[3], frags6[3],
		icmp = {.family = 4,
			.src = "10.12.1.2",
			.proto = IPPROTO_ICMP,
			.frag_off = 0x2000 | 200};
	int family;

	for (family = 4; family <= 6; family += 2) {
		base.family = family;
		if (family == 6)
			base.src = "2001:db8:12:9::1";
		datagram_fragments(&base, 77, family == 4 ? frags : frags6);
	}
	assert_int_equal(xdp_passed(skel, T0, &frags[2], 1), 0);
	assert_int_equal(xdp_passed(skel, T0, &frags[1], 1), 0);
	assert_int_equal(xdp_passed(skel, T0, &frags6[2], 1), 0);
	assert_int_equal(xdp_passed(skel, T0, &frags[0], 1), 1);
	assert_int_equal(global_stats(skel).fragment_orphans, 3);
	/* IPv4 carries its protocol in every fragment: no port policy can
	 * match an ICMP datagram, whose orphans pass */
	assert_int_equal(xdp_passed(skel, T0, &icmp, 1), 1);
	/* without a port policy, orphans meet the port-less policies */
	assert_int_equal(push_config(skel, "[policy udp]\nmatch = udp\nrate = 1/min\nburst = 2\n"),
			 0);
	frags[2].frag_id = 78;
	assert_int_equal(xdp_passed(skel, T0, &frags[2], 3), 2);
	assert_int_equal(global_stats(skel).fragment_orphans, 3);
	release_skel(skel);
}
