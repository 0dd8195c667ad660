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

#include "floodgate_policy.h"

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

/* The datapath's cache of the connections conntrack confirmed
 * (bpf/fg_synproxy.h, synproxy_flows): slots a CPU, and how long an entry
 * serves after the conntrack lookup that wrote it. */
#define FG_SYNPROXY_FLOW_SLOTS 4096
#define FG_SYNPROXY_FLOW_NS    1000000000ULL

/* An entry of synproxy_flows: a connection as the parser wrote it (struct
 * fg_packet's addresses, ports in host order, family), and until when it
 * serves. Here so that the benchmark can plant one. */
struct fg_synproxy_flow {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport;
	__u16 dport;
	__u32 family;
	__u64 until_ns; /* coarse clock; 0 = empty */
};

/* A connection's slot in synproxy_flows: its addresses as four words each
 * (an IPv4 address in the first, the rest 0), ports in host order. Here
 * so that a test can find two connections that share a slot. */
static inline __u32 fg_synproxy_flow_slot_of(const __u32 saddr[4], const __u32 daddr[4],
					     __u16 sport, __u16 dport)
{
	__u32 hash = ((__u32)sport << 16 | dport) * 0x9e3779b1, i;

	for (i = 0; i < 4; i++) {
		hash = (hash ^ saddr[i]) * 0x9e3779b1;
		hash = (hash ^ daddr[i]) * 0x9e3779b1;
	}
	_Static_assert(FG_SYNPROXY_FLOW_SLOTS == 1 << 12, "slot = the hash's top 12 bits");
	return hash >> 20;
}

/* One option word of the SYN-ACK, as it goes on the wire. */
struct fg_tcp_option_word {
	__u8 bytes[4];
};

struct fg_synproxy_params {
	/* Bit p of word p / 64: TCP destination port p is proxied. */
	__u64 ports[FG_SYNPROXY_PORT_WORDS];
	/* synacks: each CPU's share of the cap on SYN-ACKs (the configured
	 * rate split over the CPUs online at load, burst COUNT likewise);
	 * interval_fp 0 = no cap. */
	struct fg_gcra_params synacks;
	__u64 synacks_count; /* as configured, for `status`; 0 = no cap */
	__u64 synacks_period_ns;
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

_Static_assert(sizeof(struct fg_synproxy_params) == 8 * FG_SYNPROXY_PORT_WORDS + 56,
	       "fg_synproxy_params");

#endif /* FLOODGATE_SYNPROXY_H */
