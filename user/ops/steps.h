/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The steps that load, reload and unload share: reading and compiling the
 * config, taking the pin folder's lock, and clearing or inspecting what a
 * pin folder holds. Each fails with -1 and a struct fg_err.
 */
#ifndef FG_STEPS_H
#define FG_STEPS_H

#include <stdbool.h>
#include <linux/types.h>

#include "attach/attachment.h"
#include "base/err.h"
#include "config/config.h"
#include "policy/policy.h"

/* The config at `path`, or the built-in one for NULL: checks who may have
 * written it, then parses it (fg_config_read). */
int fg_step_parse_config(const char *path, struct fg_config *cfg, struct fg_err *err);

/* Reads the feed files of `cfg` (trust-checked as the config is) and
 * compiles it into *out (allocated; the caller releases it with
 * fg_compiled_free) for `slot`; records the lists' prefix count in
 * cfg->access_prefixes and logs what the feed files held. */
int fg_step_compile(struct fg_config *cfg, const char *path, __u32 slot, struct fg_compiled **out,
		    struct fg_err *err);

/* BTF, what `cfg` needs of the kernel beyond it ([synproxy]:
 * attach/synproxy_support.h), then the interface: *ifindex. */
int fg_step_check_environment(const char *ifname, const struct fg_config *cfg,
			      unsigned int *ifindex, struct fg_err *err);

/* Prepares the pin folder and takes its lock: returns the fd that holds
 * it (closing it releases it), or -1 with `err`. */
int fg_step_lock(struct fg_err *err);

/* Where floodgate's tc filter is: as recorded in `rt`, or, for NULL or a
 * record without one, where floodgate always puts it. */
struct fg_tc_place fg_step_tc_place(const struct fg_runtime *rt);

/* The program, if any, that still uses the pins after a detach (waiting
 * a moment for one a tc filter releases late). */
__u32 fg_step_pins_user(const struct fg_pin_ids *ids);

/* Removes what an interrupted load left in IFACE's staging folder: the
 * program that uses its maps, if attached, then the pins. `rt`, when
 * known, says where a tc filter went; *found says whether there was
 * anything. */
int fg_step_clear_staging(const char *ifname, unsigned int ifindex, const struct fg_runtime *rt,
			  bool *found, struct fg_err *err);

/* What a complete pin folder holds: its maps' ids and where its tc filter
 * would be. Refuses a folder another user could have made, and pins of
 * another network namespace. */
int fg_step_inspect_pins(const char *pin_dir, struct fg_pin_ids *ids, struct fg_tc_place *tc,
			 struct fg_err *err);

/* The SYN proxy's nftables table follows a program swap (an upgrade, or
 * a reload that adds, changes or removes [synproxy]): installed or
 * replaced before the new program runs, so that its cookies find the
 * rules; removed after the old program stops. 0 or -1 with `err` set. */
int fg_step_synproxy_before_swap(const char *ifname, const struct fg_config *cfg,
				 struct fg_err *err);
int fg_step_synproxy_after_swap(const char *ifname, const struct fg_config *cfg,
				struct fg_err *err);

#endif /* FG_STEPS_H */
