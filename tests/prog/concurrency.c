// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two CPUs, one key: each algorithm admits exactly its limit with time
 * frozen and stays within its bound on the real and coarse clocks; the
 * naive read-modify-write overshoots, which shows these tests can fail.
 * Skipped (cmocka skip, with the reason) on fewer than two CPUs.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"

struct flood_thread {
	int prog_fd;
	int cpu;
	const char *src;
	__u32 repeat, rounds;
	pthread_barrier_t *barrier;
};

static void *flood_one_cpu(void *arg)
{
	struct flood_thread *t = arg;
	struct pkt_spec spec = {.family = 4, .src = t->src, .proto = IPPROTO_UDP, .dport = 9};
	uint8_t buf[1600];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .repeat = t->repeat);
	cpu_set_t set;
	__u32 i;

	opts.data_size_in = build_packet(buf, &spec);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(t->barrier);
	for (i = 0; i < t->rounds; i++)
		bpf_prog_test_run_opts(t->prog_fd, &opts);
	return NULL;
}

/* Floods one key, `src`, from CPUs 0 and 1 at once; returns what policy
 * `policy` admitted and the elapsed CLOCK_MONOTONIC time (the clock
 * bpf_ktime_get_ns reads). */
static __u64 flood_two_cpus_from(struct floodgate_bpf *skel, const char *src, __u32 policy,
				 __u32 repeat, __u32 rounds, __u64 *elapsed_ns)
{
	pthread_barrier_t barrier;
	struct flood_thread t[2];
	pthread_t tid[2];
	struct timespec start, end;
	int i;

	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++) {
		t[i] = (struct flood_thread){.prog_fd = bpf_program__fd(skel->progs.fg_xdp),
					     .cpu = i,
					     .src = src,
					     .repeat = repeat,
					     .rounds = rounds,
					     .barrier = &barrier};
		pthread_create(&tid[i], NULL, flood_one_cpu, &t[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_barrier_wait(&barrier);
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	pthread_barrier_destroy(&barrier);
	if (elapsed_ns)
		*elapsed_ns = (end.tv_sec - start.tv_sec) * SEC + end.tv_nsec - start.tv_nsec;
	return policy_stats(skel, policy).passed_packets;
}

/* Floods 10.0.0.1 through the first policy. */
static __u64 flood_two_cpus(struct floodgate_bpf *skel, __u32 repeat, __u32 rounds,
			    __u64 *elapsed_ns)
{
	return flood_two_cpus_from(skel, "10.0.0.1", 0, repeat, rounds, elapsed_ns);
}

static const char concurrency_config[] = "[policy one]\nmatch = any\nrate = 1000/s\n"
					 "burst = 100000\n";

static void skip_unless_two_cpus(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skip: the two-CPU tests need two online CPUs\n");
		skip();
	}
}

FG_PROG_TEST(test_two_cpus_frozen_clock_exact)
{
	struct floodgate_bpf *skel = load_skel_with(concurrency_config, true, false);
	__u64 passed;

	skip_unless_two_cpus();
	assert_non_null(skel);
	skel->bss->fg_test_now_ns = T0;
	/* 2 x 1M packets against a burst of 100000, time standing still */
	passed = flood_two_cpus(skel, 100000, 10, NULL);
	printf("two CPUs, frozen clock: admitted %llu, limit 100000\n", (unsigned long long)passed);
	assert_int_equal(passed, 100000);
	release_skel(skel);
}

/* Every algorithm under the same two-CPU flood with time standing still
 * admits exactly its limit. */
FG_PROG_TEST(test_two_cpus_every_algorithm_exact)
{
	/* One policy per case, each for a source of its own (src = 10.7.0.N,
	 * policy N-1): one load instead of one per case, which costs seconds
	 * under emulation (`make test-kernels`). */
	static const struct {
		const char *limit_keys;
		__u64 limit;
	} cases[] = {
		{"algorithm = fixed_window\nrate = 100000/s\n", 100000},
		{"algorithm = sliding_window\nrate = 100000/s\n", 100000},
		{"algorithm = sliding_log\nrate = 128/s\n", 128},
		{"algorithm = leaky_bucket\nrate = 1000/s\nburst = 100000\n", 100000},
		{"algorithm = fixed_window\nrate = 4200000B/s\n", 100000},
		{"algorithm = sliding_window\nrate = 4200000B/s\n", 100000},
		{"algorithm = leaky_bucket\nrate = 1000B/s\nburst = 4200000B\n", 100000},
		/* byte mode: the flood's frames are 42 bytes */
		{"rate = 1000B/s\nburst = 4200000B\n", 100000},
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	char config[2048], src[INET_ADDRSTRLEN];
	struct floodgate_bpf *skel;
	size_t i, used = 0;

	skip_unless_two_cpus();
	for (i = 0; i < n; i++)
		used += snprintf(config + used, sizeof(config) - used,
				 "[policy a%zu]\nmatch = any\nsrc = 10.7.0.%zu\n%s", i, i + 1,
				 cases[i].limit_keys);
	assert_true(used < sizeof(config));
	skel = load_with(config);
	skel->bss->fg_test_now_ns = T0;
	for (i = 0; i < n; i++) {
		__u64 passed;

		snprintf(src, sizeof(src), "10.7.0.%zu", i + 1);
		passed = flood_two_cpus_from(skel, src, i, 100000, 10, NULL);
		printf("two CPUs, frozen clock, case %zu: admitted %llu, limit %llu\n", i,
		       (unsigned long long)passed, (unsigned long long)cases[i].limit);
		assert_int_equal(passed, cases[i].limit);
	}
	release_skel(skel);
}

FG_PROG_TEST(test_two_cpus_real_clock_bounded)
{
	struct floodgate_bpf *skel = load_skel_with(concurrency_config, false, false);
	__u64 passed, elapsed, limit;

	skip_unless_two_cpus();
	assert_non_null(skel);
	passed = flood_two_cpus(skel, 100000, 10, &elapsed);
	/* burst + rate x elapsed, +1 for the token that is due at the edge */
	limit = 100000 + elapsed * 1000 / SEC + 1;
	printf("two CPUs, real clock: admitted %llu in %.3f s, limit %llu\n",
	       (unsigned long long)passed, elapsed / 1e9, (unsigned long long)limit);
	assert_true(passed <= limit);
	assert_true(passed >= 100000);
	release_skel(skel);
}

/* clock = coarse reads the time of the last tick: it lags the real clock by
 * less than one tick, so over a flood of `elapsed` the coarse clock advances
 * at most elapsed + one tick, and the bound gains rate x tick. */
FG_PROG_TEST(test_two_cpus_coarse_clock_bounded)
{
	char config[sizeof(concurrency_config) + 32];
	struct floodgate_bpf *skel;
	struct timespec tick;
	__u64 passed, elapsed, tick_ns, limit;

	skip_unless_two_cpus();
	snprintf(config, sizeof(config), "clock = coarse\n%s", concurrency_config);
	skel = load_skel_with(config, false, false);
	assert_non_null(skel);
	assert_true(skel->rodata->fg_coarse_clock);
	assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &tick), 0);
	tick_ns = tick.tv_sec * SEC + tick.tv_nsec;
	passed = flood_two_cpus(skel, 100000, 10, &elapsed);
	limit = 100000 + (elapsed + tick_ns) * 1000 / SEC + 1;
	printf("two CPUs, coarse clock (tick %.1f ms): admitted %llu in %.3f s, limit %llu\n",
	       tick_ns / 1e6, (unsigned long long)passed, elapsed / 1e9, (unsigned long long)limit);
	assert_true(passed <= limit);
	assert_true(passed >= 100000);
	release_skel(skel);
}

/* The same flood against the deliberately naive read-modify-write must
 * overshoot: this is what shows the exactness tests can fail. It covers the
 * lock-free word (token_bucket, CAS) and a lock-striped algorithm
 * (sliding_window): with fg_lock_for returning NULL, the locked algorithms
 * would run this unlocked path and overshoot the same way. */
FG_PROG_TEST(test_two_cpus_naive_update_overshoots)
{
	static const char *const configs[] = {
		concurrency_config,
		"[policy a]\nmatch = any\nalgorithm = sliding_window\nrate = 100000/s\n",
	};
	size_t c;

	skip_unless_two_cpus();
	for (c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		__u64 passed = 0;
		int attempt;

		for (attempt = 0; attempt < 5 && passed <= 100000; attempt++) {
			struct floodgate_bpf *skel = load_skel_with(configs[c], true, true);

			assert_non_null(skel);
			skel->bss->fg_test_now_ns = T0;
			passed = flood_two_cpus(skel, 100000, 10, NULL);
			release_skel(skel);
		}
		printf("two CPUs, naive update, case %zu: admitted %llu, limit 100000\n", c,
		       (unsigned long long)passed);
		assert_true(passed > 100000);
	}
}
