/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The datapath's counters, listed once: X(field, metric, help), and for the
 * policy counters X(field, metric, verdict, help). The struct
 * bodies of fg_global_stats and fg_policy_stats (include/floodgate.h), the
 * `stats` and `replay` printers (text and JSON) and the Prometheus metrics
 * (user/service/metrics.c) are all derived from these lists. The order is
 * the structs' field order, which the pinned maps' BTF fixes: append only.
 *
 * `metric` is the Prometheus name after "floodgate_". The policy counters
 * are per verdict: rows that share a metric are one family whose samples
 * carry verdict="..." (the third column; "" = no label).
 */
#ifndef FG_COUNTERS_H
#define FG_COUNTERS_H

/* Per-CPU global counters (`global_stats`, one entry). */
/* clang-format off */
#define FG_GLOBAL_COUNTERS(X)                                                                      \
	X(packets, "packets_total", "Packets the program saw.")                                    \
	X(parsed, "parsed_packets_total",                                                          \
	  "IPv4 and IPv6 packets parsed and matched against the policies.")                        \
	X(non_ip, "non_ip_packets_total", "Non-IP packets, passed untouched.")                      \
	X(malformed, "malformed_packets_total",                                                    \
	  "Truncated or invalid packets, given the malformed verdict.")                            \
	X(unmatched, "unmatched_packets_total", "IP packets no policy matched, passed.")            \
	X(insert_failed, "insert_failed_total", "New per-source entries a full table refused.")     \
	X(cas_exhausted, "cas_exhausted_total",                                                    \
	  "Packets refused because contention outlasted the compare-and-swap loop.")               \
	X(allowed, "allowed_packets_total",                                                        \
	  "Packets from an [allow] prefix, passed without a policy.")                              \
	X(denied, "denied_packets_total", "Packets from a [deny] prefix, dropped.")                 \
	X(banned, "banned_packets_total", "Packets dropped by an active ban.")                      \
	X(bans_added, "bans_added_total", "Bans set by action = ban.")                              \
	X(ipv6_ext_overflow, "ipv6_ext_overflow_total",                                            \
	  "IPv6 packets with more extension headers than the parser walks.")                       \
	X(sources_created, "sources_created_total", "Per-source state entries created.")            \
	X(budget_overflow, "budget_overflow_packets_total",                                        \
	  "Packets of new sources judged by the shared overflow bucket (new-source budget spent).") \
	X(vlan_overflow, "vlan_overflow_packets_total",                                            \
	  "Frames with more VLAN tags than the parser walks, dropped.")                            \
	X(tiny_fragments, "tiny_fragments_total",                                                  \
	  "First fragments too short to hold their L4 header, dropped.")                           \
	X(ban_insert_failed, "ban_insert_failed_total",                                            \
	  "Bans action = ban could not add (its share of the bans table was full).")               \
	X(events_suppressed, "events_suppressed_total",                                            \
	  "Datapath events not emitted: over the events rate, or the ring was full.")              \
	X(fleet_held, "fleet_held_packets_total",                                                  \
	  "Packets of scope = fleet policies refused because the fleet holds their key.")          \
	X(fragment_orphans, "fragment_orphans_total",                                              \
	  "Later fragments whose first was not seen, dropped because a policy matches on ports.")   \
	X(sources_promoted, "sources_promoted_total",                                              \
	  "IPv4 sources known long enough moved to the table a flood cannot churn (known4).")   \
	X(bans_unverified, "bans_unverified_total",                                                \
	  "Refusals under action = ban that banned no one: no evidence the source can receive.")   \
	X(synproxy_synacks, "synproxy_synacks_total",                                              \
	  "SYN-ACKs with a SYN cookie the [synproxy] sent for SYNs to its ports.")                 \
	X(synproxy_cookies_accepted, "synproxy_cookies_accepted_total",                            \
	  "ACKs to [synproxy] ports with a valid SYN cookie, passed on to the policies.")          \
	X(synproxy_cookies_refused, "synproxy_cookies_refused_total",                              \
	  "ACKs to [synproxy] ports of no known connection and with no valid cookie, dropped.")    \
	X(synproxy_established, "synproxy_established_total",                                      \
	  "Packets to [synproxy] ports of connections conntrack knows, passed on to the policies.") \
	X(synproxy_malformed, "synproxy_malformed_total",                                          \
	  "TCP packets to [synproxy] ports it cannot answer or check (bad TCP lengths or "         \
	  "options, IP options, IPv6 extension headers, fragments), dropped.")                     \
	X(synproxy_to_stack, "synproxy_to_stack_total",                                            \
	  "SYNs to [synproxy] ports whose frame cannot grow to hold the SYN-ACK, passed on for "    \
	  "nftables' synproxy to answer.")                                                         \
	X(synproxy_synacks_capped, "synproxy_synacks_capped_total",                                \
	  "SYNs to [synproxy] ports past its synacks cap, dropped unanswered.")

#define FG_HELP_POLICY_PACKETS "Packets by verdict: passed, dropped, would_drop (monitor; also in passed)."
#define FG_HELP_POLICY_BYTES   "Bytes by verdict: passed, dropped, would_drop (monitor; also in passed)."

/* Per-CPU counters of one policy (`policy_stats`, indexed by
 * slot * FG_MAX_POLICIES + policy index). would_drop: monitor, refused but
 * passed. */
#define FG_POLICY_COUNTERS(X)                                                                      \
	X(matched_packets, "policy_matched_packets_total", "", "Packets a policy matched.")         \
	X(matched_bytes, "policy_matched_bytes_total", "", "Bytes a policy matched.")               \
	X(passed_packets, "policy_packets_total", "passed", FG_HELP_POLICY_PACKETS)                 \
	X(passed_bytes, "policy_bytes_total", "passed", FG_HELP_POLICY_BYTES)                       \
	X(dropped_packets, "policy_packets_total", "dropped", FG_HELP_POLICY_PACKETS)               \
	X(dropped_bytes, "policy_bytes_total", "dropped", FG_HELP_POLICY_BYTES)                     \
	X(would_drop_packets, "policy_packets_total", "would_drop", FG_HELP_POLICY_PACKETS)         \
	X(would_drop_bytes, "policy_bytes_total", "would_drop", FG_HELP_POLICY_BYTES)
/* clang-format on */

/* A struct body's member, for the lists above. */
#define FG_COUNTER_MEMBER(field, ...) __u64 field;

#endif /* FG_COUNTERS_H */
