/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The sources build/bench_prog times under BPF_PROG_TEST_RUN, whose repeat
 * sends one packet again and again: the program itself rewrites each
 * packet's IPv4 source, from a sequence number, by the same rule in
 * floodgate (bpf/fg_parse.h) and in the simplest limiter
 * (tests/bench/simplest.bpf.c). Only benchmark loads set a mask.
 */
#ifndef FG_BENCH_SOURCE_H
#define FG_BENCH_SOURCE_H

#include <linux/types.h>

/* Or'd into a mask of 2^k - 1 keys: the same number of keys, scattered
 * over 10.0.0.0/8 as abusers' addresses are over the internet, instead of
 * consecutive. A multiplicative hash spreads consecutive addresses evenly,
 * so they never share a slot of a direct-mapped table; scattered ones do,
 * as many as chance says. */
#define FG_BENCH_SCATTERED (1U << 31)
/* The mask for a random source in 10.0.0.0/8 for every packet. */
#define FG_BENCH_RANDOM	   (~0U)

/* Source `seq` of the set `mask` names (not FG_BENCH_RANDOM), host order:
 * 10.0.0.0 + the key's index, or its index through MurmurHash3's 32-bit
 * finalizer. */
static inline __u32 fg_bench_source(__u32 seq, __u32 mask)
{
	__u32 index = seq & mask & 0xffffff;

	if (mask & FG_BENCH_SCATTERED) {
		index ^= index >> 16;
		index *= 0x85ebca6b;
		index ^= index >> 13;
		index *= 0xc2b2ae35;
		index ^= index >> 16;
	}
	return 0x0a000000 | (index & 0xffffff);
}

#endif /* FG_BENCH_SOURCE_H */
