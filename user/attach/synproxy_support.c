// SPDX-License-Identifier: GPL-2.0-only
/* The kernel support [synproxy] needs (see synproxy_support.h). */
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <nftables/libnftables.h>

#include "attach/synproxy_support.h"
#include "base/log.h"

/* The module that holds conntrack's kfuncs when it is not built in. */
#define CT_MODULE "nf_conntrack"

static const char *const need_what[] = {
#define NEED_WHAT(name, what, needs) [FG_SYNPROXY_##name] = what,
	FG_SYNPROXY_NEEDS(NEED_WHAT)
#undef NEED_WHAT
};

static const char *const need_provider[] = {
#define NEED_PROVIDER(name, what, needs) [FG_SYNPROXY_##name] = needs,
	FG_SYNPROXY_NEEDS(NEED_PROVIDER)
#undef NEED_PROVIDER
};

/*
 * A rule as synproxy_nft.c writes it, in a table of its own, checked by
 * the kernel and discarded: in dry-run mode libnftables sends the batch
 * without its end, so the kernel validates every expression (loading its
 * module if need be) and then aborts the transaction.
 */
static bool nft_has_synproxy(void)
{
	static const char probe[] =
		"table inet floodgate_probe {\n"
		"  chain input {\n"
		"    type filter hook input priority filter; policy accept;\n"
		"    tcp dport 1 ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp "
		"sack-perm\n"
		"  }\n"
		"}\n";
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

	if (!nft)
		return false;
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	nft_ctx_set_dry_run(nft, true);
	ret = nft_run_cmd_from_buffer(nft, probe);
	if (ret)
		pr_debug("[synproxy] probe: nftables refused a synproxy rule: %s",
			 nft_ctx_get_error_buffer(nft));
	nft_ctx_free(nft);
	return !ret;
}

static bool has_helpers(enum bpf_prog_type type)
{
	static const enum bpf_func_id helpers[] = {
		BPF_FUNC_tcp_raw_gen_syncookie_ipv4,
		BPF_FUNC_tcp_raw_gen_syncookie_ipv6,
		BPF_FUNC_tcp_raw_check_syncookie_ipv4,
		BPF_FUNC_tcp_raw_check_syncookie_ipv6,
	};
	size_t i;

	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		int ret = libbpf_probe_bpf_helper(type, helpers[i], NULL);

		if (ret != 1) {
			pr_debug("[synproxy] probe: helper %d at program type %d: %d\n", helpers[i],
				 type, ret);
			return false;
		}
	}
	return true;
}

/* Are the kfuncs the proxy calls in the kernel's BTF, or in conntrack's
 * module BTF when conntrack is a module (as libbpf looks for them)? */
static bool has_ct_kfuncs(void)
{
	static const char *const kfuncs[] = {"bpf_xdp_ct_lookup", "bpf_skb_ct_lookup",
					     "bpf_ct_release"};
	struct btf *vmlinux = btf__load_vmlinux_btf(), *module = NULL;
	bool found = vmlinux != NULL;
	size_t i;

	if (!vmlinux)
		return false;
	for (i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]) && found; i++) {
		if (btf__find_by_name_kind(vmlinux, kfuncs[i], BTF_KIND_FUNC) > 0)
			continue;
		if (!module)
			module = btf__load_module_btf(CT_MODULE, vmlinux);
		found = module && btf__find_by_name_kind(module, kfuncs[i], BTF_KIND_FUNC) > 0;
		if (!found)
			pr_debug("[synproxy] probe: no kfunc %s in the kernel's BTF\n", kfuncs[i]);
	}
	btf__free(module);
	btf__free(vmlinux);
	return found;
}

void fg_synproxy_probe(struct fg_synproxy_support *s)
{
	/* nftables first: its dry run loads conntrack if it is a module. */
	s->have[FG_SYNPROXY_NFT_SYNPROXY] = nft_has_synproxy();
	s->have[FG_SYNPROXY_HELPERS] =
		has_helpers(BPF_PROG_TYPE_XDP) && has_helpers(BPF_PROG_TYPE_SCHED_CLS);
	s->have[FG_SYNPROXY_CT_KFUNCS] = has_ct_kfuncs();
}

int fg_synproxy_check_support(const struct fg_synproxy_support *s, struct fg_err *err)
{
	bool first = true;
	int need;

	for (need = 0; need < FG_SYNPROXY_N_NEEDS; need++) {
		if (s->have[need])
			continue;
		if (first)
			fg_fail(err, FG_ERR_ENV, "[synproxy] needs what this kernel lacks:");
		first = false;
		fg_err_hint(err, "  %s (%s)", need_what[need], need_provider[need]);
	}
	if (first)
		return 0;
	fg_err_hint(err,
		    "Remove [synproxy] from the config to load the rest of it on this "
		    "kernel, or use a kernel that has the above (docs/config.md, [synproxy]).");
	return -1;
}
