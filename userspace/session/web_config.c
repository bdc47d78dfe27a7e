// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exporter toolkit's web configuration file, read strictly: see
 * web_config.h. A line is "key: value" or "key:" opening a section; a
 * section's keys are indented, the top level's are not.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "session/web_config.h"

#define FILE_MAX (1 << 20)
#define BCRYPT_COST_MAX 12

/* Root or the user running optrace: whose files and links may say who gets in. */
static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * A regular file's contents, read through the one descriptor it was checked
 * on. It says who may scrape and holds the TLS key: a file or a link that
 * another user could change is refused (issue 41).
 */
static char *read_regular(const char *path, const char *what)
{
	struct stat st, link;
	char *text = NULL;
	ssize_t n = 0;
	int fd;

	if (!lstat(path, &link) && S_ISLNK(link.st_mode) && !trusted_owner(link.st_uid)) {
		diag("%s %s is a link of another user's (uid %u): give the file itself, or a "
		     "link of root's",
		     what, path, (unsigned int)link.st_uid);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		diag("cannot open %s %s: %s", what, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX) {
		diag("%s %s is not a regular file of at most 1 MiB", what, path);
		goto done;
	}
	if (!trusted_owner(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		diag("%s %s could be changed by another user (%s): make it root's and not "
		     "writable by group or others (chown root; chmod go-w)",
		     what, path,
		     !trusted_owner(st.st_uid) ? "it is not root's"
					       : "group or others may write it");
		goto done;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text)
		n = read(fd, text, (size_t)st.st_size);
	if (!text || n != st.st_size) {
		diag("cannot read %s %s: %s", what, path, text ? strerror(errno) : "out of memory");
		free(text);
		text = NULL;
		goto done;
	}
	text[n] = '\0';
done:
	close(fd);
	return text;
}

/* TLS10..TLS13 as GnuTLS names them; NULL if not one. */
static const char *tls_version(const char *value)
{
	static const char *const names[][2] = {
		{ "TLS10", "TLS1.0" },
		{ "TLS11", "TLS1.1" },
		{ "TLS12", "TLS1.2" },
		{ "TLS13", "TLS1.3" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(value, names[i][0]))
			return names[i][1];
	return NULL;
}

/* "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3": the versions from min to max. */
static int priorities(struct web_config *config, const char *min, const char *max)
{
	static const char *const order[] = { "TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3" };
	size_t used = (size_t)snprintf(config->priorities, sizeof(config->priorities),
				       "NORMAL:-VERS-ALL");
	bool in = false;
	int added = 0;

	for (size_t i = 0; i < 4; i++) {
		in = in || !strcmp(order[i], min);
		if (in) {
			used += (size_t)snprintf(config->priorities + used,
						 sizeof(config->priorities) - used, ":+VERS-%s",
						 order[i]);
			added++;
		}
		if (!strcmp(order[i], max))
			break;
	}
	return added ? 0 : -1;
}

/* The value after "key:", unquoted, its comment gone; NULL (said) if malformed. */
static char *value_of(char *text, const char *path, int line)
{
	char *end;

	text += strspn(text, " \t");
	if (*text == '"' || *text == '\'') {
		end = strchr(text + 1, *text);
		if (!end) {
			diag("%s:%d: a quote is not closed", path, line);
			return NULL;
		}
		*end = '\0';
		return text + 1;
	}
	end = strstr(text, " #");
	if (end)
		*end = '\0';
	end = text + strlen(text);
	while (end > text && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return text;
}

enum section { TOP, TLS, USERS };

static int add_user(struct web_config *config, const char *name, const char *hash, const char *path,
		    int line)
{
	struct web_user *grown, *user;

	if (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) && strncmp(hash, "$2y$", 4)) {
		diag("%s:%d: the password of %s is not a bcrypt hash ($2y$...): make one with "
		     "htpasswd -nBC 10 %s",
		     path, line, name, name);
		return -1;
	}
	/*
	 * The cost is 2^cost rounds, checked on serve's request path: 31 took a
	 * check 10 minutes and held every scrape (issue 41). 12 is about 0.3 s.
	 */
	if (!isdigit((unsigned char)hash[4]) || !isdigit((unsigned char)hash[5]) ||
	    hash[6] != '$' || (hash[4] - '0') * 10 + (hash[5] - '0') > BCRYPT_COST_MAX) {
		diag("%s:%d: the password hash of %s costs more than %d (or says no cost): each "
		     "scrape would wait for it; make one with htpasswd -nBC 10 %s",
		     path, line, name, BCRYPT_COST_MAX, name);
		return -1;
	}
	grown = realloc(config->users, (config->user_count + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	config->users = grown;
	user = &grown[config->user_count++];
	/* Whole: has_accepted starts false (it was read uninitialized). */
	*user = (struct web_user){ .name = strdup(name), .hash = strdup(hash) };
	return user->name && user->hash ? 0 : -1;
}

static int parse(struct web_config *config, char *text, const char *path)
{
	char *cert_file = NULL, *key_file = NULL, min[16] = "TLS1.2", max[16] = "TLS1.3";
	enum section section = TOP;
	int line = 0, err = 0;

	for (char *next, *at = text; at && !err; at = next) {
		char *colon, *key, *value;
		bool indented;

		next = strchr(at, '\n');
		if (next)
			*next++ = '\0';
		line++;
		key = at + strspn(at, " \t");
		if (!*key || *key == '#')
			continue;
		indented = key != at;
		colon = strchr(key, ':');
		if (!colon) {
			diag("%s:%d: not \"key: value\"", path, line);
			return -1;
		}
		*colon = '\0';
		value = value_of(colon + 1, path, line);
		if (!value)
			return -1;
		if (!indented) {
			if (!strcmp(key, "tls_server_config"))
				section = TLS;
			else if (!strcmp(key, "basic_auth_users"))
				section = USERS;
			else {
				diag("%s:%d: unknown field %s (optrace reads tls_server_config and "
				     "basic_auth_users)",
				     path, line, key);
				return -1;
			}
			if (*value) {
				diag("%s:%d: %s holds indented fields, not a value", path, line,
				     key);
				return -1;
			}
			continue;
		}
		if (section == TOP) {
			diag("%s:%d: an indented field outside a section", path, line);
			return -1;
		}
		if (!*value) {
			diag("%s:%d: %s has no value", path, line, key);
			return -1;
		}
		if (section == USERS) {
			err = add_user(config, key, value, path, line);
		} else if (!strcmp(key, "cert_file")) {
			free(cert_file);
			cert_file = strdup(value);
		} else if (!strcmp(key, "key_file")) {
			free(key_file);
			key_file = strdup(value);
		} else if (!strcmp(key, "min_version") || !strcmp(key, "max_version")) {
			const char *version = tls_version(value);

			if (!version) {
				diag("%s:%d: %s %s: give TLS10, TLS11, TLS12 or TLS13", path, line,
				     key, value);
				err = -1;
			} else {
				snprintf(key[1] == 'i' ? min : max, sizeof(min), "%s", version);
			}
		} else {
			diag("%s:%d: unknown field %s of tls_server_config (optrace reads "
			     "cert_file, "
			     "key_file, min_version, max_version)",
			     path, line, key);
			err = -1;
		}
	}
	if (!err && (cert_file || key_file)) {
		if (!cert_file || !key_file) {
			diag("%s: tls_server_config needs both cert_file and key_file", path);
			err = -1;
		} else if (priorities(config, min, max)) {
			diag("%s: min_version is above max_version", path);
			err = -1;
		} else {
			config->cert = read_regular(cert_file, "the certificate");
			config->key = config->cert ? read_regular(key_file, "the key") : NULL;
			err = config->key ? 0 : -1;
		}
	}
	free(cert_file);
	free(key_file);
	return err;
}

int web_config_read(struct web_config *config, const char *path)
{
	char *text;
	int err;

	memset(config, 0, sizeof(*config));
	text = read_regular(path, "the web configuration");
	if (!text)
		return -1;
	err = parse(config, text, path);
	free(text);
	if (err)
		web_config_free(config);
	return err;
}

void web_config_free(struct web_config *config)
{
	for (size_t i = 0; i < config->user_count; i++) {
		free(config->users[i].name);
		free(config->users[i].hash);
	}
	free(config->users);
	if (config->key)
		explicit_bzero(config->key, strlen(config->key));
	free(config->key);
	free(config->cert);
	memset(config, 0, sizeof(*config));
}
