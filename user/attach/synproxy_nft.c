// SPDX-License-Identifier: GPL-2.0-only
/* The SYN proxy's nftables table and conntrack's strict pick-up (see
 * synproxy_nft.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <nftables/libnftables.h>

#include "attach/ct_seed.h"
#include "attach/synproxy_nft.h"
#include "base/log.h"
#include "base/sys.h"

#define TCP_LOOSE_SYSCTL "/proc/sys/net/netfilter/nf_conntrack_tcp_loose"
#define RULESET_SIZE	 4096
#define PORTS_SIZE	 (FG_MAX_PORT_RANGES * 12)

/* Runs `cmd` in libnftables; on failure returns -1 with its message in
 * `err` (`what` says what was being done). */
static int run_nft(const char *cmd, const char *what, struct fg_err *err)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

	if (!nft)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot %s: libnftables: out of memory", what);
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	ret = nft_run_cmd_from_buffer(nft, cmd);
	if (ret)
		fg_fail(err, FG_ERR_SYSTEM, "cannot %s: %s", what, nft_ctx_get_error_buffer(nft));
	nft_ctx_free(nft);
	return ret ? -1 : 0;
}

/* The names of the inet tables, one a line ("table inet NAME"), or NULL. */
static char *list_tables(void)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	char *out = NULL;

	if (!nft)
		return NULL;
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	if (!nft_run_cmd_from_buffer(nft, "list tables inet"))
		out = strdup(nft_ctx_get_output_buffer(nft));
	nft_ctx_free(nft);
	return out;
}

/* Is there a table named PREFIX + `ifname` (any floodgate table when
 * `ifname` is NULL)? */
static bool table_listed(const char *ifname)
{
	char *tables = list_tables(), *line, *save = NULL, want[128];
	bool found = false;

	if (!tables)
		return false;
	snprintf(want, sizeof(want), "table inet " FG_SYNPROXY_TABLE_PREFIX "%s",
		 ifname ? ifname : "");
	for (line = strtok_r(tables, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save))
		found = ifname ? !strcmp(line, want) : !strncmp(line, want, strlen(want));
	free(tables);
	return found;
}

bool fg_synproxy_nft_installed(const char *ifname)
{
	return table_listed(ifname);
}

bool fg_synproxy_nft_name_ok(const char *ifname)
{
	const char *c;

	for (c = ifname; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-.", *c))
			return false;
	return true;
}

static void port_list(const struct fg_synproxy_conf *conf, char *buf, size_t size)
{
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < conf->n_ports && used < size; i++) {
		const struct fg_port_range *r = &conf->ports[i];
		const char *sep = i ? ", " : "";

		if (r->lo == r->hi)
			used += snprintf(buf + used, size - used, "%s%u", sep, r->lo);
		else
			used += snprintf(buf + used, size - used, "%s%u-%u", sep, r->lo, r->hi);
	}
}

/*
 * The rules of nftables' synproxy documentation, on IFACE's protected
 * ports only: a SYN is not tracked (the datapath answers it; one that
 * comes through before the proxy is attached is answered here, with the
 * family's MSS), the
 * client's ACK, which conntrack refuses to pick up, is checked against
 * the cookie and opens the connection to the listener, and what else
 * conntrack finds invalid on those ports is dropped. Deleting the table
 * first makes the whole of it one transaction that replaces the old.
 *
 * The input chain runs at mangle - 10, after conntrack (-200) and before
 * the chains of the host's own firewall (iptables' mangle and filter
 * INPUT, Debian's and firewalld's tables, Docker's), because the client's
 * ACK is `ct state invalid` until the synproxy statement takes it: a
 * host firewall's common "ct state invalid drop" at the same priority
 * would drop it first when its chain was registered after ours (a
 * firewall restarted after the load). This chain only takes the invalid
 * and untracked packets of the protected ports (the proxy's, or dropped);
 * everything else goes on to the host's chains, accepted here by policy.
 *
 * The output chain leaves untracked the ACK with which synproxy completes
 * the listener's handshake (a pure ACK to a protected port, out through
 * lo, from an address that is not ours: nothing else on an ordinary host
 * sends one). Tracked, that ACK meets synproxy's own hook again at
 * postrouting, which takes it for the client's and adds the timestamp
 * offset to its TSecr a second time. Since Linux 6.15 the listener
 * refuses an ACK whose TSecr it never sent (TcpExtTSEcrRejected) and
 * answers with an ACK of its own; the handshake then hangs on the
 * client's next segment, which is refused too whenever that answer left
 * in a later millisecond than the SYN-ACK (1 to 5 connects in 400 in the
 * veth lab), until the listener's SYN-ACK timer fires a second later.
 * Conntrack still sees the connection: the client's next packet
 * establishes it.
 */
static int ruleset(const char *ifname, const struct fg_synproxy_conf *conf, char *buf, size_t size)
{
	char ports[PORTS_SIZE];
	int len;

	port_list(conf, ports, sizeof(ports));
	len = snprintf(buf, size,
		       "table inet " FG_SYNPROXY_TABLE_PREFIX "%1$s\n"
		       "delete table inet " FG_SYNPROXY_TABLE_PREFIX "%1$s\n"
		       "table inet " FG_SYNPROXY_TABLE_PREFIX "%1$s {\n"
		       "  chain prerouting {\n"
		       "    type filter hook prerouting priority raw; policy accept;\n"
		       "    iifname \"%1$s\" tcp dport { %2$s } tcp flags syn notrack\n"
		       "  }\n"
		       "  chain input {\n"
		       "    type filter hook input priority mangle - 10; policy accept;\n"
		       "    iifname \"%1$s\" meta nfproto ipv4 tcp dport { %2$s } "
		       "ct state invalid,untracked counter synproxy mss %3$u wscale %5$u%6$s%7$s\n"
		       "    iifname \"%1$s\" meta nfproto ipv6 tcp dport { %2$s } "
		       "ct state invalid,untracked counter synproxy mss %4$u wscale %5$u%6$s%7$s\n"
		       "    iifname \"%1$s\" tcp dport { %2$s } ct state invalid counter drop\n"
		       "  }\n"
		       "  chain output {\n"
		       "    type filter hook output priority raw; policy accept;\n"
		       "    oifname \"lo\" tcp dport { %2$s } tcp flags & (fin|syn|rst|ack) == ack "
		       "fib saddr type != local counter notrack\n"
		       "  }\n"
		       "}\n",
		       ifname, ports, conf->mss, conf->mss6, conf->wscale,
		       conf->timestamps ? " timestamp" : "", conf->sack ? " sack-perm" : "");
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

static void saved_path(char *buf, size_t size)
{
	snprintf(buf, size, FG_SYNPROXY_STATE_DIR "/tcp_loose.net%llu",
		 (unsigned long long)fg_netns_inode());
}

static int read_number(const char *path, int *value)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", value) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* Writes `value` to `path` (truncating), through a temporary file and a
 * rename when `atomic`, so that a crash leaves the old file or the new. */
static int write_number(const char *path, int value, bool atomic)
{
	char tmp[PATH_MAX];
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(atomic ? tmp : path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%d\n", value) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && atomic && rename(tmp, path))
		ret = -errno;
	return ret;
}

/* Keeps the value strict pick-up replaces, unless an earlier table (or a
 * load that died) kept it already: that one is the host's own. */
static int save_tcp_loose(struct fg_err *err)
{
	char path[PATH_MAX];
	int value, ret;

	saved_path(path, sizeof(path));
	if (!access(path, F_OK))
		return 0;
	ret = read_number(TCP_LOOSE_SYSCTL, &value);
	if (ret)
		return fg_fail(err, FG_ERR_ENV,
			       "cannot read %s: %s (the SYN proxy needs conntrack)",
			       TCP_LOOSE_SYSCTL, strerror(-ret));
	if (mkdir(FG_SYNPROXY_STATE_DIR, 0755) && errno != EEXIST)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot create %s: %s", FG_SYNPROXY_STATE_DIR,
			       strerror(errno));
	ret = write_number(path, value, true);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}

static int restore_tcp_loose(struct fg_err *err)
{
	char path[PATH_MAX];
	int value, ret;

	saved_path(path, sizeof(path));
	ret = read_number(path, &value);
	if (ret == -ENOENT)
		return 0;
	if (!ret)
		ret = write_number(TCP_LOOSE_SYSCTL, value, false);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM,
			       "cannot restore %s from %s: %s (set it by hand, then remove "
			       "the file)",
			       TCP_LOOSE_SYSCTL, path, strerror(-ret));
	unlink(path);
	pr_debug("restored %s to %d\n", TCP_LOOSE_SYSCTL, value);
	return 0;
}

int fg_synproxy_nft_install(const char *ifname, const struct fg_synproxy_conf *conf,
			    struct fg_err *err)
{
	char rules[RULESET_SIZE];
	int ret;

	if (ruleset(ifname, conf, rules, sizeof(rules)))
		return fg_fail(err, FG_ERR_SYSTEM, "the nftables rules for %s do not fit", ifname);
	/* The connections already open must be in conntrack before strict
	 * pick-up turns them invalid. */
	if (save_tcp_loose(err) || run_nft(rules, "install the SYN proxy's nftables table", err) ||
	    fg_ct_seed_established(conf, err) < 0)
		return -1;
	ret = write_number(TCP_LOOSE_SYSCTL, 0, false);
	if (ret)
		return fg_fail(err, FG_ERR_SYSTEM, "cannot set %s to 0: %s", TCP_LOOSE_SYSCTL,
			       strerror(-ret));
	return 0;
}

int fg_synproxy_nft_remove(const char *ifname, struct fg_err *err)
{
	char cmd[128];

	if (table_listed(ifname)) {
		snprintf(cmd, sizeof(cmd), "delete table inet " FG_SYNPROXY_TABLE_PREFIX "%s",
			 ifname);
		if (run_nft(cmd, "remove the SYN proxy's nftables table", err))
			return -1;
	}
	if (table_listed(NULL))
		return 0;
	return restore_tcp_loose(err);
}
