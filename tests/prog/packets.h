/* SPDX-License-Identifier: GPL-2.0-only */
/* Builders for the crafted frames of the BPF_PROG_TEST_RUN tests. */
#ifndef FG_TEST_PACKETS_H
#define FG_TEST_PACKETS_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#define PKT_MAX_VLANS 12

struct pkt_spec {
	int family; /* 4 or 6 */
	const char *src;
	int proto; /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, ... */
	uint16_t dport;
	int vlans;	   /* VLAN tags, 0..PKT_MAX_VLANS */
	unsigned ad_tags;  /* bit i set: tag i (outermost 0) is 802.1ad, else 802.1Q;
			    * 0 keeps the classic QinQ: 802.1ad outer when 2 tags */
	int vid0;	   /* the tags are priority-only (VID 0, PCP 3) */
	int l4_cut;	   /* > 0: the L4 header is cut to this many bytes and the
			    * IP lengths say so (a tiny first fragment) */
	size_t pad;	   /* payload bytes after the L4 header */
	uint16_t frag_off; /* IPv4 fragment offset field, host order */
	int ihl;	   /* IPv4 header words; 0 means 5 (options are NOPs) */
	uint16_t sport;	   /* 0 means 40000 */
	int ack;	   /* TCP: set ACK besides SYN */
	int n_ext;	   /* IPv6 extension headers before L4, 8 bytes each */
	uint8_t ext[12];   /* their types: 0 hop-by-hop, 43 routing, 44 fragment, 60 dst */
	uint16_t ext_frag; /* IPv6 fragment header's offset field, host order */
	uint16_t ext_size; /* bytes of each other extension header (a multiple of
			    * 8, at most 2048); 0 means 8 */
	uint32_t frag_id;  /* IPv4 identification (16 bits) or IPv6 fragment id */
	const char *dst;   /* NULL means 192.0.2.1 or 2001:db8::1 */
};

/* Bytes of extension header i of the spec. */
static inline size_t ext_header_size(const struct pkt_spec *s, int i)
{
	return s->ext[i] == 44 || !s->ext_size ? 8 : s->ext_size;
}

/* The ethertype that announces tag i. */
static inline uint16_t vlan_tag_type(const struct pkt_spec *s, int i)
{
	if (!s->ad_tags)
		return htons(i == 0 && s->vlans == 2 ? ETH_P_8021AD : ETH_P_8021Q);
	return htons(s->ad_tags & (1u << i) ? ETH_P_8021AD : ETH_P_8021Q);
}

/* Writes the frame into buf (at least PKT_BUF_SIZE bytes) and returns its
 * length. */
#define PKT_BUF_SIZE 1600
static inline size_t build_packet(uint8_t *buf, const struct pkt_spec *s)
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	uint8_t *p = buf + sizeof(*eth);
	uint16_t ethertype = htons(s->family == 6 ? ETH_P_IPV6 : ETH_P_IP);
	size_t l4_len, ip_len, ext_len = 0;
	int i;

	memset(buf, 0, PKT_BUF_SIZE);
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", 6);
	eth->h_proto = s->vlans ? vlan_tag_type(s, 0) : ethertype;
	for (i = 0; i < s->vlans && i < PKT_MAX_VLANS; i++) {
		uint16_t tci = htons(s->vid0 ? 3 << 13 : 100 + i);
		uint16_t next = i + 1 < s->vlans ? vlan_tag_type(s, i + 1) : ethertype;

		memcpy(p, &tci, 2);
		memcpy(p + 2, &next, 2);
		p += 4;
	}
	l4_len = (s->proto == IPPROTO_TCP ? sizeof(struct tcphdr) : 8) + s->pad;
	if (s->l4_cut)
		l4_len = s->l4_cut;
	if (s->family == 6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)p;

		for (i = 0; i < s->n_ext; i++)
			ext_len += ext_header_size(s, i);
		ip6->version = 6;
		ip6->payload_len = htons(l4_len + ext_len);
		ip6->nexthdr = s->n_ext ? s->ext[0] : s->proto;
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, s->src, &ip6->saddr);
		inet_pton(AF_INET6, s->dst ? s->dst : "2001:db8::1", &ip6->daddr);
		p += sizeof(*ip6);
		for (i = 0; i < s->n_ext; i++) {
			p[0] = i + 1 < s->n_ext ? s->ext[i + 1] : s->proto;
			if (s->ext[i] == 44) { /* fragment: the offset field, no length */
				uint16_t off = htons(s->ext_frag);

				uint32_t id = htonl(s->frag_id);

				memcpy(p + 2, &off, 2);
				memcpy(p + 4, &id, 4);
			} else {
				p[1] = ext_header_size(s, i) / 8 - 1;
			}
			p += ext_header_size(s, i);
		}
	} else {
		struct iphdr *ip = (struct iphdr *)p;
		int ihl = s->ihl ? s->ihl : 5;

		ip->version = 4;
		ip->ihl = ihl;
		ip_len = ihl * 4 + l4_len;
		ip->tot_len = htons(ip_len);
		ip->ttl = 64;
		ip->protocol = s->proto;
		ip->frag_off = htons(s->frag_off);
		ip->id = htons(s->frag_id);
		if (ihl > 5) /* NOP options */
			memset(p + sizeof(*ip), 1, ihl * 4 - sizeof(*ip));
		inet_pton(AF_INET, s->src, &ip->saddr);
		inet_pton(AF_INET, s->dst ? s->dst : "192.0.2.1", &ip->daddr);
		p += ihl * 4;
	}
	if (s->proto == IPPROTO_TCP) {
		struct tcphdr *th = (struct tcphdr *)p;

		th->source = htons(s->sport ? s->sport : 40000);
		th->dest = htons(s->dport);
		th->doff = 5;
		th->syn = 1;
		th->ack = !!s->ack;
	} else if (s->proto == IPPROTO_UDP) {
		struct udphdr *uh = (struct udphdr *)p;

		uh->source = htons(s->sport ? s->sport : 40000);
		uh->dest = htons(s->dport);
		uh->len = htons(l4_len);
	}
	p += l4_len;
	return p - buf;
}

#endif /* FG_TEST_PACKETS_H */
