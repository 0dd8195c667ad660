/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bit tricks shared by the datapath and the tests. */
#ifndef FG_BITS_H
#define FG_BITS_H

#include <linux/types.h>

/*
 * Index of the lowest set bit of a non-zero mask, by de Bruijn
 * multiplication. BPF has no ctz instruction (clang 14 crashes lowering
 * __builtin_ctzll), and a bisecting if-chain would give the verifier 64
 * paths to walk through everything that follows; this is one path.
 */
static const __u8 fg_debruijn_index[64] = {
	0,  1,	48, 2,	57, 49, 28, 3,	61, 58, 50, 42, 38, 29, 17, 4,	62, 55, 59, 36, 53, 51,
	43, 22, 45, 39, 33, 30, 24, 18, 12, 5,	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
	44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,	7,  6,
};

static inline __u32 fg_lowest_bit(__u64 mask)
{
	return fg_debruijn_index[((mask & -mask) * 0x03f79d71b4cb0a89ULL) >> 58];
}

#endif /* FG_BITS_H */
