/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SYN proxy ([synproxy], include/floodgate_synproxy.h): a SYN to a
 * proxied port is answered here with a SYN-ACK whose sequence number is a
 * SYN cookie (the kernel's own, bpf_tcp_raw_gen_syncookie_ipv4/6), and any
 * other TCP packet to such a port must belong to a connection conntrack
 * knows or carry a valid cookie in its ACK. A spoofed SYN flood then costs
 * one reply each and creates no state anywhere; the policies judge only
 * sources that proved they receive.
 *
 * fg_process hands a packet over by a tail call to fg_xdp_synproxy or
 * fg_tc_synproxy (floodgate.bpf.c), programs of their own because the
 * helpers and kfuncs they call may be missing from a kernel: the loader
 * loads them only for a config with [synproxy]. The parsed packet and the
 * header copies travel in the per-CPU `synproxy_scratch`, not on the stack,
 * which the policy walk's call chain already fills.
 *
 * Part of bpf/floodgate.bpf.c, which includes it after fg_parse.h.
 */
#ifndef FG_SYNPROXY_H
#define FG_SYNPROXY_H

#ifndef ENOENT
#define ENOENT 2
#endif

/* conntrack's kfuncs (net/netfilter/nf_conntrack_bpf.c). __weak, since
 * libbpf 1.1 fails the whole object on a strong kfunc it cannot resolve
 * (nf_conntrack is a module on Debian's 6.1): only the SYN proxy's
 * programs call them, and those load only when asked for. */
struct nf_conn {
	unsigned long status;
} __attribute__((preserve_access_index));

/* struct bpf_ct_opts at the size 6.1 takes (NF_BPF_CT_OPTS_SZ); later
 * kernels take it too. */
struct fg_ct_opts {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u8 reserved[2];
};
#define FG_CT_OPTS_SIZE	    12
#define FG_CT_CURRENT_NETNS (-1)
#define FG_IPS_CONFIRMED    (1UL << 3) /* IPS_CONFIRMED: the connection is in the table */

extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *ctx, struct bpf_sock_tuple *tuple,
					 __u32 tuple_size, struct fg_ct_opts *opts,
					 __u32 opts_size) __ksym __weak;
extern struct nf_conn *bpf_skb_ct_lookup(struct __sk_buff *ctx, struct bpf_sock_tuple *tuple,
					 __u32 tuple_size, struct fg_ct_opts *opts,
					 __u32 opts_size) __ksym __weak;
extern void bpf_ct_release(struct nf_conn *ct) __ksym __weak;

#define FG_NO_WSCALE 0xf /* the cookie's "no window scale option" */

/* What the client's SYN offers, as the cookie's timestamp encodes it. */
struct fg_syn_offer {
	__u32 tsval; /* network order, valid when timestamps */
	__u8 wscale; /* FG_NO_WSCALE: none */
	bool sack;
	bool timestamps;
};

/* What fg_process leaves to the proxy, and the proxy's working copies of
 * the headers: the helpers read them, and the SYN-ACK is built in them. */
struct fg_synproxy_scratch {
	struct fg_packet pkt;
	__u64 pkt_len;
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ip;
	struct {
		struct tcphdr th;
		__u8 options[FG_TCP_MAX_OPTION_BYTES];
	} tcp;
	struct {
		struct tcphdr th;
		__u8 options[FG_SYNPROXY_MAX_OPTION_BYTES];
	} reply;
	__u8 macs[2 * ETH_ALEN];
	struct fg_syn_offer offer;
	/* Where the walk of the SYN's options is, kept here and read back
	 * volatile: the verifier then knows only its bounds, and the walk's
	 * paths meet in one state per step instead of one per offset. */
	__u32 option_at;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_synproxy_scratch);
} synproxy_scratch SEC(".maps");

/* Connections conntrack has confirmed, as this CPU last found them: a
 * direct-mapped cache in front of the conntrack lookup, which (with the
 * tail call and header copies before it) cost a bulk transfer to a
 * proxied port up to a fifth of its throughput when every packet made it
 * (docs/config.md, [synproxy]). An entry serves for FG_SYNPROXY_FLOW_NS
 * (include/floodgate_synproxy.h) after the lookup that wrote it. What
 * that lets through is the tuple of a connection that ended within that
 * second, and nftables' synproxy rule still judges it in the stack (a
 * packet conntrack does not know is invalid there, and needs a valid
 * cookie): the cache only skips the driver's early drop. Only a conntrack
 * lookup writes an entry, so a spoofer cannot plant one. Not pinned; the
 * loader sizes it to one entry without [synproxy]. Its entry, struct
 * fg_synproxy_flow: include/floodgate_synproxy.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_SYNPROXY_FLOW_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_synproxy_flow);
} synproxy_flows SEC(".maps");

/* The packet's connection's slot in this CPU's synproxy_flows. */
static __always_inline __u32 fg_synproxy_flow_slot(const struct fg_packet *pkt)
{
	return fg_synproxy_flow_slot_of((const __u32 *)pkt->saddr, (const __u32 *)pkt->daddr,
					pkt->sport, pkt->dport);
}

static __always_inline bool fg_synproxy_flow_is(const struct fg_synproxy_flow *flow,
						const struct fg_packet *pkt)
{
	const __u64 *fs = (const __u64 *)flow->saddr, *fd = (const __u64 *)flow->daddr;
	const __u64 *ps = (const __u64 *)pkt->saddr, *pd = (const __u64 *)pkt->daddr;

	return flow->family == pkt->family && flow->sport == pkt->sport &&
	       flow->dport == pkt->dport && fs[0] == ps[0] && fs[1] == ps[1] && fd[0] == pd[0] &&
	       fd[1] == pd[1];
}

/* Did this CPU find the packet's connection in conntrack within the last
 * FG_SYNPROXY_FLOW_NS? Its own frame, off fg_process's: fg_tc's deepest
 * call chain has no stack to spare (struct fg_packet says why). Every
 * packet of a proxied port's connections asks, so the time is this CPU's
 * reading of the jiffy (fg_coarse_cached), not a helper call: the entry
 * serves its second give or take that reading's lag (two ticks at most),
 * as its writer's reading and this one lag by different amounts. */
static __noinline bool fg_synproxy_known_flow(const struct fg_packet *pkt)
{
	__u32 slot = fg_synproxy_flow_slot(pkt);
	struct fg_synproxy_flow *flow = bpf_map_lookup_elem(&synproxy_flows, &slot);

	if (!flow || !fg_synproxy_flow_is(flow, pkt) || fg_coarse_cached() >= flow->until_ns)
		return false;
	if (fg_test_clock)
		fg_test_known_flows++;
	return true;
}

/* Remembers the packet's connection, which conntrack has just confirmed. */
static __always_inline void fg_synproxy_remember_flow(const struct fg_packet *pkt)
{
	__u32 slot = fg_synproxy_flow_slot(pkt);
	struct fg_synproxy_flow *flow = bpf_map_lookup_elem(&synproxy_flows, &slot);

	if (!flow)
		return;
	__builtin_memcpy(flow->saddr, pkt->saddr, sizeof(flow->saddr));
	__builtin_memcpy(flow->daddr, pkt->daddr, sizeof(flow->daddr));
	flow->sport = pkt->sport;
	flow->dport = pkt->dport;
	flow->family = pkt->family;
	flow->until_ns = fg_coarse_cached() + FG_SYNPROXY_FLOW_NS;
}

/* Each CPU's TAT of its share of the cap on SYN-ACKs (fg_synproxy.synacks,
 * config key `synacks`). Not pinned: the settings live in the program,
 * and a new program starts with a full bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} synack_budget SEC(".maps");

/* One prog array per hook: the kernel ties a prog array to the program
 * type of the first program that uses it. Entry 0 is the hook's proxy,
 * which the loader puts there (user/maps/skeleton.c); empty, fg_process
 * judges the packet itself. Pinned: the kernel empties a prog array when
 * the last file descriptor or pin of it goes, and the loader exits. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} synproxy_xdp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} synproxy_tc SEC(".maps");

/* What the proxy decided. */
enum fg_synproxy_outcome {
	FG_SYNPROXY_JUDGE,  /* a known connection or a valid cookie: on to the policies */
	FG_SYNPROXY_DROP,   /* counted where decided */
	FG_SYNPROXY_ANSWER, /* the frame is now the SYN-ACK: back out where it came in */
	FG_SYNPROXY_STACK,  /* a SYN it cannot answer here: nftables' synproxy will */
};

/* A TCP packet to a proxied port: the proxy's. */
static __always_inline bool fg_synproxy_wanted(const struct fg_packet *pkt)
{
	__u16 port = pkt->dport;

	if (!fg_synproxy.enabled || pkt->proto != IPPROTO_TCP || !pkt->has_ports)
		return false;
	return (fg_synproxy.ports[port / 64] >> (port % 64)) & 1;
}

/* Hands the packet to the hook's proxy by a tail call, which does not
 * return; returns when the prog array is empty. The call comes after the
 * lists and bans, at the end of fg_process: it adds no frame to the
 * entry points' call chain. */
static __always_inline void fg_synproxy_hand_off(void *ctx, bool tc, const struct fg_packet *pkt,
						 __u64 pkt_len)
{
	__u32 zero = 0;
	struct fg_synproxy_scratch *scratch = bpf_map_lookup_elem(&synproxy_scratch, &zero);

	if (!scratch)
		return;
	scratch->pkt = *pkt;
	scratch->pkt_len = pkt_len;
	if (tc)
		bpf_tail_call(ctx, &synproxy_tc, 0);
	else
		bpf_tail_call(ctx, &synproxy_xdp, 0);
}

/* --- the frame, at either hook ----------------------------------------------- */

static __always_inline long fg_frame_load(void *ctx, bool tc, __u32 offset, void *to, __u32 len)
{
	return tc ? bpf_skb_load_bytes(ctx, offset, to, len)
		  : bpf_xdp_load_bytes(ctx, offset, to, len);
}

static __always_inline long fg_frame_store(void *ctx, bool tc, __u32 offset, void *from, __u32 len)
{
	return tc ? bpf_skb_store_bytes(ctx, offset, from, len, 0)
		  : bpf_xdp_store_bytes(ctx, offset, from, len);
}

static __always_inline __u32 fg_frame_len(void *ctx, bool tc)
{
	return tc ? ((struct __sk_buff *)ctx)->len : bpf_xdp_get_buff_len(ctx);
}

static __always_inline long fg_frame_resize(void *ctx, bool tc, __u32 len)
{
	if (tc)
		return bpf_skb_change_tail(ctx, len, 0);
	return bpf_xdp_adjust_tail(ctx, (int)len - (int)bpf_xdp_get_buff_len(ctx));
}

/* --- reading the headers ----------------------------------------------------- */

#define FG_IPV4_MF_OFFSET 0x3fff /* more fragments, fragment offset */

/*
 * Copies the IP and TCP headers (options apart) into the scratch and
 * returns where the TCP header starts, or 0 for a packet the proxy can
 * neither answer nor check: IPv4 with options or fragmented, IPv6 with
 * extension headers (the SYN-ACK would have to carry them back), a TCP
 * header shorter than 20 bytes, or options past the IP packet's end.
 */
static __always_inline __u32 fg_synproxy_read(void *ctx, bool tc, struct fg_synproxy_scratch *s)
{
	__u32 l3 = s->pkt.l3_offset, l4, ip_end, frame_len = fg_frame_len(ctx, tc);

	if (l3 > FG_PARSE_MAX_L3_OFFSET)
		return 0;
	if (s->pkt.family == FG_FAMILY_IPV4) {
		if (fg_frame_load(ctx, tc, l3, &s->ip.v4, sizeof(s->ip.v4)))
			return 0;
		if (s->ip.v4.ihl != 5 || (s->ip.v4.frag_off & bpf_htons(FG_IPV4_MF_OFFSET)))
			return 0;
		l4 = l3 + sizeof(struct iphdr);
		ip_end = l3 + bpf_ntohs(s->ip.v4.tot_len);
	} else {
		if (fg_frame_load(ctx, tc, l3, &s->ip.v6, sizeof(s->ip.v6)))
			return 0;
		if (s->ip.v6.nexthdr != IPPROTO_TCP)
			return 0;
		l4 = l3 + sizeof(struct ipv6hdr);
		ip_end = l4 + bpf_ntohs(s->ip.v6.payload_len);
	}
	if (ip_end > frame_len)
		return 0;
	if (fg_frame_load(ctx, tc, l4, &s->tcp.th, sizeof(s->tcp.th)))
		return 0;
	if (s->tcp.th.doff < 5 || l4 + s->tcp.th.doff * 4 > ip_end)
		return 0;
	return l4;
}

/* --- a SYN --------------------------------------------------------------------- */

/* Walks the SYN's `len` option bytes into s->offer. A walk that runs past
 * them stops: what was found stands, as the kernel decides. */
static __always_inline void fg_syn_offer(struct fg_synproxy_scratch *s, __u32 len)
{
	volatile __u32 *option_at = &s->option_at;
	struct fg_syn_offer *offer = &s->offer;
	__u32 at, step;
	__u8 kind, size;

	offer->wscale = FG_NO_WSCALE;
	offer->sack = false;
	offer->timestamps = false;
	*option_at = 0;
	for (step = 0; step < FG_TCP_MAX_OPTION_BYTES; step++) {
		at = *option_at;
		if (at >= len || at >= FG_TCP_MAX_OPTION_BYTES - 1)
			break;
		kind = s->tcp.options[at];
		if (kind == FG_TCPOPT_EOL)
			break;
		if (kind == FG_TCPOPT_NOP) {
			*option_at = at + 1;
			continue;
		}
		size = s->tcp.options[at + 1];
		if (size < 2 || at + size > len)
			break;
		if (kind == FG_TCPOPT_WSCALE && size == FG_TCPOLEN_WSCALE)
			offer->wscale = s->tcp.options[at + 2] < FG_SYNPROXY_MAX_WSCALE
						? s->tcp.options[at + 2]
						: FG_SYNPROXY_MAX_WSCALE;
		else if (kind == FG_TCPOPT_SACK_PERM && size == FG_TCPOLEN_SACK_PERM)
			offer->sack = true;
		else if (kind == FG_TCPOPT_TIMESTAMP && size == FG_TCPOLEN_TIMESTAMP &&
			 at + FG_TCPOLEN_TIMESTAMP <= FG_TCP_MAX_OPTION_BYTES) {
			offer->timestamps = true;
			__builtin_memcpy(&offer->tsval, &s->tcp.options[at + 2], 4);
		}
		*option_at = at + size;
	}
}

/* The SYN-ACK's timestamp, which carries what the sequence cookie cannot:
 * the client's window scale, SACK and ECN in its low bits, in the kernel's
 * layout (cookie_init_timestamp), so that whoever completes the handshake
 * decodes them; and above them, where the kernel keeps a clock, the low
 * bits of the sequence number the client's ACK must carry (`ack_seq`, its
 * SYN's + 1). The client echoes it in every segment: fg_ack_reading tells
 * by it the handshake's ACK from a window probe one below it, which the
 * cookie alone cannot (fg_synproxy_probe). A connection's timestamps then
 * start at a value of its own, as Linux's do (a random offset each). */
#define FG_TS_OPT_SACK (1 << 4)
#define FG_TS_OPT_ECN  (1 << 5)
#define FG_TS_BITS     6
#define FG_TS_SEQ_MASK ((1U << (32 - FG_TS_BITS)) - 1)
static __always_inline __u32 fg_syn_timestamp(__u32 ack_seq, const struct fg_syn_offer *offer,
					      bool sack, bool ecn)
{
	return ack_seq << FG_TS_BITS | offer->wscale | (sack ? FG_TS_OPT_SACK : 0) |
	       (ecn ? FG_TS_OPT_ECN : 0);
}

/* Copies an option word of the rodata: read as volatile, or clang folds
 * the copy to the zeros of the initializer. */
static __always_inline void fg_put_option(__u8 *to, const volatile struct fg_tcp_option_word *word)
{
	__u32 bytes = *(const volatile __u32 *)word->bytes;

	__builtin_memcpy(to, &bytes, 4);
}

/* The SYN-ACK's TCP header and options, in s->reply; returns its length.
 * Without timestamps the cookie holds the MSS alone: no window scale and
 * no SACK, as with the kernel's own cookies. */
static __always_inline __u32 fg_synack_tcp(struct fg_synproxy_scratch *s, __u32 cookie,
					   const struct fg_syn_offer *offer)
{
	struct tcphdr *th = &s->reply.th;
	__u8 *options = s->reply.options;
	bool ecn = s->tcp.th.ece && s->tcp.th.cwr;
	__u32 len = sizeof(*th) + 4;

	__builtin_memset(&s->reply, 0, sizeof(s->reply));
	th->source = s->tcp.th.dest;
	th->dest = s->tcp.th.source;
	th->seq = bpf_htonl(cookie);
	th->ack_seq = bpf_htonl(bpf_ntohl(s->tcp.th.seq) + 1);
	th->syn = 1;
	th->ack = 1;
	/* No data before the listener has the connection: window 0, as the
	 * kernel's synproxy sends. */
	th->window = 0;
	if (s->pkt.family == FG_FAMILY_IPV4)
		fg_put_option(options, &fg_synproxy.mss4);
	else
		fg_put_option(options, &fg_synproxy.mss6);
	if (offer->timestamps && fg_synproxy.timestamps) {
		bool sack = offer->sack && fg_synproxy.sack;
		__u32 tsval = bpf_htonl(fg_syn_timestamp(bpf_ntohl(th->ack_seq), offer, sack, ecn));

		if (sack)
			fg_put_option(options + 4, &fg_synproxy.sack_timestamps);
		else
			fg_put_option(options + 4, &fg_synproxy.nop_timestamps);
		__builtin_memcpy(options + 8, &tsval, 4);
		__builtin_memcpy(options + 12, &offer->tsval, 4); /* its tsval, our tsecr */
		len += 12;
		if (offer->wscale != FG_NO_WSCALE) {
			fg_put_option(options + 16, &fg_synproxy.wscale);
			len += 4;
		}
		th->ece = ecn;
	}
	th->doff = len / 4;
	return len;
}

static __always_inline __u16 fg_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Turns the SYN's IP header into the SYN-ACK's, checksum included, and
 * sets the SYN-ACK's TCP checksum over `tcp_len` bytes of s->reply. */
static __always_inline int fg_synack_ip(struct fg_synproxy_scratch *s, __u32 tcp_len)
{
	__u64 sum;
	__s64 partial = bpf_csum_diff(NULL, 0, (__be32 *)&s->reply, tcp_len, 0);
	int i;

	if (partial < 0)
		return -1;
	sum = (__u32)partial;
	if (s->pkt.family == FG_FAMILY_IPV4) {
		struct iphdr *iph = &s->ip.v4;
		__be32 client = iph->saddr;

		iph->saddr = iph->daddr;
		iph->daddr = client;
		iph->tos = 0;
		iph->tot_len = bpf_htons(sizeof(*iph) + tcp_len);
		iph->id = 0;
		iph->frag_off = bpf_htons(0x4000); /* DF */
		iph->ttl = 64;
		iph->check = 0;
		partial = bpf_csum_diff(NULL, 0, (__be32 *)iph, sizeof(*iph), 0);
		if (partial < 0)
			return -1;
		iph->check = fg_csum_fold((__u32)partial);
		sum += iph->saddr;
		sum += iph->daddr;
		sum += bpf_htonl((IPPROTO_TCP << 16) | tcp_len);
	} else {
		struct ipv6hdr *ip6h = &s->ip.v6;
		struct in6_addr client = ip6h->saddr;

		ip6h->saddr = ip6h->daddr;
		ip6h->daddr = client;
		*(__be32 *)ip6h = bpf_htonl(0x60000000); /* version 6, no class, no label */
		ip6h->payload_len = bpf_htons(tcp_len);
		ip6h->hop_limit = 64;
		for (i = 0; i < 4; i++)
			sum += ip6h->saddr.in6_u.u6_addr32[i] +
			       (__u64)ip6h->daddr.in6_u.u6_addr32[i];
		sum += bpf_htonl(tcp_len);
		sum += bpf_htonl(IPPROTO_TCP);
	}
	s->reply.th.check = fg_csum_fold(sum);
	return 0;
}

/* May this CPU send one more SYN-ACK under `synacks`? Each one goes to
 * whatever address the SYN claimed: under a spoofed flood, to the flood's
 * victims. This CPU's reading of the jiffy (fg_coarse_cached) is enough
 * for a cap: it lags by two ticks at most, so a SYN-ACK is at worst two
 * ticks' worth late, never early, and a SYN flood's every SYN is spared
 * a helper call. */
static __always_inline bool fg_synack_allowed(void)
{
	struct fg_gcra_params cap = {.interval_fp = fg_synproxy.synacks.interval_fp,
				     .tolerance_ns = fg_synproxy.synacks.tolerance_ns};
	__u32 zero = 0;
	__u64 *tat, next;

	if (!cap.interval_fp)
		return true;
	tat = bpf_map_lookup_elem(&synack_budget, &zero);
	if (!tat || !fg_gcra_admit(&cap, *tat, fg_coarse_cached(), 1, &next))
		return false;
	*tat = next;
	return true;
}

/*
 * Answers a SYN with a cookie SYN-ACK in its own frame. The frame first
 * grows to hold a full TCP header, so that the options are read with a
 * fixed size (6.1's verifier refuses a read as long as the header says);
 * the SYN-ACK is written over the SYN and the frame cut to its length.
 */
static __always_inline enum fg_synproxy_outcome fg_synproxy_syn(void *ctx, bool tc,
								struct fg_synproxy_scratch *s,
								__u32 l4,
								struct fg_global_stats *gstats)
{
	__u32 tcp_len = s->tcp.th.doff * 4, reply_len, ip_len;
	__s64 cookie;

	if (s->tcp.th.rst || s->tcp.th.fin || tcp_len < sizeof(struct tcphdr) ||
	    tcp_len > sizeof(s->tcp))
		goto malformed;
	if (l4 > FG_PARSE_MAX_L3_OFFSET + sizeof(struct ipv6hdr))
		goto malformed;
	/* Before the hand-off below too: nftables' synproxy would answer. */
	if (!fg_synack_allowed()) {
		gstats->synproxy_synacks_capped++;
		return FG_SYNPROXY_DROP;
	}
	/* Too little tailroom to grow (a small skb from a veth peer's stack,
	 * generic XDP): the SYN goes on untouched, and the table's synproxy
	 * statement answers it with the kernel's own cookie, which the ACK
	 * check here accepts as well. */
	if (fg_frame_len(ctx, tc) < l4 + sizeof(s->tcp) &&
	    fg_frame_resize(ctx, tc, l4 + sizeof(s->tcp))) {
		gstats->synproxy_to_stack++;
		return FG_SYNPROXY_STACK;
	}
	if (fg_frame_load(ctx, tc, l4 + sizeof(struct tcphdr), s->tcp.options,
			  sizeof(s->tcp.options)))
		goto malformed;
	if (s->pkt.family == FG_FAMILY_IPV4)
		cookie = bpf_tcp_raw_gen_syncookie_ipv4(&s->ip.v4, &s->tcp.th, tcp_len);
	else
		cookie = bpf_tcp_raw_gen_syncookie_ipv6(&s->ip.v6, &s->tcp.th, tcp_len);
	if (cookie < 0)
		goto malformed;
	fg_syn_offer(s, tcp_len - sizeof(struct tcphdr));
	/* What the walk found is read back from the scratch: held in a
	 * register through the walk instead, it made each step's states
	 * differ, past the verifier's budget. */
	asm volatile("" ::: "memory");
	reply_len = fg_synack_tcp(s, (__u32)cookie, &s->offer);
	if (reply_len > sizeof(s->reply) || fg_synack_ip(s, reply_len))
		goto malformed;

	ip_len = s->pkt.family == FG_FAMILY_IPV4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	if (fg_frame_load(ctx, tc, 0, s->macs, sizeof(s->macs)) ||
	    fg_frame_store(ctx, tc, 0, s->macs + ETH_ALEN, ETH_ALEN) ||
	    fg_frame_store(ctx, tc, ETH_ALEN, s->macs, ETH_ALEN) ||
	    fg_frame_store(ctx, tc, s->pkt.l3_offset, &s->ip, ip_len) ||
	    fg_frame_store(ctx, tc, l4, &s->reply, sizeof(s->reply)) ||
	    fg_frame_resize(ctx, tc, l4 + reply_len))
		goto malformed;
	gstats->synproxy_synacks++;
	return FG_SYNPROXY_ANSWER;
malformed:
	gstats->synproxy_malformed++;
	return FG_SYNPROXY_DROP;
}

/* --- any other packet ---------------------------------------------------------- */

/* Is the packet part of a connection conntrack has confirmed? */
static __always_inline bool fg_ct_confirmed(void *ctx, bool tc, const struct fg_packet *pkt)
{
	struct fg_ct_opts opts = {.netns_id = FG_CT_CURRENT_NETNS, .l4proto = IPPROTO_TCP};
	struct bpf_sock_tuple tuple = {};
	struct nf_conn *ct;
	__u32 size;
	bool confirmed;

	size = fg_packet_tuple(pkt, &tuple);
	if (tc)
		ct = bpf_skb_ct_lookup(ctx, &tuple, size, &opts, FG_CT_OPTS_SIZE);
	else
		ct = bpf_xdp_ct_lookup(ctx, &tuple, size, &opts, FG_CT_OPTS_SIZE);
	if (!ct)
		return false;
	confirmed = ct->status & FG_IPS_CONFIRMED;
	bpf_ct_release(ct);
	return confirmed;
}

/* Whether the cookie the packet's ACK echoes is one this host made for
 * its SYN: 0 if so. */
static __always_inline long fg_cookie_refused(struct fg_synproxy_scratch *s)
{
	if (s->pkt.family == FG_FAMILY_IPV4)
		return bpf_tcp_raw_check_syncookie_ipv4(&s->ip.v4, &s->tcp.th);
	return bpf_tcp_raw_check_syncookie_ipv6(&s->ip.v6, &s->tcp.th);
}

/*
 * A window probe in place of the handshake's ACK. The SYN-ACK offers a
 * zero window, as nftables' synproxy does, so that the client holds its
 * data until nftables has made the connection to the listener. Should
 * the client's ACK be lost (a full receive ring under the very flood the
 * proxy is for), a Linux client probes that window with bare ACKs one
 * below its next sequence number (tcp_xmit_probe_skb), which the cookie,
 * made of the SYN's, does not fit: the connection hung until the client
 * gave up (about 1% of connects in `make bench`'s SYN flood). Such a probe
 * is checked as the ACK it stands for and, if the cookie holds, becomes
 * that ACK (sequence number and checksum rewritten), which nftables'
 * synproxy then completes the handshake with. Returns 0 when it did; a
 * packet with data or other flags is no probe.
 */
static __always_inline long fg_synproxy_probe(void *ctx, bool tc, struct fg_synproxy_scratch *s,
					      __u32 l4)
{
	__be32 probe_seq = s->tcp.th.seq;
	__u32 header = s->tcp.th.doff * 4, segment;
	__u64 sum;

	if (s->pkt.family == FG_FAMILY_IPV4)
		segment = bpf_ntohs(s->ip.v4.tot_len) - sizeof(struct iphdr);
	else
		segment = bpf_ntohs(s->ip.v6.payload_len);
	if (segment != header || s->tcp.th.fin || s->tcp.th.psh || s->tcp.th.urg)
		return 1;
	s->tcp.th.seq = bpf_htonl(bpf_ntohl(probe_seq) + 1);
	if (fg_cookie_refused(s))
		return 1;
	/* RFC 1624: the checksum less the old word, plus the new one. */
	sum = (__u16)~s->tcp.th.check;
	sum += (__u32)~probe_seq;
	sum += (__u32)s->tcp.th.seq;
	s->tcp.th.check = fg_csum_fold(sum);
	return fg_frame_store(ctx, tc, l4, &s->tcp.th, sizeof(s->tcp.th));
}

/* What an ACK's echoed timestamp says it is (fg_syn_timestamp). */
enum fg_ack_reading {
	FG_ACK_UNTOLD,	/* no timestamp in the usual place, or not one of ours */
	FG_ACK_AS_SENT, /* the handshake's ACK: the cookie fits its own seq */
	FG_ACK_PROBE,	/* a window probe: the cookie fits seq + 1 */
};

/*
 * Reads the timestamp an ACK echoes, where every common stack puts it
 * (NOP, NOP, timestamp: RFC 7323's appendix A, the layout the SYN-ACK
 * uses). The cookie alone cannot tell a probe from the ACK: the MSS index
 * sits in its low bits, so a sequence number one below reads as the
 * cookie of the next MSS value, valid for all but the largest; the echoed
 * sequence bits can. A timestamp of the kernel's own SYN-ACK (a SYN left
 * to the stack) holds a clock there, which matches either reading about
 * once in 2^25 ACKs.
 */
static __always_inline enum fg_ack_reading fg_ack_reading(void *ctx, bool tc,
							  struct fg_synproxy_scratch *s, __u32 l4)
{
	const volatile __u32 *nop_timestamps =
		(const volatile __u32 *)fg_synproxy.nop_timestamps.bytes;
	__u32 words[3], seq, told;

	if (!fg_synproxy.timestamps || s->tcp.th.doff * 4 < sizeof(struct tcphdr) + sizeof(words))
		return FG_ACK_UNTOLD;
	if (fg_frame_load(ctx, tc, l4 + sizeof(struct tcphdr), words, sizeof(words)) ||
	    words[0] != *nop_timestamps)
		return FG_ACK_UNTOLD;
	seq = bpf_ntohl(s->tcp.th.seq);
	told = bpf_ntohl(words[2]) >> FG_TS_BITS;
	if (told == (seq & FG_TS_SEQ_MASK))
		return FG_ACK_AS_SENT;
	if (told == ((seq + 1) & FG_TS_SEQ_MASK))
		return FG_ACK_PROBE;
	return FG_ACK_UNTOLD;
}

/* Whether an ACK fits a cookie of this host's, as the handshake's ACK or
 * as a probe in its place (passed on rewritten): 0 if so. Without the
 * timestamp's word the ACK is tried as it is, then as a probe: right for
 * a client whose MSS is the cookie's largest (IPv4 1460, IPv6 8940); for
 * a smaller one a probe passes unchanged and nftables' synproxy opens the
 * listener's side one byte off (docs/config.md, `[synproxy]`). */
static __always_inline long fg_ack_refused(void *ctx, bool tc, struct fg_synproxy_scratch *s,
					   __u32 l4)
{
	switch (fg_ack_reading(ctx, tc, s, l4)) {
	case FG_ACK_AS_SENT:
		return fg_cookie_refused(s);
	case FG_ACK_PROBE:
		return fg_synproxy_probe(ctx, tc, s, l4);
	default:
		return fg_cookie_refused(s) && fg_synproxy_probe(ctx, tc, s, l4);
	}
}

/* Not a SYN: a connection conntrack knows, or an ACK with a valid cookie
 * (the third packet of a handshake this proxy answered, or a window probe
 * in its place). */
static __always_inline enum fg_synproxy_outcome fg_synproxy_ack(void *ctx, bool tc,
								struct fg_synproxy_scratch *s,
								__u32 l4,
								struct fg_global_stats *gstats)
{
	long refused;

	if (fg_ct_confirmed(ctx, tc, &s->pkt)) {
		fg_synproxy_remember_flow(&s->pkt);
		gstats->synproxy_established++;
		return FG_SYNPROXY_JUDGE;
	}
	if (!s->tcp.th.ack || s->tcp.th.syn || s->tcp.th.rst)
		refused = 1;
	else
		refused = fg_ack_refused(ctx, tc, s, l4);
	if (refused) {
		gstats->synproxy_cookies_refused++;
		return FG_SYNPROXY_DROP;
	}
	gstats->synproxy_cookies_accepted++;
	/* The cookie came back: the source received our SYN-ACK, evidence a
	 * ban may rely on though no socket holds the connection yet. Not on
	 * the conntrack path above: conntrack confirms an entry on the first
	 * packet it lets through, which proves nothing; the socket lookup
	 * judges those. */
	s->pkt.proven = 1;
	/* The new connection the policies see: a policy that matches `syn`
	 * judges this ACK in place of the SYN the proxy answered (and never
	 * charged), so its per-source limit on new connections holds. */
	s->pkt.is_syn = 1;
	return FG_SYNPROXY_JUDGE;
}

/* The proxy's verdict on the packet fg_process handed over. */
static __always_inline enum fg_synproxy_outcome fg_synproxy_verdict(void *ctx, bool tc,
								    struct fg_synproxy_scratch *s,
								    struct fg_global_stats *gstats)
{
	__u32 l4 = fg_synproxy_read(ctx, tc, s);

	if (!l4) {
		gstats->synproxy_malformed++;
		return FG_SYNPROXY_DROP;
	}
	if (s->tcp.th.syn && !s->tcp.th.ack)
		return fg_synproxy_syn(ctx, tc, s, l4, gstats);
	return fg_synproxy_ack(ctx, tc, s, l4, gstats);
}

#endif /* FG_SYNPROXY_H */
