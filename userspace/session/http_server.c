// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * serve's HTTP side (http_server.h). libmicrohttpd answers on one thread;
 * a second, the guard, runs the bcrypt checks that thread hands it (the
 * connection suspended meanwhile) and closes every 100 ms the connections
 * past their deadline. libmicrohttpd's own timeout is an idle one: a client
 * that sends a byte every few seconds would hold its slot for ever.
 *
 * A connection is closed under the guard's feet with shutdown(2): its
 * thread then reads the end and libmicrohttpd closes it as usual. The
 * guard touches a socket only while it is tracked, and libmicrohttpd says
 * a connection closed before it closes the socket, under the same lock:
 * a descriptor number given to another socket is never shut.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "session/http_server.h"

/* libmicrohttpd takes a few more than the limit: the evicted close meanwhile. */
#define CONNECTION_SLACK 16
#define TRACKED_MAX (HTTP_MAX_CONNECTIONS + CONNECTION_SLACK)
/* A request's headers and its buffers: a larger request is answered 431 and closed. */
#define CONNECTION_MEMORY (64 * 1024)
#define GUARD_TICK_MS 100

struct tracked {
	struct MHD_Connection *connection;
	int fd;
	struct sockaddr_storage address;
	unsigned long long since_ns; /* its start or its last answer */
	bool in_use;
	bool closing; /* shut down by the guard, not yet closed */
};

enum request_auth {
	AUTH_UNASKED,
	AUTH_CHECKING, /* suspended, waiting for the guard */
	AUTH_OK,
	AUTH_REFUSED,
};

/* One request's state (libmicrohttpd's req_cls). */
struct request {
	enum request_auth auth;
	bool headers_seen;
};

struct auth_job {
	struct MHD_Connection *connection;
	struct request *request;
	char *user;
	char *password;
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct http_server_options options;
	pthread_mutex_t lock; /* the tracked connections, the jobs, stopping */
	pthread_cond_t wake;
	pthread_t guard;
	bool guard_started;
	bool stopping;
	struct tracked tracked[TRACKED_MAX];
	struct auth_job jobs[HTTP_AUTH_QUEUE];
	size_t job_first, job_count;
};

static unsigned long long now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
}

/* ---- connections: the deadline and a slot for a newcomer ----------------------- */

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true;
}

static bool open_now(const struct tracked *tracked)
{
	return tracked->in_use && !tracked->closing;
}

static void shut(struct tracked *tracked)
{
	shutdown(tracked->fd, SHUT_RDWR);
	tracked->closing = true;
}

/*
 * Past HTTP_MAX_CONNECTIONS open, the address holding the most loses its
 * oldest, never newcomer: a scrape gets in whoever holds the rest.
 * Called under the lock.
 */
static void make_room(struct http_server *server, const struct tracked *newcomer)
{
	struct tracked *victim = NULL;
	size_t open = 0, victim_held = 0;

	for (size_t i = 0; i < TRACKED_MAX; i++)
		open += open_now(&server->tracked[i]);
	if (open <= HTTP_MAX_CONNECTIONS)
		return;
	for (size_t i = 0; i < TRACKED_MAX; i++) {
		struct tracked *candidate = &server->tracked[i];
		size_t held = 0;

		if (!open_now(candidate) || candidate == newcomer)
			continue;
		for (size_t j = 0; j < TRACKED_MAX; j++)
			held += open_now(&server->tracked[j]) &&
				same_address(&server->tracked[j].address, &candidate->address);
		if (held > victim_held ||
		    (held == victim_held && candidate->since_ns < victim->since_ns)) {
			victim = candidate;
			victim_held = held;
		}
	}
	if (victim)
		shut(victim);
}

static void track(struct http_server *server, struct MHD_Connection *connection,
		  void **socket_context)
{
	const union MHD_ConnectionInfo *fd_info, *address_info;
	struct tracked *free_slot = NULL;

	fd_info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
	address_info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fd_info)
		return;
	pthread_mutex_lock(&server->lock);
	for (size_t i = 0; i < TRACKED_MAX && !free_slot; i++)
		if (!server->tracked[i].in_use)
			free_slot = &server->tracked[i];
	if (!free_slot) {
		/* libmicrohttpd's limit is the table's: cannot happen, but hold the line */
		shutdown(fd_info->connect_fd, SHUT_RDWR);
		pthread_mutex_unlock(&server->lock);
		return;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->connection = connection;
	free_slot->fd = fd_info->connect_fd;
	if (address_info && address_info->client_addr) {
		size_t size = address_info->client_addr->sa_family == AF_INET6
				      ? sizeof(struct sockaddr_in6)
				      : sizeof(struct sockaddr_in);

		memcpy(&free_slot->address, address_info->client_addr, size);
	}
	free_slot->since_ns = now_ns();
	free_slot->in_use = true;
	*socket_context = free_slot;
	make_room(server, free_slot);
	pthread_mutex_unlock(&server->lock);
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *server = cls;
	struct tracked *tracked = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		track(server, connection, socket_context);
		return;
	}
	if (!tracked)
		return;
	pthread_mutex_lock(&server->lock);
	tracked->in_use = false;
	pthread_mutex_unlock(&server->lock);
	*socket_context = NULL;
}

/* A request answered (or dropped): its state freed, the next one's deadline starts. */
static void on_completed(void *cls, struct MHD_Connection *connection, void **req_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct http_server *server = cls;
	const union MHD_ConnectionInfo *info;

	(void)code;
	free(*req_cls);
	*req_cls = NULL;
	info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (!info || !info->socket_context)
		return;
	pthread_mutex_lock(&server->lock);
	((struct tracked *)info->socket_context)->since_ns = now_ns();
	pthread_mutex_unlock(&server->lock);
}

/* Called under the lock. */
static void close_overdue(struct http_server *server)
{
	unsigned long long now = now_ns(), deadline_ns = HTTP_REQUEST_DEADLINE_S * 1000000000ULL;

	for (size_t i = 0; i < TRACKED_MAX; i++) {
		struct tracked *tracked = &server->tracked[i];

		if (open_now(tracked) && now - tracked->since_ns > deadline_ns)
			shut(tracked);
	}
}

/* ---- the guard: bcrypt checks and deadlines ----------------------------------- */

static void job_free(struct auth_job *job)
{
	if (job->password)
		explicit_bzero(job->password, strlen(job->password));
	free(job->password);
	free(job->user);
}

/* The check handed over, the connection suspended: false if the queue is full. */
static bool hand_over(struct http_server *server, struct MHD_Connection *connection,
		      struct request *request, const char *user, const char *password)
{
	struct auth_job job = { .connection = connection, .request = request };
	bool taken = false;

	job.user = strdup(user);
	job.password = strdup(password);
	if (!job.user || !job.password) {
		job_free(&job);
		return false;
	}
	request->auth = AUTH_CHECKING;
	/* Suspended before the guard can see it: it resumes only a suspended connection. */
	MHD_suspend_connection(connection);
	pthread_mutex_lock(&server->lock);
	if (!server->stopping && server->job_count < HTTP_AUTH_QUEUE) {
		server->jobs[(server->job_first + server->job_count++) % HTTP_AUTH_QUEUE] = job;
		pthread_cond_signal(&server->wake);
		taken = true;
	}
	pthread_mutex_unlock(&server->lock);
	if (!taken) {
		request->auth = AUTH_REFUSED;
		MHD_resume_connection(connection);
		job_free(&job);
	}
	return true;
}

static bool next_job(struct http_server *server, struct auth_job *job)
{
	if (!server->job_count)
		return false;
	*job = server->jobs[server->job_first];
	server->job_first = (server->job_first + 1) % HTTP_AUTH_QUEUE;
	server->job_count--;
	return true;
}

static void *guard_main(void *arg)
{
	struct http_server *server = arg;
	struct auth_job job;

	pthread_mutex_lock(&server->lock);
	while (!server->stopping) {
		struct timespec until;

		if (next_job(server, &job)) {
			bool ok;

			pthread_mutex_unlock(&server->lock);
			ok = web_auth_check(server->options.web, job.user, job.password);
			job.request->auth = ok ? AUTH_OK : AUTH_REFUSED;
			job_free(&job);
			MHD_resume_connection(job.connection);
			pthread_mutex_lock(&server->lock);
			continue;
		}
		close_overdue(server);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += GUARD_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&server->wake, &server->lock, &until);
	}
	/* Stopping: the waiting requests refused, so that the daemon can close them. */
	while (next_job(server, &job)) {
		pthread_mutex_unlock(&server->lock);
		job.request->auth = AUTH_REFUSED;
		job_free(&job);
		MHD_resume_connection(job.connection);
		pthread_mutex_lock(&server->lock);
	}
	pthread_mutex_unlock(&server->lock);
	return NULL;
}

/* ---- requests ------------------------------------------------------------------ */

static enum MHD_Result queue(struct MHD_Connection *connection, const struct http_answer *answer)
{
	struct MHD_Response *response;
	enum MHD_Result result;

	response = MHD_create_response_from_buffer(answer->length, answer->body,
						   answer->owned ? MHD_RESPMEM_MUST_FREE
								 : MHD_RESPMEM_PERSISTENT);
	if (!response) {
		if (answer->owned)
			free(answer->body);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer->content_type);
	if (answer->status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	result = MHD_queue_response(connection, answer->status, response);
	MHD_destroy_response(response);
	return result;
}

/* 401 with WWW-Authenticate: Basic realm="optrace". */
static enum MHD_Result refuse(struct MHD_Connection *connection)
{
	static char body[] = "401 Unauthorized: give the user and password of basic_auth_users\n";
	struct MHD_Response *response =
		MHD_create_response_from_buffer(sizeof(body) - 1, body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result result;

	if (!response)
		return MHD_NO;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	result = MHD_queue_basic_auth_fail_response(connection, "optrace", response);
	MHD_destroy_response(response);
	return result;
}

/*
 * The credentials judged: accepted or refused at once, or WEB_AUTH_NEEDS_CHECK:
 * handed to the guard, the connection suspended until it has judged.
 */
static enum web_auth_verdict judge(struct http_server *server, struct MHD_Connection *connection,
				   struct request *request)
{
	char *password = NULL, *user;
	enum web_auth_verdict verdict;

	if (!server->options.web)
		return WEB_AUTH_ACCEPTED;
	user = MHD_basic_auth_get_username_password(connection, &password);
	verdict = web_auth_quick(server->options.web, user, password);
	if (verdict == WEB_AUTH_NEEDS_CHECK &&
	    !hand_over(server, connection, request, user, password))
		verdict = WEB_AUTH_REFUSED;
	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	if (user)
		MHD_free(user);
	return verdict;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	static const struct http_answer not_allowed = { MHD_HTTP_METHOD_NOT_ALLOWED,
							"text/plain; charset=utf-8",
							"GET /metrics\n", 13, false };
	struct http_server *server = cls;
	struct request *request = *req_cls;
	struct http_answer reply = { 0 };

	(void)version;
	(void)upload_data;
	if (!request) {
		request = calloc(1, sizeof(*request));
		if (!request)
			return MHD_NO;
		*req_cls = request;
	}
	switch (request->auth) {
	case AUTH_UNASKED: {
		enum web_auth_verdict verdict = judge(server, connection, request);

		if (verdict == WEB_AUTH_NEEDS_CHECK)
			return MHD_YES; /* suspended: called again once judged */
		request->auth = verdict == WEB_AUTH_ACCEPTED ? AUTH_OK : AUTH_REFUSED;
		if (request->auth == AUTH_REFUSED)
			return refuse(connection);
		break;
	}
	case AUTH_CHECKING:
		return MHD_YES;
	case AUTH_REFUSED:
		return refuse(connection);
	case AUTH_OK:
		break;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return queue(connection, &not_allowed);
	/* The first call has the headers only: answer once the request is whole. */
	if (!request->headers_seen) {
		request->headers_seen = true;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a body to a GET: ignored */
		return MHD_YES;
	}
	server->options.handler(server->options.ctx, url, &reply);
	return queue(connection, &reply);
}

static void log_http(void *cls, const char *format, va_list args)
{
	char message[512];
	size_t length;

	(void)cls;
	vsnprintf(message, sizeof(message), format, args);
	length = strcspn(message, "\n");
	message[length] = '\0';
	diag("libmicrohttpd: %s", message);
}

/* ---- the server ------------------------------------------------------------------ */

struct http_server *http_server_start(const struct http_server_options *options)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			     (options->log_errors ? MHD_USE_ERROR_LOG : 0);
	struct web_config *web = options->web;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, web ? web->key : NULL },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, web ? web->cert : NULL },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, web ? web->priorities : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	bool with_tls = web && web->cert;
	struct http_server *server;

	server = calloc(1, sizeof(*server));
	if (!server) {
		close(options->listen_fd);
		return NULL;
	}
	server->options = *options;
	if (web && !web->user_count)
		server->options.web = NULL; /* TLS alone: anyone may read */
	pthread_mutex_init(&server->lock, NULL);
	pthread_cond_init(&server->wake, NULL);
	if (pthread_create(&server->guard, NULL, guard_main, server)) {
		close(options->listen_fd);
		http_server_stop(server);
		return NULL;
	}
	server->guard_started = true;
	if (with_tls)
		flags |= MHD_USE_TLS;
	server->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, answer, server, MHD_OPTION_EXTERNAL_LOGGER, log_http, NULL,
		MHD_OPTION_LISTEN_SOCKET, options->listen_fd, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, server, MHD_OPTION_NOTIFY_COMPLETED, on_completed, server,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)TRACKED_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNECTIONS_PER_ADDRESS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_REQUEST_DEADLINE_S,
		MHD_OPTION_ARRAY, with_tls ? tls : tls + 3, MHD_OPTION_END);
	if (!server->daemon) {
		close(options->listen_fd);
		http_server_stop(server);
		return NULL;
	}
	return server;
}

void http_server_stop(struct http_server *server)
{
	if (!server)
		return;
	/* The guard first: it resumes the requests it holds, which the daemon then closes. */
	if (server->guard_started) {
		pthread_mutex_lock(&server->lock);
		server->stopping = true;
		pthread_cond_signal(&server->wake);
		pthread_mutex_unlock(&server->lock);
		pthread_join(server->guard, NULL);
	}
	if (server->daemon)
		MHD_stop_daemon(server->daemon);
	pthread_cond_destroy(&server->wake);
	pthread_mutex_destroy(&server->lock);
	free(server);
}
