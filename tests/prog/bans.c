// SPDX-License-Identifier: GPL-2.0-only
/*
 * action = ban: escalation by ban_factor up to ban_max (by default the
 * first ban's length), strike records and their lifetime, expired records
 * that must not shadow an active ban, and a full ban trie.
 */
#include <arpa/inet.h>
#include <errno.h>

#include "fixtures.h"

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
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
					       "rate = 1/s\nburst = 2\naction = ban 10s\n"
					       "ban_factor = 3\nban_max = 60s\n");
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
	floodgate_bpf__destroy(skel);
}

/* ban_max defaults to the first ban's length: with ban_factor = 3 and no
 * ban_max, a repeat offence is banned for 10 s again, not 30 s. Catches a
 * default of "no cap" (or of the 30-day maximum). */
FG_PROG_TEST(test_ban_max_defaults_to_first_ban)
{
	struct floodgate_bpf *skel = load_with("[policy b]\nmatch = any\nper = src/24 src/64\n"
					       "rate = 1/s\nburst = 2\naction = ban 10s\n"
					       "ban_factor = 3\n");
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
	floodgate_bpf__destroy(skel);
}

/* An expired /32 record, kept to escalate, must not shadow an active /24. */
FG_PROG_TEST(test_expired_strike_does_not_shadow_ban)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 2\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\n",
			   FG_SKEL_XDP, 0, 0, false);
	struct pkt_spec a = udp_a, neighbour = udp_a,
			a6 = {.family = 6,
			      .src = "2001:db8:1:2::1",
			      .proto = IPPROTO_UDP,
			      .dport = 9};
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	struct fg_ban ban;
	__u64 forget = T0 + 2 * SEC + FG_BAN_STRIKE_TTL_NS;

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
	/* the expired /32 still escalates until its lifetime ends... */
	inet_pton(AF_INET, "10.0.0.1", key.addr);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	/* ...and the first packet that meets it after that deletes it */
	put_ban(skel, 4, "10.0.0.0", 24, T0); /* lift the /24 */
	assert_int_equal(xdp_passed(skel, forget - 1, &a, 1), 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), 0);
	assert_int_equal(xdp_passed(skel, forget, &a, 1), 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban), -ENOENT);
	floodgate_bpf__destroy(skel);
}

/* A strike record escalates only within its lifetime, and a full trie
 * fails a ban visibly (ban_insert_failed) while the refusal still drops. */
FG_PROG_TEST(test_strike_lifetime_and_full_trie)
{
	struct floodgate_bpf *skel =
		load_sized("[policy b]\nmatch = any\nrate = 1/s\nburst = 1\naction = ban 10s\n"
			   "ban_factor = 3\nban_max = 60s\n",
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
	floodgate_bpf__destroy(skel);
}
