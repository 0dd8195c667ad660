// SPDX-License-Identifier: GPL-2.0-only
/* Conntrack entries for connections open before the SYN proxy (see
 * ct_seed.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "attach/ct_seed.h"
#include "base/log.h"

#define TCP_ESTABLISHED_STATE 1 /* /proc/net/tcp's `st` of an established socket */
/* conntrack's own timeout for an established connection (5 days); the
 * next packet sets it again. */
#define SEED_TIMEOUT_S	      432000

struct tcp_conn {
	int family; /* AF_INET or AF_INET6, as on the wire */
	__u8 local[16], remote[16];
	__u16 local_port, remote_port;
};

static bool port_proxied(const struct fg_synproxy_conf *conf, unsigned int port)
{
	unsigned int i;

	for (i = 0; i < conf->n_ports; i++)
		if (port >= conf->ports[i].lo && port <= conf->ports[i].hi)
			return true;
	return false;
}

/* /proc/net/tcp6 shows IPv4 connections of dual-stack sockets as
 * ::ffff:a.b.c.d; on the wire, and in conntrack, they are IPv4. */
static void unmap_v4(struct tcp_conn *c)
{
	static const __u8 mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (c->family != AF_INET6 || memcmp(c->local, mapped, 12) || memcmp(c->remote, mapped, 12))
		return;
	c->family = AF_INET;
	memmove(c->local, c->local + 12, 4);
	memmove(c->remote, c->remote + 12, 4);
}

/* The kernel prints each 32-bit word of an address as the number it
 * holds in memory: stored back the same way, it is in network order. */
static void words_to_addr(const unsigned int *words, int n, __u8 *addr)
{
	int i;

	for (i = 0; i < n; i++)
		memcpy(addr + 4 * i, &words[i], 4);
}

static int parse_line(const char *line, int family, struct tcp_conn *c, unsigned int *state)
{
	unsigned int l[4], r[4], lport, rport;
	int n;

	memset(c, 0, sizeof(*c));
	c->family = family;
	if (family == AF_INET)
		n = sscanf(line, " %*u: %8X:%4X %8X:%4X %2X", &l[0], &lport, &r[0], &rport, state);
	else
		n = sscanf(line, " %*u: %8X%8X%8X%8X:%4X %8X%8X%8X%8X:%4X %2X", &l[0], &l[1], &l[2],
			   &l[3], &lport, &r[0], &r[1], &r[2], &r[3], &rport, state);
	if (n != (family == AF_INET ? 5 : 11))
		return -EINVAL;
	words_to_addr(l, family == AF_INET ? 1 : 4, c->local);
	words_to_addr(r, family == AF_INET ? 1 : 4, c->remote);
	c->local_port = lport;
	c->remote_port = rport;
	unmap_v4(c);
	return 0;
}

static void put_tuple(struct nlmsghdr *nlh, __u16 type, int family, const __u8 *src,
		      const __u8 *dst, __u16 sport, __u16 dport)
{
	struct nlattr *tuple = mnl_attr_nest_start(nlh, type), *nest;

	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	if (family == AF_INET) {
		mnl_attr_put(nlh, CTA_IP_V4_SRC, 4, src);
		mnl_attr_put(nlh, CTA_IP_V4_DST, 4, dst);
	} else {
		mnl_attr_put(nlh, CTA_IP_V6_SRC, 16, src);
		mnl_attr_put(nlh, CTA_IP_V6_DST, 16, dst);
	}
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, IPPROTO_TCP);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_nest_end(nlh, tuple);
}

/* Inserts `c` as an established connection opened by the remote end.
 * Returns 1 when inserted, 0 when conntrack had it, or a negative errno. */
static int insert_conn(struct mnl_socket *nl, const struct tcp_conn *c, __u32 seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	const struct nf_ct_tcp_flags liberal = {.flags = IP_CT_TCP_FLAG_BE_LIBERAL,
						.mask = IP_CT_TCP_FLAG_BE_LIBERAL};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *info, *tcp;
	ssize_t len;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = c->family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	put_tuple(nlh, CTA_TUPLE_ORIG, c->family, c->remote, c->local, c->remote_port,
		  c->local_port);
	put_tuple(nlh, CTA_TUPLE_REPLY, c->family, c->local, c->remote, c->local_port,
		  c->remote_port);
	/* ctnetlink marks a new entry confirmed before it applies the status,
	 * and refuses a status that would clear the mark (EBUSY). */
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED));
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(SEED_TIMEOUT_S));
	info = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, sizeof(liberal), &liberal);
	mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_REPLY, sizeof(liberal), &liberal);
	mnl_attr_nest_end(nlh, tcp);
	mnl_attr_nest_end(nlh, info);

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	len = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (len < 0)
		return -errno;
	if (mnl_cb_run(buf, len, seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
		return errno == EEXIST ? 0 : -errno;
	return 1;
}

/* Seeds the connections of one /proc/net file; returns how many were
 * inserted, or a negative errno. */
static int seed_file(struct mnl_socket *nl, const char *path, int family,
		     const struct fg_synproxy_conf *conf, __u32 *seq)
{
	FILE *f = fopen(path, "r");
	char line[512];
	struct tcp_conn c;
	unsigned int state;
	int inserted = 0, ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno; /* no IPv6 in this kernel */
	if (!fgets(line, sizeof(line), f))	     /* the header */
		goto out;
	while (fgets(line, sizeof(line), f)) {
		if (parse_line(line, family, &c, &state) || state != TCP_ESTABLISHED_STATE ||
		    !port_proxied(conf, c.local_port))
			continue;
		ret = insert_conn(nl, &c, ++*seq);
		if (ret < 0)
			break;
		inserted += ret;
	}
out:
	fclose(f);
	return ret < 0 ? ret : inserted;
}

int fg_ct_seed_established(const struct fg_synproxy_conf *conf, struct fg_err *err)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	__u32 seq = (__u32)time(NULL);
	int v4 = 0, v6 = 0;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		if (nl)
			mnl_socket_close(nl);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot open a conntrack netlink socket: %s",
			       strerror(e));
	}
	v4 = seed_file(nl, "/proc/net/tcp", AF_INET, conf, &seq);
	if (v4 >= 0)
		v6 = seed_file(nl, "/proc/net/tcp6", AF_INET6, conf, &seq);
	mnl_socket_close(nl);
	if (v4 < 0 || v6 < 0)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "cannot give conntrack the connections already open on the SYN "
			       "proxy's ports: %s",
			       strerror(-(v4 < 0 ? v4 : v6)));
	if (v4 + v6)
		pr_info("kept %d connections open before the SYN proxy (conntrack entries)\n",
			v4 + v6);
	return v4 + v6;
}
