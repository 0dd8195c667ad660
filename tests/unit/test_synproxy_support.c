// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the decision on [synproxy]'s kernel support
 * (user/attach/synproxy_support.c), given every probe result, and of the
 * probe on the kernel the tests run on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "attach/synproxy_support.h"

/* Words of each need's line in the refusal, one a need. */
static const char *const need_words[FG_SYNPROXY_N_NEEDS] = {
	[FG_SYNPROXY_HELPERS] = "bpf_tcp_raw_gen_syncookie_ipv4",
	[FG_SYNPROXY_CT_KFUNCS] = "bpf_xdp_ct_lookup",
	[FG_SYNPROXY_NFT_SYNPROXY] = "nftables' synproxy statement",
};

/* Every combination of the needs: refused (FG_ERR_ENV, the CLI's exit 4)
 * exactly when one is missing, naming each missing need and no other,
 * with the way out. */
static void test_every_combination(void **state)
{
	unsigned int mask, need;

	(void)state;
	for (mask = 0; mask < 1u << FG_SYNPROXY_N_NEEDS; mask++) {
		struct fg_synproxy_support s;
		struct fg_err err;
		int ret;

		fg_err_clear(&err);
		for (need = 0; need < FG_SYNPROXY_N_NEEDS; need++)
			s.have[need] = mask & (1u << need);
		ret = fg_synproxy_check_support(&s, &err);
		if (mask == (1u << FG_SYNPROXY_N_NEEDS) - 1) {
			assert_int_equal(ret, 0);
			assert_int_equal(err.kind, FG_ERR_NONE);
			assert_string_equal(err.msg, "");
			continue;
		}
		assert_int_equal(ret, -1);
		assert_int_equal(err.kind, FG_ERR_ENV);
		assert_false(err.located);
		assert_non_null(strstr(err.msg, "[synproxy] needs what this kernel lacks"));
		assert_non_null(strstr(err.msg, "Remove [synproxy] from the config"));
		for (need = 0; need < FG_SYNPROXY_N_NEEDS; need++) {
			bool named = strstr(err.msg, need_words[need]) != NULL;

			assert_int_equal(named, !s.have[need]);
		}
	}
}

/* Each missing need says what provides it. */
static void test_says_what_provides(void **state)
{
	struct fg_synproxy_support s = {.have = {true, true, true}};
	struct fg_err err;

	(void)state;
	fg_err_clear(&err);
	s.have[FG_SYNPROXY_HELPERS] = false;
	assert_int_equal(fg_synproxy_check_support(&s, &err), -1);
	assert_non_null(strstr(err.msg, "Linux >= 6.0"));
	fg_err_clear(&err);
	s.have[FG_SYNPROXY_HELPERS] = true;
	s.have[FG_SYNPROXY_NFT_SYNPROXY] = false;
	assert_int_equal(fg_synproxy_check_support(&s, &err), -1);
	assert_non_null(strstr(err.msg, "nft_synproxy"));
	fg_err_clear(&err);
	s.have[FG_SYNPROXY_NFT_SYNPROXY] = true;
	s.have[FG_SYNPROXY_CT_KFUNCS] = false;
	assert_int_equal(fg_synproxy_check_support(&s, &err), -1);
	assert_non_null(strstr(err.msg, "nf_conntrack"));
}

/* The kernel the project's tests run on (Linux >= 6.0 with conntrack and
 * nftables' synproxy, as test_synproxy.sh needs) has all of it. The probe
 * loads programs: root only. */
static void test_probe_this_kernel(void **state)
{
	struct fg_synproxy_support s;
	struct fg_err err;

	(void)state;
	if (geteuid() != 0) {
		print_message("skip: the probe loads BPF programs (not root)\n");
		skip();
	}
	fg_err_clear(&err);
	fg_synproxy_probe(&s);
	if (fg_synproxy_check_support(&s, &err))
		fail_msg("this kernel: %s", err.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_combination),
		cmocka_unit_test(test_says_what_provides),
		cmocka_unit_test(test_probe_this_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
