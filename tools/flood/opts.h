/* SPDX-License-Identifier: GPL-2.0-only */
/* floodgate-flood's command line: what a run asks for, and its parser. */
#ifndef FLOOD_OPTS_H
#define FLOOD_OPTS_H

#include <stdbool.h>
#include <linux/if_ether.h>
#include <linux/types.h>

#define FLOOD_EXIT_OK	 0
#define FLOOD_EXIT_FAIL	 1
#define FLOOD_EXIT_USAGE 2

#define FLOOD_DEFAULT_BATCH 4096
#define FLOOD_MAX_BATCH	    (1U << 20)
#define FLOOD_MAX_REPEAT    1000
#define FLOOD_MAX_THREADS   256
#define FLOOD_MAX_FRAME	    1514
#define FLOOD_MIN_FRAME	    60 /* the default size, unless the headers are longer */

/* How frames leave: XDP live frames (BPF_PROG_TEST_RUN, the fast way), or
 * built in userspace and written to an AF_PACKET socket, for kernels that
 * refuse live frames. */
enum flood_sender {
	FLOOD_SENDER_AUTO = 0, /* XDP, or the socket once the kernel refuses XDP */
	FLOOD_SENDER_XDP,
	FLOOD_SENDER_SOCKET,
};

struct flood_opts {
	const char *dev;
	const char *hold; /* --hold: where the program is held, or NULL for dev */
	const char *dst_str;
	const char *src_str;
	const char *size_str; /* checked once the family and protocol are known */
	int family;	      /* AF_INET or AF_INET6 */
	__u8 dst[16];
	__u8 src[16];	/* the first source, or the prefix (masked) */
	int src_mode;	/* enum flood_src_mode */
	__u32 nsrc;	/* SEQ/SHUFFLE/SCATTER */
	int prefix_len; /* RANDOM */
	int proto;	/* IPPROTO_UDP or IPPROTO_TCP */
	bool tcp_ack;	/* --proto tcp-ack: ACKs, not SYNs */
	__u16 sport, dport;
	__u32 size;
	__u64 count;	 /* 0: duration mode */
	double duration; /* seconds */
	double rate;	 /* 0: unpaced */
	__u32 threads;
	__u32 batch;
	__u32 repeat; /* frames in a row from each source */
	__u8 dst_mac[ETH_ALEN], src_mac[ETH_ALEN];
	bool have_dst_mac, have_src_mac;
	__u64 seed;
	int sender; /* enum flood_sender */
	bool json;
};

/* Fills `o` from argv. Returns 0, FLOOD_EXIT_USAGE after printing why, or
 * -1 after printing the help (--help). */
int flood_parse_opts(int argc, char **argv, struct flood_opts *o);

/* Prints "Error: ..." and the pointer to --help; returns FLOOD_EXIT_USAGE. */
int flood_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The address length of AF_INET or AF_INET6, in bytes. */
int flood_addr_len(int family);
/* The 32-bit word that +K counts in: the IPv4 address or the IPv6 low word. */
__u32 flood_low_word(const __u8 *addr, int family);
/* Ethernet + IP + L4 header bytes: the shortest frame of this kind. */
__u32 flood_headers_len(const struct flood_opts *o);

#endif /* FLOOD_OPTS_H */
