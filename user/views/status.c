// SPDX-License-Identifier: GPL-2.0-only
/* `status`: a read-only view of the pinned maps and the attachment. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "attach/hook.h"
#include "attach/synproxy_nft.h"
#include "attach/xdp_ext.h"
#include "base/clock.h"
#include "maps/batch.h"
#include "maps/loaded.h"
#include "maps/pinfolder.h"
#include "maps/pinned.h"
#include "maps/skeleton.h"
#include "policy/readback.h"
#include "policy/synproxy.h"
#include "views/status.h"

static int count_key(const void *key, void *ctx)
{
	(void)key;
	++*(__u64 *)ctx;
	return 0;
}

static __u32 max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/* Entries in use of each table the pinned-map table marks for `status`. */
static void read_occupancy(struct fg_pinned *pinned, struct fg_status *status)
{
	size_t i;

	for (i = 0; i < fg_pinned_map_count && status->n_tables < FG_STATUS_MAX_TABLES; i++) {
		const struct fg_pinned_map *row = &fg_pinned_maps[i];
		struct fg_status_table *t = &status->tables[status->n_tables];
		int fd = *fg_pinned_fd(pinned, row);

		if (!row->status_note)
			continue;
		*t = (struct fg_status_table){
			.name = row->name, .note = row->status_note, .capacity = max_entries(fd)};
		/* A walk cut short counts what it saw: occupancy is a glimpse. */
		fg_map_for_each_key(fd, row->key_size, count_key, &t->entries);
		status->n_tables++;
	}
}

/* The kernel's own figure of a map's memory: memlock in its fdinfo (the
 * entries in use since Linux 6.4, an estimate from the capacity before). */
static __u64 map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &bytes) == 1)
			break;
	if (f)
		fclose(f);
	return bytes;
}

static void share_of(struct fg_status_list *list, __u32 prefixes, __u32 total, __u64 memlock)
{
	list->prefixes = prefixes;
	list->memory_bytes = total ? (__u64)((double)memlock * prefixes / total) : 0;
	list->reload_peak_bytes = 2 * list->memory_bytes;
}

/* The lists in force (their counts are in the active set) and the memory
 * of the trie that holds them. */
static void read_lists(const struct fg_pinned *pinned, struct fg_status *status)
{
	__u32 total = status->set->access_prefixes, allow = status->set->allow_prefixes;

	if (allow > total)
		allow = total; /* not a set floodgate wrote */
	status->lists_capacity = max_entries(pinned->maps.access_lists);
	status->lists_memlock = map_memlock(pinned->maps.access_lists);
	share_of(&status->allow, allow, total, status->lists_memlock);
	share_of(&status->deny, total - allow, total, status->lists_memlock);
}

/* The option word's MSS (kind, length, then the value in network order). */
static __u16 option_mss(const struct fg_tcp_option_word *word)
{
	return (__u16)(word->bytes[2] << 8 | word->bytes[3]);
}

/* The proxy in the hook's prog array, the settings it was loaded with,
 * and whether its nftables table is in place. */
static void read_synproxy(const char *ifname, const struct fg_pinned *pinned,
			  struct fg_status_synproxy *out)
{
	int array = pinned->rt.hook == FG_HOOK_XDP ? pinned->synproxy_xdp : pinned->synproxy_tc;
	struct fg_synproxy_params *params = malloc(sizeof(*params));
	__u32 zero = 0;

	snprintf(out->nft_table, sizeof(out->nft_table), "inet " FG_SYNPROXY_TABLE_PREFIX "%s",
		 ifname);
	out->nft_installed = fg_synproxy_nft_installed(ifname);
	if (!params || bpf_map_lookup_elem(array, &zero, &out->prog_id) ||
	    fg_skel_read_synproxy(out->prog_id, params)) {
		free(params);
		return;
	}
	out->enabled = params->enabled;
	fg_synproxy_ports_text(params, out->ports, sizeof(out->ports));
	out->mss = option_mss(&params->mss4);
	out->mss6 = option_mss(&params->mss6);
	out->wscale = params->wscale.bytes[3];
	out->sack = params->sack;
	out->timestamps = params->timestamps;
	if (params->synacks_count)
		fg_format_count_period(params->synacks_count, params->synacks_period_ns, false,
				       out->synacks, sizeof(out->synacks));
	else
		snprintf(out->synacks, sizeof(out->synacks), "off");
	free(params);
}

int fg_status_read(const char *ifname, struct fg_status *status, struct fg_err *err)
{
	struct fg_pinned pinned = FG_PINNED_INIT;
	__u32 zero = 0;
	int rc;

	*status = (struct fg_status){0};
	fg_pin_dir(ifname, status->pin_dir, sizeof(status->pin_dir));
	status->set = malloc(sizeof(*status->set));
	if (!status->set)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the state of %s", ifname);
	rc = fg_pinned_open(status->pin_dir, &pinned, err);
	if (rc) {
		if (!err->kind)
			fg_fail(err, FG_ERR_SYSTEM, "cannot read the state of %s: %s", ifname,
				strerror(-rc));
		err->kind = rc == -EXDEV ? FG_ERR_STATE : FG_ERR_SYSTEM;
		return -1;
	}
	rc = fg_read_active_set(&pinned, status->set);
	if (rc) {
		fg_pinned_close(&pinned);
		return fg_fail(err, FG_ERR_SYSTEM, "cannot read the state of %s: %s", ifname,
			       strerror(-rc));
	}
	status->rt = pinned.rt;
	status->attached = fg_still_attached(&pinned.rt);
	if (pinned.rt.hook == FG_HOOK_XDP)
		fg_xdp_describe_sharing(pinned.rt.ifindex, pinned.rt.prog_id, status->sharing,
					sizeof(status->sharing));
	read_occupancy(&pinned, status);
	bpf_map_lookup_elem(pinned.ban_count, &zero, &status->ban_count);
	status->policy_ban_cap = fg_policy_ban_cap(max_entries(pinned.bans));
	read_lists(&pinned, status);
	status->fleet_known = !bpf_map_lookup_elem(pinned.fleet_state, &zero, &status->fleet) &&
			      (status->fleet.syncing || status->fleet.syncs);
	status->now_real_ns = fg_clock_ns(CLOCK_REALTIME);
	read_synproxy(ifname, &pinned, &status->synproxy);
	fg_pinned_close(&pinned);
	return 0;
}

void fg_status_free(struct fg_status *status)
{
	free(status->set);
	status->set = NULL;
}

/* The one interface asked for: it must be loaded, in a folder we trust. */
static int check_loaded(const char *ifname, struct fg_err *err)
{
	char pin_dir[PATH_MAX];

	fg_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (access(pin_dir, F_OK)) {
		fg_fail(err, FG_ERR_STATE, "floodgate is not loaded on %s", ifname);
		fg_pinfolder_explain_missing(err);
		return -1;
	}
	return fg_pinfolder_check_owned(pin_dir, err);
}

int fg_status_interfaces(const char *ifname, int (*fn)(const char *ifname, void *ctx), void *ctx,
			 struct fg_err *err)
{
	struct dirent *entry;
	int shown = 0, rc = 0;
	DIR *dir;

	if (ifname) {
		if (check_loaded(ifname, err))
			return -1;
		rc = fn(ifname, ctx);
		return rc ? rc : 1;
	}
	dir = opendir(FG_PIN_BASE);
	while (!rc && dir && (entry = readdir(dir))) {
		char listed[IF_NAMESIZE];

		/* An interrupted load's staging folder is not a load. */
		if (entry->d_name[0] == '.' || strchr(entry->d_name, ':'))
			continue;
		fg_ifname_of_pin(entry->d_name, listed, sizeof(listed));
		rc = fn(listed, ctx);
		shown++;
	}
	if (dir)
		closedir(dir);
	return rc ? rc : shown;
}
