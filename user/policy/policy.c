// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fg_algos.h"
#include "fg_gcra.h"
#include "policy/access.h"
#include "policy/policy.h"

__u32 fg_policy_id(const char *name)
{
	__u32 h = 2166136261U;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 16777619U;
	}
	return h;
}

static void prefix_mask(__u8 *mask, unsigned int bytes, unsigned int prefix_len)
{
	unsigned int i;

	for (i = 0; i < bytes; i++) {
		unsigned int bits = prefix_len > i * 8 ? prefix_len - i * 8 : 0;

		mask[i] = bits >= 8 ? 0xff : (__u8)(0xff << (8 - bits));
	}
}

/* The algorithm's own parameters, by its own params_init: the one encoding
 * of the rate that the datapath reads and `status` prints from. */
static int compile_rate(const struct fg_policy_conf *pc, union fg_rate_params *params)
{
	__u64 count = pc->rate_count, period = pc->rate_period_ns, burst = pc->burst;

	switch (pc->algorithm) {
	case FG_ALG_TOKEN_BUCKET:
		return fg_gcra_params_init(&params->token_bucket, count, period, burst, pc->bytes);
	case FG_ALG_FIXED_WINDOW:
		return fg_fixed_window_params_init(&params->fixed_window, count, period, burst,
						   pc->bytes);
	case FG_ALG_SLIDING_WINDOW:
		return fg_sliding_window_params_init(&params->sliding_window, count, period, burst,
						     pc->bytes);
	case FG_ALG_SLIDING_LOG:
		return fg_sliding_log_params_init(&params->sliding_log, count, period, burst,
						  pc->bytes);
	case FG_ALG_LEAKY_BUCKET:
		return fg_leaky_bucket_params_init(&params->leaky_bucket, count, period, burst,
						   pc->bytes);
	}
	return -1;
}

static int compile_policy(const struct fg_policy_conf *pc, struct fg_policy *p)
{
	memset(p, 0, sizeof(*p));
	/* The algorithm is part of the id: a reload that changes it starts
	 * fresh state instead of misreading the old algorithm's. */
	p->id = fg_policy_id(pc->name) ^ (__u32)pc->algorithm * 0x9e3779b1u;
	p->algorithm = pc->algorithm;
	p->action = pc->action;
	p->key_kind = pc->key_kind;
	p->flags = (pc->bytes ? FG_POLICY_BYTES : 0) | (pc->key_dport ? FG_POLICY_KEY_DPORT : 0) |
		   (pc->scope == FG_SCOPE_FLEET ? FG_POLICY_FLEET : 0) |
		   (pc->scope == FG_SCOPE_HOST ? FG_POLICY_HOST : 0) |
		   (pc->ban_unverified ? FG_POLICY_BAN_UNVERIFIED : 0);
	p->ban_ns = pc->ban_ns;
	p->ban_factor = pc->ban_factor;
	p->ban_max_ns = pc->ban_max_ns;
	p->prefix_v4 = pc->prefix_v4;
	p->prefix_v6 = pc->prefix_v6;
	prefix_mask((__u8 *)&p->mask_v4_be, 4, pc->prefix_v4);
	prefix_mask((__u8 *)p->mask_v6_be, 16, pc->prefix_v6);
	strncpy(p->name, pc->name, sizeof(p->name) - 1);
	/* The validator's limits are inside params_init's, so a failure here
	 * is a bug, not a config error; refuse rather than load nonsense. */
	return compile_rate(pc, &p->params) ? -EINVAL : 0;
}

/* Does CIDR `outer` contain CIDR `inner`? */
static int cidr_contains(const struct fg_cidr *outer, const struct fg_cidr *inner)
{
	__u8 mask[16];
	int i;

	if (outer->family != inner->family || outer->prefix_len > inner->prefix_len)
		return 0;
	prefix_mask(mask, 16, outer->prefix_len);
	for (i = 0; i < 16; i++)
		if ((inner->addr[i] & mask[i]) != outer->addr[i])
			return 0;
	return 1;
}

/*
 * The trie answers with the longest matching prefix only, so each prefix's
 * mask holds every policy with a CIDR that contains it: for an address, the
 * longest match lies inside every other matching CIDR, so its mask is the
 * full set of policies whose restriction admits the address.
 */
static int compile_sources(const struct fg_config *cfg, __u32 slot, struct fg_compiled *out)
{
	unsigned int i, j, k, l;

	out->n_src = 0;
	for (i = 0; i < cfg->n_policies; i++) {
		for (j = 0; j < cfg->policies[i].n_srcs; j++) {
			const struct fg_cidr *prefix = &cfg->policies[i].srcs[j];
			struct fg_src_entry *entry;
			int seen = 0;

			for (l = 0; l < out->n_src && !seen; l++)
				seen = out->src[l].key.family == prefix->family &&
				       out->src[l].key.prefixlen ==
					       FG_SRC_LPM_HEADER_BITS + (__u32)prefix->prefix_len &&
				       !memcmp(out->src[l].key.addr, prefix->addr, 16);
			if (seen)
				continue;
			if (out->n_src == FG_MAX_SRC_PREFIXES)
				return -E2BIG;
			entry = &out->src[out->n_src++];
			memset(entry, 0, sizeof(*entry));
			entry->key.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix->prefix_len;
			entry->key.slot = slot;
			entry->key.family = prefix->family;
			memcpy(entry->key.addr, prefix->addr, 16);
			for (k = 0; k < cfg->n_policies; k++)
				for (l = 0; l < cfg->policies[k].n_srcs; l++)
					if (cidr_contains(&cfg->policies[k].srcs[l], prefix))
						entry->mask |= 1ULL << k;
		}
	}
	return 0;
}

/* Sets `bit` for each listed port, or for every port when the list is
 * empty (no restriction). */
static void fill_port_mask(__u64 *mask, const struct fg_port_range *ranges, unsigned int n,
			   __u64 bit)
{
	unsigned int r, port;

	if (n == 0) {
		for (port = 0; port < FG_PORT_SLOTS; port++)
			mask[port] |= bit;
		return;
	}
	for (r = 0; r < n; r++)
		for (port = ranges[r].lo; port <= ranges[r].hi; port++)
			mask[port] |= bit;
}

int fg_online_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	return online < 1 ? 1 : (int)online;
}

int fg_budget_compile(__u64 count, __u64 period_ns, __u64 burst, struct fg_budget *budget)
{
	const __u64 max_interval = ~0ULL - (1ULL << (FG_GCRA_FRAC_BITS - 1));
	int ncpus = fg_online_cpus();
	__u64 per_unit;

	memset(budget, 0, sizeof(*budget));
	if (!count)
		return 0;
	/* The validator bounds the burst but not burst x T (1/h with
	 * burst 1e9 is 114,000 years of credit): past 2^62 ns it is capped. */
	per_unit = fg_gcra_cost_ns(fg_gcra_interval_fp(count, period_ns), 1);
	if (per_unit && burst > (1ULL << 62) / per_unit)
		burst = (1ULL << 62) / per_unit;
	if (fg_gcra_params_init(&budget->gcra, count, period_ns, burst, 0))
		return -EINVAL;
	/* A per-CPU interval past 2^48 ns (78 h; 1/h on more than 78 CPUs)
	 * is clamped there, where cost_ns() still fits in 64 bits. */
	if (budget->gcra.interval_fp > max_interval / (__u64)ncpus)
		budget->gcra.interval_fp = max_interval;
	else
		budget->gcra.interval_fp *= (__u64)ncpus;
	return 0;
}

int fg_policy_compile(const struct fg_config *cfg, __u32 slot, struct fg_compiled *out)
{
	return fg_policy_compile_feeds(cfg, NULL, slot, out);
}

void fg_compiled_free(struct fg_compiled *compiled)
{
	if (!compiled)
		return;
	free(compiled->access.keys);
	free(compiled->access.values);
	free(compiled);
}

int fg_policy_compile_feeds(const struct fg_config *cfg, const struct fg_feeds *feeds, __u32 slot,
			    struct fg_compiled *out)
{
	struct fg_policy_set *set = &out->set;
	unsigned int i, r;

	/* First: a compile that fails early still leaves nothing to free. */
	memset(&out->access, 0, sizeof(out->access));
	memset(set, 0, sizeof(*set));
	memset(out->dport_mask, 0, sizeof(out->dport_mask));
	memset(out->sport_mask, 0, sizeof(out->sport_mask));
	set->count = cfg->n_policies;
	set->malformed_verdict = cfg->malformed;
	set->table_full_verdict = cfg->table_full;

	for (i = 0; i < cfg->n_policies; i++) {
		const struct fg_policy_conf *pc = &cfg->policies[i];
		__u64 bit = 1ULL << i;

		if (compile_policy(pc, &set->policies[i]))
			return -EINVAL;
		if (pc->proto == 0) {
			for (r = 0; r < 256; r++)
				set->proto_match[r] |= bit;
		} else {
			set->proto_match[pc->proto] |= bit;
		}
		/* Packets without ports (later fragments, ICMP, ...) match
		 * only the policies that name no ports and no flags. */
		if (pc->n_dports == 0 && pc->n_sports == 0 && !pc->syn_only)
			set->portless_match |= bit;
		if (pc->syn_only)
			set->syn_only |= bit;
		for (r = pc->size_lo_class; r <= pc->size_hi_class && r < FG_SIZE_CLASSES; r++)
			set->size_match[r] |= bit;
		fill_port_mask(out->dport_mask, pc->dports, pc->n_dports, bit);
		fill_port_mask(out->sport_mask, pc->sports, pc->n_sports, bit);
		if (pc->n_srcs)
			set->src_restricted |= bit;
	}
	if (fg_access_compile(cfg, feeds, slot, &out->access))
		return -ENOMEM;
	set->access_prefixes = out->access.n;
	set->allow_prefixes = out->access.n_allow;
	if (fg_budget_compile(cfg->new_sources_count, cfg->new_sources_period_ns,
			      cfg->new_sources_burst ? cfg->new_sources_burst
						     : cfg->new_sources_count,
			      &out->budget) ||
	    fg_budget_compile(cfg->events_count, cfg->events_period_ns, cfg->events_count,
			      &out->event_budget))
		return -EINVAL;
	return compile_sources(cfg, slot, out);
}

static int clear_slot_sources(int src_fd, __u32 slot)
{
	struct fg_src_lpm_key key, next;
	void *prev = NULL;
	int err;

	/* Deleting while iterating restarts the walk; the trie is small. */
	while (!bpf_map_get_next_key(src_fd, prev, &next)) {
		if (next.slot == slot) {
			err = bpf_map_delete_elem(src_fd, &next);
			if (err)
				return -errno;
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

/* The prefixes the slot's set says its lists hold in `access_lists`: 0
 * once they were reclaimed (fg_policy_reclaim_access), so writing into an
 * empty slot walks nothing. */
static int idle_access_prefixes(int sets_fd, __u32 slot, __u32 *count)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	int err = 0;

	if (!set)
		return -ENOMEM;
	if (bpf_map_lookup_elem(sets_fd, &slot, set))
		err = -errno;
	*count = err ? 0 : set->access_prefixes;
	free(set);
	return err;
}

long fg_policy_reclaim_access(const struct fg_policy_maps *maps, __u32 slot,
			      const struct fg_access_keys *keys)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	long cleared = -ENOMEM;

	if (set && keys) {
		cleared = fg_access_delete(maps->access_lists, keys);
		if (!cleared)
			cleared = (long)keys->n;
	} else if (set) {
		cleared = fg_access_clear_slot(maps->access_lists, slot);
	}
	/* The slot's set records its lists as gone: the next write into it
	 * need not look for them. */
	if (cleared >= 0 && bpf_map_lookup_elem(maps->policy_sets, &slot, set) == 0) {
		set->access_prefixes = 0;
		set->allow_prefixes = 0;
		if (bpf_map_update_elem(maps->policy_sets, &slot, set, BPF_ANY))
			cleared = -errno;
	}
	free(set);
	return cleared;
}

static int zero_slot_stats(int stats_fd, __u32 slot)
{
	int ncpus = libbpf_num_possible_cpus();
	struct fg_policy_stats *zeros;
	__u32 i, index;
	int err = 0;

	if (ncpus < 0)
		return ncpus;
	zeros = calloc(ncpus, sizeof(*zeros));
	if (!zeros)
		return -ENOMEM;
	for (i = 0; i < FG_MAX_POLICIES && !err; i++) {
		index = slot * FG_MAX_POLICIES + i;
		if (bpf_map_update_elem(stats_fd, &index, zeros, BPF_ANY))
			err = -errno;
	}
	free(zeros);
	return err;
}

static int write_budget(int fd, const struct fg_budget *budget)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, err = 0;
	struct fg_budget *values;
	__u32 zero = 0;

	if (ncpus < 0)
		return ncpus;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (cpu = 0; cpu < ncpus; cpu++)
		values[cpu] = *budget;
	if (bpf_map_update_elem(fd, &zero, values, BPF_ANY))
		err = -errno;
	free(values);
	return err;
}

int fg_policy_write_slot(const struct fg_policy_maps *maps, __u32 slot,
			 const struct fg_compiled *compiled)
{
	LIBBPF_OPTS(bpf_map_batch_opts, batch_opts);
	__u32 *keys, count = FG_PORT_SLOTS, i, leftover;
	int err;

	err = idle_access_prefixes(maps->policy_sets, slot, &leftover);
	if (!err && bpf_map_update_elem(maps->policy_sets, &slot, &compiled->set, BPF_ANY))
		err = -errno;
	if (err)
		return -errno;

	keys = malloc(FG_PORT_SLOTS * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < FG_PORT_SLOTS; i++)
		keys[i] = slot * FG_PORT_SLOTS + i;
	err = bpf_map_update_batch(maps->dport_match, keys, compiled->dport_mask, &count,
				   &batch_opts);
	if (!err) {
		count = FG_PORT_SLOTS;
		err = bpf_map_update_batch(maps->sport_match, keys, compiled->sport_mask, &count,
					   &batch_opts);
	}
	free(keys);
	if (err)
		return -errno;

	err = clear_slot_sources(maps->src_match, slot);
	if (err)
		return err;
	for (i = 0; i < compiled->n_src; i++) {
		if (bpf_map_update_elem(maps->src_match, &compiled->src[i].key,
					&compiled->src[i].mask, BPF_ANY))
			return -errno;
	}
	err = fg_access_write(maps->access_lists, &compiled->access, slot, leftover);
	if (err)
		return err;
	err = write_budget(maps->new_source_budget, &compiled->budget);
	if (!err)
		err = write_budget(maps->event_budget, &compiled->event_budget);
	if (err)
		return err;
	return zero_slot_stats(maps->policy_stats, slot);
}

int fg_policy_carry_stats(const struct fg_policy_maps *maps, __u32 from_slot, __u32 to_slot)
{
	int ncpus = libbpf_num_possible_cpus();
	struct fg_policy_set *from, *to;
	struct fg_policy_stats *values;
	__u32 i, j, index;
	int err = -ENOMEM;

	if (ncpus < 0)
		return ncpus;
	from = malloc(sizeof(*from));
	to = malloc(sizeof(*to));
	values = calloc(ncpus, sizeof(*values));
	if (!from || !to || !values)
		goto out;
	if (bpf_map_lookup_elem(maps->policy_sets, &from_slot, from) ||
	    bpf_map_lookup_elem(maps->policy_sets, &to_slot, to)) {
		err = -errno;
		goto out;
	}
	err = 0;
	for (i = 0; i < to->count && i < FG_MAX_POLICIES && !err; i++) {
		for (j = 0; j < from->count && j < FG_MAX_POLICIES; j++) {
			if (strncmp(to->policies[i].name, from->policies[j].name,
				    FG_POLICY_NAME_LEN))
				continue;
			index = from_slot * FG_MAX_POLICIES + j;
			if (bpf_map_lookup_elem(maps->policy_stats, &index, values)) {
				err = -errno;
				break;
			}
			index = to_slot * FG_MAX_POLICIES + i;
			if (bpf_map_update_elem(maps->policy_stats, &index, values, BPF_ANY))
				err = -errno;
			break;
		}
	}
out:
	free(from);
	free(to);
	free(values);
	return err;
}

bool fg_config_uses(const struct fg_config *cfg, __u8 algorithm)
{
	unsigned int i;

	for (i = 0; i < cfg->n_policies; i++)
		if (cfg->policies[i].algorithm == algorithm)
			return true;
	return false;
}

__u32 fg_windows_entries(const struct fg_config *cfg)
{
	return fg_config_uses(cfg, FG_ALG_SLIDING_WINDOW) ? cfg->max_sources : 1;
}

__u32 fg_logs_entries(const struct fg_config *cfg)
{
	if (!fg_config_uses(cfg, FG_ALG_SLIDING_LOG))
		return 1;
	return cfg->max_sources < FG_DEFAULT_MAX_LOG_SOURCES ? cfg->max_sources
							     : FG_DEFAULT_MAX_LOG_SOURCES;
}

__u32 fg_fleet_entries(const struct fg_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->n_policies; i++)
		if (cfg->policies[i].scope == FG_SCOPE_FLEET)
			return cfg->max_sources < FG_MAX_FLEET_KEYS ? cfg->max_sources
								    : FG_MAX_FLEET_KEYS;
	return 1;
}

bool fg_config_has_host(const struct fg_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->n_policies; i++)
		if (cfg->policies[i].scope == FG_SCOPE_HOST)
			return true;
	return false;
}

__u32 fg_host_entries(const struct fg_config *cfg)
{
	return fg_config_has_host(cfg) ? cfg->max_sources : 1;
}

int fg_policy_activate(const struct fg_policy_maps *maps, __u32 slot)
{
	struct fg_policy_set *set = malloc(sizeof(*set));
	struct fg_runtime rt;
	__u32 zero = 0;
	int err = set ? 0 : -ENOMEM;

	if (!err && (bpf_map_lookup_elem(maps->runtime, &zero, &rt) ||
		     bpf_map_lookup_elem(maps->policy_sets, &slot, set)))
		err = -errno;
	/* The set's tag before the flip: no refusal the cache holds from an
	 * earlier set serves under this one (include/floodgate_policy.h). */
	if (!err) {
		set->generation = (__u16)(rt.generation + 1);
		if (bpf_map_update_elem(maps->policy_sets, &slot, set, BPF_ANY))
			err = -errno;
	}
	if (!err) {
		rt.active_slot = slot;
		rt.generation++;
		if (bpf_map_update_elem(maps->runtime, &zero, &rt, BPF_ANY))
			err = -errno;
	}
	free(set);
	return err;
}
