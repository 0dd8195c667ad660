/* SPDX-License-Identifier: GPL-2.0-only */
/* Keys of the LPM tries (bans, access_lists, src_match): struct
 * fg_src_lpm_key, whose prefix length counts its 32-bit header too. The
 * one place that builds them from a prefix, a CIDR or a source key. */
#ifndef FG_LPMKEY_H
#define FG_LPMKEY_H

#include <string.h>

#include "config/values.h"
#include "floodgate.h"

/* The key of `prefix_len` bits of `addr` (16 bytes, network order). */
static inline struct fg_src_lpm_key fg_lpm_key(__u8 slot, __u8 family, __u8 prefix_len,
					       const __u8 *addr)
{
	struct fg_src_lpm_key key = {
		.prefixlen = FG_SRC_LPM_HEADER_BITS + prefix_len, .slot = slot, .family = family};

	memcpy(key.addr, addr, sizeof(key.addr));
	return key;
}

/* The bans trie's key (slot 0) of a prefix. */
static inline struct fg_src_lpm_key fg_ban_key_of_cidr(const struct fg_cidr *cidr)
{
	return fg_lpm_key(0, cidr->family, cidr->prefix_len, cidr->addr);
}

/* The bans trie's key of a source as a policy keys it (per = src/N). */
static inline struct fg_src_lpm_key fg_ban_key_of_source(const struct fg_source_key *key)
{
	return fg_lpm_key(0, key->family, key->prefix_len, key->addr);
}

/* The prefix an LPM key holds, as a source key of `policy_id`. */
static inline struct fg_source_key fg_source_of_lpm_key(const struct fg_src_lpm_key *lpm,
							__u32 policy_id)
{
	struct fg_source_key key = {.policy_id = policy_id,
				    .family = lpm->family,
				    .prefix_len = (__u8)(lpm->prefixlen - FG_SRC_LPM_HEADER_BITS)};

	memcpy(key.addr, lpm->addr, sizeof(key.addr));
	return key;
}

#endif /* FG_LPMKEY_H */
