// SPDX-License-Identifier: GPL-2.0-only
/* The series a counter floor remembers, in an open-addressed hash table. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/counter_floor.h"

/* Metric, interface, policy and verdict: the longest key is well under. */
#define FLOOR_KEY_LEN 160
/* Every series of 64 policies several times over (removed policies keep
 * theirs); a series past that is served raw. */
#define FLOOR_SLOTS   8192

struct floor {
	char key[FLOOR_KEY_LEN];
	__u64 last_raw, offset;
};

struct fg_counter_floors {
	struct floor slots[FLOOR_SLOTS];
};

struct fg_counter_floors *fg_counter_floors_new(void)
{
	return calloc(1, sizeof(struct fg_counter_floors));
}

void fg_counter_floors_free(struct fg_counter_floors *floors)
{
	free(floors);
}

/* FNV-1a */
static __u32 hash(const char *s)
{
	__u32 h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The series' slot, claimed if new; NULL when the table is full. */
static struct floor *find(struct fg_counter_floors *floors, const char *key, bool *fresh)
{
	__u32 i, start = hash(key) % FLOOR_SLOTS;

	for (i = 0; i < FLOOR_SLOTS; i++) {
		struct floor *f = &floors->slots[(start + i) % FLOOR_SLOTS];

		if (!f->key[0]) {
			snprintf(f->key, sizeof(f->key), "%s", key);
			*fresh = true;
			return f;
		}
		if (!strncmp(f->key, key, sizeof(f->key) - 1))
			return f;
	}
	return NULL;
}

__u64 fg_counter_floor(struct fg_counter_floors *floors, const char *key, __u64 raw)
{
	bool fresh = false;
	struct floor *f = floors && *key ? find(floors, key, &fresh) : NULL;

	if (!f)
		return raw;
	if (!fresh && raw < f->last_raw)
		f->offset += f->last_raw - raw;
	f->last_raw = raw;
	return raw + f->offset;
}
