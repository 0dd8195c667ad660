// SPDX-License-Identifier: GPL-2.0-only
/* [synproxy] compiled into the datapath's rodata (see synproxy.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/synproxy.h"

static struct fg_tcp_option_word option_word(__u8 a, __u8 b, __u8 c, __u8 d)
{
	return (struct fg_tcp_option_word){{a, b, c, d}};
}

static struct fg_tcp_option_word mss_option(__u16 mss)
{
	return option_word(FG_TCPOPT_MSS, FG_TCPOLEN_MSS, mss >> 8, mss & 0xff);
}

int fg_synproxy_compile(const struct fg_synproxy_conf *conf, struct fg_synproxy_params *out)
{
	struct fg_budget synacks;
	unsigned int i, port;

	memset(out, 0, sizeof(*out));
	if (!conf->enabled)
		return 0;
	out->enabled = 1;
	for (i = 0; i < conf->n_ports; i++)
		for (port = conf->ports[i].lo; port <= conf->ports[i].hi; port++)
			out->ports[port / 64] |= 1ULL << (port % 64);
	out->mss4 = mss_option(conf->mss);
	out->mss6 = mss_option(conf->mss6);
	out->wscale = option_word(FG_TCPOPT_NOP, FG_TCPOPT_WSCALE, FG_TCPOLEN_WSCALE, conf->wscale);
	out->sack_timestamps = option_word(FG_TCPOPT_SACK_PERM, FG_TCPOLEN_SACK_PERM,
					   FG_TCPOPT_TIMESTAMP, FG_TCPOLEN_TIMESTAMP);
	out->nop_timestamps = option_word(FG_TCPOPT_NOP, FG_TCPOPT_NOP, FG_TCPOPT_TIMESTAMP,
					  FG_TCPOLEN_TIMESTAMP);
	out->sack = conf->sack;
	out->timestamps = conf->timestamps;
	if (fg_budget_compile(conf->synacks_count, conf->synacks_period_ns, conf->synacks_count,
			      &synacks))
		return -EINVAL;
	out->synacks = synacks.gcra;
	out->synacks_count = conf->synacks_count;
	out->synacks_period_ns = conf->synacks_count ? conf->synacks_period_ns : 0;
	return 0;
}

static bool port_set(const struct fg_synproxy_params *params, unsigned int port)
{
	return (params->ports[port / 64] >> (port % 64)) & 1;
}

void fg_synproxy_ports_text(const struct fg_synproxy_params *params, char *buf, size_t size)
{
	unsigned int port = 0, last;
	size_t used = 0;

	if (!size)
		return;
	buf[0] = '\0';
	while (port < 65536 && used < size) {
		if (!port_set(params, port)) {
			port++;
			continue;
		}
		for (last = port; last + 1 < 65536 && port_set(params, last + 1); last++)
			;
		used += snprintf(buf + used, size - used, "%s%u", used ? ", " : "", port);
		if (last > port && used < size)
			used += snprintf(buf + used, size - used, "-%u", last);
		port = last + 1;
	}
}
