/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data layout that floodgate-flood (tools/flood/flood.c) shares with its
 * XDP program, tools/flood/flood.bpf.c, which includes this file: the
 * skeleton names these types but does not define them. The Makefile rebuilds
 * the BPF object, its skeleton and the generator when this file changes.
 */
#ifndef FG_FLOOD_H
#define FG_FLOOD_H

#include <linux/types.h>

#define FLOOD_MAX_CPUS	  1024	      /* slots[]: CPUs with a higher id are not used */
#define FLOOD_TMPL_BYTES  80	      /* >= 74, the Ethernet + IPv6 + TCP headers */
#define FLOOD_MAX_SHUFFLE (1U << 24)  /* shuffled or scattered sources (64 MiB map) */
#define FLOOD_MAX_PAYLOAD (1514 - 42) /* the longest frame, less the shortest headers */
/* Bytes after each test_run frame that the program trims off: the change of
 * context that makes test_run rebuild the frame's length (flood.bpf.c). */
#define FLOOD_TRIM_LEN	  8

enum flood_src_mode {
	FLOOD_SRC_SEQ = 0,     /* base + (i mod nsrc) */
	FLOOD_SRC_SHUFFLE = 1, /* base + flood_perm[i mod nsrc] */
	FLOOD_SRC_RANDOM = 2,  /* base | (random & mask), per 32-bit word */
	FLOOD_SRC_SCATTER = 3, /* prefix + flood_perm[i mod nsrc]: distinct offsets */
};

/* One per CPU, in .bss: written by userspace between test_run calls, and by
 * the program during them. */
struct flood_slot {
	__u64 seq;	    /* global sequence number of the next frame */
	__u64 sent;	    /* frames this CPU sent (XDP_TX, or the socket), ever */
	__u32 pos;	    /* seq mod nsrc, kept to avoid a division per frame */
	__u32 repeats_left; /* --repeat: frames still due from the last source */
	__u32 last_src[4];  /* that source, network order (IPv4: [0]) */
	__u64 spare[3];	    /* one cache line per slot */
};

/* The frame's headers (Ethernet, IP, L4), rewritten on every frame. */
union flood_tmpl {
	__u8 b[FLOOD_TMPL_BYTES];
	__u16 h[FLOOD_TMPL_BYTES / 2];
	__u32 w[FLOOD_TMPL_BYTES / 4];
	__u64 d[FLOOD_TMPL_BYTES / 8];
};

/* The checksums' arithmetic, shared by the program and the socket sender:
 * 16-bit one's complement sums of native-order 16-bit loads (flood.bpf.c). */
static inline __attribute__((always_inline)) __u32 flood_halves(__u32 w)
{
	return (w >> 16) + (w & 0xffff);
}

static inline __attribute__((always_inline)) __u16 flood_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

#endif /* FG_FLOOD_H */
