// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace serve: stat's in-kernel aggregates for Prometheus. A long-running
 * exporter: it counts the targets' operations in the kernel as stat does,
 * never clears the aggregates, and answers GET /metrics (libmicrohttpd) with
 * them in the text exposition format; a scrape reads the maps, nothing
 * more. A process that exits keeps its series for the retention period,
 * after which its entries leave the maps.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "session/http_server.h"
#include "session/serve_metrics.h"
#include "session/web_config.h"
#include "trace/setup.h"
#include "stat.skel.h"
#include "session/stat_live.h"
#include "output/prometheus.h"
#include "trace/tracer.h"

#define TICK_MS 100
#define DEFAULT_LISTEN "127.0.0.1:9464"
#define DEFAULT_RETENTION_S 300

static struct {
	const char *listen;
	const char *web_config;
	long retention_s;
} env = { .listen = DEFAULT_LISTEN, .retention_s = DEFAULT_RETENTION_S };

/*
 * The scrapes (libmicrohttpd's thread) and the main loop take turns with
 * what both use: the kernel's maps as a whole, the ranks, the departed.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* --web-config's TLS and users (none: plain HTTP, no authentication). */
static struct web_config web;

/* The metrics and the retention of the processes that exited. */
static struct serve_metrics metrics;

static const char doc[] =
	"Count the operations of live runtimes in the kernel, as stat does, and\n"
	"serve the totals since the start to Prometheus: GET /metrics answers in\n"
	"the text exposition format. A process that exits keeps its series for\n"
	"the retention period (default 300 s), then they go.\n"
	"\n"
	"USAGE: optrace serve [-a | -p PID...] [--listen ADDR:PORT] [--web-config FILE]\n"
	"                     [--retention SECONDS] [--cuda] [-q] [-v]\n"
	"\n"
	"Without -p, every process that maps liboptrace (-a). SIGINT, SIGTERM or\n"
	"SIGHUP ends it.\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace serve                           # -a, on 127.0.0.1:9464\n"
	"    optrace serve --listen :9464 --web-config web.yml  # TLS, basic auth\n"
	"    optrace serve -p 1234 --listen 10.0.0.5:9500 --retention 60\n"
	"    optrace serve --cuda -p 1234            # GPU time per operation too\n"
	"    curl -s localhost:9464/metrics          # what Prometheus reads\n";

enum {
	OPT_RETENTION = 0x100,
	OPT_WEB_CONFIG,
};

/* The rest of serve's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "listen", 'l', "ADDR:PORT", 0,
	  "Where to answer (default " DEFAULT_LISTEN "; :PORT: every address)", 0 },
	{ "web-config", OPT_WEB_CONFIG, "FILE", 0,
	  "TLS and basic auth, in the Prometheus exporter toolkit's web configuration format", 0 },
	{ "retention", OPT_RETENTION, "SECONDS", 0,
	  "How long an exited process keeps its series (default 300)", 0 },
	{},
};

/* ADDR:PORT, [ADDR]:PORT, :PORT or PORT into host ("" for every address) and port. */
static bool split_listen(const char *where, char *host, size_t host_size, char *port,
			 size_t port_size)
{
	const char *colon = strrchr(where, ':');
	char *end;
	long number;

	host[0] = '\0';
	if (colon) {
		const char *start = where, *stop = colon;

		if (*start == '[' && stop > start && stop[-1] == ']') {
			start++;
			stop--;
		}
		snprintf(host, host_size, "%.*s", (int)(stop - start), start);
	}
	snprintf(port, port_size, "%s", colon ? colon + 1 : where);
	number = strtol(port, &end, 10);
	return port[0] && !*end && number >= 0 && number <= 65535;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char host[256], port[16];

	switch (key) {
	case 'l':
		if (!split_listen(arg, host, sizeof(host), port, sizeof(port)))
			argp_error(state, "--listen takes ADDR:PORT, a port from 0 to 65535");
		env.listen = arg;
		return 0;
	case OPT_RETENTION:
		env.retention_s = tracer_parse_positive(arg, state, "retention");
		return 0;
	case OPT_WEB_CONFIG:
		env.web_config = arg;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* ---- the HTTP side ------------------------------------------------------------ */

static void reply_text(struct http_answer *answer, unsigned int status, const char *text)
{
	*answer = (struct http_answer){ status, "text/plain; charset=utf-8", (char *)text,
					strlen(text), false };
}

/* A scrape: the maps read into a snapshot, written out. */
static void reply_metrics(struct http_answer *answer)
{
	char *text = NULL;
	size_t length = 0;
	int err;

	pthread_mutex_lock(&lock);
	err = serve_metrics_write(&metrics, &text, &length);
	pthread_mutex_unlock(&lock);
	if (err) {
		reply_text(answer, MHD_HTTP_INTERNAL_SERVER_ERROR,
			   "cannot read the kernel's aggregates\n");
		return;
	}
	*answer = (struct http_answer){ MHD_HTTP_OK, PROMETHEUS_CONTENT_TYPE, text, length, true };
}

/* An authorized GET (session/http_server.c holds the rest). */
static void answer(void *ctx, const char *url, struct http_answer *answer)
{
	(void)ctx;
	if (!strcmp(url, "/metrics"))
		reply_metrics(answer);
	else if (!strcmp(url, "/"))
		reply_text(answer, MHD_HTTP_OK, "optrace serve: Prometheus metrics at /metrics\n");
	else
		reply_text(answer, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
}

/* The address of --listen, bound and listening: the socket, or -1 (said why). */
static int listen_on(const char *where, char *bound, size_t size)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV },
			*found;
	char host[256], port[16], name[NI_MAXHOST], service[NI_MAXSERV];
	struct sockaddr_storage address;
	socklen_t address_size = sizeof(address);
	int fd, one = 1, err;

	split_listen(where, host, sizeof(host), port, sizeof(port)); /* checked by parse_arg */
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &found);
	if (err) {
		diag("cannot listen on %s: %s", where, gai_strerror(err));
		return -1;
	}
	fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, found->ai_addr, found->ai_addrlen) || listen(fd, HTTP_MAX_CONNECTIONS) ||
	    getsockname(fd, (struct sockaddr *)&address, &address_size)) {
		diag("cannot listen on %s: %s", where, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(found);
		return -1;
	}
	freeaddrinfo(found);
	/* As bound: the port the kernel chose for port 0. */
	if (getnameinfo((struct sockaddr *)&address, address_size, name, sizeof(name), service,
			sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(bound, size, "%s", where);
	else
		snprintf(bound, size, address.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", name,
			 service);
	return fd;
}

/* --web-config read, and TLS there if it asks for it; 0 or -1 (said). */
static int read_web_config(void)
{
	if (!env.web_config)
		return 0;
	if (web_config_read(&web, env.web_config))
		return -1;
	if (web.cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		diag("%s asks for TLS, which this libmicrohttpd was built without: install "
		     "Debian's libmicrohttpd12 (GnuTLS)",
		     env.web_config);
		return -1;
	}
	return 0;
}

/* Who can read the metrics: said when the answer is anyone who reaches the address. */
static void warn_if_open(const char *bound)
{
	if (common_flags.quiet || (web.cert && web.user_count) || !strncmp(bound, "127.", 4) ||
	    !strncmp(bound, "[::1]", 5))
		return;
	diag("serving %s without %s%s%s: every host that reaches it reads every traced "
	     "command and pid; give --web-config (docs/fleet.md)",
	     bound, web.cert ? "" : "TLS", !web.cert && !web.user_count ? " and " : "",
	     web.user_count ? "" : "authentication");
}

int cmd_serve(int argc, char **argv)
{
	/* -v shows libmicrohttpd's messages too (start_http()). */
	struct tracer_options targets = { 0 };
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_QUIET | COMMON_VERBOSE | COMMON_CUDA), 0, NULL, 0 },
		{ tracer_flags_argp(&targets, TRACER_FLAGS_NO_COMMAND | TRACER_FLAGS_DEFAULT_ALL),
		  0, "Targets:", 1 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	static struct tracer tracer;
	struct http_server *http = NULL;
	struct stat_bpf *skel;
	char bound[NI_MAXHOST + NI_MAXSERV + 4];
	long elapsed_ms = 0;
	int err, fd;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	if (read_web_config())
		return 1;
	fd = listen_on(env.listen, bound, sizeof(bound));
	if (fd < 0) {
		web_config_free(&web);
		return 1;
	}
	warn_if_open(bound);
	skel = stat_open();
	if (!skel) {
		close(fd);
		return 1;
	}
	serve_metrics_init(&metrics, skel, env.retention_s);
	err = stat_attach(&tracer, skel, &targets, common_flags.cuda, common_flags.quiet);
	if (err) {
		close(fd);
		goto cleanup;
	}
	http = http_server_start(&(struct http_server_options){
		.listen_fd = fd, .web = &web, .log_errors = diag_verbosity(), .handler = answer });
	if (!http) {
		diag("cannot serve HTTP on %s (-v shows libmicrohttpd's messages)", bound);
		err = -EIO;
		goto cleanup;
	}
	/* not diag(): what it does now, not an error */
	if (!common_flags.quiet)
		fprintf(stderr, "Serving %s://%s/metrics%s... Hit Ctrl-C to end.\n",
			web.cert ? "https" : "http", bound, web.user_count ? " (basic auth)" : "");

	while (!tracer_interrupted()) {
		struct timespec tick = { 0, TICK_MS * 1000 * 1000 };

		nanosleep(&tick, NULL);
		elapsed_ms += TICK_MS;
		if (elapsed_ms % 1000) {
			pthread_mutex_lock(&lock);
			stat_note_ranks(skel, false);
			pthread_mutex_unlock(&lock);
			continue;
		}
		tracer_rescan(&tracer);
		pthread_mutex_lock(&lock);
		stat_catch_up(skel, &tracer);
		serve_metrics_sweep(&metrics);
		pthread_mutex_unlock(&lock);
	}

cleanup:
	/* No scrape runs once the daemon is stopped: then the maps can go. */
	http_server_stop(http);
	tracer_finish(&tracer, true);
	stat_bpf__destroy(skel);
	serve_metrics_free(&metrics);
	web_config_free(&web);
	return err ? 1 : 0;
}
