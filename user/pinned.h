/* SPDX-License-Identifier: GPL-2.0-only */
/* The maps floodgate pins under FG_PIN_BASE/IFACE/, opened by path. */
#ifndef FG_PINNED_H
#define FG_PINNED_H

#include <stddef.h>

#include "floodgate.h"
#include "policy.h"

struct floodgate_bpf;

struct fg_pinned {
	struct fg_policy_maps maps;
	int sources;
	int bans;
	int windows;
	int logs;
	int global_stats;
	struct fg_runtime rt; /* read at open */
};

#define FG_PINNED_INIT                                                                             \
	{                                                                                          \
		.maps = {-1, -1, -1, -1, -1, -1, -1, -1}, .sources = -1, .bans = -1,               \
		.windows = -1, .logs = -1, .global_stats = -1                                      \
	}

void fg_pin_dir(const char *ifname, char *buf, size_t size);

/* Opens every pinned map, checking its type and sizes against this build,
 * and reads the runtime record. Returns 0 or a negative errno. */
int fg_pinned_open(const char *pin_dir, struct fg_pinned *pinned);
void fg_pinned_close(struct fg_pinned *pinned);

int fg_pinned_update_runtime(const char *pin_dir, const struct fg_runtime *rt);

/* Unlinks every pin in the folder and removes it. Returns 0 or -1 (errno). */
int fg_pinned_remove(const char *pin_dir);

void fg_policy_maps_from_skel(const struct floodgate_bpf *skel, struct fg_policy_maps *maps);

#endif /* FG_PINNED_H */
