// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate-flood: the traffic generator's XDP program.
 *
 * tools/flood/flood.c runs it with BPF_PROG_TEST_RUN in live-frames mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES), ingress_ifindex = the sending device: each
 * repeat is one frame, and XDP_TX sends it out of that device (for a veth,
 * into its peer).
 *
 * It is also attached to the sending device in generic (skb) mode for the
 * length of the run, only so that it stays in the kernel's XDP dispatcher:
 * otherwise every test_run call adds it and removes it again, and each
 * removal waits for an RCU grace period (tens of ms here). Frames that
 * device really receives have no metadata there and are passed untouched;
 * the test_run frames carry cfg_cookie as 8 bytes of XDP metadata.
 *
 * The kernel recycles the frame pages without restoring the template, and a
 * receiver (or the stack behind it) may write into them, so every byte of
 * the frame is rewritten on every frame: Ethernet, IP and L4 headers from
 * cfg_tmpl, then the source address, the TCP sequence number and the
 * checksums, and the payload from flood_zeros.
 *
 * Nor does the kernel restore the frame's length unless asked to. A page
 * starts with the xdp_frame that describes it, and a receiver that sends the
 * frame on (a veth peer's XDP_TX or XDP_REDIRECT) writes its own xdp_frame
 * there, with the length its program left: floodgate's SYN proxy, say,
 * turns a 60-byte SYN into a 58-byte SYN-ACK. Back in the pool, the page is
 * reset only when test_run sees a change (net/bpf/test_run.c: reset_ctx
 * looks at the xdp_frame's data and flags and at the context, not at the
 * length), and after a run the xdp_frame is rebuilt from the context only
 * when the program changed the context (ctx_was_changed). So the next frame
 * from that page would go out with the receiver's length, 58 bytes for a
 * 60-byte template, which the receiver then saw as truncated. Userspace
 * therefore sends FLOOD_TRIM_LEN bytes after the frame, and trimming them
 * off with bpf_xdp_adjust_tail after the cookie check changes the context
 * on every frame: test_run then rebuilds the xdp_frame from it (the
 * template's length) after the run, and resets the context before the
 * page's next frame. (Dropping the metadata with bpf_xdp_adjust_meta did
 * the same until a kernel refused that helper to XDP programs; the cookie
 * now goes out as the frame's metadata, which receivers ignore.)
 *
 * Checksums are incremental over sums precomputed by userspace: cfg_l3_sum
 * and cfg_l4_sum are the 16-bit one's complement sums (of native-order
 * 16-bit loads) of the IPv4 header and of pseudo-header + L4 header +
 * payload, with the source address, the TCP sequence number and the checksum
 * fields taken as zero. Adding the halves of the per-frame values gives the
 * full sum, whatever the host byte order.
 *
 * Sequence numbers: userspace hands out disjoint ranges [base, base + n) of
 * one global sequence, one range per test_run call, and stores base (and
 * base mod nsrc) in this CPU's slot just before the call; threads that share
 * a CPU take turns. Frame i of the run uses source index i mod nsrc (or
 * flood_perm[i mod nsrc] when shuffled or scattered) and TCP sequence
 * number i.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "flood.h"

/* Load-time settings, filled in by tools/flood/flood.c between open and load. */
const volatile __u64 cfg_cookie = 0;   /* random per run, in the metadata */
const volatile __u8 cfg_family = 4;    /* 4 or 6 */
const volatile __u8 cfg_proto = 17;    /* IPPROTO_UDP or IPPROTO_TCP */
const volatile __u8 cfg_src_mode = 0;  /* enum flood_src_mode */
const volatile __u32 cfg_nsrc = 1;     /* sources in SEQ/SHUFFLE/SCATTER mode */
const volatile __u32 cfg_repeat = 1;   /* frames in a row from each source */
const volatile __u32 cfg_src_low = 0;  /* host order: the IPv4 base or the IPv6 low 32 bits */
const volatile __u32 cfg_src_be[4];    /* base source, network order (IPv4: [0]) */
const volatile __u32 cfg_rand_mask[4]; /* RANDOM: host bits, network order */
const volatile __u32 cfg_l3_sum = 0;
const volatile __u32 cfg_l4_sum = 0;
const volatile union flood_tmpl cfg_tmpl;

struct flood_slot slots[FLOOD_MAX_CPUS];

/* The payload of every frame, written over whatever a receiver left in the
 * page; cfg_payload_len bytes of it (the frame after the headers). */
const volatile __u32 cfg_payload_len = 0;
__u8 flood_zeros[FLOOD_MAX_PAYLOAD];

/* What position i adds to the base: a permutation of [0, nsrc) for
 * SHUFFLE, distinct offsets in the prefix for SCATTER; resized and filled (through
 * mmap) by userspace. Elements of an mmapable array are 8 bytes apart, so
 * each holds two entries: entry i is the (i & 1)-th __u32 of element i / 2,
 * and the whole map reads as a plain __u32 array in userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} flood_perm SEC(".maps");

/* Copies the first `len` (a constant) template bytes over the frame. */
static __always_inline int put_headers(void *data, void *end, const int len)
{
	int i;

	if (data + len > end)
		return -1;
#pragma unroll
	for (i = 0; i < len / 8; i++)
		((__u64 *)data)[i] = cfg_tmpl.d[i];
	i = len / 8 * 8;
	if (len & 4) {
		*(__u32 *)(data + i) = cfg_tmpl.w[i / 4];
		i += 4;
	}
	if (len & 2)
		*(__u16 *)(data + i) = cfg_tmpl.h[i / 2];
	return 0;
}

/* Source word i (network order) for this frame. */
static __always_inline __u32 src_word(int i, __u32 idx)
{
	if (cfg_src_mode == FLOOD_SRC_RANDOM) {
		if (!cfg_rand_mask[i])
			return cfg_src_be[i];
		return cfg_src_be[i] | (bpf_get_prandom_u32() & cfg_rand_mask[i]);
	}
	if (i == (cfg_family == 4 ? 0 : 3))
		return bpf_htonl(cfg_src_low + idx);
	return cfg_src_be[i];
}

SEC("xdp")
int flood_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	void *meta = (void *)(long)ctx->data_meta;
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 idx = 0, pos, l4_off, w, i;
	int repeat = 0;
	__u64 l4_sum = cfg_l4_sum;
	struct flood_slot *s;
	__u64 seq;

	/* Not a test_run frame: traffic received while attached. */
	if (meta + 8 > data || *(__u64 *)meta != cfg_cookie)
		return XDP_PASS;
	/* Changes the context, so that test_run rebuilds the frame's length
	 * from it (see the top of the file). */
	if (bpf_xdp_adjust_tail(ctx, -FLOOD_TRIM_LEN))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (cfg_payload_len > FLOOD_MAX_PAYLOAD)
		return XDP_ABORTED;
	if (cpu >= FLOOD_MAX_CPUS)
		return XDP_ABORTED;
	s = &slots[cpu];
	seq = s->seq++;
	pos = s->pos;
	if (s->repeats_left) {
		s->repeats_left--;
		repeat = 1;
	} else {
		s->repeats_left = cfg_repeat - 1;
		s->pos = pos + 1 >= cfg_nsrc ? 0 : pos + 1;
	}
	if (cfg_src_mode == FLOOD_SRC_SEQ) {
		idx = pos;
	} else if (cfg_src_mode == FLOOD_SRC_SHUFFLE || cfg_src_mode == FLOOD_SRC_SCATTER) {
		__u32 key = pos / 2, *p = bpf_map_lookup_elem(&flood_perm, &key);

		if (!p)
			return XDP_ABORTED;
		idx = p[pos & 1];
	}

	if (cfg_family == 4) {
		__u64 l3_sum = cfg_l3_sum;

		if (cfg_proto == IPPROTO_TCP) {
			if (put_headers(data, end, ETH_HLEN + 20 + 20))
				return XDP_ABORTED;
		} else {
			if (put_headers(data, end, ETH_HLEN + 20 + 8))
				return XDP_ABORTED;
		}
		w = repeat ? s->last_src[0] : src_word(0, idx);
		s->last_src[0] = w;
		*(__u32 *)(data + ETH_HLEN + 12) = w;
		l3_sum += flood_halves(w);
		l4_sum += flood_halves(w);
		*(__u16 *)(data + ETH_HLEN + 10) = flood_csum_fold(l3_sum);
		l4_off = ETH_HLEN + 20;
	} else {
		if (cfg_proto == IPPROTO_TCP) {
			if (put_headers(data, end, ETH_HLEN + 40 + 20))
				return XDP_ABORTED;
		} else {
			if (put_headers(data, end, ETH_HLEN + 40 + 8))
				return XDP_ABORTED;
		}
#pragma unroll
		for (i = 0; i < 4; i++) {
			w = repeat ? s->last_src[i] : src_word(i, idx);
			s->last_src[i] = w;
			*(__u32 *)(data + ETH_HLEN + 8 + 4 * i) = w;
			l4_sum += flood_halves(w);
		}
		l4_off = ETH_HLEN + 40;
	}

	if (cfg_payload_len &&
	    bpf_xdp_store_bytes(ctx, l4_off + (cfg_proto == IPPROTO_TCP ? 20 : 8), flood_zeros,
				cfg_payload_len))
		return XDP_ABORTED;
	if (cfg_proto == IPPROTO_TCP) {
		w = bpf_htonl((__u32)seq);
		*(__u32 *)(data + l4_off + 4) = w;
		l4_sum += flood_halves(w);
		*(__u16 *)(data + l4_off + 16) = flood_csum_fold(l4_sum);
	} else {
		__u16 c = flood_csum_fold(l4_sum);

		/* 0 means "no checksum" in UDP (and is invalid over IPv6). */
		*(__u16 *)(data + l4_off + 6) = c ? c : 0xffff;
	}
	s->sent++;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
