// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fleet's bans across restarts of `run` (docs/fleet.md, "What the fleet may
 * ban"): the bans this host published, so that one lifted while `run` was
 * stopped is lifted from Redis too, and the fleet bans lifted here by
 * hand, so that they stay lifted. One text file per interface,
 * $FLOODGATE_STATE_DIR/fleet-bans.IFACE (default /var/lib/floodgate),
 * written whole and renamed into place; times are wall-clock, for the
 * monotonic clock does not survive a reboot.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "maps/lpmkey.h"
#include "policy/readback.h"
#include "service/fleet_internal.h"

#define STATE_HEADER "floodgate fleet bans 1"

static const char *state_path(struct fg_fleet *f)
{
	struct fleet_bans *b = &f->bans;
	const char *dir = getenv("FLOODGATE_STATE_DIR");
	char pin[IF_NAMESIZE];

	if (!b->state_path[0]) {
		fg_pin_name(f->ifname, pin, sizeof(pin));
		snprintf(b->state_path, sizeof(b->state_path), "%s/fleet-bans.%s",
			 dir && dir[0] ? dir : "/var/lib/floodgate", pin);
	}
	return b->state_path;
}

static void load_line(struct fg_fleet *f, const char *kind, const char *member, const char *end,
		      __u64 now_real, __u64 now_mono)
{
	struct fg_src_lpm_key key;
	struct fleet_entry *e;
	struct fg_cidr cidr;
	__u64 expires = PERMANENT, real;

	if (fg_parse_cidr(member, &cidr))
		return;
	if (strcmp(end, "-")) {
		real = strtoull(end, NULL, 10);
		if (real <= now_real)
			return; /* ended while `run` was stopped */
		expires = now_mono + (real - now_real);
	}
	key = fg_ban_key_of_cidr(&cidr);
	if (!strcmp(kind, "published"))
		e = fg_fleet_table_add(&f->bans.published, &key);
	else if (!strcmp(kind, "lifted"))
		e = fg_fleet_table_add(&f->bans.copies, &key);
	else
		return;
	if (!e)
		return;
	e->expires_ns = expires;
	e->state = COPY_LIFTED_HERE; /* copies only */
}

void fg_fleet_state_load(struct fg_fleet *f)
{
	__u64 now_real = fg_clock_ns(CLOCK_REALTIME), now_mono = fg_monotonic_ns();
	char line[256], kind[16], member[MEMBER_LEN], end[32];
	FILE *in = fopen(state_path(f), "r");

	if (!in) {
		if (errno != ENOENT)
			pr_warn("fleet: cannot read %s: %s\n", state_path(f), strerror(errno));
		return;
	}
	if (!fgets(line, sizeof(line), in) || strncmp(line, STATE_HEADER, strlen(STATE_HEADER))) {
		pr_warn("fleet: %s is not a floodgate fleet bans file: ignored\n", state_path(f));
		fclose(in);
		return;
	}
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "%15s %53s %31s", kind, member, end) == 3)
			load_line(f, kind, member, end, now_real, now_mono);
	fclose(in);
}

static void write_entry(FILE *out, const char *kind, const struct fleet_entry *e, __u64 now_real,
			__u64 now_mono)
{
	char member[MEMBER_LEN];
	struct fg_source_key k = fg_source_of_lpm_key(&e->key, 0);

	if (e->expires_ns != PERMANENT && e->expires_ns <= now_mono)
		return;
	fg_format_key(&k, member, sizeof(member));
	if (e->expires_ns == PERMANENT)
		fprintf(out, "%s %s -\n", kind, member);
	else
		fprintf(out, "%s %s %llu\n", kind, member,
			(unsigned long long)(now_real + (e->expires_ns - now_mono)));
}

static int write_file(struct fg_fleet *f, const char *tmp)
{
	__u64 now_real = fg_clock_ns(CLOCK_REALTIME), now_mono = fg_monotonic_ns();
	struct fleet_entry *e;
	FILE *out = fopen(tmp, "w");

	if (!out)
		return -1;
	fprintf(out, STATE_HEADER "\n");
	for (e = NULL; (e = fg_fleet_table_next(&f->bans.published, e));)
		write_entry(out, "published", e, now_real, now_mono);
	for (e = NULL; (e = fg_fleet_table_next(&f->bans.copies, e));)
		if (e->state == COPY_LIFTED_HERE)
			write_entry(out, "lifted", e, now_real, now_mono);
	if (fflush(out) || fsync(fileno(out))) {
		fclose(out);
		return -1;
	}
	return fclose(out);
}

void fg_fleet_state_save(struct fg_fleet *f)
{
	const char *path = state_path(f);
	char dir[sizeof(f->bans.state_path)], tmp[sizeof(f->bans.state_path) + 8];

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((mkdir(dir, 0700) && errno != EEXIST) || write_file(f, tmp) || rename(tmp, path)) {
		if (!f->bans.save_failed)
			pr_warn("fleet: cannot write %s: %s (an unban made while run is stopped "
				"may come back)\n",
				path, strerror(errno));
		f->bans.save_failed = true;
		unlink(tmp);
		return;
	}
	f->bans.save_failed = false;
	f->bans.dirty = false;
}
