#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make mutants`: proves the test suite can fail. Each mutant is one
# deliberate breakage of the datapath or the loader (an exact text edit),
# applied to a scratch copy of this tree in /tmp (tracked files as they are
# in the working tree, plus build/ so that only what the edit touches is
# rebuilt). The copy is built and the suites that cover the broken
# behaviour are run there (scripts/run-tests.sh with FG_SUITES, stopping
# at the first failing suite). Every mutant must make them FAIL: a mutant
# that survives means a claim no test checks. Not part of `make test`.
#
# Each mutant runs a subset of `make test` (its suites, listed below), so
# "caught" means `make test` fails too; a survivor is reported with the
# suites it passed.
#
#   FG_MUTANTS=NAME,NAME   run only these mutants (default: all)
#   FG_MUTANTS_LOCK=PATH   run each mutant's suites under `flock PATH` (the
#                          machine's shared lock for traffic-sending tests)
#   FG_MUTANTS_KEEP=1      keep the scratch copies (their paths are printed)
#   --check                only check that every mutant still applies (its
#                          text occurs once) and still compiles (its file,
#                          or for a bpf/ file the BPF object, with the
#                          build's flags and -Werror, syntax only: a
#                          mutant that no longer builds tests nothing);
#                          `make check-mutants`, part of `make test` once
#                          the tree is built, so an edit that strands a
#                          mutant fails at once rather than in the next
#                          mutant run. Needs CC, CFLAGS, CLANG and
#                          BPF_CFLAGS from the Makefile.
#
# Exit status: 0 every mutant caught, 1 a mutant survived or could not be
# applied or built.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

# mutant NAME FILE SUITES-REGEX OLD NEW WHAT: OLD must occur exactly once.
NAMES=() FILES=() SUITES=() OLDS=() NEWS=() WHATS=()
mutant() {
	NAMES+=("$1") FILES+=("$2") SUITES+=("$3") OLDS+=("$4") NEWS+=("$5") WHATS+=("$6")
}

mutant verdicts-inverted bpf/floodgate.bpf.c '^test_prog$' \
	'if (fg_process(ctx, &pkt, NULL, data, data_end, pkt_len) == FG_VERDICT_DROP)' \
	'if (fg_process(ctx, &pkt, NULL, data, data_end, pkt_len) != FG_VERDICT_DROP)' \
	"XDP drops what it should pass and passes what it should drop"
mutant burst-doubled user/policy/policy.c '^test_prog$' \
	'fg_gcra_params_init(&params->token_bucket, count, period, burst, pc->bytes)' \
	'fg_gcra_params_init(&params->token_bucket, count, period, 2 * burst, pc->bytes)' \
	"the loader compiles every token_bucket with twice its burst"
mutant lock-removed bpf/fg_charge.h '^test_prog$' \
	'return stripe ? &stripe->lock : NULL;' \
	'return stripe ? NULL : NULL;' \
	"fg_lock_for returns NULL: sliding_window and sliding_log run unlocked"
mutant reload-resets-state user/maps/pinned.c '^test_prog$|^test_reload\.sh$' \
	'if (!state_kept(&old->policies[i], next))' \
	'if (1 || !state_kept(&old->policies[i], next))' \
	"a reload reclaims the state of every policy, kept ones included"
mutant deny-ignored bpf/floodgate.bpf.c '^test_prog$|^test_bans\.sh$' \
	'if (access == FG_ACCESS_DENY) {' \
	'if (0 && access == FG_ACCESS_DENY) {' \
	"the [deny] list is never consulted"
mutant vlan-not-walked bpf/fg_parse.h '^test_prog$|^test_framing\.sh$' \
	'for (i = 0; i < FG_VLAN_MAX; i++) {' \
	'for (i = 0; i < 1; i++) {' \
	"only the outer VLAN tag is walked: QinQ frames look like a tag stack overflow"
mutant expired-ban-honoured bpf/fg_access.h '^test_prog$|^test_bans\.sh$' \
	'if (now < ban->expires_ns)' \
	'if (now < ban->expires_ns + 3600000000000ULL)' \
	"a ban is honoured an hour past its expiry"
mutant monitor-drops bpf/floodgate.bpf.c '^test_prog$' \
	'if (policy->action == FG_ACTION_MONITOR) {' \
	'if (0 && policy->action == FG_ACTION_MONITOR) {' \
	"action = monitor drops instead of counting a would-drop"
mutant tc-ignores-verdict bpf/floodgate.bpf.c '^test_prog$|^test_cli\.sh$' \
	'return TC_ACT_SHOT;' \
	'return TC_ACT_OK;' \
	"the tc program never drops"
mutant tc-byte-cost-ignores-skb-len bpf/floodgate.bpf.c '^test_cli\.sh$' \
	'if (fg_process(skb, &pkt, skb, NULL, NULL, skb->len) == FG_VERDICT_DROP)' \
	'if (fg_process(skb, &pkt, skb, NULL, NULL, 64) == FG_VERDICT_DROP)' \
	"tc charges byte limits 64 bytes a frame, not skb->len"
mutant load-lock-removed user/maps/pinfolder.c '^test_cli\.sh$|^test_limits\.sh$' \
	'if (!flock(fd, LOCK_EX | LOCK_NB))' \
	'if (1 || !flock(fd, LOCK_EX | LOCK_NB))' \
	"state-changing commands no longer take the pin folder's flock"
mutant ipv6-ext-bound-off-by-one bpf/fg_parse.h '^test_prog$' \
	'#define FG_IPV6_EXT_MAX 6' \
	'#define FG_IPV6_EXT_MAX 5' \
	"a chain of exactly 6 IPv6 extension headers is called malformed"
mutant ip-version-unchecked bpf/fg_parse.h '^test_prog$' \
	'if (iph->version != 4 || ihl_bytes < sizeof(*iph) ||' \
	'if (ihl_bytes < sizeof(*iph) ||' \
	"an IPv4 ethertype with another IP version is parsed as IPv4"
mutant coarse-clock-stopped bpf/fg_clock.h '^test_algorithms\.sh$' \
	'return bpf_ktime_get_coarse_ns();' \
	'return 1000000000ULL;' \
	"clock = coarse reads a clock that never moves (the coarse branch is loaded and run)"
mutant new-source-budget-ignored bpf/fg_budget.h '^test_prog$|^test_spoof\.sh$' \
	'if (!budget || !budget->gcra.interval_fp)' \
	'if (!budget || budget)' \
	"the new-source budget always allows: a spoofed flood creates state freely"

mutant clock-read-for-every-packet bpf/floodgate.bpf.c '^test_prog$' \
	'if (rt->bans_may_exist && fg_banned(pkt, clock)) {' \
	'if (fg_clock_now(clock) && rt->bans_may_exist && fg_banned(pkt, clock)) {' \
	"every packet reads the clock, those that match no policy and no ban entry too"
mutant drop-sample-one-in-16 bpf/fg_charge.h '^test_top\.sh$' \
	'return !(draw >> 58);' \
	'return !(draw >> 60);' \
	"a per-source drop count samples one refusal in 16 but still adds 64"
mutant refusal-cache-ignores-generation bpf/fg_refusal.h '^test_prog$' \
	'seen->generation != generation ||' \
	'seen->generation == ~generation ||' \
	"a refusal cache entry outlives the policy push it was written under"
mutant refusal-cache-tag-never-changes user/policy/policy.c '^test_prog$' \
	'set->generation = (__u16)(rt.generation + 1);' \
	'set->generation = 0;' \
	"a policy push leaves its set's tag as it was: refusals cached under the old policy serve under the new"
mutant refusal-cache-ignores-churn bpf/fg_refusal.h '^test_prog$' \
	'gstats->sources_created - seen->created >= fg_refusal_churn_limit;' \
	'(gstats->sources_created & 0);' \
	"the refusal cache serves while the table turns over (a refused source is evicted)"
mutant refusal-cache-never-refreshed bpf/fg_refusal.h '^test_prog$' \
	'seen->written >= FG_REFUSAL_REFRESH_TICKS ||' \
	'seen->written > 0xffffffffU ||' \
	"a refusal cache entry serves for ever: a refused source's state is never marked used"
mutant refusal-cache-coarse-only bpf/fg_refusal.h '^test_prog$' \
	'	    fg_gcra_admit(gcra, seen->tat_ns, fg_clock_now(clock), cost, &unused))' \
	'	    true)' \
	"a source whose next token is nearer than the coarse clock's lag is never refused from the cache: each refusal looks its state up"
mutant refusal-cache-direct-mapped bpf/fg_refusal.h '^test_prog$' \
	'if (!fg_same_key4(&seen->key, key4) &&' \
	'if (0 &&' \
	"the refusal cache writes only a source's first way: two abusers that share a set evict each other"
mutant refusal-cache-unaligned bpf/fg_maps.h '^test_prog$' \
	'__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fg_refusal_set);' \
	'__type(key, __u32);
	__type(value, struct fg_refusal_set);' \
	"the refusals cache starts mid-line (not mmapable), half its entries straddling two cache lines"
mutant cached-refusal-ignores-action bpf/floodgate.bpf.c '^test_prog$' \
	'if (pkt->family != FG_FAMILY_IPV4 || policy->action != FG_ACTION_DROP ||' \
	'if (pkt->family != FG_FAMILY_IPV4 ||' \
	"the walk's refusal from the cache drops for a monitor layer too, and never bans for a ban layer"
mutant cached-refusal-uncounted bpf/floodgate.bpf.c '^test_prog$' \
	'pstats->matched_bytes += pkt_len;
	pstats->dropped_packets++;' \
	'pstats->dropped_packets++;' \
	"a refusal from the cache in the walk's frame leaves the layer's matched bytes uncounted"
mutant refusal-asked-never-cleared bpf/fg_charge.h '^test_prog$' \
	'	clock->refusal_asked = 0;' \
	'' \
	"after the walk's miss in the refusal cache, no later layer of the packet asks the cache: each of its refusals looks its state up"
mutant ban-max-uncapped-by-default user/config/validate.c '^test_prog$' \
	'pol->ban_max_ns = pol->ban_ns;' \
	'pol->ban_max_ns = 30 * 86400ULL * 1000000000ULL;' \
	"without ban_max, repeat bans grow to 30 days instead of the first ban's length"
mutant coarse-refusal-without-lag bpf/fg_clock.h '^test_prog$' \
	'return fg_clock_earliest(clock) + fg_coarse_lag_ns;' \
	'return fg_clock_earliest(clock);' \
	"a refusal trusts the coarse clock without its lag: it refuses packets the precise clock admits"
mutant coarse-reading-kept bpf/fg_clock.h '^test_prog$' \
	'if (reading->jiffies != jiffy) {' \
	'if (!reading->jiffies) {' \
	"each CPU keeps its first reading of the coarse clock: refusals are judged at a time that stops"
mutant crowdsec-deleted-ignored user/service/crowdsec_apply.c '^test_crowdsec\.sh$' \
	'if (!bpf_map_lookup_elem(a->pinned->bans, &key, &old) && is_crowdsec_ban(&old, &key) &&' \
	'if (0 && !bpf_map_lookup_elem(a->pinned->bans, &key, &old) && is_crowdsec_ban(&old, &key) &&' \
	"deleted CrowdSec decisions lift nothing"
mutant crowdsec-unguarded user/service/crowdsec_apply.c '^test_crowdsec\.sh$' \
	'const char *why = fg_ban_guard_refusal(&a->guard, a->pinned, &d->cidr);' \
	'const char *why = NULL;' \
	"CrowdSec decisions skip the check on bans from outside (own addresses, [allow], min_ban_prefix)"
mutant bans-put-unflagged user/ops/bans.c '^test_prog$' \
	$'int err = fg_runtime_mark_bans(pinned->maps.runtime);\n\n\tif (err)\n\t\treturn err;\n\tif (bpf_map_update_elem(pinned->bans, key, ban, BPF_ANY))\n\t\treturn -errno;\n\treturn fg_runtime_mark_bans(pinned->maps.runtime);' \
	'return bpf_map_update_elem(pinned->bans, key, ban, BPF_ANY) ? -errno : 0;' \
	"fg_bans_put writes a ban without setting bans_may_exist (before or after): the datapath skips the trie"
mutant synproxy-flow-any-tuple bpf/fg_synproxy.h '^test_prog$' \
	'if (!flow || !fg_synproxy_flow_is(flow, pkt) || fg_coarse_cached() >= flow->until_ns)' \
	'if (!flow || fg_coarse_cached() >= flow->until_ns)' \
	"the proxy's cache of known connections passes any packet whose connection shares a slot with one"
mutant synproxy-flow-forever bpf/fg_synproxy.h '^test_prog$' \
	'if (!flow || !fg_synproxy_flow_is(flow, pkt) || fg_coarse_cached() >= flow->until_ns)' \
	'if (!flow || !fg_synproxy_flow_is(flow, pkt))' \
	"a connection the proxy found in conntrack passes from its cache for ever, not for a second"
mutant synproxy-synacks-uncapped bpf/fg_synproxy.h '^test_prog$' \
	'if (!fg_synack_allowed()) {' \
	'if (0 && !fg_synack_allowed()) {' \
	"synacks caps nothing: the proxy answers every SYN of a spoofed flood"
mutant synproxy-probe-refused bpf/fg_synproxy.h '^test_prog$' \
	'return fg_cookie_refused(s) && fg_synproxy_probe(ctx, tc, s, l4);' \
	'return fg_cookie_refused(s) && (l4 || fg_synproxy_probe(ctx, tc, s, l4));' \
	"a window probe in place of a lost handshake ACK is refused: the client's connection hangs until it gives up"
mutant synproxy-probe-timestamp-unread bpf/fg_synproxy.h '^test_prog$' \
	'switch (fg_ack_reading(ctx, tc, s, l4)) {' \
	'switch (l4 ? FG_ACK_UNTOLD : fg_ack_reading(ctx, tc, s, l4)) {' \
	"the echoed timestamp is not read: a probe from a client with a smaller MSS than the cookie's largest passes unchanged, and the listener's side opens one byte off"
mutant synproxy-probe-checksum-stale bpf/fg_synproxy.h '^test_prog$' \
	's->tcp.th.check = fg_csum_fold(sum);' \
	's->tcp.th.check = sum ? s->tcp.th.check : 0;' \
	"a window probe passed as the handshake ACK keeps its old checksum: the stack drops it as corrupt"
mutant presence-never-renewed bpf/fg_charge.h '^test_prog$' \
	'if (unnoted || fg_presence_lapsing(state->last_seen, clock))' \
	'if (unnoted)' \
	"a source's note is made once and never renewed: after two generations a source with state is refused with the spoofed flood"
mutant presence-skips-noted bpf/fg_presence.h '^test_prog$' \
	'return !word || fg_presence_has(*(volatile __u64 *)word, gen, bit);' \
	'return !word || (0 && fg_presence_has(*(volatile __u64 *)word, gen, bit));' \
	"the presence filter reads every key as unnoted: past the budget, sources with state are refused as spoofed ones"
mutant presence-first-level-unnoted bpf/fg_presence.h '^test_prog$' \
	'first = fg_presence_note_in(&presence4_first, index, bit, gen);' \
	'first = 1;' \
	"keys are noted in the second level only: the first reads every source with state as unnoted, and past the budget it is refused as a spoofed one"
mutant presence-second-level-unread bpf/fg_presence.h '^test_prog$' \
	'return fg_presence_in(&presence4, index, bit, gen);' \
	'return true;' \
	"the second level is never read: a spoofed key whose bit the first level shares is looked up in both tables"
mutant presence-forgets-known bpf/fg_charge.h '^test_prog$' \
	'if (unnoted && ((*found = bpf_map_lookup_elem(unnoted, map_key)) ||' \
	'if (0 && unnoted && ((*found = bpf_map_lookup_elem(unnoted, map_key)) ||' \
	"a known source whose note has gone gets a fresh state in sources4, with a fresh burst, when the budget lets it by"
mutant synproxy-open-connections-cut user/attach/synproxy_nft.c '^test_synproxy\.sh$' \
	'fg_ct_seed_established(conf, err) < 0' \
	'(0 && fg_ct_seed_established(conf, err) < 0)' \
	"a [synproxy] load gives conntrack no entries for the connections already open"
mutant synproxy-pickup-loose user/attach/synproxy_nft.c '^test_synproxy\.sh$' \
	'ret = write_number(TCP_LOOSE_SYSCTL, 0, false);' \
	'ret = 0;' \
	"a [synproxy] load leaves nf_conntrack_tcp_loose as it was: the cookie ACK never reaches nftables' synproxy"
mutant synproxy-ack-tracked user/attach/synproxy_nft.c '^test_synproxy\.sh$' \
	'local counter notrack' \
	'local counter' \
	"synproxy's ACK to the listener stays tracked: its TSecr is shifted twice and the listener (6.15+) refuses it"
mutant synproxy-unlinked user/ops/loader.c '^test_synproxy\.sh$' \
	'ret = fg_skel_link_synproxy(skel);' \
	'ret = 0;' \
	"load never puts the SYN proxy in its prog array: fg_process judges the port itself"
mutant synproxy-hostfw-first user/attach/synproxy_nft.c '^test_synproxy\.sh$' \
	'priority mangle - 10;' \
	'priority filter;' \
	"the proxy's input chain at filter priority: a host firewall's 'ct state invalid drop' registered after it drops the cookie ACKs"
mutant synproxy-support-ignored user/attach/synproxy_support.c '^test_synproxy_support$' \
	'if (s->have[need])' \
	'if (1 || s->have[need])' \
	"a kernel without what [synproxy] needs passes the check: the load fails half-way instead of exit 4"
mutant owed-events-never-emitted bpf/floodgate.bpf.c '^test_prog$' \
	'if (clock->owes_events) {' \
	'if (0 && clock->owes_events) {' \
	"a layer's owed events (refusing, table_full, budget_exhausted) are never emitted"
mutant owed-events-one-per-layer bpf/fg_maps.h '^test_prog$' \
	'#define FG_OWED_EVENTS 2' \
	'#define FG_OWED_EVENTS 1' \
	"a layer keeps one owed event: the overflow key's refusal on the packet that ran the budget out is lost"

selected() {
	[ -z "${FG_MUTANTS:-}" ] && return 0
	[[ ",$FG_MUTANTS," == *",$1,"* ]]
}

# apply FILE OLD NEW: replaces the one occurrence of OLD.
apply() {
	python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
n = text.count(old)
if n != 1:
    sys.exit(f"the text to mutate occurs {n} times in {path}, not once")
open(path, "w").write(text.replace(old, new))
PY
}

# scratch_copy DIR: the working tree's tracked files and build/.
scratch_copy() {
	git ls-files -z | xargs -0 cp -a --parents -t "$1" 2>/dev/null
	[ -d build ] && cp -a build "$1/"
	# mtimes from cp -a: only the mutated file and what depends on it rebuild
	return 0
}

run_suites() {
	if [ -n "${FG_MUTANTS_LOCK:-}" ]; then
		flock "$FG_MUTANTS_LOCK" "$@"
	else
		"$@"
	fi
}

# count_in FILE OLD: how many times OLD occurs in FILE.
count_in() {
	python3 -c 'import sys; print(open(sys.argv[1]).read().count(sys.argv[2]))' "$1" "$2"
}

# compiles_mutated I: mutant I, applied to a copy of bpf/, include/ and
# user/ (build/ linked for the generated headers), compiles.
compiles_mutated() {
	local i=$1 dir file=${FILES[$1]} rc
	dir=$(mktemp -d /tmp/fg-mutant-check.XXXXXX)
	cp -a bpf include user "$dir/"
	ln -s "$REPO/build" "$dir/build"
	(
		cd "$dir" && apply "$file" "${OLDS[$i]}" "${NEWS[$i]}" || exit 1
		case $file in
		bpf/*) eval "\"\$CLANG\" $BPF_CFLAGS -fsyntax-only bpf/floodgate.bpf.c" ;;
		user/*.c) eval "\"\$CC\" $CFLAGS -fsyntax-only \"\$file\"" ;;
		*) echo "no compile check for $file" >&2 && exit 1 ;;
		esac
	) >"$dir/log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || sed 's/^/    /' "$dir/log" >&2
	rm -rf "$dir"
	return "$rc"
}

if [ "${1:-}" = --check ]; then
	: "${CC:?} ${CFLAGS:?} ${CLANG:?} ${BPF_CFLAGS:?}"
	stale=0
	for i in "${!NAMES[@]}"; do
		n=$(count_in "${FILES[$i]}" "${OLDS[$i]}")
		if [ "$n" != 1 ]; then
			echo "mutant ${NAMES[$i]}: its text occurs $n times in ${FILES[$i]}, not once" >&2
			stale=1
		elif ! compiles_mutated "$i"; then
			echo "mutant ${NAMES[$i]}: applied to ${FILES[$i]}, it does not compile (above)" >&2
			stale=1
		fi
	done
	[ "$stale" = 0 ] && echo "mutants: all ${#NAMES[@]} apply and compile"
	exit "$stale"
fi

caught=() survived=() broken=()
for i in "${!NAMES[@]}"; do
	name=${NAMES[$i]}
	selected "$name" || continue
	dir=$(mktemp -d /tmp/fg-mutant-"$name".XXXXXX)
	echo "=== mutant $name: ${WHATS[$i]}"
	echo "    ${FILES[$i]}; suites: ${SUITES[$i]}"
	scratch_copy "$dir"
	if ! (cd "$dir" && apply "${FILES[$i]}" "${OLDS[$i]}" "${NEWS[$i]}"); then
		broken+=("$name (cannot apply)")
	elif ! make -C "$dir" --no-print-directory tests >"$dir/build.log" 2>&1; then
		tail -n 20 "$dir/build.log"
		broken+=("$name (does not build)")
	else
		run_suites env -u CI FG_STRICT=0 FG_FAIL_FAST=1 FG_SUITES="${SUITES[$i]}" \
			"$dir/scripts/run-tests.sh" >"$dir/run.log" 2>&1
		rc=$?
		by=$(sed -n 's/^FAILED: \(.*\)$/\1/p' "$dir/run.log" | tr '\n' ' ')
		if [ "$rc" -ne 0 ] && [ -n "$by" ]; then
			caught+=("$name: caught by $by")
			grep -E '^(FAIL|not ok|\[  FAILED  \]|\[  ERROR   \]|.*: Failure!)' "$dir/run.log" |
				head -n 3 | sed 's/^/    /'
			echo "--- $name: CAUGHT by $by"
		else
			survived+=("$name: $(tail -n 1 "$dir/run.log")")
			echo "--- $name: SURVIVED ($(tail -n 1 "$dir/run.log"))"
		fi
	fi
	if [ "${FG_MUTANTS_KEEP:-0}" = 1 ]; then
		echo "    kept: $dir"
	else
		rm -rf "$dir"
	fi
done

echo
for c in "${caught[@]}"; do echo "CAUGHT:   $c"; done
for s in "${survived[@]}"; do echo "SURVIVED: $s"; done
for b in "${broken[@]}"; do echo "BROKEN:   $b"; done
echo "mutants: ${#caught[@]} caught, ${#survived[@]} survived, ${#broken[@]} not applied"
[ "${#survived[@]}" -eq 0 ] && [ "${#broken[@]}" -eq 0 ]
