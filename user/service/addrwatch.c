// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's addresses followed through rtnetlink (RTM_NEWADDR and
 * RTM_DELADDR on RTNLGRP_IPV4_IFADDR and RTNLGRP_IPV6_IFADDR), parsed with
 * libmnl. A change is not applied on its own: the map is synced with the
 * whole list (getifaddrs), which is right when one address sits on two
 * interfaces and one copy goes, and after an overrun (ENOBUFS) that lost
 * messages.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "base/log.h"
#include "maps/pinned.h"
#include "ops/ownaddrs.h"
#include "service/addrwatch.h"

struct fg_addr_watch {
	struct mnl_socket *nl;
	char pin_dir[PATH_MAX];
};

struct addr_attrs {
	const struct nlattr *local, *address;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct addr_attrs *attrs = data;

	if (mnl_attr_get_type(attr) == IFA_LOCAL)
		attrs->local = attr;
	else if (mnl_attr_get_type(attr) == IFA_ADDRESS)
		attrs->address = attr;
	return MNL_CB_OK;
}

/* Logs one address message; *changed says the map needs a sync. IFA_LOCAL
 * is the address of an IPv4 point-to-point link (IFA_ADDRESS its peer). */
static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addr_attrs attrs = {0};
	const struct nlattr *attr;
	char text[INET6_ADDRSTRLEN] = "?";
	bool *changed = data;

	if (nlh->nlmsg_type != RTM_NEWADDR && nlh->nlmsg_type != RTM_DELADDR)
		return MNL_CB_OK;
	*changed = true;
	mnl_attr_parse(nlh, sizeof(*ifa), attr_cb, &attrs);
	attr = attrs.local ? attrs.local : attrs.address;
	if (attr && mnl_attr_get_payload_len(attr) >= (ifa->ifa_family == AF_INET ? 4 : 16))
		inet_ntop(ifa->ifa_family, mnl_attr_get_payload(attr), text, sizeof(text));
	pr_info("address %s %s interface %u\n", text,
		nlh->nlmsg_type == RTM_NEWADDR ? "added on" : "removed from", ifa->ifa_index);
	return MNL_CB_OK;
}

static void sync_addrs(struct fg_addr_watch *watch)
{
	struct fg_err err = {0};

	if (fg_own_addrs_sync_dir(watch->pin_dir, &err))
		pr_warn("Error: the host's addresses in own_addrs are not current: %s\n", err.msg);
}

int fg_addr_watch_start(const char *ifname, struct fg_addr_watch **out, struct fg_err *err)
{
	struct fg_addr_watch *watch = calloc(1, sizeof(*watch));

	*out = NULL;
	if (!watch)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory");
	fg_pin_dir(ifname, watch->pin_dir, sizeof(watch->pin_dir));
	watch->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!watch->nl || mnl_socket_bind(watch->nl, RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
					  MNL_SOCKET_AUTOPID)) {
		fg_fail(err, FG_ERR_SYSTEM, "cannot follow the host's addresses (rtnetlink): %s",
			strerror(errno));
		fg_addr_watch_stop(watch);
		return -1;
	}
	sync_addrs(watch);
	*out = watch;
	return 0;
}

int fg_addr_watch_fd(const struct fg_addr_watch *watch)
{
	return watch ? mnl_socket_get_fd(watch->nl) : -1;
}

void fg_addr_watch_drain(struct fg_addr_watch *watch)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	bool changed = false;
	ssize_t n;

	if (!watch)
		return;
	while ((n = mnl_socket_recvfrom(watch->nl, buf, sizeof(buf))) > 0)
		mnl_cb_run(buf, (size_t)n, 0, 0, addr_cb, &changed);
	if (n < 0 && errno == ENOBUFS) {
		pr_warn("address changes were lost (the socket overran): reading them all\n");
		changed = true;
	}
	if (changed)
		sync_addrs(watch);
}

void fg_addr_watch_stop(struct fg_addr_watch *watch)
{
	if (!watch)
		return;
	if (watch->nl)
		mnl_socket_close(watch->nl);
	free(watch);
}
