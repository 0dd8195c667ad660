// SPDX-License-Identifier: GPL-2.0-only
/* scope = host: the host's shared table (see hostscope.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "policy/readback.h"
#include "base/log.h"
#include "ops/hostscope.h"
#include "ops/steps.h"

/* Opens DIR/NAME as a map if it is one of `type`, `key` and `value`
 * bytes; fills *info. Returns the fd or a negative errno. */
static int open_checked(const char *dir, const char *name, __u32 type, __u32 key, __u32 value,
			struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (info->type != type || info->key_size != key || info->value_size != value) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

static int open_host_map(const char *dir, struct bpf_map_info *info)
{
	return open_checked(dir, FG_HOST_MAP, BPF_MAP_TYPE_LRU_HASH, sizeof(struct fg_source_key),
			    sizeof(struct fg_source_state), info);
}

/* The active policy set pinned in `dir` (another interface's), if this
 * build can read it. Returns 0 or a negative errno. */
static int read_active_set(const char *dir, struct fg_policy_set *set)
{
	struct bpf_map_info info;
	struct fg_runtime rt;
	__u32 zero = 0, slot;
	int rt_fd, sets_fd, err = 0;

	rt_fd = open_checked(dir, "runtime", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(rt), &info);
	if (rt_fd < 0)
		return rt_fd;
	sets_fd = open_checked(dir, "policy_sets", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(*set),
			       &info);
	if (sets_fd < 0) {
		close(rt_fd);
		return sets_fd;
	}
	if (bpf_map_lookup_elem(rt_fd, &zero, &rt))
		err = -errno;
	slot = rt.active_slot & (FG_POLICY_SLOTS - 1);
	if (!err && bpf_map_lookup_elem(sets_fd, &slot, set))
		err = -errno;
	close(rt_fd);
	close(sets_fd);
	return err;
}

/* Calls `fn` for each folder under FG_PIN_BASE but FG_HOST_DIR and IFACE's
 * own (`self`, NULL: none); with `complete`, only interfaces' folders (no
 * ':' in the name: no staging, upgrade or retired folder). Stops at, and
 * returns, the first non-zero answer. */
static int for_each_folder(const char *self, bool complete,
			   int (*fn)(const char *dir, const char *name, void *ctx), void *ctx)
{
	DIR *base = opendir(FG_PIN_BASE);
	struct dirent *entry;
	char dir[PATH_MAX], own[IF_NAMESIZE] = "", name[NAME_MAX + 1];
	int ret = 0;

	if (!base)
		return 0;
	if (self)
		fg_pin_name(self, own, sizeof(own));
	while (!ret && (entry = readdir(base))) {
		if (entry->d_name[0] == '.' || (self && !strcmp(entry->d_name, own)))
			continue;
		if (!strcmp(entry->d_name, strrchr(FG_HOST_DIR, '/') + 1))
			continue;
		if (complete && strchr(entry->d_name, ':'))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", FG_PIN_BASE, entry->d_name);
		fg_ifname_of_pin(entry->d_name, name, sizeof(name));
		ret = fn(dir, name, ctx);
	}
	closedir(base);
	return ret;
}

/* Do two host-scoped policies of one name define the same limit? The
 * action may differ: it is what each interface does with a refusal. */
static bool same_limit(const struct fg_policy *a, const struct fg_policy *b)
{
	const __u8 keyed = FG_POLICY_BYTES | FG_POLICY_KEY_DPORT | FG_POLICY_HOST;

	return a->algorithm == b->algorithm && a->key_kind == b->key_kind &&
	       (a->flags & keyed) == (b->flags & keyed) && a->prefix_v4 == b->prefix_v4 &&
	       a->prefix_v6 == b->prefix_v6 && !memcmp(&a->params, &b->params, sizeof(a->params));
}

struct peer_check {
	const char *path; /* the config, for messages */
	const struct fg_config *cfg;
	const struct fg_compiled *compiled;
	struct fg_policy_set *peer; /* scratch */
	struct fg_err *err;	    /* the refusal */
};

/* Stops the walk (1) at a peer that defines a host-scoped policy of ours
 * differently, with the refusal in c->err. */
static int check_peer(const char *dir, const char *name, void *ctx)
{
	struct peer_check *c = ctx;
	char mine[64], theirs[64];
	__u64 my_burst, their_burst;
	unsigned int i;

	if (read_active_set(dir, c->peer))
		return 0; /* not a floodgate this build reads: shares nothing */
	for (i = 0; i < c->compiled->set.count && i < c->cfg->n_policies; i++) {
		const struct fg_policy *p = &c->compiled->set.policies[i], *q;

		if (!(p->flags & FG_POLICY_HOST))
			continue;
		q = fg_policy_by_id(c->peer, p->id);
		if (q && (q->flags & FG_POLICY_HOST) &&
		    strncmp(q->name, p->name, sizeof(p->name))) {
			/* The id is a 32-bit hash of the name and algorithm. */
			fg_fail_at(
				c->err, FG_ERR_CONFIG,
				"%s:%d: policy '%s' is scope = host, and its id (%08x) is that of "
				"%s's host-scoped policy '%s': they would share one state "
				"(expected another name)",
				c->path, c->cfg->policies[i].line, p->name, p->id, name, q->name);
			return 1;
		}
		q = fg_find_policy(c->peer, p->name);
		if (!q || !(q->flags & FG_POLICY_HOST) || same_limit(p, q))
			continue;
		my_burst = fg_format_rate(p, mine, sizeof(mine));
		their_burst = fg_format_rate(q, theirs, sizeof(theirs));
		fg_fail_at(c->err, FG_ERR_CONFIG,
			   "%s:%d: policy '%s' is scope = host, and %s has a host-scoped policy of "
			   "that name with another limit (here %s %s, burst %llu, per /%u /%u; on "
			   "%s %s %s, burst %llu, per /%u /%u): host-scoped policies of one name "
			   "share one state on this host (expected the same algorithm, rate, burst "
			   "and per as on %s, or another name)",
			   c->path, c->cfg->policies[i].line, p->name, name,
			   fg_algorithm_name(p->algorithm), mine, (unsigned long long)my_burst,
			   p->prefix_v4, p->prefix_v6, name, fg_algorithm_name(q->algorithm),
			   theirs, (unsigned long long)their_burst, q->prefix_v4, q->prefix_v6,
			   name);
		return 1;
	}
	return 0;
}

int fg_host_check_peers(const char *ifname, const char *path, const struct fg_config *cfg,
			const struct fg_compiled *compiled, struct fg_err *err)
{
	struct peer_check c = {
		.path = path ? path : "<default>", .cfg = cfg, .compiled = compiled, .err = err};
	int refused;

	if (!fg_config_has_host(cfg))
		return 0;
	c.peer = malloc(sizeof(*c.peer));
	if (!c.peer)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "out of memory reading other interfaces' policies");
	refused = for_each_folder(ifname, true, check_peer, &c);
	free(c.peer);
	return refused ? -1 : 0;
}

/* A complete interface folder whose host_sources is a host's table (a
 * private one has a single entry), for when the shared pin is gone. */
static int find_in_peer(const char *dir, const char *name, void *ctx)
{
	struct bpf_map_info info;
	int fd = open_host_map(dir, &info);

	(void)name;
	if (fd < 0)
		return 0;
	if (info.max_entries <= 1) {
		close(fd);
		return 0;
	}
	*(int *)ctx = fd;
	return 1;
}

int fg_host_prepare(const char *ifname, const char *path, const struct fg_config *cfg,
		    const struct fg_compiled *compiled, int *fd, struct fg_err *err)
{
	struct bpf_map_info info;

	*fd = -1;
	if (!fg_config_has_host(cfg))
		return 0;
	if (fg_host_check_peers(ifname, path, cfg, compiled, err))
		return -1;
	*fd = open_host_map(FG_HOST_DIR, &info);
	if (*fd == -EPROTO)
		return fg_fail(err, FG_ERR_STATE,
			       "%s/%s is not the table this floodgate shares (left by another "
			       "version?): unload every interface with scope = host policies, or "
			       "remove %s",
			       FG_HOST_DIR, FG_HOST_MAP, FG_HOST_DIR);
	/* The shared pin is gone (removed by hand) while an interface still
	 * uses the table: share that one, not a new one. */
	if (*fd < 0 && for_each_folder(ifname, true, find_in_peer, fd) == 1) {
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(*fd, &info, &len)) {
			close(*fd);
			*fd = -1;
		}
	}
	if (*fd < 0) {
		*fd = -1;
		return 0;
	}
	if (info.max_entries < cfg->max_sources) {
		close(*fd);
		*fd = -1;
		return fg_fail_at(
			err, FG_ERR_CONFIG,
			"%s: max_sources = %u, but the host's table for scope = host (%s/%s) "
			"was created with %u entries by another interface's load (expected "
			"max_sources <= %u, or unload every interface with scope = host "
			"policies first)",
			path ? path : "<default>", cfg->max_sources, FG_HOST_DIR, FG_HOST_MAP,
			info.max_entries, info.max_entries);
	}
	return 0;
}

static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/* The host's table is already pinned: it must be the one the load in
 * `pin_dir` reused (map `fd`). */
static int check_published(int fd, int shared_fd, struct fg_err *err)
{
	__u32 ours = 0, shared = 0;
	int ret = map_id(fd, &ours) ?: map_id(shared_fd, &shared);

	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the host's table: %s",
			       strerror(-ret));
	if (ours != shared)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "%s/%s is another table than the one this load uses", FG_HOST_DIR,
			       FG_HOST_MAP);
	return 0;
}

int fg_host_publish(const char *pin_dir, const struct fg_config *cfg, struct fg_err *err)
{
	struct bpf_map_info info;
	char path[PATH_MAX];
	int fd, shared_fd, ret = 0;

	if (!fg_config_has_host(cfg))
		return 0;
	fd = open_host_map(pin_dir, &info);
	if (fd < 0)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot open %s/%s: %s", pin_dir, FG_HOST_MAP,
			       strerror(-fd));
	shared_fd = open_host_map(FG_HOST_DIR, &info);
	if (shared_fd >= 0) {
		/* Already the host's: the load reused it. */
		ret = check_published(fd, shared_fd, err);
		close(shared_fd);
		close(fd);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/%s", FG_HOST_DIR, FG_HOST_MAP);
	if (mkdir(FG_HOST_DIR, 0700) && errno != EEXIST)
		ret = -errno;
	if (!ret && bpf_obj_pin(fd, path))
		ret = -errno;
	close(fd);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot pin the host's table at %s: %s", path,
			       strerror(-ret));
	return 0;
}

/* Does the folder pin the map whose id is *ctx? */
static int pins_map(const char *dir, const char *name, void *ctx)
{
	struct bpf_map_info info;
	int fd = open_host_map(dir, &info);

	(void)name;
	if (fd < 0)
		return 0;
	close(fd);
	return info.id == *(__u32 *)ctx;
}

void fg_host_collect(void)
{
	struct bpf_map_info info;
	struct stat st;
	int fd;

	if (stat(FG_HOST_DIR, &st))
		return;
	fd = open_host_map(FG_HOST_DIR, &info);
	if (fd == -EPROTO)
		return; /* another build's table: not for this one to judge */
	if (fd >= 0) {
		close(fd);
		/* Staging and upgrade folders count: their programs may be
		 * attached. */
		if (for_each_folder(NULL, false, pins_map, &info.id))
			return;
	}
	if (fg_pinned_remove(FG_HOST_DIR))
		pr_warn("Warning: cannot remove %s: %s\n", FG_HOST_DIR, strerror(errno));
	else
		pr_info("removed %s: no interface uses the host's scope = host table any more\n",
			FG_HOST_DIR);
}

struct reclaim {
	__u32 *ids;
	unsigned int n;
	struct fg_policy_set *peer; /* scratch */
};

/* Keeps the ids that the folder's active policy set still uses. */
static int keep_peer_ids(const char *dir, const char *name, void *ctx)
{
	struct reclaim *r = ctx;
	unsigned int i = 0;

	(void)name;
	if (read_active_set(dir, r->peer))
		return 0;
	while (i < r->n) {
		const struct fg_policy *q = fg_policy_by_id(r->peer, r->ids[i]);

		if (q && (q->flags & FG_POLICY_HOST))
			r->ids[i] = r->ids[--r->n];
		else
			i++;
	}
	return r->n ? 0 : 1;
}

long fg_host_reclaim(const char *ifname, const struct fg_pinned *pinned,
		     const struct fg_policy_set *old, const struct fg_policy_set *next)
{
	__u32 ids[FG_MAX_POLICIES];
	struct reclaim r = {.ids = ids};
	unsigned int i;
	long deleted;

	for (i = 0; i < old->count && i < FG_MAX_POLICIES; i++) {
		const struct fg_policy *p = &old->policies[i], *q;

		if (!(p->flags & FG_POLICY_HOST))
			continue;
		q = fg_policy_by_id(next, p->id);
		if (!q || !(q->flags & FG_POLICY_HOST))
			ids[r.n++] = p->id;
	}
	if (!r.n)
		return 0;
	r.peer = malloc(sizeof(*r.peer));
	if (!r.peer)
		return -ENOMEM;
	for_each_folder(ifname, true, keep_peer_ids, &r);
	free(r.peer);
	deleted = r.n ? fg_pinned_reclaim_ids(pinned->host_sources, r.ids, r.n) : 0;
	return deleted;
}
