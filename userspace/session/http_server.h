/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * serve's HTTP side (libmicrohttpd), held against clients that would take
 * it: a whole request has a deadline, not only an idle timeout; each
 * address has a few connections, and a new client always finds a slot (the
 * one holding the most loses its oldest); a password's bcrypt check runs
 * on a thread of its own, so that a flood of wrong ones does not stall
 * the scrapes; with the web configuration's TLS and users.
 */
#ifndef OPTRACE_SESSION_HTTP_SERVER_H
#define OPTRACE_SESSION_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "session/web_config.h"

/* Connections at once, past which the biggest holder's oldest is closed. */
#define HTTP_MAX_CONNECTIONS 64
#define HTTP_MAX_CONNECTIONS_PER_ADDRESS 8
/* From a connection's start, or its last answer, to the end of the next answer. */
#define HTTP_REQUEST_DEADLINE_S 10
/* Requests waiting for a bcrypt check; past that a request is refused unchecked. */
#define HTTP_AUTH_QUEUE 16

/* What a GET is answered with: body malloc'ed if owned, else static. */
struct http_answer {
	unsigned int status;
	const char *content_type;
	char *body;
	size_t length;
	bool owned;
};

/* Answers a GET (or HEAD) of url, authorized; called on the HTTP thread. */
typedef void (*http_handler)(void *ctx, const char *url, struct http_answer *answer);

struct http_server_options {
	int listen_fd;		/* bound and listening: the server owns it from the start */
	struct web_config *web; /* TLS and users, or NULL: plain HTTP, anyone */
	bool log_errors;	/* libmicrohttpd's messages, through diag() */
	http_handler handler;
	void *ctx;
};

struct http_server;

/* The server answering on its own threads, or NULL (listen_fd closed). */
struct http_server *http_server_start(const struct http_server_options *options);
/* Closes every connection, waits for the threads; server may be NULL. */
void http_server_stop(struct http_server *server);

#endif /* OPTRACE_SESSION_HTTP_SERVER_H */
