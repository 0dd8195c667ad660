/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Four more rate-limit algorithms as pure decision functions, in the style
 * of fg_gcra.h: static inline, __u64/__u32 only, no libc, no BPF helper, so
 * the same code is compiled into the BPF programs and the cmocka tests.
 *
 * Shared vocabulary: rate = COUNT/PERIOD, `burst`, and a `cost` per packet
 * (1 in packet mode, the length in byte mode; the caller clamps it to
 * FG_MAX_COST). Every algorithm has
 *
 *   - a params struct, computed once by userspace from (count, period_ns,
 *     burst, bytes) with fg_<alg>_params_init(), which returns 0, or -1 for
 *     a configuration outside the limits listed below. The structs live in
 *     floodgate_policy.h: fg_policy carries them, and the datapath reads
 *     them there;
 *   - a state, which is what the `sources4` and `sources` maps hold per key;
 *   - fg_<alg>_admit(params, state, now, cost, ...): 1 = admit, and the new
 *     state is written; 0 = refuse.
 *
 * On refusal no state is ever written, not even a window that rolled
 * forward: the roll is a pure function of (state, now), so the next call
 * recomputes it, and not writing means a flood of refused packets causes no
 * stores (no cache-line bouncing, no CAS retries) on the shared state.
 *
 *   algorithm        state                      bytes  kernel applies it by
 *   fixed_window     __u64 (window<<32 | used)  8      CAS, like GCRA's TAT
 *   sliding_window   fg_sliding_window_state    16     bpf_spin_lock
 *   (the two state structs live in floodgate_state.h: they are map values)
 *   sliding_log      fg_sliding_log_state       1032   bpf_spin_lock, in place
 *   leaky_bucket     __u64 empty_at (a TAT)     8      CAS, like GCRA's TAT
 *
 * A state must be zeroed when the policy's count or period changes (policy
 * ids are stable across reloads); each section says what an old state does.
 *
 * Limits the config validator must enforce, beyond the existing ones
 * (1ms <= PERIOD <= 24h, cost <= FG_MAX_COST):
 *   fixed_window     1 <= COUNT <= FG_WINDOW_MAX_COUNT (2^32 - 1); burst == COUNT
 *   sliding_window   1 <= COUNT <= FG_WINDOW_MAX_COUNT (2^32 - 1); burst == COUNT;
 *                    exact while COUNT * (PERIOD + 1) <= 2^64 - 1, beyond that a
 *                    documented, conservative rounding (no refusal needed)
 *   sliding_log      packet mode only; 1 <= COUNT <= FG_SLIDING_LOG_MAX (128);
 *                    burst == COUNT
 *   leaky_bucket     as token_bucket (GCRA): PERIOD < 2^48 ns; in byte mode
 *                    interval_fp * FG_MAX_COST < 2^64 (T < 2^32 ns per byte,
 *                    which FG_MIN_BYTE_RATE_PER_S ensures); burst * T <= 2^62
 *                    (params_init itself allows tau up to 2^63, so rounding
 *                    never refuses a validated config);
 *                    1 <= burst; default burst 1 in packet mode -- in byte
 *                    mode the depth must be at least the largest packet (a
 *                    default of 1 byte would refuse everything)
 * The fg_*_params_init() helpers return -1 outside these limits (all but
 * the byte-mode depth advice, which is the validator's to give).
 */
#ifndef FG_ALGOS_H
#define FG_ALGOS_H

#include <linux/types.h>

#include "floodgate.h"
#include "fg_gcra.h"

/* Window counters are 32 bits wide (that is what lets a fixed window fit one
 * __u64): at most 4G packets or 4 GiB per window. */
#define FG_WINDOW_MAX_COUNT 0xffffffffULL

/* ------------------------------------------------------------------------
 * fixed_window: at most COUNT cost units per window [k*PERIOD, (k+1)*PERIOD).
 *
 * Windows are aligned to multiples of PERIOD on the ktime clock, and the
 * counter is reset when a new window begins, so up to 2*COUNT can pass in a
 * span much shorter than PERIOD: COUNT at the end of window k and COUNT at
 * the start of window k+1. That is the documented behaviour of the
 * algorithm; sliding_window is the fix.
 *
 * burst is not used: a window admits exactly COUNT. The config validator
 * rejects an explicit burst other than COUNT (the default burst is COUNT).
 *
 * State: one __u64, window index (now / PERIOD) modulo 2^32 in the high half
 * and the units admitted in that window in the low half. CAS-able.
 *
 * One division per packet (now / period_ns), by choice: it is what lets the
 * state be one __u64 that the datapath updates with the same CAS loop as
 * GCRA. Keeping the window start in the state instead would avoid the
 * division only on the fast path, still need a modulo on the first packet
 * after an idle window, and make the state 16 bytes (spin lock). BPF's
 * 64-bit division is one instruction (x86 `div` once JITed): tens of cycles,
 * the order of the atomic a spin lock would add, and less than the hash map
 * lookup that fetched the state.
 *
 * Wrap-around of the 32-bit window index: a state untouched for a multiple
 * of 2^32 windows (>= 49 days at 1ms) looks current again, so its stale
 * count is charged to that one window: more refusals, never more admissions.
 *
 * A clock reading one window behind the state (another CPU's earlier
 * ktime, racing a seam) is charged to the state's window rather than
 * resetting it: conservative. A zeroed state never holds admissions, so it
 * is never mistaken for "one window ahead".
 *
 * Old state after a period change: its window index almost surely differs
 * from now's, so it reads as an expired window (a fresh count).
 */
static inline __u64 fg_fixed_window_pack(__u32 window, __u32 used)
{
	return (__u64)window << 32 | used;
}

static inline __u32 fg_fixed_window_window(__u64 state)
{
	return (__u32)(state >> 32);
}

static inline __u32 fg_fixed_window_used(__u64 state)
{
	return (__u32)state;
}

/* Returns 1 and stores the new state if the packet is admitted, else 0 and
 * leaves *new_state untouched. used + cost < 2^33: no overflow. */
static inline int fg_fixed_window_admit(const struct fg_fixed_window_params *p, __u64 state,
					__u64 now, __u64 cost, __u64 *new_state)
{
	__u32 window = (__u32)(now / p->period_ns);
	__u32 ahead = fg_fixed_window_window(state) - window;
	__u64 used = fg_fixed_window_used(state);

	if (ahead == 1 && used)
		window = fg_fixed_window_window(state); /* clock behind: charge the newer window */
	else if (ahead != 0)
		used = 0; /* a new window */
	if (used + cost > p->count)
		return 0;
	*new_state = fg_fixed_window_pack(window, (__u32)(used + cost));
	return 1;
}

static inline int fg_fixed_window_params_init(struct fg_fixed_window_params *p, __u64 count,
					      __u64 period_ns, __u64 burst, int bytes)
{
	(void)bytes; /* the same in both modes */
	if (!count || count > FG_WINDOW_MAX_COUNT || !period_ns || burst != count)
		return -1;
	p->count = count;
	p->period_ns = period_ns;
	return 0;
}

/* ------------------------------------------------------------------------
 * sliding_window: the two-counter approximation of a sliding log. With cur
 * and prev the units admitted in the current and the previous aligned
 * window, and elapsed = now - start of the current window, admit iff
 *
 *     cur + cost + prev * (PERIOD - elapsed) / PERIOD <= COUNT
 *
 * i.e. the previous window's traffic is assumed uniform and counted for the
 * part of it still inside (now - PERIOD, now]. In integers, exactly:
 *
 *     prev * (PERIOD - elapsed) <= (COUNT - cur - cost) * PERIOD
 *
 * after refusing cur + cost > COUNT (which also keeps the subtraction
 * unsigned). Both products are at most COUNT * PERIOD, prev and cur being
 * at most COUNT, so this is exact while COUNT * (PERIOD + 1) <= 2^64 - 1
 * (COUNT <= 2^32 - 1 with PERIOD <= 2^32 ns = 4.29 s always is; at 24h
 * COUNT <= 213503). Beyond that, params_init picks the smallest `shift`
 * that keeps COUNT * ((PERIOD >> shift) + 1) in 64 bits and the test
 * becomes
 *
 *     prev * ceil((PERIOD - elapsed) / 2^shift) <= (COUNT - cur - cost) * (PERIOD >> shift)
 *
 * The left factor is rounded up and the right one down, so the previous
 * window's weight can only be overestimated: it never admits what the exact
 * formula refuses. The overestimate is below 2 / (PERIOD >> shift) <= 2^-30
 * of prev, i.e. less than 4 cost units even at COUNT = 2^32 - 1 (with
 * shift > 0, PERIOD >> shift >= 2^31). So the validator only has to enforce
 * COUNT <= 2^32 - 1 and burst == COUNT (burst is not used, as for
 * fixed_window).
 *
 * Error bound versus the exact sliding log: no aligned window ever holds
 * more than COUNT, but any PERIOD-long interval (t - PERIOD, t] may hold up
 * to 2*COUNT - 1 and no more. Proof: the interval spans the tail of window
 * k-1 (at most prev) and the head of window k up to elapsed e < PERIOD; the
 * last admission in window k before t saw an elapsed <= e, so
 * cur <= COUNT - prev * (1 - e/PERIOD), and the total is at most
 * COUNT + prev * e/PERIOD < 2*COUNT. Reached: COUNT admitted in the last ns
 * of window k-1 and COUNT - 1 more just before the end of window k. It can
 * also refuse what the exact log would admit (prev's traffic was early in
 * its window).
 *
 * State: start_ns (a multiple of PERIOD) and two 32-bit counters, 16 bytes:
 * not CAS-able, so the kernel holds a bpf_spin_lock around read, admit and
 * write (the function reads the whole state before writing, so `out` may
 * point at the state itself). Keeping start_ns makes the per-packet path
 * division-free: a roll by one window is start += PERIOD; only the first
 * packet after two or more idle windows takes one modulo to realign.
 *
 * A clock reading before start_ns (another CPU's earlier ktime) is treated
 * as elapsed = 0: the previous window weighs fully, conservative.
 *
 * Old state after a period change: windows stay PERIOD long but offset from
 * multiples of the new PERIOD until the first idle gap of two windows.
 */
/* Returns 1 and stores the new state in *out (which may be s) if the packet
 * is admitted, else 0 and leaves *out untouched. */
static inline int fg_sliding_window_admit(const struct fg_sliding_window_params *p,
					  const struct fg_sliding_window_state *s, __u64 now,
					  __u64 cost, struct fg_sliding_window_state *out)
{
	__u64 period = p->period_ns;
	__u64 start = s->start_ns, cur = s->cur, prev = s->prev;
	__u32 shift = p->shift & 63;
	__u64 elapsed = 0, room, remaining;

	if (now > start) {
		elapsed = now - start;
		if (elapsed >= period) {
			if (elapsed - period < period) { /* the next window: no division */
				start += period;
				elapsed -= period;
				prev = cur;
			} else { /* two or more windows idle */
				elapsed = now % period;
				start = now - elapsed;
				prev = 0;
			}
			cur = 0;
		}
	}
	if (prev > p->count)
		prev = p->count; /* only a state from a larger COUNT: keeps the product in 64 bits
				  */
	if (cur + cost > p->count)
		return 0;
	room = p->count - cur - cost;
	remaining = (period - elapsed + ((1ULL << shift) - 1)) >> shift;
	if (prev * remaining > room * p->period_q)
		return 0;
	out->start_ns = start;
	out->cur = (__u32)(cur + cost);
	out->prev = (__u32)prev;
	return 1;
}

static inline int fg_sliding_window_params_init(struct fg_sliding_window_params *p, __u64 count,
						__u64 period_ns, __u64 burst, int bytes)
{
	__u32 shift = 0;

	(void)bytes; /* the same in both modes */
	if (!count || count > FG_WINDOW_MAX_COUNT || !period_ns || burst != count)
		return -1;
	/* smallest shift with count * ((period >> shift) + 1) <= 2^64 - 1;
	 * ~0 / count >= 2^32 + 1, so this stops by shift 32 */
	while ((period_ns >> shift) >= ~0ULL / count)
		shift++;
	p->count = count;
	p->period_ns = period_ns;
	p->period_q = period_ns >> shift;
	p->shift = shift;
	p->pad = 0;
	return 0;
}

/* ------------------------------------------------------------------------
 * sliding_log: exact. Admit iff fewer than COUNT packets were admitted in
 * (now - PERIOD, now]. Packet mode only: each admission is one timestamp,
 * so the config validator refuses byte mode, and a cost other than 1 is
 * refused here.
 *
 * State: a ring of the last COUNT admission times and the index of the
 * oldest. The ring wraps at COUNT (not at FG_SLIDING_LOG_MAX), so ring[head]
 * is the COUNT-th most recent admission: fewer than COUNT admissions in the
 * last PERIOD iff that one is at least PERIOD old, i.e.
 * now - ring[head] >= PERIOD. Times are stored + 1 so that 0 means "empty
 * slot" (fewer than COUNT admissions ever) even at now < PERIOD after boot.
 * O(1): one slot read, on admission one slot and head written, in place.
 *
 * 1032 bytes: the kernel holds a bpf_spin_lock around the call (and keeps
 * the state in a map value, never on the 512-byte BPF stack). The ring is
 * indexed with a mask the verifier can see; a valid head is < COUNT.
 *
 * A clock reading earlier than ring[head] (another CPU) counts as age 0:
 * refused if the log is full. An admission stored out of time order by such
 * a race makes the log at most the skew (ns) inexact.
 *
 * Old state after a count change is not meaningful (the ring order assumes
 * wrapping at COUNT): zero it. After a period change it stays exact.
 */

/* Returns 1 and records now in *s if the packet is admitted, else 0 and
 * leaves *s untouched. now < 2^64 - 1. */
static inline int fg_sliding_log_admit(const struct fg_sliding_log_params *p,
				       struct fg_sliding_log_state *s, __u64 now, __u64 cost)
{
	__u32 head = s->head & (FG_SLIDING_LOG_MAX - 1);
	__u64 oldest = s->ring[head];
	__u64 stamp = now + 1;

	if (cost != 1)
		return 0;
	if (oldest && (stamp < oldest || stamp - oldest < p->period_ns))
		return 0;
	s->ring[head] = stamp;
	head++;
	s->head = head >= p->count ? 0 : head;
	return 1;
}

static inline int fg_sliding_log_params_init(struct fg_sliding_log_params *p, __u64 count,
					     __u64 period_ns, __u64 burst, int bytes)
{
	if (bytes || !count || count > FG_SLIDING_LOG_MAX || !period_ns || burst != count)
		return -1;
	p->period_ns = period_ns;
	p->count = (__u32)count;
	p->pad = 0;
	return 0;
}

/* ------------------------------------------------------------------------
 * leaky_bucket: a meter of depth `burst` that drains at COUNT/PERIOD. The
 * level is kept as the time the bucket will be empty (empty_at); with
 * T = PERIOD / COUNT, a packet of cost c fits iff
 *
 *     max(empty_at, now) + c * T - now <= burst * T
 *
 * and then empty_at = max(empty_at, now) + c * T. (The level in units is
 * max(empty_at - now, 0) / T.) This continuous-state leaky bucket and GCRA
 * with tau = burst * T are the same algorithm (ITU-T I.371 gives both
 * forms), so it is implemented by fg_gcra_admit with the same T and
 * rounding. What users see differ is the default burst: 1 here -- strict
 * policing to one packet per T, admitted packets at least T apart, no
 * credit banked by idling -- against COUNT for token_bucket, whose full
 * bucket lets an initial burst of COUNT through.
 *
 * State: one __u64, empty_at in ns; 0 = empty. CAS-able, exactly like
 * fg_source_state.tat_ns. Limits: those of GCRA.
 */
/* Returns 1 and stores the new empty_at if the packet is admitted, else 0
 * and leaves *new_empty_at untouched. */
static inline int fg_leaky_bucket_admit(const struct fg_leaky_bucket_params *p, __u64 empty_at,
					__u64 now, __u64 cost, __u64 *new_empty_at)
{
	return fg_gcra_admit(&p->gcra, empty_at, now, cost, new_empty_at);
}

/* Exactly token_bucket's parameters; only the config's default burst
 * differs. */
static inline int fg_leaky_bucket_params_init(struct fg_leaky_bucket_params *p, __u64 count,
					      __u64 period_ns, __u64 burst, int bytes)
{
	return fg_gcra_params_init(&p->gcra, count, period_ns, burst, bytes);
}

#endif /* FG_ALGOS_H */
