// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scopes beyond the interface: scope = fleet (counts per epoch, holds,
 * refuse_all) and scope = host (one bucket shared by two programs).
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "fixtures.h"

/* Sums the per-CPU fleet_counts of `epoch`; *entries is how many keys. */
static struct fg_fleet_count fleet_counted(struct floodgate_bpf *skel, __u32 epoch, int *entries)
{
	int fd = bpf_map__fd(skel->maps.fleet_counts), ncpus = libbpf_num_possible_cpus(), cpu;
	struct fg_fleet_count total = {0}, *values = calloc(ncpus, sizeof(*values));
	struct fg_fleet_key key, *prev = NULL;

	assert_non_null(values);
	*entries = 0;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (key.epoch != epoch)
			continue;
		(*entries)++;
		assert_int_equal(bpf_map_lookup_elem(fd, &key, values), 0);
		for (cpu = 0; cpu < ncpus; cpu++) {
			total.packets += values[cpu].packets;
			total.bytes += values[cpu].bytes;
		}
	}
	free(values);
	return total;
}

static void set_fleet_state(struct floodgate_bpf *skel, __u32 epoch, __u32 refuse_all)
{
	struct fg_fleet_state st = {.epoch = epoch, .refuse_all = refuse_all};
	__u32 zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_state), &zero, &st, 0),
			 0);
}

/* Fleet-scoped admissions are counted per epoch, and only theirs; a hold
 * refuses its key until it ends; refuse_all (on_redis_down = closed while
 * Redis is down) refuses every fleet-scoped key and nothing else. */
FG_PROG_TEST(test_fleet_counts_and_holds)
{
	struct floodgate_bpf *skel = load_with("[policy f]\nmatch = udp\nrate = 10/s\nburst = 5\n"
					       "scope = fleet\n"
					       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n"
					       "[fleet]\nredis = 127.0.0.1:6379\n");
	struct pkt_spec tcp_a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	uint8_t buf[1600];
	size_t len = build_packet(buf, &udp_a);
	struct fg_source_key held = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_fleet_hold hold = {.until_ns = T0 + 2 * SEC};
	struct fg_fleet_count c;
	int entries;

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 8), 5);
	assert_int_equal(xdp_passed(skel, T0, &tcp_a, 8), 5);
	c = fleet_counted(skel, 0, &entries);
	assert_int_equal(entries, 1); /* the local policy counts nothing */
	assert_int_equal(c.packets, 5);
	assert_int_equal(c.bytes, 5 * len);

	/* A new epoch: the old counts stay for the daemon, new ones go apart. */
	set_fleet_state(skel, 1, 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 3), 1);
	assert_int_equal(fleet_counted(skel, 0, &entries).packets, 5);
	assert_int_equal(fleet_counted(skel, 1, &entries).packets, 1);

	/* Held until T0 + 2 s: refused (and counted as such), then admitted. */
	held.policy_id = fg_policy_id_of(skel, "f");
	inet_pton(AF_INET, "10.0.0.1", held.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_holds), &held, &hold, 0),
			 0);
	assert_int_equal(xdp_passed(skel, T0 + SEC, &udp_a, 4), 0);
	assert_int_equal(global_stats(skel).fleet_held, 4);
	assert_int_equal(fleet_counted(skel, 1, &entries).packets, 1);
	assert_int_equal(xdp_passed(skel, T0 + 2 * SEC, &udp_a, 8), 5);

	/* Fail closed: fleet keys refused, the local policy untouched. */
	set_fleet_state(skel, 1, 1);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(skel, T0 + 10 * SEC, &tcp_a, 3), 3);
	assert_int_equal(global_stats(skel).fleet_held, 7);
	release_skel(skel);
}

/* A fleet hold on a policy's overflow key ("overflow" in Redis, the key of
 * the new sources past the budget on every host) refuses what would be
 * charged to it, without charging it: the hold is checked on the key
 * charged, not only on the packet's own source (issue 24, item 6). */
FG_PROG_TEST(test_fleet_holds_the_overflow_key)
{
	struct pkt_spec spoofed = udp_a;
	struct fg_source_key overflow = {.family = FG_FAMILY_OVERFLOW};
	struct fg_fleet_hold hold = {.until_ns = T0 + 100 * MS};
	int ncpus = fg_online_cpus(), i, passed = 0;
	struct floodgate_bpf *skel;
	char addr[32], config[256];
	cpu_set_t all;
	/* This CPU's budget: a burst of 2, of which a source seen once may
	 * spend the upper half (see test_new_source_budget). */
	const int own = 2 / 2;

	snprintf(config, sizeof(config),
		 "new_sources = %d/s\nnew_sources_burst = %d\n"
		 "[policy f]\nmatch = udp\nrate = 10/s\nburst = 5\nscope = fleet\n"
		 "[fleet]\nredis = 127.0.0.1:6379\n",
		 1000 * ncpus, 2 * ncpus);
	skel = load_with(config);
	all = stay_on_cpu0();
	overflow.policy_id = fg_policy_id_of(skel, "f");
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_holds), &overflow, &hold, 0), 0);
	spoofed.src = addr;
	for (i = 0; i < 10; i++) {
		snprintf(addr, sizeof(addr), "10.7.0.%d", i + 1);
		passed += xdp_passed(skel, T0, &spoofed, 1);
	}
	/* Only the sources within the budget pass; the overflow is held. */
	assert_int_equal(global_stats(skel).budget_overflow, 10 - own);
	assert_int_equal(passed, own);
	assert_int_equal(global_stats(skel).fleet_held, 10 - own);
	/* The hold has ended: the overflow bucket was not charged while it
	 * held (a full burst of 5, where 100 ms refill one token). */
	passed = 0;
	for (i = 0; i < 10; i++) {
		snprintf(addr, sizeof(addr), "10.7.1.%d", i + 1);
		passed += xdp_passed(skel, T0 + 100 * MS, &spoofed, 1);
	}
	assert_int_equal(passed, own + 5);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* scope = host: two programs (two interfaces) whose host_sources is one map,
 * as the loader shares it, charge one source to one bucket, whichever
 * interface its packets come through; the policy's place in each file
 * differs, its name (hence its id) does not. A local policy keeps a bucket
 * per program, in each one's own `sources`. */
FG_PROG_TEST(test_host_scope_shares_one_bucket)
{
	static const char config_a[] = "[policy h]\nmatch = udp\nrate = 10/s\nburst = 5\n"
				       "scope = host\n"
				       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n";
	static const char config_b[] = "[policy icmp]\nmatch = icmp\nrate = 1/s\n"
				       "[policy l]\nmatch = tcp\nrate = 10/s\nburst = 5\n"
				       "[policy h]\nmatch = udp\nrate = 10/s\nburst = 5\n"
				       "scope = host\n";
	struct floodgate_bpf *a = load_with(config_a), *b = NULL;
	struct fg_skel_opts opts = {.progs = FG_SKEL_XDP, .test_clock = true};
	struct pkt_spec tcp_a = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 22};
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_source4_key key4;
	struct fg_source_state st;

	opts.host_fd = bpf_map__fd(a->maps.host_sources);
	assert_int_equal(fg_skel_prepare_text(config_b, &opts, &b), 0);
	assert_int_equal(fg_policy_id_of(a, "h"), fg_policy_id_of(b, "h"));

	/* burst 5 over both: 3 through a, then only 2 through b */
	assert_int_equal(xdp_passed(a, T0, &udp_a, 3), 3);
	assert_int_equal(xdp_passed(b, T0, &udp_a, 8), 2);
	assert_int_equal(xdp_passed(a, T0, &udp_a, 4), 0);
	/* 10/s: one token per 100 ms, to whichever interface takes it first */
	assert_int_equal(xdp_passed(b, T0 + 100 * MS, &udp_a, 3), 1);
	assert_int_equal(xdp_passed(a, T0 + 100 * MS, &udp_a, 3), 0);
	assert_int_equal(xdp_passed(a, T0 + 200 * MS, &udp_a, 3), 1);
	assert_int_equal(xdp_passed(b, T0 + 200 * MS, &udp_a, 3), 0);
	/* idle: refilled to one burst for both together, never one each */
	assert_int_equal(xdp_passed(a, T0 + 10 * SEC, &udp_a, 4) +
				 xdp_passed(b, T0 + 10 * SEC, &udp_a, 4),
			 5);

	/* the local policy: one bucket per program */
	assert_int_equal(xdp_passed(a, T0, &tcp_a, 8), 5);
	assert_int_equal(xdp_passed(b, T0, &tcp_a, 8), 5);

	/* the host key is in the shared map (24-byte keys for every family),
	 * in neither program's sources4 */
	key.policy_id = fg_policy_id_of(a, "h");
	inet_pton(AF_INET, "10.0.0.1", key.addr);
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(b->maps.host_sources), &key, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.sources4), &key4, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(b->maps.sources4), &key4, &st), 0);
	key.policy_id = fg_policy_id_of(a, "l");
	key4 = fg_source4_key_of(&key);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.sources4), &key4, &st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(bpf_map__fd(a->maps.host_sources), &key, &st), 0);
	release_skel(b);
	release_skel(a);
}
