/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The SYN proxy's load-time settings (include/floodgate.h's part): the
 * datapath's rodata `fg_synproxy`, compiled from [synproxy] by the loader
 * (user/policy/synproxy.c) so that a packet reads a bit and copies option
 * bytes, and computes nothing the config already decided.
 */
#ifndef FLOODGATE_SYNPROXY_H
#define FLOODGATE_SYNPROXY_H

#include <linux/types.h>

/* TCP option kinds and lengths (RFC 9293, RFC 7323, RFC 2018). */
#define FG_TCPOPT_EOL	     0
#define FG_TCPOPT_NOP	     1
#define FG_TCPOPT_MSS	     2
#define FG_TCPOPT_WSCALE     3
#define FG_TCPOPT_SACK_PERM  4
#define FG_TCPOPT_TIMESTAMP  8
#define FG_TCPOLEN_MSS	     4
#define FG_TCPOLEN_WSCALE    3
#define FG_TCPOLEN_SACK_PERM 2
#define FG_TCPOLEN_TIMESTAMP 10

/* A TCP header's most option bytes (doff 15), and the most a SYN-ACK of
 * the proxy carries: MSS, SACK-permitted with the timestamps, and the
 * window scale, each padded to a word. */
#define FG_TCP_MAX_OPTION_BYTES	     40
#define FG_SYNPROXY_MAX_OPTION_BYTES 20

#define FG_SYNPROXY_PORT_WORDS (65536 / 64)

/* The largest window scale shift (RFC 7323): the most `wscale` may set,
 * and what a client's larger offer counts as. */
#define FG_SYNPROXY_MAX_WSCALE 14

/* One option word of the SYN-ACK, as it goes on the wire. */
struct fg_tcp_option_word {
	__u8 bytes[4];
};

struct fg_synproxy_params {
	/* Bit p of word p / 64: TCP destination port p is proxied. */
	__u64 ports[FG_SYNPROXY_PORT_WORDS];
	struct fg_tcp_option_word mss4;	  /* MSS, for IPv4 clients */
	struct fg_tcp_option_word mss6;	  /* MSS, for IPv6 clients */
	struct fg_tcp_option_word wscale; /* NOP, window scale */
	/* What goes before the two timestamp words: SACK-permitted, or two
	 * NOPs when the client or the config does not want SACK. */
	struct fg_tcp_option_word sack_timestamps;
	struct fg_tcp_option_word nop_timestamps;
	__u8 enabled;	 /* a [synproxy] section: the proxy runs */
	__u8 sack;	 /* sack = yes */
	__u8 timestamps; /* timestamps = yes */
	__u8 pad;
};

_Static_assert(sizeof(struct fg_synproxy_params) == 8 * FG_SYNPROXY_PORT_WORDS + 24,
	       "fg_synproxy_params");

#endif /* FLOODGATE_SYNPROXY_H */
