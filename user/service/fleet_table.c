// SPDX-License-Identifier: GPL-2.0-only
/* The fleet's bans by prefix (fleet_internal.h): an open-addressing hash
 * table, so that a sync costs the same per ban with 10 bans or 100,000. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/fleet_internal.h"

static size_t hash_key(const struct fg_src_lpm_key *key)
{
	const unsigned char *p = (const unsigned char *)key;
	__u64 hash = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < sizeof(*key); i++)
		hash = (hash ^ p[i]) * 1099511628211ULL;
	return (size_t)(hash ^ (hash >> 29));
}

/* The slot of `key`, or the free slot where it would go (the first
 * gone one on the way, when there is one). */
static struct fleet_entry *probe(const struct fleet_table *t, const struct fg_src_lpm_key *key)
{
	size_t i = hash_key(key) & (t->cap - 1);
	struct fleet_entry *gone = NULL, *e;

	for (;; i = (i + 1) & (t->cap - 1)) {
		e = &t->slots[i];
		if (e->slot == SLOT_FREE)
			return gone ? gone : e;
		if (e->slot == SLOT_GONE) {
			if (!gone)
				gone = e;
		} else if (!memcmp(&e->key, key, sizeof(*key))) {
			return e;
		}
	}
}

struct fleet_entry *fg_fleet_table_find(const struct fleet_table *t,
					const struct fg_src_lpm_key *key)
{
	struct fleet_entry *e;

	if (!t->cap)
		return NULL;
	e = probe(t, key);
	return e->slot == SLOT_USED ? e : NULL;
}

static int resize(struct fleet_table *t, size_t cap)
{
	struct fleet_entry *old = t->slots, *e;
	size_t old_cap = t->cap, i;

	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->cap = cap;
	t->gone = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].slot == SLOT_USED) {
			e = probe(t, &old[i].key);
			*e = old[i];
		}
	free(old);
	return 0;
}

struct fleet_entry *fg_fleet_table_add(struct fleet_table *t, const struct fg_src_lpm_key *key)
{
	struct fleet_entry *e = fg_fleet_table_find(t, key);

	if (e)
		return e;
	/* At most half full, counting the gone slots that lengthen probes. */
	if ((t->used + t->gone + 1) * 2 > t->cap &&
	    resize(t, t->used * 4 > t->cap ? t->cap * 2 : (t->cap ? t->cap : 64)))
		return NULL;
	e = probe(t, key);
	if (e->slot == SLOT_GONE)
		t->gone--;
	memset(e, 0, sizeof(*e));
	e->key = *key;
	e->slot = SLOT_USED;
	t->used++;
	return e;
}

void fg_fleet_table_remove(struct fleet_table *t, struct fleet_entry *e)
{
	e->slot = SLOT_GONE;
	t->used--;
	t->gone++;
}

struct fleet_entry *fg_fleet_table_next(const struct fleet_table *t, struct fleet_entry *e)
{
	for (e = e ? e + 1 : t->slots; t->slots && e < t->slots + t->cap; e++)
		if (e->slot == SLOT_USED)
			return e;
	return NULL;
}

void fg_fleet_table_free(struct fleet_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
