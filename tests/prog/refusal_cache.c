// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-CPU refusal cache: hot refusals skip the state lookup, and the
 * cache never refuses what the state would admit.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "fg_bench_source.h"
#include "fixtures.h"

/* A source this CPU has just refused is refused again from the `refusals`
 * cache, without the sources4 lookup, except the one refusal in 64 that
 * the drop count samples. The cache never refuses what the state would
 * admit: the bucket refills on time, an admission leaves the cached TAT
 * behind, and a reload's looser policy applies at once. (A new generation after a
 * reclaim: test_reload_reclaims_state.) */
FG_PROG_TEST(test_refusal_cache)
{
	struct floodgate_bpf *skel = load_with("[policy p]\nmatch = udp\nrate = 10/s\nburst = 2\n");
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_source4_key key4;
	struct fg_source_state source;
	cpu_set_t all;
	__u64 cached, sampled;

	/* one CPU: the cache is per CPU */
	all = stay_on_cpu0();
	key.policy_id = fg_policy_id_of(skel, "p");
	inet_pton(AF_INET, udp_a.src, key.addr);
	key4 = fg_source4_key_of(&key);

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1000), 0);
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.sources4), &key4, &source), 0);
	sampled = (source.dropped & FG_DROPPED_COUNT) / 64;
	printf("1000 refusals of a hot source: %llu from the cache, %llu sampled\n",
	       (unsigned long long)cached, (unsigned long long)sampled);
	/* the first refusal fills the cache, each sampled one goes to the
	 * state (and may be the first): 1 in 64, 15.6 expected */
	assert_in_range(cached + sampled, 999, 1000);
	assert_in_range(sampled, 2, 40);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 1000);
	/* a refusal from the cache is counted as the layer's call counts one
	 * (fg_cached_refusal): the frame is 14 + 20 + 8 bytes */
	assert_int_equal(policy_stats(skel, 0).matched_packets, 1002);
	assert_int_equal(policy_stats(skel, 0).matched_bytes, 1002 * 42);
	assert_int_equal(policy_stats(skel, 0).dropped_bytes, 1000 * 42);

	/* TAT = T0 + 200 ms, tau = 200 ms: one token at T0 + 100 ms, not 1 ns before */
	assert_int_equal(xdp_at(skel, T0 + 100 * MS - 1, &udp_a), XDP_DROP);
	assert_int_equal(xdp_at(skel, T0 + 100 * MS, &udp_a), XDP_PASS);
	/* the admission left the cached TAT behind, refusing nothing now: this
	 * refusal goes to the state, and refills the cache */
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(xdp_at(skel, T0 + 100 * MS, &udp_a), XDP_DROP);
	assert_int_equal(skel->bss->fg_test_cached_refusals, cached);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 100), 0);
	assert_true(skel->bss->fg_test_cached_refusals > cached);

	/* a reload to burst 1000 at the same instant: admitted at once */
	assert_int_equal(push_config(skel, "[policy p]\nmatch = udp\nrate = 10/s\nburst = 1000\n"),
			 0);
	assert_int_equal(xdp_passed(skel, T0 + 100 * MS, &udp_a, 10), 10);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* An entry serves for at most FG_REFUSAL_REFRESH_NS after it was written:
 * the refusal after that goes to the state, which marks the source's entry
 * used (its LRU recency, its drop count) and writes the entry again. Its
 * time is kept in 1,024-ns ticks, modulo 2^32 (include/floodgate_state.h). */
FG_PROG_TEST(test_refusal_cache_refreshes)
{
	struct floodgate_bpf *skel = load_with("[policy p]\nmatch = udp\nrate = 1/min\n");
	const __u64 stale = T0 + FG_REFUSAL_REFRESH_NS + 1024;
	cpu_set_t all;
	__u64 cached;

	all = stay_on_cpu0();
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1), 1);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 100), 0);
	assert_true(skel->bss->fg_test_cached_refusals >= 90);

	/* past the refresh: the first refusal goes to the state */
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(xdp_at(skel, stale, &udp_a), XDP_DROP);
	assert_int_equal(skel->bss->fg_test_cached_refusals, cached);
	/* and the entry it wrote serves again, half a refresh later */
	assert_int_equal(xdp_passed(skel, stale + FG_REFUSAL_REFRESH_NS / 2, &udp_a, 8), 0);
	assert_true(skel->bss->fg_test_cached_refusals >= cached + 6);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* A source whose next token is nearer than the coarse clock's lag (a
 * limit of thousands a second, as the built-in policy's) cannot be
 * refused at the latest time the packet can have: the cache refuses it on
 * the precise clock instead, still without the state's lookup, and admits
 * at the token's instant, not a nanosecond before. Judged on the coarse
 * bound alone, every such refusal went to the state. */
FG_PROG_TEST(test_refusal_cache_near_limit_on_precise_clock)
{
	struct floodgate_bpf *skel =
		load_with("[policy p]\nmatch = udp\nrate = 1000/s\nburst = 1\n");
	const __u64 t = T0 + 10 * MS;
	cpu_set_t all = stay_on_cpu0();
	__u64 cached;

	/* the coarse reading is exact (no test lag), so the latest time is
	 * the packet's plus the loader's lag: past the next token, 1 ms on */
	assert_true(skel->rodata->fg_coarse_lag_ns > MS);
	assert_int_equal(skel->bss->fg_test_coarse_lag_ns, 0);
	assert_int_equal(xdp_at(skel, t, &udp_a), XDP_PASS);
	assert_int_equal(xdp_at(skel, t, &udp_a), XDP_DROP); /* by the state: fills the cache */
	cached = skel->bss->fg_test_cached_refusals;
	assert_int_equal(xdp_passed(skel, t + MS / 2, &udp_a, 100), 0);
	/* all but the one refusal in 64 the drop count samples */
	assert_true(skel->bss->fg_test_cached_refusals - cached >= 90);
	assert_int_equal(xdp_at(skel, t + MS - 1, &udp_a), XDP_DROP);
	assert_int_equal(xdp_at(skel, t + MS, &udp_a), XDP_PASS);
	assert_int_equal(policy_stats(skel, 0).dropped_packets, 102);
	assert_int_equal(policy_stats(skel, 0).passed_packets, 2);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* The walk asks the cache for the first layer before its call
 * (fg_cached_refusal), and the call's charge does not ask again after a
 * miss: a later layer's charge still asks for its own refusals. Here the
 * first layer admits everything and the second refuses a hot source. */
FG_PROG_TEST(test_refusal_cache_serves_a_later_layer)
{
	struct floodgate_bpf *skel = load_with("[policy wide]\nmatch = udp\nrate = 1000000/s\n"
					       "[policy p]\nmatch = udp\nrate = 10/s\nburst = 2\n");
	cpu_set_t all = stay_on_cpu0();

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 2), 2);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 1000), 0);
	/* all but the first refusal and those the drop count samples */
	assert_true(skel->bss->fg_test_cached_refusals >= 900);
	assert_int_equal(policy_stats(skel, 0).passed_packets, 1002);
	assert_int_equal(policy_stats(skel, 1).dropped_packets, 1000);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* The layout docs/bpftool.md gives `refusals`: FG_REFUSAL_SETS sets of
 * FG_REFUSAL_WAYS entries for each possible CPU, CPU n's from n ×
 * FG_REFUSAL_SETS, in a map that can be mapped, which is what starts its
 * values at a page (bpf/fg_maps.h: a 64-byte set is then one cache line).
 * A source CPU 0 refused is in CPU 0's part, once. */
FG_PROG_TEST(test_refusal_cache_layout)
{
	struct floodgate_bpf *skel = load_with("[policy p]\nmatch = udp\nrate = 1/min\n");
	struct fg_source_key key = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	__u32 sets = bpf_map__max_entries(skel->maps.refusals), i, way, found = 0, at = 0;
	size_t bytes = (size_t)sets * sizeof(struct fg_refusal_set);
	struct fg_source4_key key4;
	struct fg_refusal_set *part;
	cpu_set_t all;

	assert_int_equal(bpf_map__value_size(skel->maps.refusals), sizeof(struct fg_refusal_set));
	assert_int_equal(sizeof(struct fg_refusal_set),
			 FG_REFUSAL_WAYS * sizeof(struct fg_refusal));
	assert_int_equal(sets, (__u32)libbpf_num_possible_cpus() << FG_REFUSAL_SET_BITS);
	all = stay_on_cpu0();
	key.policy_id = fg_policy_id_of(skel, "p");
	inet_pton(AF_INET, udp_a.src, key.addr);
	key4 = fg_source4_key_of(&key);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 3), 1);

	part = mmap(NULL, bytes, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.refusals), 0);
	assert_true(part != MAP_FAILED);
	for (i = 0; i < sets; i++)
		for (way = 0; way < FG_REFUSAL_WAYS; way++)
			if (!memcmp(&part[i].way[way].key, &key4, sizeof(key4))) {
				found++;
				at = i;
			}
	assert_int_equal(found, 1);
	assert_true(at < FG_REFUSAL_SETS);
	munmap(part, bytes);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}

/* A thousand abusers scattered over the internet are refused from the
 * cache, but for those whose sets hold more than two. The cache is
 * two-way: FG_REFUSAL_SETS sets of two entries a CPU. 1,000 sources
 * scattered over 10.0.0.0/8 (the benchmark's set) are refused round-robin,
 * and the third round counted: a source shares its set with Poisson(999 /
 * 2048) others, at most one of them with a chance of e^(-0.488) × 1.488 =
 * 91%; in a set of three the source in the first way keeps it and the
 * other two evict each other at each refusal, which then looks its state
 * up; and 1 refusal in 64 goes to the state (sampled). So about 900 come
 * from the cache (930 for this set). Direct-mapped (the second way never
 * written) the same 4,096 entries gave 738: a source alone in its entry
 * with a chance of e^(-999/4096) = 78%; writing only the first way, 577.
 * The bound fails both. */
FG_PROG_TEST(test_refusal_cache_holds_scattered_sources)
{
	struct floodgate_bpf *skel =
		load_with("new_sources = off\n[policy p]\nmatch = udp\nrate = 1/min\n");
	struct pkt_spec spec = udp_a;
	char addr[INET_ADDRSTRLEN];
	__u32 i, round, saddr;
	__u64 cached = 0;
	cpu_set_t all;

	all = stay_on_cpu0();
	for (round = 0; round < 3; round++) {
		cached = skel->bss->fg_test_cached_refusals;
		for (i = 0; i < 1000; i++) {
			saddr = htonl(fg_bench_source(i, 1023 | FG_BENCH_SCATTERED));
			inet_ntop(AF_INET, &saddr, addr, sizeof(addr));
			spec.src = addr;
			/* the first round admits each source's burst of 1 */
			assert_int_equal(xdp_at(skel, T0, &spec), round ? XDP_DROP : XDP_PASS);
		}
		cached = skel->bss->fg_test_cached_refusals - cached;
	}
	printf("1,000 scattered sources refused round-robin: %llu refusals from the cache\n",
	       (unsigned long long)cached);
	assert_in_range(cached, 850, 1000);
	sched_setaffinity(0, sizeof(all), &all);
	release_skel(skel);
}
