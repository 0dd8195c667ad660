// SPDX-License-Identifier: GPL-2.0-only
/*
 * action = ban needs evidence that the source can receive: TCP bans only a
 * 4-tuple with an established socket on this host, other traffic only with
 * ban_unverified = yes; the host's own addresses are never banned, and a
 * refusal the fleet made (a hold, or on_redis_down = closed) never bans.
 * The refusal itself always stands.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fixtures.h"

#define BAN_TCP                                                                                    \
	"[policy b]\nmatch = tcp\nper = src/32 src/128\nrate = 1/s\nburst = 1\naction = ban 10s\n"
#define BAN_ANY                                                                                    \
	"[policy b]\nmatch = any\nper = src/32 src/128\nrate = 1/s\nburst = 1\naction = ban 10s\n"

static bool banned_record(struct floodgate_bpf *skel, int family, const char *addr, int len)
{
	struct fg_src_lpm_key key = {.prefixlen = FG_SRC_LPM_HEADER_BITS + len, .family = family};
	struct fg_ban ban;

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.bans), &key, &ban) &&
	       ban.prefix_len == len; /* not a shorter prefix that holds it */
}

/* An established TCP connection on loopback, in this network namespace
 * (where BPF_PROG_TEST_RUN's device lives): `client` connected from
 * `client_addr` to a listener on `server_addr`. */
struct tcp_pair {
	int listener, client, server;
	uint16_t client_port, server_port; /* host order */
};

static void sockaddr_of(int family, const char *addr, uint16_t port, struct sockaddr_storage *ss,
			socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		*len = sizeof(*in6);
	}
}

static uint16_t port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

static struct tcp_pair tcp_connect(int family, const char *client_addr, const char *server_addr)
{
	int domain = family == 4 ? AF_INET : AF_INET6;
	struct sockaddr_storage ss;
	struct tcp_pair p;
	socklen_t len;

	p.listener = socket(domain, SOCK_STREAM, 0);
	p.client = socket(domain, SOCK_STREAM, 0);
	assert_true(p.listener >= 0 && p.client >= 0);
	sockaddr_of(family, server_addr, 0, &ss, &len);
	assert_int_equal(bind(p.listener, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(p.listener, 4), 0);
	p.server_port = port_of(p.listener);
	sockaddr_of(family, client_addr, 0, &ss, &len);
	assert_int_equal(bind(p.client, (struct sockaddr *)&ss, len), 0);
	sockaddr_of(family, server_addr, p.server_port, &ss, &len);
	assert_int_equal(connect(p.client, (struct sockaddr *)&ss, len), 0);
	p.server = accept(p.listener, NULL, NULL);
	assert_true(p.server >= 0);
	p.client_port = port_of(p.client);
	return p;
}

static void tcp_close(struct tcp_pair *p)
{
	close(p->server);
	close(p->client);
	close(p->listener);
}

/* A spoofed SYN flood in a victim's name (no connection of this host has
 * it at the other end) is refused but bans no one, on both hooks, IPv4
 * and IPv6. */
FG_PROG_TEST(test_ban_spoofed_syn_bans_no_one)
{
	struct floodgate_bpf *skel = load_sized(BAN_TCP, FG_SKEL_EVERY_PROG, 0, 0, false);
	struct pkt_spec syn = {.family = 4, .src = "10.0.0.1", .proto = IPPROTO_TCP, .dport = 80};
	struct pkt_spec syn6 = {
		.family = 6, .src = "2001:db8:1::1", .proto = IPPROTO_TCP, .dport = 80};

	assert_int_equal(hook_passed(skel, false, T0, &syn, 5), 1);
	assert_int_equal(hook_passed(skel, true, T0, &syn6, 5), 1);
	assert_false(banned_record(skel, 4, "10.0.0.1", 32));
	assert_false(banned_record(skel, 6, "2001:db8:1::1", 128));
	assert_int_equal(global_stats(skel).bans_added, 0);
	/* the refusal stands: the bucket still refuses */
	assert_int_equal(hook_passed(skel, true, T0, &syn, 3), 0);
	release_skel(skel);
}

/* A source with an established connection to this host, flooding on its
 * 4-tuple, is banned, on both hooks; a packet to the listener from an
 * address without a connection (the lookup finds only the listening
 * socket) is not. */
FG_PROG_TEST(test_ban_needs_an_established_connection)
{
	struct floodgate_bpf *skel = load_sized(BAN_TCP, FG_SKEL_EVERY_PROG, 0, 0, false);
	struct tcp_pair v4 = tcp_connect(4, "127.0.0.2", "127.0.0.1");
	struct tcp_pair v6 = tcp_connect(6, "::1", "::1");
	struct pkt_spec ack = {.family = 4,
			       .src = "127.0.0.2",
			       .dst = "127.0.0.1",
			       .proto = IPPROTO_TCP,
			       .ack = 1,
			       .sport = v4.client_port,
			       .dport = v4.server_port};
	struct pkt_spec stranger = ack, ack6 = {.family = 6,
						.src = "::1",
						.dst = "::1",
						.proto = IPPROTO_TCP,
						.ack = 1,
						.sport = v6.client_port,
						.dport = v6.server_port};

	stranger.src = "127.0.0.3";
	assert_int_equal(hook_passed(skel, false, T0, &stranger, 3), 1);
	assert_false(banned_record(skel, 4, "127.0.0.3", 32));
	assert_int_equal(hook_passed(skel, false, T0, &ack, 3), 1);
	assert_true(banned_record(skel, 4, "127.0.0.2", 32));
	assert_int_equal(hook_passed(skel, true, T0, &ack6, 3), 1);
	assert_true(banned_record(skel, 6, "::1", 128));
	assert_int_equal(global_stats(skel).bans_added, 2);
	tcp_close(&v4);
	tcp_close(&v6);
	release_skel(skel);
}

/* UDP (and any protocol but TCP) bans only with ban_unverified = yes. */
FG_PROG_TEST(test_ban_udp_needs_ban_unverified)
{
	struct floodgate_bpf *skel = load_with(BAN_ANY);

	assert_int_equal(xdp_passed(skel, T0, &udp_a, 4), 1);
	assert_false(banned_record(skel, 4, "10.0.0.1", 32));
	assert_int_equal(global_stats(skel).bans_added, 0);
	release_skel(skel);

	skel = load_with(BAN_ANY "ban_unverified = yes\n");
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 4), 1);
	assert_true(banned_record(skel, 4, "10.0.0.1", 32));
	assert_int_equal(global_stats(skel).bans_added, 1);
	release_skel(skel);
}

static void put_own_addr(struct floodgate_bpf *skel, int family, const char *addr)
{
	struct fg_own_addr_key key = {.family = family};
	__u8 one = 1;

	inet_pton(family == 4 ? AF_INET : AF_INET6, addr, key.addr);
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(skel->maps.own_addrs), &key, &one, BPF_ANY), 0);
}

/* The host's own addresses: a ban by hand (or by the fleet) that covers
 * one does not drop it, while its neighbours stay banned. */
FG_PROG_TEST(test_ban_covering_an_own_address_spares_it)
{
	struct floodgate_bpf *skel = load_with(BAN_ANY);
	struct pkt_spec own = udp_a, neighbour = udp_a,
			own6 = {.family = 6,
				.src = "2001:db8:1::1",
				.proto = IPPROTO_UDP,
				.dport = 9};

	neighbour.src = "10.0.0.2";
	put_own_addr(skel, 4, "10.0.0.1");
	put_own_addr(skel, 6, "2001:db8:1::1");
	put_ban(skel, 4, "10.0.0.0", 24, ~0ULL);
	put_ban(skel, 6, "2001:db8:1::", 48, ~0ULL);
	assert_int_equal(xdp_passed(skel, T0, &own, 1), 1);
	assert_int_equal(xdp_passed(skel, T0, &own6, 1), 1);
	assert_int_equal(xdp_passed(skel, T0, &neighbour, 1), 0);
	assert_int_equal(global_stats(skel).banned, 1);
	release_skel(skel);
}

/* ... and a policy never bans one, even with ban_unverified = yes (a
 * spoofer sending in the host's own name); the refusal still drops. */
FG_PROG_TEST(test_ban_policy_never_bans_an_own_address)
{
	struct floodgate_bpf *skel = load_with(BAN_ANY "ban_unverified = yes\n");
	struct pkt_spec stranger = udp_a;

	stranger.src = "10.0.0.2";
	put_own_addr(skel, 4, "10.0.0.1");
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 4), 1);
	assert_false(banned_record(skel, 4, "10.0.0.1", 32));
	assert_int_equal(xdp_passed(skel, T0, &stranger, 4), 1);
	assert_true(banned_record(skel, 4, "10.0.0.2", 32));
	release_skel(skel);
}

static void set_fleet(struct floodgate_bpf *skel, __u32 refuse_all)
{
	struct fg_fleet_state st = {.refuse_all = refuse_all};
	__u32 zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_state), &zero, &st, 0),
			 0);
}

/* A refusal that comes from the fleet (a hold on the key, or every key
 * while Redis is down under on_redis_down = closed) drops but never bans;
 * the policy's own refusal still does. */
FG_PROG_TEST(test_ban_fleet_refusal_bans_no_one)
{
	struct floodgate_bpf *skel = load_with(BAN_ANY "ban_unverified = yes\nscope = fleet\n"
						       "[fleet]\nredis = 127.0.0.1:6379\n"
						       "on_redis_down = closed\n");
	struct fg_source_key held = {.family = FG_FAMILY_IPV4, .prefix_len = 32};
	struct fg_fleet_hold hold = {.until_ns = T0 + 2 * SEC};
	struct pkt_spec b = udp_a;

	held.policy_id = fg_policy_id_of(skel, "b");
	inet_pton(AF_INET, "10.0.0.1", held.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fleet_holds), &held, &hold, 0),
			 0);
	assert_int_equal(xdp_passed(skel, T0, &udp_a, 3), 0);
	assert_false(banned_record(skel, 4, "10.0.0.1", 32));
	b.src = "10.0.0.2";
	set_fleet(skel, 1); /* Redis down, closed */
	assert_int_equal(xdp_passed(skel, T0, &b, 3), 0);
	assert_false(banned_record(skel, 4, "10.0.0.2", 32));
	assert_int_equal(global_stats(skel).fleet_held, 6);
	assert_int_equal(global_stats(skel).bans_added, 0);
	set_fleet(skel, 0); /* back: b's own refusal bans */
	assert_int_equal(xdp_passed(skel, T0 + SEC, &b, 3), 1);
	assert_true(banned_record(skel, 4, "10.0.0.2", 32));
	release_skel(skel);
}
