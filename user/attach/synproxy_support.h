/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What [synproxy] needs of the kernel, probed before a load or reload
 * changes anything: the SYN cookie helpers, conntrack's BPF kfuncs and
 * nftables' synproxy statement. libbpf 1.1 has no bpf_ksym_exists, so the
 * proxy's programs load only when the config asks for them
 * (maps/skeleton.c); this probe turns a kernel without them into a clear
 * refusal (FG_ERR_ENV) instead of a verifier log, and a config without
 * [synproxy] never probes.
 */
#ifndef FG_ATTACH_SYNPROXY_SUPPORT_H
#define FG_ATTACH_SYNPROXY_SUPPORT_H

#include <stdbool.h>

#include "base/err.h"

/* Each need: its name, what it is, and what gives it to a kernel. */
#define FG_SYNPROXY_NEEDS(X)                                                                       \
	X(HELPERS,                                                                                 \
	  "the BPF helpers bpf_tcp_raw_gen_syncookie_ipv4/ipv6 and "                               \
	  "bpf_tcp_raw_check_syncookie_ipv4/ipv6 at XDP and tc",                                   \
	  "Linux >= 6.0")                                                                          \
	X(CT_KFUNCS,                                                                               \
	  "conntrack's BPF kfuncs bpf_xdp_ct_lookup, bpf_skb_ct_lookup and bpf_ct_release",        \
	  "Linux >= 5.18 with CONFIG_NF_CONNTRACK and BTF for it (CONFIG_DEBUG_INFO_BTF_MODULES "  \
	  "when it is a module, loaded: modprobe nf_conntrack)")                                   \
	X(NFT_SYNPROXY, "nftables' synproxy statement",                                            \
	  "CONFIG_NFT_SYNPROXY (modprobe nft_synproxy)")

#define FG_SYNPROXY_NEED_ENUM(name, what, needs) FG_SYNPROXY_##name,
enum fg_synproxy_need { FG_SYNPROXY_NEEDS(FG_SYNPROXY_NEED_ENUM) FG_SYNPROXY_N_NEEDS };
#undef FG_SYNPROXY_NEED_ENUM

/* What the probe found: have[need]. */
struct fg_synproxy_support {
	bool have[FG_SYNPROXY_N_NEEDS];
};

/* Probes this kernel (as root: the helper probe loads programs). The
 * nftables check runs first: a dry run of a synproxy rule, which the
 * kernel validates and then discards, loading nft_synproxy and
 * nf_conntrack on the way as an install would, so that conntrack's module
 * BTF is there for the kfunc lookup. Nothing is left installed. */
void fg_synproxy_probe(struct fg_synproxy_support *s);

/* The decision, apart from the probe so that tests can give it any
 * result: 0 when `s` has every need, else -1 with `err` (FG_ERR_ENV)
 * naming each one missing, what provides it, and the way out. */
int fg_synproxy_check_support(const struct fg_synproxy_support *s, struct fg_err *err);

#endif /* FG_ATTACH_SYNPROXY_SUPPORT_H */
