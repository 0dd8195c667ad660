/* SPDX-License-Identifier: GPL-2.0-only */
/* Prometheus text exposition of a loaded floodgate, served on /metrics by
 * libmicrohttpd (user/service/metrics.c). */
#ifndef FG_METRICS_H
#define FG_METRICS_H

#include <stdio.h>

#include "base/err.h"
#include "service/counter_floor.h"

struct fg_metrics;

/* Writes every metric of the floodgate loaded on `ifname`, each counter
 * through `floors` (NULL: raw). Returns 0, or a negative errno (-ENOENT:
 * not loaded). */
int fg_metrics_render(const char *ifname, struct fg_counter_floors *floors, FILE *out);

/* Serves /metrics on ADDR:PORT ([ADDR]:PORT for IPv6) from threads of its
 * own: one per connection, 64 connections at most, 4 from one client
 * address, each closed after 5 s idle. Returns 0, or -1 with `err` saying why: FG_ERR_USAGE for a
 * bad address, FG_ERR_ENV when it cannot be bound. */
int fg_metrics_start(const char *addr_port, const char *ifname, struct fg_metrics **out,
		     struct fg_err *err);
void fg_metrics_stop(struct fg_metrics *metrics);

#endif /* FG_METRICS_H */
