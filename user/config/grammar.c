// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config grammar: one pass over the lines, one error at most. Lines
 * are `key = value`, sections and comments; which keys a section takes,
 * their defaults and handlers come from the key table (keys.c), so this
 * file names no key. The values are parsed by handlers.c and match.c;
 * what needs several keys is checked by validate.c.
 *
 * Every value is checked as soon as its line is read, except for what needs
 * another key of the same policy: burst needs the rate (a byte rate makes
 * burst count bytes), so it is resolved as soon as both are known, and the
 * required keys and the default burst are settled when the policy ends.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/keys.h"
#include "config/parser.h"
#include "config/validate.h"

/* The struct the lines of the current section fill. */
static void *section_base(struct fg_parser *p)
{
	switch (p->section) {
	case FG_IN_POLICY:
		return p->pol;
	case FG_IN_FLEET:
		return &p->cfg->fleet;
	case FG_IN_CROWDSEC:
		return &p->cfg->crowdsec;
	case FG_IN_SYNPROXY:
		return &p->cfg->synproxy;
	default:
		return p->cfg;
	}
}

/* A section starts: its keys are unset, and those with a default get it. */
static int start_section(struct fg_parser *p, unsigned int section, void *base)
{
	char value[128];
	size_t i;
	int ret;

	p->section = section;
	for (i = 0; i < fg_key_count; i++) {
		const struct fg_key *key = &fg_keys[i];

		if (!(key->sections & section))
			continue;
		p->key_line[i] = 0;
		if (!key->default_value)
			continue;
		snprintf(value, sizeof(value), "%s", key->default_value);
		p->applying_default = true;
		ret = key->type->parse(p, key, base, value);
		p->applying_default = false;
		if (ret)
			return ret;
	}
	return 0;
}

static int unknown_key(struct fg_parser *p, const char *key)
{
	char list[512];

	fg_key_list(p->section, list, sizeof(list));
	switch (p->section) {
	case FG_IN_GLOBAL:
		if (fg_key_find(FG_IN_POLICY, key))
			return fg_cfg_fail(
				p, p->line,
				"unknown key '%s' outside a policy section (expected one "
				"of: %s; policy keys go after a [policy NAME] line)",
				key, list);
		break;
	case FG_IN_POLICY:
		if (fg_key_find(FG_IN_GLOBAL, key))
			return fg_cfg_fail(p, p->line,
					   "unknown key '%s' in a policy section (expected one of: "
					   "%s; global keys go before the first [policy NAME])",
					   key, list);
		break;
	case FG_IN_FLEET:
		return fg_cfg_fail(p, p->line, "unknown key '%s' in [fleet] (expected one of: %s)",
				   key, list);
	case FG_IN_CROWDSEC:
		return fg_cfg_fail(p, p->line,
				   "unknown key '%s' in [crowdsec] (expected one of: %s)", key,
				   list);
	case FG_IN_SYNPROXY:
		return fg_cfg_fail(p, p->line,
				   "unknown key '%s' in [synproxy] (expected one of: %s)", key,
				   list);
	case FG_IN_ACCESS:
		return fg_cfg_fail(p, p->line, "unknown key '%s' in [%s] (expected one of: %s)",
				   key, p->access_name, list);
	}
	return fg_cfg_fail(p, p->line, "unknown key '%s' (expected one of: %s)", key, list);
}

static int duplicate_key(struct fg_parser *p, const char *key, int first)
{
	switch (p->section) {
	case FG_IN_POLICY:
		return fg_cfg_fail(p, p->line,
				   "duplicate key '%s' in policy '%s' (expected each key once; "
				   "first set at line %d)",
				   key, p->pol->name, first);
	case FG_IN_FLEET:
	case FG_IN_CROWDSEC:
	case FG_IN_SYNPROXY:
		return fg_cfg_fail(p, p->line,
				   "duplicate key '%s' in [%s] (expected each key once; first set "
				   "at line %d)",
				   key,
				   p->section == FG_IN_FLEET	  ? "fleet"
				   : p->section == FG_IN_CROWDSEC ? "crowdsec"
								  : "synproxy",
				   first);
	default:
		return fg_cfg_fail(
			p, p->line,
			"duplicate key '%s' (expected each key once; first set at line %d)", key,
			first);
	}
}

/* `key = value` in the current section: its row of the key table. */
static int parse_key(struct fg_parser *p, const char *name, char *value)
{
	const struct fg_key *key = fg_key_find(p->section, name);
	size_t i;

	if (!key)
		return unknown_key(p, name);
	i = key - fg_keys;
	if (!key->repeatable && p->key_line[i])
		return duplicate_key(p, name, p->key_line[i]);
	p->key_line[i] = p->line;
	return key->type->parse(p, key, section_base(p), value);
}

static int start_fleet(struct fg_parser *p)
{
	struct fg_fleet_conf *fleet = &p->cfg->fleet;

	if (fleet->enabled)
		return fg_cfg_fail(p, p->line,
				   "duplicate [fleet] section (expected one; first at line %d)",
				   fleet->line);
	fleet->enabled = true;
	fleet->line = p->line;
	return start_section(p, FG_IN_FLEET, fleet);
}

static int start_crowdsec(struct fg_parser *p)
{
	struct fg_crowdsec_conf *crowdsec = &p->cfg->crowdsec;

	if (crowdsec->enabled)
		return fg_cfg_fail(p, p->line,
				   "duplicate [crowdsec] section (expected one; first at line %d)",
				   crowdsec->line);
	crowdsec->enabled = true;
	crowdsec->line = p->line;
	return start_section(p, FG_IN_CROWDSEC, crowdsec);
}

static int start_synproxy(struct fg_parser *p)
{
	struct fg_synproxy_conf *synproxy = &p->cfg->synproxy;

	if (synproxy->enabled)
		return fg_cfg_fail(p, p->line,
				   "duplicate [synproxy] section (expected one; first at line %d)",
				   synproxy->line);
	synproxy->enabled = true;
	synproxy->line = p->line;
	return start_section(p, FG_IN_SYNPROXY, synproxy);
}

static int start_access(struct fg_parser *p, bool allow)
{
	struct fg_config *cfg = p->cfg;

	p->access = allow ? cfg->allow : cfg->deny;
	p->n_access = allow ? &cfg->n_allow : &cfg->n_deny;
	p->access_name = allow ? "allow" : "deny";
	p->files = allow ? &cfg->allow_files : &cfg->deny_files;
	p->errors_line = allow ? &p->allow_errors_line : &p->deny_errors_line;
	return start_section(p, FG_IN_ACCESS, cfg);
}

static bool valid_policy_name(const char *name)
{
	size_t len = strlen(name), i;

	if (len == 0 || len >= FG_POLICY_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

/* [policy NAME]: `inner` is what follows "policy". */
static int start_policy(struct fg_parser *p, char *inner)
{
	struct fg_config *cfg = p->cfg;
	char *name = fg_cfg_trim(inner);
	struct fg_policy_conf *pol;
	unsigned int i;

	if (!*name)
		return fg_cfg_fail(p, p->line,
				   "policy section without a name (expected [policy NAME])");
	if (!valid_policy_name(name))
		return fg_cfg_fail(p, p->line,
				   "bad policy name '%s' (expected 1..%d characters of A-Z, a-z, "
				   "0-9, _, . and -)",
				   name, FG_POLICY_NAME_LEN - 1);
	for (i = 0; i < cfg->n_policies; i++)
		if (strcmp(cfg->policies[i].name, name) == 0)
			return fg_cfg_fail(p, p->line,
					   "duplicate policy '%s' (expected a unique name; first "
					   "defined at line %d)",
					   name, cfg->policies[i].line);
	if (cfg->n_policies == FG_MAX_POLICIES)
		return fg_cfg_fail(p, p->line, "too many policies (expected at most %d)",
				   FG_MAX_POLICIES);

	pol = &cfg->policies[cfg->n_policies];
	memset(pol, 0, sizeof(*pol));
	strcpy(pol->name, name);
	pol->line = p->line;
	pol->size_hi_class = FG_SIZE_CLASSES - 1; /* no size clause: every size */
	p->pol = pol;
	p->rate_text = NULL;
	p->burst_text = NULL;
	p->burst_line = 0;
	memset(&p->burst, 0, sizeof(p->burst));
	return start_section(p, FG_IN_POLICY, pol);
}

static int parse_section(struct fg_parser *p, char *line)
{
	size_t len = strlen(line);
	char *inner;
	int ret;

	ret = fg_cfg_finish_policy(p);
	if (ret)
		return ret;
	if (line[len - 1] != ']')
		return fg_cfg_fail(p, p->line, "unterminated section '%s' (expected [policy NAME])",
				   line);
	line[len - 1] = '\0';
	inner = fg_cfg_trim(line + 1);
	p->access = NULL;
	if (strcmp(inner, "fleet") == 0)
		return start_fleet(p);
	if (strcmp(inner, "crowdsec") == 0)
		return start_crowdsec(p);
	if (strcmp(inner, "synproxy") == 0)
		return start_synproxy(p);
	if (strcmp(inner, "allow") == 0 || strcmp(inner, "deny") == 0)
		return start_access(p, inner[0] == 'a');
	if (strncmp(inner, "policy", 6) != 0 || (inner[6] && !isspace((unsigned char)inner[6])))
		return fg_cfg_fail(
			p, p->line,
			"unknown section '[%s]' (expected [policy NAME], [allow], [deny], "
			"[fleet], [crowdsec] or [synproxy])",
			inner);
	return start_policy(p, inner + 6);
}

static int parse_line(struct fg_parser *p, char *line)
{
	char *hash = strchr(line, '#');
	char *eq, *key, *value;

	if (hash)
		*hash = '\0';
	line = fg_cfg_trim(line);
	if (!*line)
		return 0;
	if (*line == '[')
		return parse_section(p, line);

	eq = strchr(line, '=');
	if (!eq)
		return fg_cfg_fail(
			p, p->line,
			"cannot parse '%s' (expected key = value, [policy NAME], a comment or a "
			"blank line)",
			line);
	*eq = '\0';
	key = fg_cfg_trim(line);
	value = fg_cfg_trim(eq + 1);
	if (!*key)
		return fg_cfg_fail(p, p->line, "'=' without a key (expected key = value)");
	if (!*value)
		return fg_cfg_fail(p, p->line, "key '%s' has no value (expected %s = VALUE)", key,
				   key);
	return parse_key(p, key, value);
}

int fg_config_parse_string(const char *source, const char *text, struct fg_config *cfg, FILE *err)
{
	struct fg_parser p;
	char *copy, *s;
	int ret = 0;

	memset(cfg, 0, sizeof(*cfg));
	memset(&p, 0, sizeof(p));
	p.source = source ? source : "<config>";
	p.err = err;
	p.cfg = cfg;

	text = text ? text : "";
	/* A UTF-8 byte-order mark, which some Windows editors write, is
	 * not part of the first line. */
	if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
		text += 3;
	copy = strdup(text);
	if (!copy) {
		if (err)
			fprintf(err, "%s: %s\n", p.source, strerror(ENOMEM));
		return -ENOMEM;
	}

	ret = start_section(&p, FG_IN_GLOBAL, cfg);
	for (s = copy; *s && !ret;) {
		char *nl = strchr(s, '\n');

		if (nl)
			*nl = '\0';
		p.line++;
		ret = parse_line(&p, s);
		s = nl ? nl + 1 : s + strlen(s);
	}
	if (!ret)
		ret = fg_cfg_finish_policy(&p);
	if (!ret)
		ret = fg_cfg_check_fleet(&p);
	if (!ret)
		ret = fg_cfg_check_crowdsec(&p);
	if (!ret)
		ret = fg_cfg_check_synproxy(&p);
	if (!ret && !cfg->max_sources_ipv6)
		cfg->max_sources_ipv6 = fg_default_sources_ipv6(cfg->max_sources);
	/* The synproxy protects on its own: a config may be that alone. */
	if (!ret && cfg->n_policies == 0 && !cfg->synproxy.enabled)
		ret = fg_cfg_fail(&p, p.line ? p.line : 1,
				  "no policy (expected at least one [policy NAME] section, or "
				  "[synproxy])");

	free(copy);
	if (ret)
		memset(cfg, 0, sizeof(*cfg));
	return ret;
}

/* Reads all of `f` into a NUL-terminated buffer: 0, -errno, or -EFBIG past
 * FG_CONFIG_MAX_BYTES. */
static int read_all(FILE *f, char **text, size_t *len_out)
{
	size_t len = 0, size = 0, n;
	char *buf = NULL;

	for (;;) {
		if (len > FG_CONFIG_MAX_BYTES) {
			/* Bounded memory and time, even for /dev/zero. */
			free(buf);
			return -EFBIG;
		}
		if (size - len < 4096) {
			char *bigger = realloc(buf, size ? size * 2 : 8192);

			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
			size = size ? size * 2 : 8192;
		}
		n = fread(buf + len, 1, size - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return errno ? -errno : -EIO;
	}
	buf[len] = '\0';
	*text = buf;
	*len_out = len;
	return 0;
}

int fg_config_parse_stream(const char *source, FILE *f, struct fg_config *cfg, FILE *err)
{
	char *buf = NULL, *nul;
	size_t len = 0;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	ret = read_all(f, &buf, &len);
	if (ret == -EFBIG) {
		if (err)
			fprintf(err, "%s: too large (a config may have at most %d bytes)\n", source,
				FG_CONFIG_MAX_BYTES);
		return ret;
	}
	if (ret) {
		if (err)
			fprintf(err, "%s: %s\n", source, strerror(-ret));
		return ret;
	}
	nul = memchr(buf, '\0', len);
	if (nul) {
		int line = 1;
		char *c;

		for (c = buf; c < nul; c++)
			line += *c == '\n';
		if (err)
			fprintf(err, "%s:%d: NUL byte in the file (expected a text file)\n", source,
				line);
		free(buf);
		return -EINVAL;
	}
	ret = fg_config_parse_string(source, buf, cfg, err);
	free(buf);
	return ret;
}

int fg_config_parse_file(const char *path, struct fg_config *cfg, FILE *err)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		ret = -errno;
		memset(cfg, 0, sizeof(*cfg));
		if (err)
			fprintf(err, "%s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = fg_config_parse_stream(path, f, cfg, err);
	fclose(f);
	return ret;
}
