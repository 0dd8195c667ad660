// SPDX-License-Identifier: GPL-2.0-only
/*
 * A config decides what the host drops, so a file another user could edit
 * would hand them that power: it must be owned by root or by the user
 * running floodgate, writable by no one else, and sit in a folder where no
 * one else can swap it (a sticky folder such as /tmp is fine).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "config/filemode.h"

bool fg_insecure_config;

static int refuse(const char *path, const char *why, const char *fix, struct fg_err *err)
{
	return fg_fail_at(err, FG_ERR_CONFIG, "%s: refused: %s (%s, or pass --insecure-config)",
			  path, why, fix);
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

int fg_config_check_owner(const char *path, struct fg_err *err)
{
	char dir_buf[PATH_MAX], why[96];
	struct stat st;

	if (fg_insecure_config || stat(path, &st))
		return 0;
	if (!trusted_owner(st.st_uid)) {
		snprintf(why, sizeof(why), "it is owned by uid %u, neither root nor uid %u",
			 (unsigned int)st.st_uid, (unsigned int)geteuid());
		return refuse(path, why, "chown root", err);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return refuse(path,
			      st.st_mode & S_IWOTH ? "it is writable by others"
						   : "it is writable by its group",
			      "chmod go-w", err);
	snprintf(dir_buf, sizeof(dir_buf), "%s", path);
	if (stat(dirname(dir_buf), &st))
		return 0;
	if (!trusted_owner(st.st_uid) && !(st.st_mode & S_ISVTX))
		return refuse(path, "its folder is owned by another user", "move it", err);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return refuse(path, "its folder is writable by group or others", "chmod go-w on it",
			      err);
	return 0;
}

/* Opens a secret for fg_secret_read; -1 with err when it is not one. */
static int open_secret(const char *path, const char *where, struct fg_err *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	struct fg_err trust = {0};
	struct stat st;

	if (fd < 0)
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s: cannot open it: %s", where, path,
				  errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		fg_fail_at(err, FG_ERR_CONFIG, "%s %s: not a regular file", where, path);
	else if (st.st_mode & (S_IRGRP | S_IROTH))
		fg_fail_at(err, FG_ERR_CONFIG,
			   "%s %s: refused: it holds a password and is readable by %s (chmod 600)",
			   where, path, st.st_mode & S_IROTH ? "others" : "its group");
	else if (fg_config_check_owner(path, &trust))
		fg_fail_at(err, FG_ERR_CONFIG, "%s %s", where, trust.msg);
	else
		return fd;
	close(fd);
	return -1;
}

int fg_secret_read(const char *path, const char *where, char *buf, size_t size, struct fg_err *err)
{
	int fd = open_secret(path, where, err);
	ssize_t n;
	size_t len;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s: cannot read it: %s", where, path,
				  strerror(errno));
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	if (len == (size_t)n && (size_t)n == size - 1) {
		explicit_bzero(buf, size);
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s: longer than %zu bytes", where, path,
				  size - 2);
	}
	buf[len] = '\0';
	if (!len)
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s: its first line is empty", where,
				  path);
	explicit_bzero(buf + len, (size_t)n - len);
	return (int)len;
}

/* The fleet's password file, checked when the config is: a `check` or a
 * load finds a bad one at its line. */
static int check_fleet_secret(const char *path, const struct fg_config *cfg, struct fg_err *err)
{
	char where[PATH_MAX + 32], secret[FG_SECRET_MAX];
	int ret;

	if (!cfg->fleet.enabled || !cfg->fleet.password_file[0])
		return 0;
	snprintf(where, sizeof(where), "%s:%d: password_file", path, cfg->fleet.password_file_line);
	ret = fg_secret_read(cfg->fleet.password_file, where, secret, sizeof(secret), err);
	explicit_bzero(secret, sizeof(secret));
	return ret < 0 ? -1 : 0;
}

int fg_config_read(const char *path, struct fg_config *cfg, struct fg_err *err)
{
	char *text = NULL;
	size_t size = 0;
	FILE *messages;
	int ret;

	if (path && fg_config_check_owner(path, err))
		return -1;
	/* The parser writes its FILE:LINE: message to a stream: keep it. */
	messages = open_memstream(&text, &size);
	if (!messages)
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
	ret = path ? fg_config_parse_file(path, cfg, messages)
		   : fg_config_parse_string("<default>", fg_default_config, cfg, messages);
	fclose(messages);
	if (ret) {
		size = strlen(text);
		while (size && text[size - 1] == '\n')
			text[--size] = '\0';
		fg_fail_at(err, FG_ERR_CONFIG, "%s", text);
	}
	free(text);
	if (!ret && path)
		ret = check_fleet_secret(path, cfg, err);
	return ret ? -1 : 0;
}
