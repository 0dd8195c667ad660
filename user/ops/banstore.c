// SPDX-License-Identifier: GPL-2.0-only
/*
 * The state file of the bans made by hand (ops/banstore.h). It decides
 * what the host drops after a reboot, so it is trusted as the config is
 * (config/filemode.c), read without following a symbolic link, parsed
 * strictly (FILE:LINE: on the first fault, and nothing restored), and
 * replaced atomically: a new file, fsync, rename, under a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "config/filemode.h"
#include "maps/lpmkey.h"
#include "ops/banstore.h"

/* Longer lines are refused: the longest valid one is about 120 bytes. */
#define MAX_LINE 256

static const char *state_dir(void)
{
	const char *env = getenv(FG_STATE_DIR_ENV);

	return env && env[0] ? env : FG_STATE_DIR;
}

void fg_banstore_path(const char *ifname, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s.bans", state_dir(), ifname);
}

void fg_banstore_free(struct fg_banstore *store)
{
	free(store->bans);
	memset(store, 0, sizeof(*store));
}

static struct fg_stored_ban *find(const struct fg_banstore *store, const struct fg_cidr *cidr)
{
	size_t i;

	for (i = 0; i < store->count; i++)
		if (store->bans[i].cidr.family == cidr->family &&
		    store->bans[i].cidr.prefix_len == cidr->prefix_len &&
		    !memcmp(store->bans[i].cidr.addr, cidr->addr, sizeof(cidr->addr)))
			return &store->bans[i];
	return NULL;
}

static int append(struct fg_banstore *store, const struct fg_stored_ban *ban)
{
	if (store->count == store->cap) {
		size_t cap = store->cap ? store->cap * 2 : 16;
		struct fg_stored_ban *bans = realloc(store->bans, cap * sizeof(*bans));

		if (!bans)
			return -1;
		store->bans = bans;
		store->cap = cap;
	}
	store->bans[store->count++] = *ban;
	return 0;
}

/* A decimal __u64, digits only: no sign, space or suffix. */
static bool parse_u64(const char *text, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* One KEY=VALUE of a ban line; `seen` marks the keys already given. */
static const char *parse_field(char *field, struct fg_stored_ban *ban, unsigned int *seen)
{
	static const char *const keys[] = {"expires_unix_ns", "duration_ns", "strikes"};
	char *value = strchr(field, '=');
	unsigned int i;
	__u64 v;

	if (!value)
		return "expected KEY=VALUE";
	*value++ = '\0';
	for (i = 0; i < 3 && strcmp(field, keys[i]); i++)
		;
	if (i == 3)
		return "unknown key (expected expires_unix_ns, duration_ns or strikes)";
	if (*seen & (1u << i))
		return "a key given twice";
	*seen |= 1u << i;
	if (i == 0 && !strcmp(value, "never")) {
		ban->expires_unix_ns = FG_BANSTORE_NEVER;
		return NULL;
	}
	if (!parse_u64(value, &v) || (i == 2 && (v == 0 || v > UINT32_MAX)))
		return i == 2 ? "strikes must be a number from 1 to 4294967295"
			      : "expected a number of nanoseconds";
	if (i == 0)
		ban->expires_unix_ns = v;
	else if (i == 1)
		ban->duration_ns = v;
	else
		ban->strikes = (__u32)v;
	return NULL;
}

/* One ban line (not blank, not a comment): NULL, or what is wrong. */
static const char *parse_line(char *line, const struct fg_banstore *store,
			      struct fg_stored_ban *ban)
{
	const char *sep = " \t", *fault;
	char *save, *field = strtok_r(line, sep, &save);
	unsigned int seen = 0;
	struct fg_value_error why;

	memset(ban, 0, sizeof(*ban));
	if (fg_parse_cidr_len(field, strlen(field), &ban->cidr, &why))
		return "expected a prefix ADDR/LEN with the host bits clear";
	if (find(store, &ban->cidr))
		return "a prefix listed twice";
	while ((field = strtok_r(NULL, sep, &save)))
		if ((fault = parse_field(field, ban, &seen)))
			return fault;
	if (seen != 7)
		return "expected expires_unix_ns, duration_ns and strikes";
	return NULL;
}

/* What is wrong with line `text` (`len` bytes, without its newline), or
 * NULL; *ban is filled for a ban line, zeroed for a blank or comment. */
static const char *check_line(char *text, size_t len, const struct fg_banstore *store,
			      struct fg_stored_ban *ban)
{
	size_t lead = strspn(text, " \t");

	memset(ban, 0, sizeof(*ban));
	if (len > MAX_LINE)
		return "line too long";
	if (strlen(text) != len)
		return "a NUL byte";
	if (!text[lead] || text[lead] == '#')
		return NULL;
	if (store->count == FG_MAX_MAX_BANS)
		return "more bans than the largest bans table holds (max_bans)";
	return parse_line(text, store, ban);
}

int fg_banstore_parse(const char *name, FILE *in, struct fg_banstore *store, struct fg_err *err)
{
	const char *fault = NULL;
	unsigned int n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;

	memset(store, 0, sizeof(*store));
	while (!fault && (got = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)got - (got && line[got - 1] == '\n');
		struct fg_stored_ban ban;

		n++;
		line[len] = '\0';
		fault = check_line(line, len, store, &ban);
		if (!fault && ban.strikes && append(store, &ban))
			fault = "out of memory";
	}
	free(line);
	if (fault) {
		fg_banstore_free(store);
		return fg_fail_at(err, FG_ERR_CONFIG,
				  "%s:%u: %s (bans by hand, one a line: PREFIX "
				  "expires_unix_ns=NS|never duration_ns=NS strikes=N)",
				  name, n, fault);
	}
	if (ferror(in)) {
		fg_banstore_free(store);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read %s: %s", name, strerror(errno));
	}
	return 0;
}

int fg_banstore_format(FILE *out, const struct fg_banstore *store)
{
	size_t i;

	fprintf(out, "# floodgate: bans by hand, written by `floodgate ban` and `unban`,\n"
		     "# restored by `floodgate load` and `run`. Expiry in Unix time.\n");
	for (i = 0; i < store->count; i++) {
		const struct fg_stored_ban *b = &store->bans[i];
		char addr[INET6_ADDRSTRLEN], expires[24];

		inet_ntop(b->cidr.family == FG_FAMILY_IPV4 ? AF_INET : AF_INET6, b->cidr.addr, addr,
			  sizeof(addr));
		if (b->expires_unix_ns == FG_BANSTORE_NEVER)
			snprintf(expires, sizeof(expires), "never");
		else
			snprintf(expires, sizeof(expires), "%llu",
				 (unsigned long long)b->expires_unix_ns);
		fprintf(out, "%s/%u expires_unix_ns=%s duration_ns=%llu strikes=%u\n", addr,
			b->cidr.prefix_len, expires, (unsigned long long)b->duration_ns,
			b->strikes);
	}
	return ferror(out) ? -1 : 0;
}

__u64 fg_banstore_unix_of(__u64 expires_ns, __u64 mono_now, __u64 unix_now)
{
	if (expires_ns == ~0ULL)
		return FG_BANSTORE_NEVER;
	return unix_now + (expires_ns > mono_now ? expires_ns - mono_now : 0);
}

bool fg_banstore_mono_of(__u64 expires_unix_ns, __u64 mono_now, __u64 unix_now, __u64 *expires_ns)
{
	__u64 left;

	if (expires_unix_ns == FG_BANSTORE_NEVER) {
		*expires_ns = ~0ULL;
		return true;
	}
	if (expires_unix_ns <= unix_now)
		return false;
	left = expires_unix_ns - unix_now;
	/* A finite ban stays finite: ~0 means until unbanned. */
	*expires_ns = left < ~0ULL - 1 - mono_now ? mono_now + left : ~0ULL - 1;
	return true;
}

/* An interface name is a file name here: no '/', no leading '.'. */
static int check_ifname(const char *ifname, struct fg_err *err)
{
	if (ifname[0] && ifname[0] != '.' && !strchr(ifname, '/'))
		return 0;
	return fg_fail(err, FG_ERR_USAGE, "'%s' cannot name a state file", ifname);
}

int fg_banstore_read(const char *ifname, struct fg_banstore *store, struct fg_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	FILE *in;
	int fd, ret;

	memset(store, 0, sizeof(*store));
	if (check_ifname(ifname, err))
		return -1;
	fg_banstore_path(ifname, path, sizeof(path));
	/* A state file is named by its own path: a link is refused before
	 * the trusted open, which would follow it. */
	if (lstat(path, &st))
		return errno == ENOENT ? 0
				       : fg_fail(err, FG_ERR_SYSTEM, "cannot open %s: %s", path,
						 strerror(errno));
	if (S_ISLNK(st.st_mode))
		return fg_fail_at(err, FG_ERR_CONFIG,
				  "%s: refused: it is a symbolic link (the "
				  "state file must be a plain file)",
				  path);
	fd = fg_trusted_open(path, NULL, err);
	if (fd < 0 && errno == ENOENT) { /* removed since the lstat */
		*err = (struct fg_err){0};
		return 0;
	}
	if (fd < 0)
		return -1;
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory");
	}
	ret = fg_banstore_parse(path, in, store, err);
	fclose(in);
	return ret;
}

/* The state folder, created if missing, locked against another `ban` or
 * `unban` until closed. Returns its fd, or -1 with `err`. */
static int lock_state_dir(struct fg_err *err)
{
	const char *dir = state_dir();
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot create %s: %s", dir, strerror(errno));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot open %s: %s", dir, strerror(errno));
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot lock %s: %s", dir, strerror(errno));
	}
	return fd;
}

/* Replaces IFACE's file: a new one beside it, written and synced, renamed
 * over it, and the folder synced. */
static int save(const char *ifname, const struct fg_banstore *store, int dir_fd, struct fg_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *out;
	int fd, bad;

	fg_banstore_path(ifname, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp); /* mode 0600 */
	if (fd < 0)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot create %s: %s", tmp, strerror(errno));
	out = fdopen(fd, "w");
	bad = !out || fg_banstore_format(out, store) || fflush(out) || fsync(fd);
	if ((out ? fclose(out) : close(fd)) || bad || rename(tmp, path)) {
		int saved = errno;

		unlink(tmp);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot write %s: %s", path, strerror(saved));
	}
	fsync(dir_fd);
	return 0;
}

/* Removes the ban of `cidr` (when given) and the expired ones. */
static void drop(struct fg_banstore *store, const struct fg_cidr *cidr, __u64 unix_now)
{
	struct fg_stored_ban *gone = cidr ? find(store, cidr) : NULL;
	size_t i, kept = 0;

	for (i = 0; i < store->count; i++)
		if (&store->bans[i] != gone && store->bans[i].expires_unix_ns > unix_now)
			store->bans[kept++] = store->bans[i];
	store->count = kept;
}

/* Under the folder's lock: reads IFACE's file, drops `cidr`'s ban and the
 * expired ones, adds `ban` (when given) and saves. */
static int rewrite(const char *ifname, const struct fg_cidr *cidr, const struct fg_stored_ban *ban,
		   struct fg_err *err)
{
	struct fg_banstore store;
	int dir_fd, ret;

	if (check_ifname(ifname, err))
		return -1;
	dir_fd = lock_state_dir(err);
	if (dir_fd < 0)
		return -1;
	ret = fg_banstore_read(ifname, &store, err);
	if (!ret) {
		drop(&store, cidr, fg_clock_ns(CLOCK_REALTIME));
		if (ban && append(&store, ban))
			ret = fg_fail(err, FG_ERR_SYSTEM, "out of memory");
	}
	if (!ret)
		ret = save(ifname, &store, dir_fd, err);
	fg_banstore_free(&store);
	close(dir_fd);
	return ret;
}

int fg_banstore_record(const char *ifname, const struct fg_cidr *cidr, const struct fg_ban *ban,
		       struct fg_err *err)
{
	const struct fg_stored_ban stored = {
		.cidr = *cidr,
		.expires_unix_ns = fg_banstore_unix_of(ban->expires_ns, fg_monotonic_ns(),
						       fg_clock_ns(CLOCK_REALTIME)),
		.duration_ns = ban->duration_ns,
		.strikes = ban->strikes,
	};

	return rewrite(ifname, cidr, &stored, err);
}

int fg_banstore_forget(const char *ifname, const struct fg_cidr *cidr, struct fg_err *err)
{
	return rewrite(ifname, cidr, NULL, err);
}

/* Writes one stored ban into the map unless it has expired or the map
 * holds an active ban of the same prefix that lasts longer. Returns 1 when
 * written, 0 when not, or -1 with `err`. */
static int restore_one(int bans_fd, const struct fg_stored_ban *b, __u64 mono_now, __u64 unix_now,
		       struct fg_err *err)
{
	const struct fg_src_lpm_key key = fg_ban_key_of_cidr(&b->cidr);
	struct fg_ban ban = {.duration_ns = b->duration_ns,
			     .strikes = b->strikes,
			     .family = b->cidr.family,
			     .prefix_len = b->cidr.prefix_len},
		      old;

	if (!fg_banstore_mono_of(b->expires_unix_ns, mono_now, unix_now, &ban.expires_ns))
		return 0;
	/* An LPM lookup finds the longest match: only the same prefix counts. */
	if (!bpf_map_lookup_elem(bans_fd, &key, &old) && old.family == ban.family &&
	    old.prefix_len == ban.prefix_len && old.expires_ns >= ban.expires_ns)
		return 0;
	if (!bpf_map_update_elem(bans_fd, &key, &ban, BPF_ANY))
		return 1;
	return fg_fail(err, FG_ERR_SYSTEM, "cannot restore a ban by hand into the bans map: %s",
		       strerror(errno));
}

int fg_banstore_restore(const char *ifname, int bans_fd, struct fg_err *err)
{
	const __u64 mono_now = fg_monotonic_ns(), unix_now = fg_clock_ns(CLOCK_REALTIME);
	struct fg_banstore store;
	size_t i, restored = 0;
	int ret = 0;

	if (fg_banstore_read(ifname, &store, err))
		return -1;
	for (i = 0; ret >= 0 && i < store.count; i++) {
		ret = restore_one(bans_fd, &store.bans[i], mono_now, unix_now, err);
		restored += ret > 0;
	}
	if (restored) {
		char path[PATH_MAX];

		fg_banstore_path(ifname, path, sizeof(path));
		pr_info("restored %zu bans by hand from %s\n", restored, path);
	}
	fg_banstore_free(&store);
	return ret < 0 ? -1 : 0;
}
