// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime record's bans_may_exist: the datapath skips the `bans` trie
 * until something may have put a ban in it. Each test starts from a fresh
 * load (the flag clear), puts a ban by one path, and sends a packet from
 * the banned source: a path that forgot the flag lets it through.
 */
#include <arpa/inet.h>
#include <string.h>

#include "fixtures.h"
#include "maps/pinned.h"
#include "maps/runtime.h"
#include "ops/bans.h"

/* A config under which the banned source's packets pass unless banned. */
#define OPEN_CONFIG "[policy open]\nmatch = udp\nrate = 1000/s\nburst = 1000\n"

static __u32 bans_may_exist(struct floodgate_bpf *skel)
{
	struct fg_runtime rt;
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.runtime), &zero, &rt), 0);
	return rt.bans_may_exist;
}

/* A ban of udp_a's source (10.0.0.1/32) written straight into the trie, as
 * the ban state's restore, the upgrade's copy or bpftool write it. */
static void write_raw_ban(struct floodgate_bpf *skel)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + 32, .family = 4};
	struct fg_ban ban = {.expires_ns = ~0ULL, .strikes = 1, .family = 4, .prefix_len = 32};

	inet_pton(AF_INET, "10.0.0.1", key.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.bans), &key, &ban, BPF_ANY), 0);
}

FG_PROG_TEST(test_ban_flag_clear_until_a_ban)
{
	struct floodgate_bpf *skel = load_with(OPEN_CONFIG);

	assert_int_equal(bans_may_exist(skel), 0);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1), 1);
	/* a write that skips the flag is not seen: the contract of the flag */
	write_raw_ban(skel);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1), 1);
	assert_int_equal(global_stats(skel).banned, 0);
	release_skel(skel);
}

/* `floodgate ban`, the fleet and (through the same flag) CrowdSec. */
FG_PROG_TEST(test_ban_flag_set_by_fg_bans_put)
{
	struct floodgate_bpf *skel = load_with(OPEN_CONFIG);
	struct fg_ban ban = {.expires_ns = ~0ULL, .strikes = 1, .family = 4, .prefix_len = 32};
	struct fg_cidr cidr = {.family = 4, .prefix_len = 32};
	struct fg_pinned pinned;

	assert_int_equal(fg_pinned_from_object(skel->obj, &pinned), 0);
	inet_pton(AF_INET, "10.0.0.1", cidr.addr);
	assert_int_equal(fg_bans_put(&pinned, &cidr, &ban), 0);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1), 0);
	assert_int_equal(global_stats(skel).banned, 1);
	release_skel(skel);
}

/* A load's restored or carried bans, a reload, and bans written by hand:
 * fg_runtime_mark_bans_if_any after the write. */
FG_PROG_TEST(test_ban_flag_set_when_the_trie_holds_bans)
{
	struct floodgate_bpf *skel = load_with(OPEN_CONFIG);
	int runtime = bpf_map__fd(skel->maps.runtime), bans = bpf_map__fd(skel->maps.bans);

	assert_int_equal(fg_runtime_mark_bans_if_any(runtime, bans), 0);
	assert_int_equal(bans_may_exist(skel), 0); /* an empty trie leaves it clear */
	write_raw_ban(skel);
	assert_int_equal(fg_runtime_mark_bans_if_any(runtime, bans), 0);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1), 0);
	assert_int_equal(global_stats(skel).banned, 1);
	release_skel(skel);
}

/* The datapath's own ban (action = ban): the source's next packet, which
 * the rate would admit, is dropped by the ban. */
FG_PROG_TEST(test_ban_flag_set_by_a_policy_ban)
{
	struct floodgate_bpf *skel =
		load_with("[policy b]\nmatch = udp\nrate = 1/s\nburst = 1\naction = ban 1h\n"
			  "ban_unverified = yes\n");

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 1);
	assert_int_equal(global_stats(skel).bans_added, 1);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &udp_a, 1), 0);
	assert_int_equal(global_stats(skel).banned, 1);
	release_skel(skel);
}
