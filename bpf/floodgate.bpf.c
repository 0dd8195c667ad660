// SPDX-License-Identifier: GPL-2.0-only
/*
 * floodgate datapath: one engine with two entry points, XDP (fg_xdp) and tc
 * clsact ingress (fg_tc). Per packet: parse, find the matching policy from
 * precomputed bitmasks, and charge the masked source's rate-limit state with
 * the policy's algorithm (include/fg_gcra.h, include/fg_algos.h), whose
 * parameters are read from the policy as they are.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "floodgate.h"
#include "fg_algos.h"
#include "fg_bits.h"
#include "fg_gcra.h"

#define ENOMEM	       12
#define EEXIST	       17
#define FG_CAS_RETRIES 8

/* Load-time settings (rodata), set by the loader between open and load. */
const volatile bool fg_test_clock = false;	  /* use fg_test_now_ns, tests only */
const volatile bool fg_test_naive_update = false; /* racy read-modify-write, tests only */
/* Fault injection, tests only: every insert into a state table fails as if
 * the kernel could not allocate an entry, so on_insert_failure is tested. */
const volatile bool fg_test_fail_inserts = false;

/* clock = coarse: bpf_ktime_get_coarse_ns() (Linux >= 5.11), one tick of
 * resolution for a cheaper read. */
const volatile bool fg_coarse_clock = false;

/* sources4's entries >> FG_REFUSAL_CHURN_SHIFT: how many entries this CPU
 * may create before its `refusals` entries stop serving; 0 (a table of
 * fewer than 256 entries) turns the cache off. */
const volatile __u32 fg_refusal_churn_limit = 0;

/* Benchmarks only: rewrite the IPv4 source of every packet to
 * 10.0.0.0 + (sequence & fg_bench_source_mask), or to a random address in
 * 10.0.0.0/8 when the mask is ~0, so BPF_PROG_TEST_RUN with repeat can
 * measure many keys. 0 in every real load; the verifier prunes it. */
const volatile __u32 fg_bench_source_mask = 0;
__u32 fg_bench_seq = 0;

/* The injected clock; only read when fg_test_clock is set, so a production
 * load never reaches it and the verifier prunes the branch. */
__u64 fg_test_now_ns = 0;
/* Reads of the injected clock, so a test can check when a packet reads the
 * clock; counted only under fg_test_clock, like the read itself. */
__u64 fg_test_clock_reads = 0;
/* Refusals answered from the `refusals` cache, counted under fg_test_clock
 * only, so a test can check that the cache serves. */
__u64 fg_test_cached_refusals = 0;

/* `floodgate replay` only: a captured frame's length on the wire, which is
 * what byte costs and byte counters use when the capture kept fewer bytes
 * (snaplen). Read only under fg_test_clock; 0 = the frame's own length. */
__u64 fg_test_wire_len = 0;

/* IPv4 keys of local one-word policies: 96 bytes an entry, not 104
 * (include/floodgate.h, struct fg_source4_key). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES); /* resized from max_sources */
	__type(key, struct fg_source4_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sources4 SEC(".maps");

/* Every other key of a local one-word policy: IPv6, global, overflow. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES / 4); /* resized from max_sources_ipv6 */
	__type(key, struct fg_source_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sources SEC(".maps");

/* scope = host: the per-source state of host-scoped policies, one map for
 * every interface of the host (include/floodgate.h). Sized at load time,
 * 1 entry when no policy is host-scoped; a load that finds the host's map
 * already made reuses it, whatever its size. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_source_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_PORT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sport_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_ACCESS_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} access_lists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_BANS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, struct fg_ban);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bans SEC(".maps");

/* sliding_window state; sized at load time, 1 entry when no policy uses it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_window_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} windows SEC(".maps");

/* sliding_log state (about 1 KiB an entry); sized like `windows`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_LOG_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_log_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} logs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_STATE_LOCKS);
	__type(key, __u32);
	__type(value, struct fg_state_lock);
} state_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_budget);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} new_source_budget SEC(".maps");

/* Unknown sources recently turned away by the budget, per CPU; not pinned:
 * it is a short memory that a restart may lose. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_recent_sources);
} recent_sources SEC(".maps");

/* Sources this CPU has just refused (fg_refusal); not pinned: a cache that
 * a restart may lose. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_REFUSAL_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_refusal);
} refusals SEC(".maps");

/* A zeroed fg_log_entry to create `logs` entries from. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_log_entry);
} log_template SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_policy_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_PORT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} dport_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FG_MAX_SRC_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_src_lpm_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} src_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_runtime);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} runtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_POLICY_SLOTS *FG_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct fg_policy_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_global_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} global_stats SEC(".maps");

/* Events for `floodgate events`: struct fg_event records, at most what
 * the per-CPU `event_budget` GCRA allows (config key `events`). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FG_EVENTS_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_budget);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} event_budget SEC(".maps");
/* scope = fleet (include/floodgate.h): admissions per key and epoch, read
 * and deleted by `floodgate run`; sized at load time, 1 entry when no
 * policy is fleet-scoped. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_fleet_key);
	__type(value, struct fg_fleet_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_counts SEC(".maps");

/* The keys the fleet holds, written by `floodgate run`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_DEFAULT_MAX_SOURCES);
	__type(key, struct fg_source_key);
	__type(value, struct fg_fleet_hold);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_holds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_fleet_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fleet_state SEC(".maps");

/* What the parser extracts; addresses stay in network order. */
struct fg_packet {
	__u8 family;
	__u8 proto;
	__u8 has_ports; /* TCP/UDP with a readable header, not a later fragment */
	__u8 is_syn;	/* TCP with SYN set and ACK clear */
	__u16 dport;	/* host order */
	__u16 sport;	/* host order */
	__u8 saddr[16];
};

enum fg_parse_result {
	FG_PARSE_IP,
	FG_PARSE_NON_IP,
	FG_PARSE_MALFORMED,    /* no trustworthy source address */
	FG_PARSE_MALFORMED_L4, /* the IP header is sound, what follows is not */
	/* The kernel would deliver it as IP, but the parser cannot see what
	 * the policies need: dropped whatever `malformed` says, or the framing
	 * would be a way around every list, ban and policy. */
	FG_PARSE_VLAN_OVERFLOW, /* more VLAN tags than FG_VLAN_MAX, no source */
	FG_PARSE_TINY_FRAGMENT, /* a first fragment without its whole L4 header */
	FG_PARSE_EXT_OVERFLOW,	/* an IPv6 chain longer than FG_IPV6_EXT_MAX */
};

/* VLAN tags walked (802.1Q and 802.1ad in any mix). The kernel strips any
 * number of them and delivers the IP packet inside, so a deeper stack is
 * dropped rather than passed as non-IP. Real networks use one or two. */
#define FG_VLAN_MAX 8

struct vlan_hdr {
	__be16 tci;
	__be16 encapsulated_proto;
};

/* The generic header of hop-by-hop, routing and destination options. */
struct ipv6_ext_hdr {
	__u8 nexthdr;
	__u8 hdrlen; /* in 8-byte units, not counting the first 8 bytes */
};

struct ipv6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset in 8-byte units << 3, and flags */
	__be32 identification;
};

/* IPv6 extension headers walked to find the transport header. A longer
 * chain is counted and treated as malformed: an attacker must not hide the
 * ports behind padding headers. */
#define FG_IPV6_EXT_MAX 6

static __always_inline __u64 fg_now(void)
{
	if (fg_test_clock) {
		fg_test_clock_reads++;
		return fg_test_now_ns;
	}
	if (fg_coarse_clock)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/* The packet's time, read on first use: the clock is the costliest single
 * step of a packet (38 ns here, make bench), and a packet that meets no
 * ban entry and matches no policy, such as bulk TCP data under the
 * built-in policy, does not need it. Read at most once, so every layer
 * judges the packet at the same instant. */
struct fg_clock {
	__u64 now;
	bool read;
};

static __always_inline __u64 fg_clock_now(struct fg_clock *clock)
{
	if (!clock->read) {
		clock->now = fg_now();
		clock->read = true;
	}
	return clock->now;
}

/* Reads the L4 ports. Returns 0 when the header is readable or the protocol
 * has no ports, -1 when a TCP/UDP header is truncated. */
static __always_inline int fg_parse_ports(void *l4, void *data_end, struct fg_packet *pkt)
{
	if (pkt->proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(th->dest);
		pkt->sport = bpf_ntohs(th->source);
		pkt->is_syn = th->syn && !th->ack;
		pkt->has_ports = 1;
	} else if (pkt->proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end)
			return -1;
		pkt->dport = bpf_ntohs(uh->dest);
		pkt->sport = bpf_ntohs(uh->source);
		pkt->has_ports = 1;
	}
	return 0;
}

/* Walks hop-by-hop, routing, fragment and destination-options headers.
 * Returns 0 with pkt->proto set to the transport protocol and *l4 at its
 * header (2 if this is a first fragment with more to follow), 1 for a later
 * fragment (no transport header), -1 when a header is truncated, -2 when
 * the chain is longer than FG_IPV6_EXT_MAX. */
static __always_inline int fg_walk_ipv6_ext(void **l4, void *data_end, struct fg_packet *pkt)
{
	void *cursor = *l4;
	__u8 next = pkt->proto;
	int fragment = 0, i;

#pragma unroll
	for (i = 0; i < FG_IPV6_EXT_MAX + 1; i++) {
		if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS) {
			struct ipv6_ext_hdr *ext = cursor;

			if (i == FG_IPV6_EXT_MAX)
				return -2;
			if ((void *)(ext + 1) > data_end)
				return -1;
			next = ext->nexthdr;
			cursor += (ext->hdrlen + 1) * 8;
		} else if (next == IPPROTO_FRAGMENT) {
			struct ipv6_frag_hdr *frag = cursor;

			if (i == FG_IPV6_EXT_MAX)
				return -2;
			if ((void *)(frag + 1) > data_end)
				return -1;
			next = frag->nexthdr;
			if (frag->frag_off & bpf_htons(0xfff8))
				fragment = 1; /* later: no transport header */
			else if (frag->frag_off & bpf_htons(1))
				fragment = 2; /* first, more follow */
			cursor = frag + 1;
		} else {
			break;
		}
	}
	pkt->proto = next;
	*l4 = cursor;
	return fragment;
}

static __always_inline bool fg_is_vlan(__u16 ethertype)
{
	return ethertype == bpf_htons(ETH_P_8021Q) || ethertype == bpf_htons(ETH_P_8021AD);
}

/* The L4 header is cut short. In a first fragment with more to follow,
 * reassembly would complete it (an 8-byte first fragment hides the TCP
 * flags from a `syn` match), so it is not merely malformed. */
static __always_inline enum fg_parse_result fg_tiny_fragment(bool more_fragments)
{
	return more_fragments ? FG_PARSE_TINY_FRAGMENT : FG_PARSE_MALFORMED_L4;
}

static __always_inline enum fg_parse_result fg_parse(void *data, void *data_end,
						     struct fg_packet *pkt)
{
	struct ethhdr *eth = data;
	void *cursor = eth + 1;
	__u16 ethertype;
	int i, walked;

	if (cursor > data_end)
		return FG_PARSE_MALFORMED;
	ethertype = eth->h_proto;

#pragma unroll
	for (i = 0; i < FG_VLAN_MAX; i++) {
		struct vlan_hdr *vlan = cursor;

		if (!fg_is_vlan(ethertype))
			break;
		if ((void *)(vlan + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ethertype = vlan->encapsulated_proto;
		cursor = vlan + 1;
	}
	if (fg_is_vlan(ethertype))
		return FG_PARSE_VLAN_OVERFLOW;

	if (ethertype == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = cursor;
		__u32 ihl_bytes;

		if ((void *)(iph + 1) > data_end)
			return FG_PARSE_MALFORMED;
		ihl_bytes = iph->ihl * 4;
		if (iph->version != 4 || ihl_bytes < sizeof(*iph) ||
		    bpf_ntohs(iph->tot_len) < ihl_bytes)
			return FG_PARSE_MALFORMED;
		if (cursor + ihl_bytes > data_end) /* options cut short */
			return FG_PARSE_MALFORMED;
		pkt->family = FG_FAMILY_IPV4;
		pkt->proto = iph->protocol;
		__builtin_memcpy(pkt->saddr, &iph->saddr, 4);
		/* Only the first fragment carries the L4 header. */
		if (iph->frag_off & bpf_htons(0x1fff))
			return FG_PARSE_IP;
		if (fg_parse_ports(cursor + ihl_bytes, data_end, pkt))
			/* More fragments follow: reassembly would complete
			 * the header, with flags the match never saw. */
			return fg_tiny_fragment(iph->frag_off & bpf_htons(0x2000));
		return FG_PARSE_IP;
	}

	if (ethertype == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = cursor;
		void *l4 = ip6h + 1;

		if ((void *)(ip6h + 1) > data_end)
			return FG_PARSE_MALFORMED;
		if (ip6h->version != 6)
			return FG_PARSE_MALFORMED;
		pkt->family = FG_FAMILY_IPV6;
		pkt->proto = ip6h->nexthdr;
		__builtin_memcpy(pkt->saddr, &ip6h->saddr, 16);
		walked = fg_walk_ipv6_ext(&l4, data_end, pkt);
		if (walked == -2)
			return FG_PARSE_EXT_OVERFLOW;
		if (walked < 0)
			return FG_PARSE_MALFORMED_L4;
		if (walked == 1)
			return FG_PARSE_IP;
		if (fg_parse_ports(l4, data_end, pkt))
			return fg_tiny_fragment(walked == 2);
		return FG_PARSE_IP;
	}

	return FG_PARSE_NON_IP;
}

static __always_inline __u64 fg_port_mask(void *map, __u32 slot, __u16 port)
{
	__u32 index = slot * FG_PORT_SLOTS + port;
	__u64 *mask = bpf_map_lookup_elem(map, &index);

	return mask ? *mask : 0;
}

/* The frame-length class of `match = ... size` (see FG_SIZE_CLASSES). */
static __always_inline __u32 fg_size_class(__u64 pkt_len)
{
	__u32 size_class = pkt_len >> FG_SIZE_CLASS_SHIFT < FG_SIZE_CLASSES
				   ? (__u32)(pkt_len >> FG_SIZE_CLASS_SHIFT)
				   : FG_SIZE_CLASSES - 1;

	/* The mask changes nothing but gives the verifier its bound, which
	 * clang's reordering of the clamp would otherwise lose. */
	asm volatile("" : "+r"(size_class));
	return size_class & (FG_SIZE_CLASSES - 1);
}

/* Bitmask of the policies whose match fits the packet. */
static __always_inline __u64 fg_match(const struct fg_policy_set *set, __u32 slot,
				      const struct fg_packet *pkt, __u64 pkt_len)
{
	__u64 candidates = set->proto_match[pkt->proto] & set->size_match[fg_size_class(pkt_len)];

	if (pkt->has_ports) {
		candidates &= fg_port_mask(&dport_match, slot, pkt->dport);
		if (candidates)
			candidates &= fg_port_mask(&sport_match, slot, pkt->sport);
	} else {
		candidates &= set->portless_match;
	}
	if (!pkt->is_syn)
		candidates &= ~set->syn_only;

	/* The LPM walk is the costliest step; skip it unless a candidate
	 * restricts its sources. */
	if (candidates & set->src_restricted) {
		struct fg_src_lpm_key key = {
			.prefixlen =
				FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
			.slot = slot,
			.family = pkt->family,
		};
		__u64 *allowed;

		__builtin_memcpy(key.addr, pkt->saddr, 16);
		allowed = bpf_map_lookup_elem(&src_match, &key);
		candidates &= ~set->src_restricted | (allowed ? *allowed : 0);
	}
	return candidates;
}

/* The longest [allow]/[deny] prefix that holds the source, or 0. An empty
 * trie answers at once. */
static __always_inline __u32 fg_access(__u32 slot, const struct fg_packet *pkt)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
		.slot = slot,
		.family = pkt->family,
	};
	__u32 *access;

	__builtin_memcpy(key.addr, pkt->saddr, 16);
	access = bpf_map_lookup_elem(&access_lists, &key);
	return access ? *access : 0;
}

/*
 * Emits one event about `key` if this CPU's event budget allows it, else
 * counts it in events_suppressed (as when the ring is full: nobody reads
 * it). Global, so the verifier checks it once; it is only called when an
 * event is due, never on the ordinary refusal path.
 */
__noinline int fg_emit_event(__u32 type, const struct fg_source_key *key, __u64 expires_ns,
			     __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_budget *limit;
	struct fg_event *event;
	__u32 zero = 0;
	__u64 tat;

	limit = bpf_map_lookup_elem(&event_budget, &zero);
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	if (!key || !limit || !gstats || !limit->gcra.interval_fp)
		return 0;
	if (!fg_gcra_admit(&limit->gcra, limit->tat_ns, now, 1, &tat)) {
		gstats->events_suppressed++;
		return 0;
	}
	limit->tat_ns = tat;
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		gstats->events_suppressed++;
		return 0;
	}
	event->time_ns = now;
	event->expires_ns = expires_ns;
	event->type = type;
	event->policy_id = key->policy_id;
	event->family = key->family;
	event->prefix_len = key->prefix_len;
	event->dport = key->dport;
	event->pad = 0;
	__builtin_memcpy(event->addr, key->addr, sizeof(event->addr));
	bpf_ringbuf_submit(event, 0);
	return 1;
}

/* An expired record is a strike record: it is kept FG_BAN_STRIKE_TTL_NS
 * past its ban so that a repeat offence is banned longer, then forgotten. */
static __always_inline bool fg_strike_forgotten(const struct fg_ban *ban, __u64 now)
{
	return ban->expires_ns != ~0ULL && now - ban->expires_ns >= FG_BAN_STRIKE_TTL_NS;
}

/* Lookups of the ban walk: an expired record is skipped by looking up the
 * next shorter prefix, so it never shadows an active ban that covers it.
 * Nested records come from policies' `per` prefixes and hand bans; more
 * than this many expired ones around one address is not a real table. */
#define FG_BAN_WALK 8

/* Is the source under an active ban? An empty or non-matching trie costs
 * one lookup, and no clock read. A strike record past its lifetime is
 * deleted on the way. */
static __always_inline int fg_banned(const struct fg_packet *pkt, struct fg_clock *clock)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + (pkt->family == FG_FAMILY_IPV4 ? 32 : 128),
		.family = pkt->family,
	};
	struct fg_ban *ban;
	__u32 prefix_len, i;
	__u64 now;

	__builtin_memcpy(key.addr, pkt->saddr, 16);
#pragma unroll
	for (i = 0; i < FG_BAN_WALK; i++) {
		ban = bpf_map_lookup_elem(&bans, &key);
		if (!ban)
			return 0;
		now = fg_clock_now(clock);
		if (now < ban->expires_ns)
			return 1;
		prefix_len = ban->prefix_len;
		if (prefix_len > 128)
			return 0; /* not a record floodgate wrote */
		if (fg_strike_forgotten(ban, now)) {
			key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len;
			bpf_map_delete_elem(&bans, &key);
		}
		if (!prefix_len)
			return 0;
		key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len - 1;
	}
	return 0;
}

/* Bans the key's source prefix after a refusal under action = ban. A repeat
 * offender's ban is ban_factor times the last one, up to ban_max_ns, while
 * its strike record lives. */
static __always_inline void fg_ban(const struct fg_policy *policy, const struct fg_source_key *key,
				   __u64 now, struct fg_global_stats *gstats)
{
	struct fg_src_lpm_key ban_key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + key->prefix_len,
		.family = key->family,
	};
	struct fg_ban fresh = {
		.duration_ns = policy->ban_ns,
		.strikes = 1,
		.policy_id = policy->id,
		.family = key->family,
		.prefix_len = key->prefix_len,
	};
	struct fg_ban *old;
	int err; /* int, not long: pre-6.4 JITs do not sign-extend it */

	__builtin_memcpy(ban_key.addr, key->addr, 16);
	old = bpf_map_lookup_elem(&bans, &ban_key);
	if (old && old->family == key->family && old->prefix_len == key->prefix_len) {
		if (now < old->expires_ns)
			return; /* already banned (a packet that raced the ban) */
		if (!fg_strike_forgotten(old, now)) {
			fresh.strikes = old->strikes + 1;
			fresh.duration_ns = old->duration_ns * policy->ban_factor;
			if (fresh.duration_ns > policy->ban_max_ns ||
			    fresh.duration_ns < old->duration_ns)
				fresh.duration_ns = policy->ban_max_ns;
		}
	}
	fresh.expires_ns = now + fresh.duration_ns;
	err = bpf_map_update_elem(&bans, &ban_key, &fresh, BPF_ANY);
	if (!err) {
		gstats->bans_added++;
		fg_emit_event(FG_EVENT_BANNED, key, fresh.expires_ns, now);
	} else {
		gstats->ban_insert_failed++; /* the trie is full: -ENOSPC */
		fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
	}
}

static __always_inline void fg_make_key(const struct fg_policy *policy, const struct fg_packet *pkt,
					struct fg_source_key *key)
{
	__u64 *addr = (__u64 *)key->addr;

	key->policy_id = policy->id;
	if (policy->key_kind == FG_KEY_GLOBAL)
		return;
	if (policy->flags & FG_POLICY_KEY_DPORT)
		key->dport = pkt->dport;
	key->family = pkt->family;
	if (pkt->family == FG_FAMILY_IPV4) {
		__u32 saddr;

		__builtin_memcpy(&saddr, pkt->saddr, 4);
		saddr &= policy->mask_v4_be;
		__builtin_memcpy(key->addr, &saddr, 4);
		key->prefix_len = policy->prefix_v4;
	} else {
		__u64 saddr[2];

		__builtin_memcpy(saddr, pkt->saddr, 16);
		addr[0] = saddr[0] & policy->mask_v6_be[0];
		addr[1] = saddr[1] & policy->mask_v6_be[1];
		key->prefix_len = policy->prefix_v6;
	}
}

/* The decision for the algorithms whose whole state is one __u64 in
 * `sources4` or `sources`: token_bucket and leaky_bucket (a TAT),
 * fixed_window (a packed window index and count). */
static __always_inline int fg_decide_word(const struct fg_policy *policy, __u64 state, __u64 now,
					  __u64 cost, __u64 *new_state)
{
	const struct fg_gcra_params *gcra;

	if (policy->algorithm == FG_ALG_FIXED_WINDOW)
		return fg_fixed_window_admit(&policy->params.fixed_window, state, now, cost,
					     new_state);
	/* leaky_bucket is GCRA too (fg_leaky_bucket_admit is fg_gcra_admit);
	 * both params sit at the same address, so this select costs nothing. */
	gcra = policy->algorithm == FG_ALG_LEAKY_BUCKET ? &policy->params.leaky_bucket.gcra
							: &policy->params.token_bucket;
	return fg_gcra_admit(gcra, state, now, cost, new_state);
}

/* Creates a key's state. The tables are LRU maps: when full they evict the
 * least recently used entry, so this fails only when the kernel cannot get
 * an element at all, and then on_insert_failure decides. An int, not a
 * long: pre-6.4 JITs do not sign-extend the helper's error (bcc #4571). */
static __always_inline int fg_insert_state(void *map, const void *key, const void *fresh)
{
	if (fg_test_fail_inserts)
		return -ENOMEM;
	return bpf_map_update_elem(map, key, fresh, BPF_NOEXIST);
}

/* Returned by a charge when the key has no state and the new-source budget
 * is spent: the caller charges the policy's overflow key instead. */
#define FG_NO_BUDGET -2

/* A 32-bit hash of the whole key, never 0. */
static __always_inline __u32 fg_key_hash(const struct fg_source_key *key)
{
	const __u32 *words = (const __u32 *)key;
	__u32 hash = 0, i;

#pragma unroll
	for (i = 0; i < sizeof(*key) / 4; i++)
		hash = (hash ^ words[i]) * 0x9e3779b1;
	return hash | 1;
}

/* Has this CPU turned the unknown key away recently? If not, remember it,
 * evicting the older of its set. A spoofed flood of R packets a second per
 * CPU keeps a source in memory for about FG_RECENT_SETS / R seconds: two
 * more misses in its set evict it (docs in README, Flood resilience). */
static __always_inline int fg_seen_before(const struct fg_source_key *key)
{
	__u32 zero = 0, hash = fg_key_hash(key), set = hash >> 20;
	struct fg_recent_sources *recent = bpf_map_lookup_elem(&recent_sources, &zero);

	_Static_assert(FG_RECENT_SETS == 1 << 12, "set = the hash's top 12 bits");
	if (!recent)
		return 0;
	if (recent->hash[set][0] == hash || recent->hash[set][1] == hash)
		return 1;
	recent->hash[set][1] = recent->hash[set][0];
	recent->hash[set][0] = hash;
	return 0;
}

/* May this CPU create one more per-source entry now? Per-CPU state, so no
 * atomics; only unknown sources ever get here. A source seen for the first
 * time may only spend the upper half of the bucket: the lower half is kept
 * for sources seen twice, so a spoofed flood (whose sources never repeat)
 * cannot starve a real new source, which repeats at once. With a per-CPU
 * burst of one there is no half to keep. The first refusal after an
 * allowance emits an event about the source that found the budget spent. */
static __always_inline int fg_budget_allows(const struct fg_source_key *key, __u64 now)
{
	__u32 zero = 0;
	struct fg_budget *budget = bpf_map_lookup_elem(&new_source_budget, &zero);
	struct fg_gcra_params limit;
	__u64 tat;

	if (!budget || !budget->gcra.interval_fp)
		return 1;
	limit = budget->gcra;
	if (limit.tolerance_ns / 2 >= fg_gcra_cost_ns(limit.interval_fp, 1))
		limit.tolerance_ns /= 2;
	if (fg_gcra_admit(&limit, budget->tat_ns, now, 1, &tat) ||
	    (fg_seen_before(key) && fg_gcra_admit(&budget->gcra, budget->tat_ns, now, 1, &tat))) {
		budget->tat_ns = tat;
		if (budget->exhausted)
			budget->exhausted = 0;
		return 1;
	}
	if (!budget->exhausted) {
		budget->exhausted = 1;
		fg_emit_event(FG_EVENT_BUDGET_EXHAUSTED, key, 0, now);
	}
	return 0;
}

/* The per-source drop count is sampled: one refusal in FG_DROP_SAMPLE adds
 * FG_DROP_SAMPLE. A refused packet then usually only reads its source's
 * state, so an abuser flooding from several CPUs does not bounce that cache
 * line between them. The exact counts are in the per-CPU policy_stats.
 *
 * The draw is this CPU's packet count through MurmurHash3's 64-bit
 * finalizer, not bpf_get_prandom_u32(): the helper call cost about 14 ns a
 * refusal here (A/B runs of bench_prog), the mix a few instructions. Its top bits have
 * no period that a round-robin of sources could fall in step with, so each
 * source's refusals are sampled one in 64 whatever the order of arrival. */
#define FG_DROP_SAMPLE 64
static __always_inline bool fg_drop_sampled(const struct fg_global_stats *gstats)
{
	__u64 draw = gstats->packets;

	_Static_assert(FG_DROP_SAMPLE == 1 << 6, "the draw's top 6 bits");
	draw ^= draw >> 33;
	draw *= 0xff51afd7ed558ccdULL;
	draw ^= draw >> 33;
	draw *= 0xc4ceb9fe1a85ec53ULL;
	draw ^= draw >> 33;
	return !(draw >> 58);
}

static __always_inline void fg_count_drop(__u32 *dropped, const struct fg_global_stats *gstats)
{
	if (fg_drop_sampled(gstats))
		*dropped += FG_DROP_SAMPLE;
}

/* A refusal of a source with state: counts it, and on the first refusal
 * after an admission sets FG_DROPPED_REFUSING and emits a `refusing`
 * event. Later refusals only read the flag, in the line the decision has
 * just read, so the refusal path writes nothing more than before. The
 * fetch-or makes one CPU the one that reports a transition. */
static __always_inline void fg_refused(__u32 *dropped, const struct fg_source_key *key, __u64 now,
				       const struct fg_global_stats *gstats)
{
	fg_count_drop(dropped, gstats);
	if (*dropped & FG_DROPPED_REFUSING)
		return;
	if (__sync_fetch_and_or(dropped, FG_DROPPED_REFUSING) & FG_DROPPED_REFUSING)
		return;
	fg_emit_event(FG_EVENT_REFUSING, key, 0, now);
}

/* An admission ends a refusal episode; written only at that transition. */
static __always_inline void fg_admitted(__u32 *dropped)
{
	if (*dropped & FG_DROPPED_REFUSING)
		__sync_fetch_and_and(dropped, ~FG_DROPPED_REFUSING);
}

static __always_inline void fg_touch(__u64 *last_seen_ns, __u64 now)
{
	if (now > *last_seen_ns && now - *last_seen_ns >= FG_LAST_SEEN_GRAIN_NS)
		*last_seen_ns = now;
}

/* Charges `cost` to a one-word state in `map` (sources4, sources or
 * host_sources) with compare-and-swap. `map_key` is the key in the map's
 * own layout; `key` the full one, for the budget and events. Returns 1 if
 * admitted, 0 if refused, and -1 if no state could be created (table
 * full). Inlined at each call site with a constant map, so each lookup
 * stays one the verifier can inline: a map chosen at run time would cost
 * every policy a helper call. */
static __always_inline int fg_charge_word(void *map, const void *map_key,
					  const struct fg_policy *policy, int budgeted,
					  const struct fg_source_key *key, __u64 now, __u64 cost,
					  struct fg_global_stats *gstats, __u64 *refused_state)
{
	struct fg_source_state *state;
	__u64 new_state = 0;
	int i;

	state = bpf_map_lookup_elem(map, map_key);
	if (!state) {
		struct fg_source_state fresh = {.last_seen = now >> FG_LAST_SEEN_SHIFT};
		int admitted;
		int err; /* int: see fg_ban */

		if (budgeted && !fg_budget_allows(key, now))
			return FG_NO_BUDGET;
		admitted = fg_decide_word(policy, 0, now, cost, &new_state);
		if (admitted)
			fresh.tat_ns = new_state;
		else
			fresh.dropped = FG_DROPPED_REFUSING;
		err = fg_insert_state(map, map_key, &fresh);
		if (!err) {
			gstats->sources_created++;
			if (!admitted)
				fg_emit_event(FG_EVENT_REFUSING, key, 0, now);
			return admitted;
		}
		/* Another CPU created it first: charge the state it made. */
		if (err != -EEXIST || !(state = bpf_map_lookup_elem(map, map_key))) {
			gstats->insert_failed++;
			fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
			return -1;
		}
	}
	/* Written only when it changes, about once a second. */
	if (state->last_seen != (__u32)(now >> FG_LAST_SEEN_SHIFT))
		state->last_seen = now >> FG_LAST_SEEN_SHIFT;

	if (fg_test_naive_update) {
		/* Deliberately racy, to prove the concurrency tests can fail. */
		if (!fg_decide_word(policy, state->tat_ns, now, cost, &new_state)) {
			fg_refused(&state->dropped, key, now, gstats);
			return 0;
		}
		state->tat_ns = new_state;
		fg_admitted(&state->dropped);
		return 1;
	}

	for (i = 0; i < FG_CAS_RETRIES; i++) {
		__u64 old = *(volatile __u64 *)&state->tat_ns;

		if (!fg_decide_word(policy, old, now, cost, &new_state)) {
			fg_refused(&state->dropped, key, now, gstats);
			*refused_state = old;
			return 0;
		}
		if (__sync_val_compare_and_swap(&state->tat_ns, old, new_state) == old) {
			fg_admitted(&state->dropped);
			return 1;
		}
	}
	/* Refusing is the safe side: admitting here could exceed the limit. */
	gstats->cas_exhausted++;
	fg_refused(&state->dropped, key, now, gstats);
	return 0;
}

/* The lock stripe that guards a key's multi-word state. The verifier lets
 * a program touch other map values while it holds a lock, so one array of
 * locks serves the LRU maps, which cannot hold a lock themselves. */
static __always_inline struct bpf_spin_lock *fg_lock_for(const struct fg_source_key *key)
{
	const __u32 *words = (const __u32 *)key;
	__u32 hash = key->policy_id, i;
	struct fg_state_lock *stripe;

#pragma unroll
	for (i = 2; i < sizeof(*key) / 4; i++)
		hash = (hash ^ words[i]) * 0x9e3779b1;
	hash &= FG_STATE_LOCKS - 1;
	stripe = bpf_map_lookup_elem(&state_locks, &hash);
	return stripe ? &stripe->lock : NULL;
}

/* sliding_window: two counters and a window start, under a lock stripe. */
static __always_inline int fg_charge_window(const struct fg_policy *policy, int budgeted,
					    const struct fg_source_key *key, __u64 now, __u64 cost,
					    struct fg_global_stats *gstats)
{
	const struct fg_sliding_window_params *params = &policy->params.sliding_window;
	struct fg_window_entry *entry = bpf_map_lookup_elem(&windows, key);
	struct bpf_spin_lock *lock;
	int admitted;

	if (!entry) {
		struct fg_window_entry fresh = {.last_seen_ns = now};
		int err; /* int: see fg_ban */

		if (budgeted && !fg_budget_allows(key, now))
			return FG_NO_BUDGET;
		err = fg_insert_state(&windows, key, &fresh);
		if (!err)
			gstats->sources_created++;
		entry = bpf_map_lookup_elem(&windows, key);
		if ((err && err != -EEXIST) || !entry) {
			gstats->insert_failed++;
			fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
			return -1;
		}
	}
	fg_touch(&entry->last_seen_ns, now);
	lock = fg_test_naive_update ? NULL : fg_lock_for(key);
	if (lock) {
		bpf_spin_lock(lock);
		admitted = fg_sliding_window_admit(params, &entry->state, now, cost, &entry->state);
		bpf_spin_unlock(lock);
	} else {
		admitted = fg_sliding_window_admit(params, &entry->state, now, cost, &entry->state);
	}
	if (admitted)
		fg_admitted(&entry->dropped);
	else
		fg_refused(&entry->dropped, key, now, gstats);
	return admitted;
}

/* sliding_log: a ring of the last COUNT admissions, under the entry's lock.
 * The entry is too large for the BPF stack, so a new one is copied from a
 * zeroed per-CPU template. */
static __always_inline int fg_charge_log(const struct fg_policy *policy, int budgeted,
					 const struct fg_source_key *key, __u64 now, __u64 cost,
					 struct fg_global_stats *gstats)
{
	const struct fg_sliding_log_params *params = &policy->params.sliding_log;
	struct fg_log_entry *entry = bpf_map_lookup_elem(&logs, key);
	struct bpf_spin_lock *lock;
	__u32 zero = 0;
	int admitted;

	if (!entry) {
		struct fg_log_entry *fresh = bpf_map_lookup_elem(&log_template, &zero);
		int err; /* int: see fg_ban */

		if (!fresh)
			return -1;
		if (budgeted && !fg_budget_allows(key, now))
			return FG_NO_BUDGET;
		err = fg_insert_state(&logs, key, fresh);
		if (!err)
			gstats->sources_created++;
		entry = bpf_map_lookup_elem(&logs, key);
		if ((err && err != -EEXIST) || !entry) {
			gstats->insert_failed++;
			fg_emit_event(FG_EVENT_TABLE_FULL, key, 0, now);
			return -1;
		}
	}
	fg_touch(&entry->last_seen_ns, now);
	lock = fg_test_naive_update ? NULL : fg_lock_for(key);
	if (lock) {
		bpf_spin_lock(lock);
		admitted = fg_sliding_log_admit(params, &entry->state, now, cost);
		bpf_spin_unlock(lock);
	} else {
		admitted = fg_sliding_log_admit(params, &entry->state, now, cost);
	}
	if (admitted)
		fg_admitted(&entry->dropped);
	else
		fg_refused(&entry->dropped, key, now, gstats);
	return admitted;
}

/* The source's slot in this CPU's `refusals` cache, with the runtime (for
 * the generation) and this CPU's global stats (for sources_created); NULL
 * if any is missing. */
static __always_inline struct fg_refusal *fg_refusal_slot(const struct fg_source4_key *key4,
							  struct fg_runtime **rt,
							  struct fg_global_stats **gstats)
{
	const __u32 *words = (const __u32 *)key4;
	__u32 slot = ((words[0] ^ words[1]) * 0x9e3779b1 ^ words[2]) * 0x9e3779b1, zero = 0;

	slot >>= 32 - FG_REFUSAL_BITS;
	*rt = bpf_map_lookup_elem(&runtime, &zero);
	*gstats = bpf_map_lookup_elem(&global_stats, &zero);
	if (!*rt || !*gstats)
		return NULL;
	return bpf_map_lookup_elem(&refusals, &slot);
}

static __always_inline bool fg_same_key4(const struct fg_source4_key *a,
					 const struct fg_source4_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/*
 * Would the source's state refuse this packet? Answered from the cache
 * when this CPU refused the source moments ago: the GCRA refuses against
 * the TAT seen then, so it refuses against the state's, which can only be
 * later (admissions move it forward, refusals do not move it). The GCRA is
 * the policy's as it is now. Global, like fg_apply_layer: the verifier
 * checks it once, not once per path through the caller.
 */
__noinline int fg_refusal_cached(const struct fg_source4_key *key4, __u64 now, __u64 cost,
				 __u64 interval_fp, __u64 tolerance_ns)
{
	const struct fg_gcra_params gcra = {.interval_fp = interval_fp,
					    .tolerance_ns = tolerance_ns};
	struct fg_global_stats *gstats;
	struct fg_refusal *seen;
	struct fg_runtime *rt;
	__u64 unused;

	if (!key4)
		return 0;
	seen = fg_refusal_slot(key4, &rt, &gstats);
	if (!seen || seen->generation != (__u32)rt->generation ||
	    now - seen->written_ns >= FG_REFUSAL_REFRESH_NS ||
	    gstats->sources_created - seen->created >= fg_refusal_churn_limit ||
	    !fg_same_key4(&seen->key, key4) ||
	    fg_gcra_admit(&gcra, seen->tat_ns, now, cost, &unused))
		return 0;
	if (fg_test_clock)
		fg_test_cached_refusals++;
	return 1;
}

/* Fills the source's cache slot after a refusal by its state. Nothing is
 * needed after an admission: the admission moved the TAT past what the
 * slot holds, and a TAT the GCRA would refuse against lies in the past now
 * (a refusal at `now` against it needs now < TAT + cost - tau, which an
 * admission at or before `now` rules out). */
__noinline int fg_refusal_note(const struct fg_source4_key *key4, __u64 refused_state, __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_refusal *seen;
	struct fg_runtime *rt;

	if (!key4)
		return 0;
	seen = fg_refusal_slot(key4, &rt, &gstats);
	if (!seen)
		return 0;
	seen->key = *key4;
	seen->generation = rt->generation;
	seen->tat_ns = refused_state;
	seen->written_ns = now;
	seen->created = gstats->sources_created;
	return 0;
}

/* An IPv4 source's one-word state, in `sources4`. A token_bucket or
 * leaky_bucket source that this CPU has just refused is refused again from
 * the `refusals` cache, without the table lookup (8-62 ns less a refusal
 * here, A/B runs of bench_prog; README), except for the one refusal in
 * FG_DROP_SAMPLE that the per-source count samples: that one, and any
 * after FG_REFUSAL_REFRESH_NS, looks the state up, which keeps its drop
 * count, last_seen and LRU recency, and refreshes the cache. */
static __always_inline int fg_charge_source4(const struct fg_policy *policy, int budgeted,
					     const struct fg_source_key *key, __u64 now, __u64 cost,
					     struct fg_global_stats *gstats)
{
	/* leaky_bucket's params are token_bucket's (fg_decide_word) */
	const struct fg_gcra_params *gcra = &policy->params.token_bucket;
	const bool cached = policy->algorithm != FG_ALG_FIXED_WINDOW && fg_refusal_churn_limit &&
			    !fg_test_naive_update;
	struct fg_source4_key key4 = fg_source4_key_of(key);
	__u64 refused_state = 0;
	int admitted;

	if (cached && !fg_drop_sampled(gstats) &&
	    fg_refusal_cached(&key4, now, cost, gcra->interval_fp, gcra->tolerance_ns))
		return 0;
	admitted = fg_charge_word(&sources4, &key4, policy, budgeted, key, now, cost, gstats,
				  &refused_state);
	if (cached && admitted == 0 && refused_state)
		fg_refusal_note(&key4, refused_state, now);
	return admitted;
}

static __always_inline int fg_charge_key(const struct fg_policy *policy, int budgeted,
					 const struct fg_source_key *key, __u64 now, __u64 cost,
					 struct fg_global_stats *gstats)
{
	__u64 refused_state;

	switch (policy->algorithm) {
	case FG_ALG_SLIDING_WINDOW:
		return fg_charge_window(policy, budgeted, key, now, cost, gstats);
	case FG_ALG_SLIDING_LOG:
		return fg_charge_log(policy, budgeted, key, now, cost, gstats);
	default:
		/* scope = host: the host's shared table (the same GCRA, CAS
		 * and budget; only the map differs). Inlined, not a global
		 * function: a fourth frame (fg_xdp, fg_apply_layer, it,
		 * fg_emit_event) takes the call chain past the verifier's
		 * 512-byte stack. */
		if (policy->flags & FG_POLICY_HOST)
			return fg_charge_word(&host_sources, key, policy, budgeted, key, now, cost,
					      gstats, &refused_state);
		/* The one branch the 96-byte IPv4 table costs a packet: the
		 * family was settled by the parser and fg_make_key. */
		if (key->family == FG_FAMILY_IPV4)
			return fg_charge_source4(policy, budgeted, key, now, cost, gstats);
		return fg_charge_word(&sources, key, policy, budgeted, key, now, cost, gstats,
				      &refused_state);
	}
}

/* Charges the packet's own key; an unknown source past the new-source
 * budget is charged to the policy's shared overflow key instead (and
 * *key becomes that key). */
static __always_inline int fg_charge(const struct fg_policy *policy, struct fg_source_key *key,
				     __u64 now, __u64 cost, struct fg_global_stats *gstats)
{
	int admitted = fg_charge_key(policy, 1, key, now, cost, gstats);

	if (admitted != FG_NO_BUDGET)
		return admitted;
	gstats->budget_overflow++;
	__builtin_memset(key, 0, sizeof(*key));
	key->policy_id = policy->id;
	key->family = FG_FAMILY_OVERFLOW;
	return fg_charge_key(policy, 0, key, now, cost, gstats);
}

/* Does the fleet hold this key (or every fleet-scoped key, while Redis is
 * down under on_redis_down = closed)? */
static __always_inline bool fg_fleet_held(const struct fg_fleet_state *fleet,
					  const struct fg_source_key *key, __u64 now)
{
	struct fg_fleet_hold *hold;

	if (fleet->refuse_all)
		return true;
	hold = bpf_map_lookup_elem(&fleet_holds, key);
	return hold && now < hold->until_ns;
}

/* Counts an admission of a fleet-scoped key for the next sync. Per-CPU
 * values: no atomics. A count that cannot be stored is lost to the fleet,
 * never to the local limit. */
static __always_inline void fg_fleet_count(const struct fg_fleet_state *fleet,
					   const struct fg_source_key *key, __u64 pkt_len)
{
	struct fg_fleet_key fkey = {.key = *key, .epoch = fleet->epoch};
	struct fg_fleet_count *count = bpf_map_lookup_elem(&fleet_counts, &fkey);
	struct fg_fleet_count fresh = {.packets = 1, .bytes = pkt_len};

	if (count) {
		count->packets++;
		count->bytes += pkt_len;
		return;
	}
	if (bpf_map_update_elem(&fleet_counts, &fkey, &fresh, BPF_NOEXIST)) {
		count = bpf_map_lookup_elem(&fleet_counts, &fkey);
		if (count) {
			count->packets++;
			count->bytes += pkt_len;
		}
	}
}

/* Applies one policy to the packet and counts the outcome. Returns
 * FG_VERDICT_DROP only for a refusal under action = drop. */
static __always_inline enum fg_verdict fg_apply(const struct fg_policy_set *set, __u32 slot,
						__u32 index, const struct fg_packet *pkt,
						__u64 pkt_len, __u64 now,
						struct fg_global_stats *gstats)
{
	const struct fg_policy *policy = &set->policies[index];
	__u32 stats_index = slot * FG_MAX_POLICIES + index;
	struct fg_policy_stats *pstats = bpf_map_lookup_elem(&policy_stats, &stats_index);
	struct fg_fleet_state *fleet = NULL;
	struct fg_source_key key = {};
	__u32 zero = 0;
	__u64 cost = 1;
	int admitted;

	if (!pstats)
		return FG_VERDICT_PASS;
	if (policy->flags & FG_POLICY_FLEET)
		fleet = bpf_map_lookup_elem(&fleet_state, &zero);
	if (policy->flags & FG_POLICY_BYTES)
		cost = pkt_len > FG_MAX_COST ? FG_MAX_COST : pkt_len;
	pstats->matched_packets++;
	pstats->matched_bytes += pkt_len;

	fg_make_key(policy, pkt, &key);
	if (fleet && fg_fleet_held(fleet, &key, now)) {
		/* Not charged locally: the fleet already counted it. */
		gstats->fleet_held++;
		admitted = 0;
	} else {
		admitted = fg_charge(policy, &key, now, cost, gstats);
		if (admitted < 0)
			admitted = set->table_full_verdict == FG_VERDICT_PASS;
		if (admitted && fleet)
			fg_fleet_count(fleet, &key, pkt_len);
	}
	if (admitted) {
		pstats->passed_packets++;
		pstats->passed_bytes += pkt_len;
		return FG_VERDICT_PASS;
	}
	if (policy->action == FG_ACTION_MONITOR) {
		pstats->would_drop_packets++;
		pstats->would_drop_bytes += pkt_len;
		pstats->passed_packets++;
		pstats->passed_bytes += pkt_len;
		return FG_VERDICT_PASS;
	}
	pstats->dropped_packets++;
	pstats->dropped_bytes += pkt_len;
	if (policy->action == FG_ACTION_BAN && key.family != FG_FAMILY_OVERFLOW &&
	    policy->key_kind != FG_KEY_GLOBAL)
		fg_ban(policy, &key, now, gstats);
	return FG_VERDICT_DROP;
}

/*
 * One layer of the policy walk, as a global (non-static) function: the
 * verifier checks a global function once, on its own, instead of once per
 * call site and loop iteration, which keeps the 64-layer walk far below the
 * instruction limit.
 */
__noinline int fg_apply_layer(__u32 slot, __u32 index, const struct fg_packet *pkt, __u64 pkt_len,
			      __u64 now)
{
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	__u32 zero = 0;

	slot &= FG_POLICY_SLOTS - 1;
	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!pkt || !gstats || !set || index >= FG_MAX_POLICIES)
		return FG_VERDICT_PASS;
	return fg_apply(set, slot, index, pkt, pkt_len, now, gstats);
}

static __always_inline enum fg_verdict fg_process(void *data, void *data_end, __u64 pkt_len)
{
	struct fg_packet pkt = {};
	struct fg_global_stats *gstats;
	struct fg_policy_set *set;
	struct fg_runtime *rt;
	enum fg_parse_result parsed;
	struct fg_clock clock = {};
	__u32 zero = 0, slot, index, i, access;
	__u64 candidates, now;

	gstats = bpf_map_lookup_elem(&global_stats, &zero);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!gstats || !rt)
		return FG_VERDICT_PASS;
	slot = rt->active_slot & (FG_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&policy_sets, &slot);
	if (!set)
		return FG_VERDICT_PASS;
	gstats->packets++;

	parsed = fg_parse(data, data_end, &pkt);
	if (fg_bench_source_mask && pkt.family == FG_FAMILY_IPV4) {
		__u32 index = fg_bench_source_mask == ~0U ? bpf_get_prandom_u32()
							  : fg_bench_seq++ & fg_bench_source_mask;
		__u32 saddr = bpf_htonl(0x0a000000 | (index & 0xffffff));

		__builtin_memcpy(pkt.saddr, &saddr, 4);
	}
	if (parsed == FG_PARSE_NON_IP) {
		gstats->non_ip++;
		return FG_VERDICT_PASS;
	}
	if (parsed == FG_PARSE_MALFORMED) {
		gstats->malformed++;
		return set->malformed_verdict;
	}
	if (parsed == FG_PARSE_VLAN_OVERFLOW) {
		gstats->malformed++;
		gstats->vlan_overflow++;
		return FG_VERDICT_DROP;
	}

	/* Every packet with a source address meets the access lists and the
	 * bans before anything else, whatever its protocol or its damage. */
	access = set->access_prefixes ? fg_access(slot, &pkt) : 0;
	if (access == FG_ACCESS_ALLOW) {
		gstats->allowed++;
		return FG_VERDICT_PASS;
	}
	if (access == FG_ACCESS_DENY) {
		gstats->denied++;
		return FG_VERDICT_DROP;
	}
	if (fg_banned(&pkt, &clock)) {
		gstats->banned++;
		return FG_VERDICT_DROP;
	}
	if (parsed == FG_PARSE_MALFORMED_L4) {
		gstats->malformed++;
		return set->malformed_verdict;
	}
	/* Counted only here, after the lists and bans: a packet a list or
	 * a ban already dropped is counted there, not twice. */
	if (parsed == FG_PARSE_TINY_FRAGMENT || parsed == FG_PARSE_EXT_OVERFLOW) {
		gstats->malformed++;
		if (parsed == FG_PARSE_TINY_FRAGMENT)
			gstats->tiny_fragments++;
		else
			gstats->ipv6_ext_overflow++;
		return FG_VERDICT_DROP;
	}
	gstats->parsed++;

	candidates = fg_match(set, slot, &pkt, pkt_len);
	if (!candidates) {
		gstats->unmatched++;
		return FG_VERDICT_PASS;
	}
	now = fg_clock_now(&clock);

	/* Every matching policy is a layer, applied in file order (lowest bit
	 * first). The packet passes only if all admit it; the first refusal
	 * stops the walk, so later layers are not charged for a dropped
	 * packet. */
	for (i = 0; i < FG_MAX_POLICIES; i++) {
		if (!candidates)
			break;
		index = fg_lowest_bit(candidates);
		candidates &= candidates - 1;
		/* clang knows the table's values and would drop this bound,
		 * which the verifier needs; hide the value from it. */
		asm volatile("" : "+r"(index));
		if (index >= FG_MAX_POLICIES)
			break;
		if (fg_apply_layer(slot, index, &pkt, pkt_len, now) == FG_VERDICT_DROP)
			return FG_VERDICT_DROP;
	}
	return FG_VERDICT_PASS;
}

SEC("xdp")
int fg_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 pkt_len = data_end - data;

	if (fg_test_clock && fg_test_wire_len)
		pkt_len = fg_test_wire_len;
	if (fg_process(data, data_end, pkt_len) == FG_VERDICT_DROP)
		return XDP_DROP;
	return XDP_PASS;
}

/* Enough linear bytes for Ethernet, FG_VLAN_MAX VLAN tags, IPv4 with
 * options or IPv6 with a few extension headers, and a TCP header. */
#define FG_TC_HEADER_BYTES 256

SEC("tc")
int fg_tc(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 want = skb->len < FG_TC_HEADER_BYTES ? skb->len : FG_TC_HEADER_BYTES;

	/* Headers may sit in paged data; make them readable, once. */
	if (data_end - data < want) {
		bpf_skb_pull_data(skb, want);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}

	if (fg_process(data, data_end, skb->len) == FG_VERDICT_DROP)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
