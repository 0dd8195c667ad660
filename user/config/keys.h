/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config's keys, one row each (config/keys.c). The parser, its
 * messages, the defaults, the duplicate check, the runtime record of the
 * keys fixed at load (maps/runtime.c) and the unit tests walk this table.
 */
#ifndef FG_CONFIG_KEYS_H
#define FG_CONFIG_KEYS_H

#include "config/key.h"

extern const struct fg_key fg_keys[];
extern const size_t fg_key_count;

/* The row of `name` in `section` (one enum fg_section bit); NULL if none. */
const struct fg_key *fg_key_find(unsigned int section, const char *name);

/* "a, b, c": the names of the keys of `section`, in table order, as the
 * "expected one of" messages list them. Returns buf. */
const char *fg_key_list(unsigned int section, char *buf, size_t size);

#endif /* FG_CONFIG_KEYS_H */
