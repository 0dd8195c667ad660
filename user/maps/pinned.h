/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The maps floodgate pins under FG_PIN_BASE/IFACE/, opened by path.
 *
 * fg_pinned_maps[] is the one list of them: open, close, init, the skeleton
 * mapper, `status` occupancy and the reload fit check all walk it, so a map
 * pinned by the BPF object is added here as one row (and, for a new kind of
 * map, one fd field in struct fg_pinned). A prog test checks that every map
 * the skeleton pins has a row.
 */
#ifndef FG_PINNED_H
#define FG_PINNED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "config/config.h"
#include "floodgate.h"
#include "policy/policy.h"

#define FG_PIN_BASE "/sys/fs/bpf/floodgate"
/* scope = host: the host's shared table, pinned by every folder that uses
 * it and in FG_HOST_DIR (user/ops/hostscope.c). */
#define FG_HOST_DIR FG_PIN_BASE "/host:shared"
#define FG_HOST_MAP "host_sources"

struct bpf_object;

struct fg_pinned {
	struct fg_policy_maps maps;
	int sources4; /* IPv4 keys of local one-word policies (struct fg_source4_key) */
	int sources;  /* their other keys: IPv6, global, overflow */
	int bans;
	int own_addrs; /* the host's own addresses, never banned */
	int windows;
	int logs;
	int global_stats;
	int events; /* the ring buffer of struct fg_event */
	int fleet_counts;
	int fleet_holds;
	int fleet_state;
	int host_sources;    /* scope = host: the host's shared table (user/ops/hostscope.c) */
	int known4;	     /* IPv4 sources known for a while, out of the flood's reach */
	int ban_strikes;     /* strikes of policy bans, for ban_factor */
	int ban_count;	     /* how many bans of `bans` policies made */
	int presence4_first; /* which IPv4 keys may have state: the budget's filter, */
	int presence4;	     /* in two levels */
	int synproxy_xdp;    /* prog arrays: the hook's SYN proxy, or empty */
	int synproxy_tc;
	bool owns_fds;	      /* fg_pinned_open() opened them: close them */
	struct fg_runtime rt; /* read at open */
};

/* Nothing open yet; fg_pinned_close() on it is a no-op. */
#define FG_PINNED_INIT                                                                             \
	{                                                                                          \
		.owns_fds = false                                                                  \
	}

struct fg_pinned_map {
	const char *name; /* the map's name in the BPF object and its pin file */
	__u32 type;	  /* enum bpf_map_type */
	__u32 key_size;
	__u32 value_size;
	size_t fd_offset; /* where its fd lives in struct fg_pinned */
	/* Entries the config needs, for maps sized at load (NULL: the size
	 * the BPF object declares). */
	__u32 (*entries)(const struct fg_config *cfg);
	/* Keyed by struct fg_source_key or fg_source4_key (policy_id first
	 * in both): per-policy state a reload keeps, and reclaims for
	 * removed policies. */
	bool policy_state;
	/* `status` shows its occupancy with this note (NULL: not shown). */
	const char *status_note;
};

extern const struct fg_pinned_map fg_pinned_maps[];
extern const size_t fg_pinned_map_count;

/* The table row named `name`, or NULL. */
const struct fg_pinned_map *fg_pinned_find(const char *name);
int *fg_pinned_fd(struct fg_pinned *pinned, const struct fg_pinned_map *map);

/* Every fd -1, nothing owned. */
void fg_pinned_init(struct fg_pinned *pinned);

/* A pin folder's name under FG_PIN_BASE: the interface's name with each
 * '.' written as '%'. bpffs refuses dots in names (EPERM), and VLAN
 * interfaces are often named eth0.100; no interface name holds a '%' (the
 * kernel reads one in a new name as a number template), so the mapping is
 * one to one. fg_ifname_of_pin is its inverse. */
void fg_pin_name(const char *ifname, char *buf, size_t size);
void fg_ifname_of_pin(const char *pin_name, char *buf, size_t size);
/* FG_PIN_BASE/fg_pin_name(IFACE) */
void fg_pin_dir(const char *ifname, char *buf, size_t size);
/* Where a load builds the folder before renaming it to fg_pin_dir's:
 * FG_PIN_BASE/IFACE:loading (bpffs refuses names with a dot; no interface
 * name has a colon). Found later, it is an interrupted load's. */
#define FG_STAGE_SUFFIX ":loading"
void fg_stage_dir(const char *ifname, char *buf, size_t size);

/* Opens every pinned map, checking its type and sizes against this build
 * (a stale pin is refused with a message naming it), and reads the runtime
 * record. Returns 0, or a negative errno with `err` saying why: -EXDEV
 * when the pins were made in another network namespace. */
int fg_pinned_open(const char *pin_dir, struct fg_pinned *pinned, struct fg_err *err);
void fg_pinned_close(struct fg_pinned *pinned);

/* The fds of a loaded object's maps, borrowed (not to be closed), for
 * every row; the runtime record is read. Returns 0 or a negative errno. */
int fg_pinned_from_object(const struct bpf_object *obj, struct fg_pinned *pinned);

int fg_pinned_update_runtime(const char *pin_dir, const struct fg_runtime *rt);

/* Empties the folder's prog arrays: once floodgate's program is detached,
 * the SYN proxy they hold would otherwise count as a program that still
 * uses the maps. Returns 0 or a negative errno. */
int fg_pinned_empty_prog_arrays(const char *pin_dir);

/* Unlinks every pin in the folder and removes it. Returns 0 or -1 (errno). */
int fg_pinned_remove(const char *pin_dir);

/* Deletes, from every policy_state map of this interface, the entries of
 * policies that are in `old` but whose state `next` does not keep: removed
 * policies, and sliding_log policies whose COUNT changed (their ring
 * assumes it). host_sources is not this interface's alone: it is left to
 * fg_host_reclaim(). Returns how many entries were deleted, or a negative
 * errno. */
long fg_pinned_reclaim_state(const struct fg_pinned *pinned, const struct fg_policy_set *old,
			     const struct fg_policy_set *next);

/* Deletes the entries of the fg_source_key- or fg_source4_key-keyed map
 * `fd` whose policy id
 * is one of `ids`. Returns how many, or a negative errno. */
long fg_pinned_reclaim_ids(int fd, const __u32 *ids, unsigned int n);

#endif /* FG_PINNED_H */
