// SPDX-License-Identifier: GPL-2.0-only
/*
 * action = ban: escalation by ban_factor up to ban_max (by default the
 * first ban's length), strikes (in `ban_strikes`) and their lifetime,
 * expired bans that leave the trie and must not shadow an active ban, the
 * share of the trie kept for bans by hand, and a full trie. (Evidence that
 * a source can receive: ban_evidence.c.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fixtures.h"
#include "maps/pinned.h"
#include "ops/bans.h"

/* How many bans `ban_count` says policies hold. */
static __s64 policy_bans(struct floodgate_bpf *skel)
{
	struct fg_ban_count count;
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.ban_count), &zero, &count), 0);
	return count.policy_bans;
}

/* Is there a ban of exactly this prefix? (A lookup in the trie answers
 * with the longest prefix that holds the address, maybe a shorter one.) */
static bool has_ban(struct floodgate_bpf *skel, int family, const char *addr, int len)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban;

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban) &&
	       ban.prefix_len == len && ban.family == family;
}

static struct fg_ban ban_of(struct floodgate_bpf *skel, int family, const char *addr, int len)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban = {};

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	return ban;
}

FG_PROG_TEST(test_bans_escalate)
{
	struct floodgate_bpf *skel =
		load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
			  "rate = 1/s\nburst = 2\naction = ban 10s\n"
			  "ban_factor = 3\nban_max = 60s\nban_unverified = yes\n");
	struct pkt_spec a = udp_a, neighbour = udp_a, stranger = udp_a;
	struct pkt_spec a6 = {
		.family = 6, .src = "2001:db8:1:2::1", .proto = IPPROTO_UDP, .dport = 9};
	struct fg_ban ban;
	__u64 t;

	neighbour.src = "10.0.0.99";
	stranger.src = "10.0.1.1";
	/* two pass, the third is refused and bans the /24 for 10 s */
	assert_int_equal(xdp_passed(skel, T0, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 1);
	assert_int_equal(ban.expires_ns, T0 + 10 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &neighbour, 5), 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &stranger, 1), 1);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC - 1, &a, 1), 0);
	/* expired: the bucket has refilled; a repeat offence bans for 30 s */
	t = T0 + 10 * SEC;
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 2);
	assert_int_equal(ban.duration_ns, 30 * SEC);
	assert_int_equal(ban.expires_ns, t + 30 * SEC);
	/* and the third for 90 s, capped at ban_max = 60 s */
	t += 30 * SEC;
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 3);
	assert_int_equal(ban.duration_ns, 60 * SEC);
	/* IPv6: the /64 is banned */
	assert_int_equal(xdp_passed(skel, t, &a6, 3), 2);
	ban = ban_of(skel, 6, "2001:db8:1:2::", 64);
	assert_int_equal(ban.expires_ns, t + 10 * SEC);
	a6.src = "2001:db8:1:2::ffff";
	assert_int_equal(xdp_passed(skel, t + SEC, &a6, 3), 0);
	assert_int_equal(global_stats(skel).bans_added, 4);
	assert_int_equal(global_stats(skel).banned, 5 + 1 + 3);
	assert_int_equal(policy_bans(skel), 2); /* the /24 (its third ban) and the /64 */
	release_skel(skel);
}

/* ban_max defaults to the first ban's length: with ban_factor = 3 and no
 * ban_max, a repeat offence is banned for 10 s again, not 30 s. Catches a
 * default of "no cap" (or of the 30-day maximum). */
FG_PROG_TEST(test_ban_max_defaults_to_first_ban)
{
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
					       "rate = 1/s\nburst = 2\naction = ban 10s\n"
					       "ban_factor = 3\nban_unverified = yes\n");
	struct pkt_spec a = udp_a;
	struct fg_ban ban;
	__u64 t = T0 + 10 * SEC;

	assert_int_equal(xdp_passed(skel, T0, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.expires_ns, T0 + 10 * SEC);
	/* expired, refilled, refused again: strike 2, still 10 s */
	assert_int_equal(xdp_passed(skel, t, &a, 3), 2);
	ban = ban_of(skel, 4, "10.0.0.0", 24);
	assert_int_equal(ban.strikes, 2);
	assert_int_equal(ban.duration_ns, 10 * SEC);
	assert_int_equal(ban.expires_ns, t + 10 * SEC);
	release_skel(skel);
}

/* An expired /32 ban must not shadow an active /24: the walk deletes it
 * on its way. */
FG_PROG_TEST(test_expired_ban_does_not_shadow_ban)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 2\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\nban_unverified = yes\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct pkt_spec a = udp_a, neighbour = udp_a,
			a6 = {.family = 6,
			      .src = "2001:db8:1:2::1",
			      .proto = IPPROTO_UDP,
			      .dport = 9};

	neighbour.src = "10.0.0.2";
	/* ban A --for 2s; after it expires, ban A/24 --for 10m */
	put_ban(skel, 4, "10.0.0.1", 32, T0 + 2 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &a, 3), 0);
	put_ban(skel, 4, "10.0.0.0", 24, T0 + 3 * SEC + 600 * SEC);
	assert_int_equal(xdp_passed(skel, T0 + 3 * SEC, &a, 100), 0);
	assert_int_equal(xdp_passed(skel, T0 + 3 * SEC, &neighbour, 100), 0);
	/* the same, three deep, for IPv6: /128 and /64 expired, /48 active */
	put_ban(skel, 6, "2001:db8:1:2::1", 128, T0);
	put_ban(skel, 6, "2001:db8:1:2::", 64, T0);
	put_ban(skel, 6, "2001:db8:1::", 48, ~0ULL);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &a6, 10), 0);
	assert_int_equal(global_stats(skel).banned, 3 + 200 + 10);
	/* the walk deleted the expired bans it met (/32, /128, /64), not the
	 * active ones behind them */
	assert_false(has_ban(skel, 4, "10.0.0.1", 32));
	assert_false(has_ban(skel, 6, "2001:db8:1:2::1", 128));
	assert_false(has_ban(skel, 6, "2001:db8:1:2::", 64));
	assert_int_equal(ban_of(skel, 4, "10.0.0.0", 24).expires_ns, T0 + 603 * SEC);
	assert_int_equal(ban_of(skel, 6, "2001:db8:1::", 48).expires_ns, ~0ULL);
	/* an expired ban with none behind it: deleted, the packet passes */
	put_ban(skel, 4, "10.0.0.0", 24, T0); /* lift the /24 */
	assert_int_equal(xdp_passed(skel, T0 + 4 * SEC, &a, 1), 1);
	assert_false(has_ban(skel, 4, "10.0.0.0", 24));
	release_skel(skel);
}

/* A strike escalates only within its lifetime, and a full trie
 * fails a ban visibly (ban_insert_failed) while the refusal still drops. */
FG_PROG_TEST(test_strike_lifetime_and_full_trie)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 1\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\nban_unverified = yes\n",
			   FG_SKEL_XDP, 0, 2, false);
	struct pkt_spec a = udp_a, b = udp_a, c = udp_a;
	__u64 t = T0;

	b.src = "10.0.0.2";
	c.src = "10.0.0.3";
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 10 * SEC);
	t += 10 * SEC; /* expired: a repeat within the lifetime escalates */
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).strikes, 2);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 30 * SEC);
	t += 30 * SEC + FG_BAN_STRIKE_TTL_NS; /* forgotten: back to the first ban */
	assert_int_equal(xdp_passed(skel, t, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).strikes, 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).duration_ns, 10 * SEC);
	/* the trie holds 2: b's ban fits, c's does not, c is still refused */
	assert_int_equal(xdp_passed(skel, t, &b, 2), 1);
	assert_int_equal(xdp_passed(skel, t, &c, 3), 1);
	assert_int_equal(global_stats(skel).bans_added, 4);
	assert_int_equal(global_stats(skel).ban_insert_failed, 2);
	assert_int_equal(global_stats(skel).banned, 0);
	release_skel(skel);
}

/* A ban that has run out leaves the trie when a packet meets it, and its
 * strike is kept apart: the trie holds only bans, and a repeat offence is
 * still banned ban_factor times longer. */
FG_PROG_TEST(test_expired_ban_leaves_the_trie)
{
	struct floodgate_bpf *skel =
		load_with("[policy b]\nmatch = any\nrate = 1/s\nburst = 1\naction = ban 10s\n"
			  "ban_factor = 3\nban_max = 60s\nban_unverified = yes\n");
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	struct pkt_spec a = udp_a;
	struct fg_ban ban;
	__u64 t = T0 + 10 * SEC;

	inet_pton(AF_INET, "10.0.0.1", key.addr);
	assert_int_equal(xdp_passed(skel, T0, &a, 2), 1);
	assert_int_equal(ban_of(skel, 4, "10.0.0.1", 32).expires_ns, T0 + 10 * SEC);
	assert_int_equal(policy_bans(skel), 1);
	/* expired, then met by a packet: gone from the trie and its count */
	assert_int_equal(xdp_passed(skel, t, &a, 1), 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), -ENOENT);
	assert_int_equal(policy_bans(skel), 0);
	/* the repeat offence escalates all the same */
	assert_int_equal(xdp_passed(skel, t, &a, 1), 0);
	ban = ban_of(skel, 4, "10.0.0.1", 32);
	assert_int_equal(ban.strikes, 2);
	assert_int_equal(ban.duration_ns, 30 * SEC);
	assert_int_equal(ban.expires_ns, t + 30 * SEC);
	assert_int_equal(policy_bans(skel), 1);
	release_skel(skel);
}

/* Policy bans fill their share of a trie of max_bans entries and no more;
 * bans by hand fill the rest. */
static void check_policy_share(__u32 max_bans)
{
	char config[256];
	struct floodgate_bpf *skel;
	struct pkt_spec spoofed = udp_a;
	struct fg_global_stats stats;
	__u32 cap = fg_policy_ban_cap(max_bans), i;
	char src[32];

	snprintf(config, sizeof(config),
		 "max_bans = %u\nnew_sources = off\n[policy b]\nmatch = udp\nrate = 1/s\n"
		 "burst = 1\naction = ban 1h\nban_unverified = yes\n",
		 max_bans);
	skel = load_with(config);
	assert_int_equal(bpf_map__max_entries(skel->maps.bans), max_bans);
	spoofed.src = src;
	for (i = 0; i < max_bans; i++) {
		snprintf(src, sizeof(src), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		assert_int_equal(xdp_passed(skel, T0, &spoofed, 2), 1);
	}
	stats = global_stats(skel);
	assert_int_equal(stats.bans_added, cap);
	assert_int_equal(stats.ban_insert_failed, max_bans - cap);
	assert_int_equal(policy_bans(skel), cap);
	/* bans by hand fill the rest */
	for (i = 0; i < max_bans - cap; i++) {
		snprintf(src, sizeof(src), "192.%u.%u.%u", 168 + (i >> 16), (i >> 8) & 255,
			 i & 255);
		put_ban(skel, 4, src, 32, ~0ULL);
	}
	/* a policy's ban that ends makes room for the next one */
	snprintf(src, sizeof(src), "10.0.0.0");
	assert_int_equal(xdp_passed(skel, T0 + 3600 * SEC, &spoofed, 1), 1);
	assert_int_equal(policy_bans(skel), cap - 1);
	snprintf(src, sizeof(src), "10.%u.0.0", (max_bans >> 16) + 1);
	assert_int_equal(xdp_passed(skel, T0 + 3600 * SEC, &spoofed, 2), 1);
	assert_int_equal(global_stats(skel).bans_added, cap + 1);
	release_skel(skel);
}

/* The default: 4,096 of 65,536 kept for bans by hand. */
FG_PROG_TEST(test_ban_reserve_for_bans_by_hand)
{
	assert_int_equal(fg_policy_ban_cap(FG_DEFAULT_MAX_BANS), 65536 - 4096);
	check_policy_share(FG_DEFAULT_MAX_BANS);
}

/* max_bans = 131072: the trie and both shares follow (8,192 kept). */
FG_PROG_TEST(test_max_bans_sizes_the_trie_and_the_share)
{
	assert_int_equal(fg_policy_ban_cap(131072), 131072 - 8192);
	check_policy_share(131072);
}

/* 100,000 bans from outside the datapath (fg_bans_put, as `floodgate ban`,
 * the fleet and CrowdSec insert them) all hold and are enforced; then
 * policies fill the trie, which refuses the next ones of each kind, and
 * counts them. */
FG_PROG_TEST(test_hundred_thousand_bans_from_outside)
{
	const __u32 max_bans = 131072, outside = 100000;
	struct floodgate_bpf *skel = load_with(
		"max_bans = 131072\nnew_sources = off\n[policy b]\nmatch = udp\nrate = 1/s\n"
		"burst = 1\naction = ban 1h\nban_unverified = yes\n");
	struct fg_ban ban = {.expires_ns = ~0ULL, .strikes = 1, .family = 4, .prefix_len = 32};
	struct fg_cidr cidr = {.family = 4, .prefix_len = 32};
	struct pkt_spec pkt = udp_a;
	struct fg_ban_count count;
	struct fg_pinned pinned;
	struct timespec t0, t1;
	__u32 zero = 0, i;
	char src[32];

	assert_int_equal(fg_pinned_from_object(skel->obj, &pinned), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < outside; i++) {
		__u32 addr = htonl(0xac000000u + i); /* 172.0.0.0 + i */

		memcpy(cidr.addr, &addr, 4);
		assert_int_equal(fg_bans_put(&pinned, &cidr, &ban), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("    %u bans put in %.3f s\n", outside,
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	pkt.src = src;
	for (i = 0; i < outside; i++) {
		snprintf(src, sizeof(src), "172.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		assert_int_equal(xdp_passed(skel, T0, &pkt, 1), 0);
	}
	assert_int_equal(global_stats(skel).banned, outside);
	/* policies take what is left of the trie, within their share */
	for (i = 0; i < max_bans - outside + 10; i++) {
		snprintf(src, sizeof(src), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		assert_int_equal(xdp_passed(skel, T0, &pkt, 2), 1);
	}
	assert_int_equal(global_stats(skel).bans_added, max_bans - outside);
	assert_int_equal(global_stats(skel).ban_insert_failed, 10);
	/* full: the next ban from outside is refused, distinctly, and counted */
	inet_pton(AF_INET, "198.51.100.7", cidr.addr);
	assert_int_equal(fg_bans_put(&pinned, &cidr, &ban), FG_BANS_FULL);
	assert_int_equal(bpf_map_lookup_elem(pinned.ban_count, &zero, &count), 0);
	assert_int_equal(count.outside_refused, 1);
	assert_int_equal(count.policy_bans, max_bans - outside);
	release_skel(skel);
}

/* A fleet ban that ends leaves the trie, not the policies' share: only
 * policies' bans are counted in it. */
FG_PROG_TEST(test_ended_fleet_ban_leaves_the_share_alone)
{
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = udp\nrate = 1/s\nburst = 1\n"
					       "action = ban 1h\nban_unverified = yes\n");
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	struct fg_ban ban = {.expires_ns = T0,
			     .strikes = 1,
			     .policy_id = FG_FLEET_BAN_POLICY_ID,
			     .family = 4,
			     .prefix_len = 32};

	inet_pton(AF_INET, "10.0.0.1", key.addr);
	put_ban_record(skel, &key, &ban);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 1), 1);
	assert_false(has_ban(skel, 4, "10.0.0.1", 32));
	assert_int_equal(policy_bans(skel), 0);
	release_skel(skel);
}

/* Bans CrowdSec (or the fleet) sent are not in the policies' share: one
 * that ends in the datapath leaves `ban_count` as it was, or bans from
 * outside would hand their room to the policies. */
FG_PROG_TEST(test_expired_outside_ban_keeps_policy_count)
{
	struct floodgate_bpf *skel =
		load_with("[policy b]\nmatch = any\nrate = 1/s\nburst = 1\naction = ban 10s\n"
			  "ban_unverified = yes\n");
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	const __u32 outside[] = {FG_CROWDSEC_BAN_ID(FG_CROWDSEC_ORIGIN_CSCLI),
				 FG_CROWDSEC_BAN_ID(FG_CROWDSEC_ORIGIN_OTHER),
				 FG_FLEET_BAN_POLICY_ID};
	struct pkt_spec a = udp_a;
	struct fg_ban ban;
	unsigned int i;

	__u64 t;

	for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		t = T0 + i * 100 * SEC;
		ban = (struct fg_ban){.expires_ns = t + SEC,
				      .policy_id = outside[i],
				      .family = 4,
				      .prefix_len = 32,
				      .strikes = 1};
		inet_pton(AF_INET, "10.0.0.1", key.addr);
		put_ban_record(skel, &key, &ban);
		assert_int_equal(xdp_passed(skel, t, &a, 1), 0);	   /* banned */
		assert_int_equal(xdp_passed(skel, t + 2 * SEC, &a, 1), 1); /* ended */
		assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban),
				 -ENOENT);
		assert_int_equal(policy_bans(skel), 0);
	}
	release_skel(skel);
}
