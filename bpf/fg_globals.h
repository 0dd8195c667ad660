/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The datapath's global variables: load-time settings in .rodata, which
 * the loader sets between open and load (user/maps/skeleton.c), and the
 * tests' and benchmark's hooks in .bss. Part of bpf/floodgate.bpf.c, the
 * one file that includes it.
 */
#ifndef FG_GLOBALS_H
#define FG_GLOBALS_H

/* Load-time settings (rodata), set by the loader between open and load. */
const volatile bool fg_test_clock = false;	  /* use fg_test_now_ns, tests only */
const volatile bool fg_test_naive_update = false; /* racy read-modify-write, tests only */
/* Fault injection, tests only: every insert into a state table fails as if
 * the kernel could not allocate an entry, so on_insert_failure is tested. */
const volatile bool fg_test_fail_inserts = false;

/* clock = coarse: bpf_ktime_get_coarse_ns() (Linux >= 5.11), one tick of
 * resolution for a cheaper read. */
const volatile bool fg_coarse_clock = false;

/* How far the datapath's reading of the coarse clock may lag
 * bpf_ktime_get_ns() (set by the loader, user/maps/skeleton.c,
 * fg_coarse_reading_lag_ns): a GCRA refusal that holds that much later
 * than the coarse reading needs no precise read (bpf/fg_clock.h). 0 turns
 * the shortcut off. */
const volatile __u64 fg_coarse_lag_ns = 0;

/* The key of a one-entry map's entry, in rodata: a lookup whose key is on
 * the stack costs its frame the key's slot, and fg_apply_layer's frame has
 * none to spare (6.1 rounds it up to 32 bytes: tests/prog/programs.c,
 * test_verifier_instruction_counts). */
const volatile __u32 fg_first_entry = 0;
#define FG_FIRST_ENTRY ((const void *)&fg_first_entry)

/* sources4's entries >> FG_REFUSAL_CHURN_SHIFT: how many entries this CPU
 * may create before its `refusals` entries stop serving; 0 (a table of
 * fewer than 256 entries) turns the cache off. */
const volatile __u32 fg_refusal_churn_limit = 0;

/* fg_policy_ban_cap() of the size of `bans` (max_bans): the policies'
 * share of the trie. Read only where a policy's ban is being added. */
const volatile __u32 fg_max_policy_bans = 0;

/* [synproxy], compiled by the loader (user/policy/synproxy.c); off
 * (enabled 0) without the section, and the verifier prunes the hand-off. */
const volatile struct fg_synproxy_params fg_synproxy = {};

/* Benchmarks only: rewrite the IPv4 source of every packet to the
 * sequence's key of the set fg_bench_source_mask names, or to a random
 * address in 10.0.0.0/8 (include/fg_bench_source.h), so
 * BPF_PROG_TEST_RUN with repeat can measure many keys. 0 in every real
 * load; the verifier prunes it. */
const volatile __u32 fg_bench_source_mask = 0;
__u32 fg_bench_seq = 0;

/* The injected clock; only read when fg_test_clock is set, so a production
 * load never reaches it and the verifier prunes the branch. */
__u64 fg_test_now_ns = 0;
/* Reads of the injected clock, so a test can check when a packet reads the
 * clock; counted only under fg_test_clock, like the read itself. */
__u64 fg_test_clock_reads = 0;
/* How far the injected coarse clock lags fg_test_now_ns (bpf/fg_clock.h):
 * 0, or up to fg_coarse_lag_ns to emulate the coarse clock's worst case. */
__u64 fg_test_coarse_lag_ns = 0;
/* Refusals answered from the `refusals` cache, counted under fg_test_clock
 * only, so a test can check that the cache serves. */
__u64 fg_test_cached_refusals = 0;
/* IPv4 packets refused past the new-source budget without the tables'
 * lookups, the presence filter having no note of their key; under
 * fg_test_clock only. */
__u64 fg_test_presence_refusals = 0;
/* Packets of proxied ports passed as known connections from the
 * synproxy_flows cache, without a conntrack lookup; under fg_test_clock
 * only. */
__u64 fg_test_known_flows = 0;

/* `floodgate replay` only: a captured frame's length on the wire, which is
 * what byte costs and byte counters use when the capture kept fewer bytes
 * (snaplen). Read only under fg_test_clock; 0 = the frame's own length. */
__u64 fg_test_wire_len = 0;

#endif /* FG_GLOBALS_H */
