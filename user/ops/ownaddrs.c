// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's own addresses in `own_addrs`. A spoofer who exceeds a ban
 * policy's burst in the name of the host's own address would otherwise have
 * floodgate cut the host off from itself and its peers: the datapath never
 * bans a source found here.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "base/log.h"
#include "maps/pinned.h"
#include "ops/ownaddrs.h"

struct addr_set {
	struct fg_own_addr_key keys[FG_MAX_OWN_ADDRS];
	unsigned int n;
};

static bool addr_set_has(const struct addr_set *set, const struct fg_own_addr_key *key)
{
	unsigned int i;

	for (i = 0; i < set->n; i++)
		if (!memcmp(&set->keys[i], key, sizeof(*key)))
			return true;
	return false;
}

/* The key of an interface address; false for a family that has none. */
static bool key_of(const struct sockaddr *sa, struct fg_own_addr_key *key)
{
	memset(key, 0, sizeof(*key));
	if (sa->sa_family == AF_INET) {
		key->family = FG_FAMILY_IPV4;
		memcpy(key->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		key->family = FG_FAMILY_IPV6;
		memcpy(key->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

/* Every address of the namespace, once each (one may sit on two
 * interfaces). More than the map holds is an error: a silently missing
 * address could be banned. */
static int read_addrs(struct addr_set *set, struct fg_err *err)
{
	struct ifaddrs *list, *ifa;
	struct fg_own_addr_key key;

	if (getifaddrs(&list))
		return fg_fail(err, FG_ERR_SYSTEM, "cannot list the host's addresses: %s",
			       strerror(errno));
	set->n = 0;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || !key_of(ifa->ifa_addr, &key) || addr_set_has(set, &key))
			continue;
		if (set->n == FG_MAX_OWN_ADDRS) {
			freeifaddrs(list);
			return fg_fail(err, FG_ERR_SYSTEM,
				       "the host has more than %d addresses: own_addrs cannot hold "
				       "them all",
				       FG_MAX_OWN_ADDRS);
		}
		set->keys[set->n++] = key;
	}
	freeifaddrs(list);
	return 0;
}

/* Deletes the map's keys that are not in `set`. They are collected into
 * `stale` first: deleting while walking would restart the walk. */
static int drop_stale(int fd, const struct addr_set *set, struct addr_set *stale,
		      struct fg_err *err)
{
	struct fg_own_addr_key key, next;
	void *prev = NULL;
	unsigned int i;

	stale->n = 0;
	while (stale->n < FG_MAX_OWN_ADDRS && !bpf_map_get_next_key(fd, prev, &next)) {
		if (!addr_set_has(set, &next))
			stale->keys[stale->n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < stale->n; i++)
		if (bpf_map_delete_elem(fd, &stale->keys[i]) && errno != ENOENT)
			return fg_fail(err, FG_ERR_SYSTEM,
				       "cannot remove a stale address from own_addrs: %s",
				       strerror(errno));
	return 0;
}

int fg_own_addrs_sync(int fd, struct fg_err *err)
{
	struct addr_set *set = malloc(2 * sizeof(*set)); /* now, and the stale */
	const __u8 one = 1;
	unsigned int i;
	int ret;

	if (!set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the host's addresses");
	/* The stale go first, to make room. */
	ret = read_addrs(&set[0], err);
	if (!ret)
		ret = drop_stale(fd, &set[0], &set[1], err);
	for (i = 0; !ret && i < set[0].n; i++)
		if (bpf_map_update_elem(fd, &set[0].keys[i], &one, BPF_ANY))
			ret = fg_fail(err, FG_ERR_SYSTEM,
				      "cannot write the host's addresses to own_addrs: %s",
				      strerror(errno));
	free(set);
	return ret;
}

int fg_own_addrs_sync_dir(const char *pin_dir, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	int ret;

	if (fg_pinned_open(pin_dir, &pinned, err))
		return -1;
	ret = fg_own_addrs_sync(pinned.own_addrs, err);
	fg_pinned_close(&pinned);
	return ret;
}
