/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Keeps the counters /metrics serves from ever going down while `floodgate
 * run` lives, as Prometheus requires of a counter. A raw value can go down:
 * a reload copies a policy's counters into the new slot before it flips,
 * so what the old slot counts in between is not carried; a policy removed
 * and added again starts from zero. A series that reads lower than before
 * is served from where it was, and counts on from there.
 */
#ifndef FG_COUNTER_FLOOR_H
#define FG_COUNTER_FLOOR_H

#include <linux/types.h>

struct fg_counter_floors;

/* NULL when out of memory. */
struct fg_counter_floors *fg_counter_floors_new(void);
void fg_counter_floors_free(struct fg_counter_floors *floors);

/* The value to serve for the series `key` (its metric and labels) read as
 * `raw`: raw plus what the series lost when it went down; never less than
 * the value served before. `floors` NULL serves raw. Not thread-safe. */
__u64 fg_counter_floor(struct fg_counter_floors *floors, const char *key, __u64 raw);

#endif /* FG_COUNTER_FLOOR_H */
