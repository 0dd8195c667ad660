// SPDX-License-Identifier: GPL-2.0-only
/*
 * A config decides what the host drops, so a file another user could edit
 * or swap would hand them that power. As OpenSSH's safe_path does, the
 * file is trusted only when it and every folder above it are owned by root
 * or by the user running floodgate and writable by no one else (a sticky
 * folder such as /tmp may be writable by all). A link is resolved first;
 * the folders leading to the link count as well as those leading to its
 * target.
 *
 * The checks are made on what is opened, never on a name that could be
 * swapped between a check and an open: each folder is opened from "/" one
 * name at a time without following links (a link put in since the path
 * was resolved fails), the file is opened in the last folder checked, and
 * the descriptor opened is the one checked and then read.
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/sys.h"
#include "config/filemode.h"

bool fg_insecure_config;

/* The file being opened, for the messages. */
struct trust {
	const char *path;    /* as the caller named it */
	const char *purpose; /* "password file", or NULL for the config */
	char file_dir[PATH_MAX];
	char link_dir[PATH_MAX];
	struct fg_err *err;
};

static int refuse(const struct trust *t, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "PATH: refused: WHY (FIX, or pass --insecure-config)"; errno EACCES. */
static int refuse(const struct trust *t, const char *fix, const char *fmt, ...)
{
	char why[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fg_fail_at(t->err, FG_ERR_CONFIG, "%s%s%s: refused: %s (%s, or pass --insecure-config)",
		   t->purpose ? t->purpose : "", t->purpose ? " " : "", t->path, why, fix);
	errno = EACCES;
	return -1;
}

/* "PATH: reason", as the parser words a file it cannot read; keeps errno. */
static int unreadable(const struct trust *t, int error)
{
	fg_fail_at(t->err, FG_ERR_CONFIG, "%s%s%s: %s", t->purpose ? t->purpose : "",
		   t->purpose ? " " : "", t->path, strerror(error));
	errno = error;
	return -1;
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Refuses an owner or mode that lets someone else change `st`: `what` names
 * it in the message, `name` is the path the fix acts on. */
static int check_stat(const struct trust *t, const struct stat *st, const char *what,
		      const char *name)
{
	char fix[PATH_MAX + 16];

	if (!trusted_owner(st->st_uid)) {
		snprintf(fix, sizeof(fix), "chown root %s", name);
		return refuse(t, fix, "%s is owned by uid %u, neither root nor uid %u", what,
			      (unsigned int)st->st_uid, (unsigned int)geteuid());
	}
	/* In a sticky folder only an entry's owner (trusted, checked next)
	 * may rename or remove it. */
	if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
		return 0;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(fix, sizeof(fix), "chmod go-w %s", name);
		return refuse(t, fix, "%s is writable by %s", what,
			      st->st_mode & S_IWOTH ? "others" : "its group");
	}
	return 0;
}

static int check_dir(const struct trust *t, int fd, const char *dir)
{
	char what[PATH_MAX + 32];
	struct stat st;

	if (fstat(fd, &st))
		return unreadable(t, errno);
	if (!strcmp(dir, t->file_dir))
		snprintf(what, sizeof(what), "its folder");
	else if (!strcmp(dir, t->link_dir))
		snprintf(what, sizeof(what), "the folder of its link");
	else
		snprintf(what, sizeof(what), "the folder %s on its path", dir);
	return check_stat(t, &st, what, dir);
}

/* Opens the resolved folder `dir` from "/", one name at a time, checking
 * each folder: its O_PATH descriptor, or -1 with t->err. */
static int open_trusted_dir(const struct trust *t, const char *dir)
{
	char walked[PATH_MAX], *name, *save = NULL, copy[PATH_MAX];
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), next;

	snprintf(copy, sizeof(copy), "%s", dir);
	snprintf(walked, sizeof(walked), "/");
	if (fd < 0)
		return unreadable(t, errno);
	if (check_dir(t, fd, walked))
		goto fail;
	for (name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			refuse(t, "try again", "a folder on its path changed while it was checked");
			goto fail;
		}
		if (next < 0) {
			unreadable(t, errno);
			goto fail;
		}
		close(fd);
		fd = next;
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "%s%s",
			 walked[1] ? "/" : "", name);
		if (check_dir(t, fd, walked))
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a folder";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "something else";
}

/* Opens `name` in the checked folder `dir_fd` and checks what was opened. */
static int open_trusted_file(const struct trust *t, int dir_fd, const char *name)
{
	/* O_NONBLOCK: a FIFO must not block the open before it is refused. */
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ELOOP)
		return refuse(t, "try again", "it changed while it was checked");
	if (fd < 0)
		return unreadable(t, errno);
	if (fstat(fd, &st)) {
		unreadable(t, errno);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		refuse(t, "point at a file", "it is not a regular file (%s)",
		       file_kind(st.st_mode));
		goto fail;
	}
	if (check_stat(t, &st, "it", t->path))
		goto fail;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return -1;
}

/* The folder `path` is in, with every link resolved, into `dir`. */
static int resolved_dir(const char *path, char dir[PATH_MAX])
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", path);
	return realpath(dirname(copy), dir) ? 0 : -1;
}

int fg_trusted_open(const char *path, const char *purpose, struct fg_err *err)
{
	struct trust t = {.path = path, .purpose = purpose, .err = err};
	char resolved[PATH_MAX], name[PATH_MAX];
	int dir_fd, fd;

	if (fg_insecure_config) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? unreadable(&t, errno) : fd;
	}
	if (!realpath(path, resolved) || resolved_dir(path, t.link_dir))
		return unreadable(&t, errno);
	snprintf(name, sizeof(name), "%s", resolved);
	snprintf(t.file_dir, sizeof(t.file_dir), "%s", dirname(name));
	snprintf(name, sizeof(name), "%s", resolved);
	snprintf(name, sizeof(name), "%s", basename(name));
	if (strcmp(t.link_dir, t.file_dir)) {
		dir_fd = open_trusted_dir(&t, t.link_dir);
		if (dir_fd < 0)
			return -1;
		close(dir_fd);
	}
	dir_fd = open_trusted_dir(&t, t.file_dir);
	if (dir_fd < 0)
		return -1;
	fg_test_stop_at("config-checked");
	fd = open_trusted_file(&t, dir_fd, name);
	close(dir_fd);
	return fd;
}

/* Opens a secret for fg_secret_read; -1 with err when it is not one. A
 * secret is named by its own path: a link is refused before the trusted
 * open, which would follow it. The open file must be readable by its owner
 * alone, even under --insecure-config. */
static int open_secret(const char *path, const char *where, struct fg_err *err)
{
	struct fg_err trust = {0};
	struct stat st;
	int fd;

	if (lstat(path, &st))
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s: cannot open it: %s", where, path,
				  strerror(errno));
	if (S_ISLNK(st.st_mode))
		return fg_fail_at(err, FG_ERR_CONFIG,
				  "%s %s: cannot open it: it is a symbolic link", where, path);
	fd = fg_trusted_open(path, NULL, &trust);
	if (fd < 0)
		return fg_fail_at(err, FG_ERR_CONFIG, "%s %s", where, trust.msg);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		fg_fail_at(err, FG_ERR_CONFIG, "%s %s: not a regular file", where, path);
	else if (st.st_mode & (S_IRGRP | S_IROTH))
		fg_fail_at(err, FG_ERR_CONFIG,
			   "%s %s: refused: it holds a password and is readable by %s (chmod 600)",
			   where, path, st.st_mode & S_IROTH ? "others" : "its group");
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

/* A secret the config names (the fleet's password_file, [crowdsec]
 * api_key_file), checked when the config is: a `check` or a load finds a
 * bad one at its line. */
static int check_secret(const char *path, const char *key, const char *file, int line,
			struct fg_err *err)
{
	char where[PATH_MAX + 32], secret[FG_SECRET_MAX];
	int ret;

	if (!file[0])
		return 0;
	snprintf(where, sizeof(where), "%s:%d: %s", path, line, key);
	ret = fg_secret_read(file, where, secret, sizeof(secret), err);
	explicit_bzero(secret, sizeof(secret));
	return ret < 0 ? -1 : 0;
}

static int check_secrets(const char *path, const struct fg_config *cfg, struct fg_err *err)
{
	if (cfg->fleet.enabled && check_secret(path, "password_file", cfg->fleet.password_file,
					       cfg->fleet.password_file_line, err))
		return -1;
	if (cfg->crowdsec.enabled && check_secret(path, "api_key_file", cfg->crowdsec.api_key_file,
						  cfg->crowdsec.api_key_file_line, err))
		return -1;
	return 0;
}

int fg_config_read(const char *path, struct fg_config *cfg, struct fg_err *err)
{
	char *text = NULL;
	size_t size = 0;
	FILE *messages, *f = NULL;
	int ret, fd;

	if (path) {
		fd = fg_trusted_open(path, NULL, err);
		if (fd < 0)
			return -1;
		f = fdopen(fd, "r");
		if (!f) {
			close(fd);
			return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
		}
	}
	/* The parser writes its FILE:LINE: message to a stream: keep it. */
	messages = open_memstream(&text, &size);
	if (!messages) {
		if (f)
			fclose(f);
		return fg_fail(err, FG_ERR_SYSTEM, "out of memory reading the config");
	}
	ret = f ? fg_config_parse_stream(path, f, cfg, messages)
		: fg_config_parse_string("<default>", fg_default_config, cfg, messages);
	fclose(messages);
	if (f)
		fclose(f);
	if (ret) {
		size = strlen(text);
		while (size && text[size - 1] == '\n')
			text[--size] = '\0';
		fg_fail_at(err, FG_ERR_CONFIG, "%s", text);
	}
	free(text);
	if (!ret && path)
		ret = check_secrets(path, cfg, err);
	return ret ? -1 : 0;
}
