/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * serve --web-config FILE: the web configuration file of Prometheus'
 * exporter toolkit (the one node_exporter's --web.config.file reads), the
 * subset a metrics endpoint needs:
 *
 *   tls_server_config:
 *     cert_file: /etc/optrace/serve.crt
 *     key_file: /etc/optrace/serve.key
 *     min_version: TLS12          # TLS10 ... TLS13
 *     max_version: TLS13
 *   basic_auth_users:
 *     prometheus: $2y$10$...      # bcrypt (htpasswd -nBC 10 USER)
 *
 * Comments, blank lines and quoted values ('...' or "...") are read; any
 * other key is refused with its line, as the toolkit refuses unknown fields.
 */
#ifndef OPTRACE_SESSION_WEB_CONFIG_H
#define OPTRACE_SESSION_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct web_user {
	char *name;
	char *hash;		    /* bcrypt: $2a$, $2b$ or $2y$ */
	unsigned char accepted[32]; /* SHA-256 of (name, password) last accepted */
	bool has_accepted;
};

struct web_config {
	char *cert; /* the certificate (chain) and key files' contents, PEM; NULL: no TLS */
	char *key;
	char priorities[128]; /* GnuTLS's, for min_version and max_version */
	struct web_user *users;
	size_t user_count;
};

/*
 * Whether user and password are one of basic_auth_users' (true when there
 * are none). bcrypt costs tens of ms a check: a pair accepted is
 * remembered by its SHA-256 (web_auth.c), and at most AUTH_CHECKS_PER_S
 * checks run each second, so that a flood of wrong passwords cannot pin
 * the server; past that a request is refused unchecked. Thread-safe.
 *
 * web_auth_quick() answers what needs no bcrypt: accepted (no users, or a
 * pair remembered), refused (no credentials, too long, the second's checks
 * spent), or WEB_AUTH_NEEDS_CHECK, a bcrypt check counted against the
 * second, for web_auth_check() to run where a slow answer blocks nobody
 * (serve's checker thread, session/http_server.c).
 */
#define AUTH_CHECKS_PER_S 10
enum web_auth_verdict {
	WEB_AUTH_REFUSED,
	WEB_AUTH_ACCEPTED,
	WEB_AUTH_NEEDS_CHECK,
};
enum web_auth_verdict web_auth_quick(struct web_config *config, const char *user,
				     const char *password);
/* The bcrypt check of a pair web_auth_quick() left: true if accepted. */
bool web_auth_check(struct web_config *config, const char *user, const char *password);

/* Reads path (a regular file, through one descriptor): 0, or -1 with file:line said. */
int web_config_read(struct web_config *config, const char *path);
void web_config_free(struct web_config *config);

#endif /* OPTRACE_SESSION_WEB_CONFIG_H */
