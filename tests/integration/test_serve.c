// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace serve scraped by a real Prometheus (Debian's prometheus package):
 * serve -a, Prometheus scraping it every second, a demo of two processes
 * run and gone; then Prometheus' HTTP API must hold exactly the demo's own
 * ground truth, and promtool must find nothing to fix in a scrape.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <crypt.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "http_get.h"
#include "testlib.h"

#define GRACE_S 10   /* from SIGTERM to SIGKILL */
#define READY_S 30   /* for serve to attach, for Prometheus to start */
#define SCRAPED_S 20 /* for a scrape after the demo's exit */
#define FAILURE_MAX 16384

struct run {
	pid_t serve, prometheus;
	int serve_port, prometheus_port;
	const char *web_config; /* serve --web-config: TLS and basic auth */
	char ca[512];		/* then: the certificate to trust */
	char pids[64];		/* the demo's processes, as a PromQL regex: "12|13" */
	char failure[FAILURE_MAX];
	char query_error[4096]; /* how the last query that failed did */
};

/* The first failure, said; the run stops there and everything is stopped. */
#define REQUIRE(run, condition, ...)                                                   \
	do {                                                                           \
		if (!(condition)) {                                                    \
			snprintf((run)->failure, sizeof((run)->failure), __VA_ARGS__); \
			return false;                                                  \
		}                                                                      \
	} while (0)

/* Polls path until it answers 200 or the process dies or seconds pass; true on 200. */
static bool wait_ready(pid_t pid, int port, const char *path, int seconds)
{
	for (int waited_ms = 0; waited_ms < seconds * 1000; waited_ms += 100) {
		char *body;
		int status = http_get(port, path, &body);

		free(body);
		if (status == 200)
			return true;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return false;
		usleep(100 * 1000);
	}
	return false;
}

/* Starts argv with stdout and stderr into log; it dies with the test, whatever ends that. */
static pid_t start(char *const argv[], const char *log)
{
	pid_t parent = getpid(), pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(126);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

#define USER "prometheus"
#define PASSWORD "s3cret: of the scraper"

/*
 * curl's GET of serve's path over TLS with credentials ("" for none): the
 * status (0: no answer), the body in *body (to free) and the headers in *headers if given.
 */
static int https_get(struct run *run, const char *path, const char *credentials, char **body,
		     char **headers)
{
	char url[256], *out = test_path("curl.body"), *status_path = test_path("curl.status");
	char *head = test_path("curl.headers"), *text;
	char *argv[] = { "curl",
			 "-s",
			 "-o",
			 out,
			 "-D",
			 head,
			 "-w",
			 "%{http_code}",
			 "--max-time",
			 "5",
			 "--cacert",
			 run->ca,
			 url,
			 credentials[0] ? "-u" : NULL,
			 (char *)credentials,
			 NULL };
	int status;

	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", run->serve_port, path);
	run_command(argv, status_path, NULL, 30);
	text = read_file(status_path);
	status = text ? atoi(text) : 0;
	free(text);
	*body = read_file(out);
	if (headers)
		*headers = read_file(head);
	free(out);
	free(status_path);
	free(head);
	return status;
}

/* A scrape of serve, as Prometheus makes it: with TLS and credentials when it has them. */
static int serve_get(struct run *run, const char *path, char **body)
{
	if (!run->web_config)
		return http_get(run->serve_port, path, body);
	return https_get(run, path, USER ":" PASSWORD, body, NULL);
}

/* A PromQL query, URL-encoded into the API's instant query. */
static struct jv *query(struct run *run, const char *promql)
{
	char path[4096] = "/api/v1/query?query=", *body;
	size_t used = strlen(path);
	struct jv *answer;
	int status;

	for (const unsigned char *c = (const unsigned char *)promql; *c && used + 4 < sizeof(path);
	     c++)
		used += (size_t)(isalnum(*c) ? snprintf(path + used, 2, "%c", *c)
					     : snprintf(path + used, 4, "%%%02X", *c));
	status = http_get(run->prometheus_port, path, &body);
	answer = status == 200 && body ? jv_parse(body) : NULL;
	if (!answer || strcmp(jv_string(answer, "status"), "success"))
		snprintf(run->query_error, sizeof(run->query_error), "query %s: HTTP %d\n%.2000s",
			 promql, status, body ? body : "");
	free(body);
	return answer;
}

/* The vector a query gives, or NULL if it failed (said in query_error). */
static const struct jv *samples(const struct jv *answer)
{
	const struct jv *result = jv_get(jv_get(answer, "data"), "result");

	return result && result->type == JV_ARRAY ? result : NULL;
}

static double sample_value(const struct jv *sample)
{
	const struct jv *value = jv_get(sample, "value");

	if (!value || value->type != JV_ARRAY || value->count != 2 ||
	    value->items[1]->type != JV_STRING)
		return -1;
	return strtod(value->items[1]->string, NULL);
}

/*
 * sum by (LABELS) (METRIC{pid=~PIDS,FILTER}) as truth keys: PREFIX then the
 * labels' values, separated by spaces.
 */
static bool add_sums(struct run *run, struct counts *counts, const char *prefix, const char *metric,
		     const char *filter, const char *const labels[])
{
	char promql[1024], by[256] = "", key[512];
	const struct jv *result;
	struct jv *answer;

	for (int i = 0; labels[i]; i++)
		snprintf(by + strlen(by), sizeof(by) - strlen(by), "%s%s", i ? "," : "", labels[i]);
	snprintf(promql, sizeof(promql), "sum by (%s) (%s{pid=~\"%s\"%s})", by, metric, run->pids,
		 filter);
	answer = query(run, promql);
	result = samples(answer);
	if (!result) {
		jv_free(answer);
		return false;
	}
	for (size_t i = 0; i < result->count; i++) {
		const struct jv *metric_labels = jv_get(result->items[i], "metric");

		snprintf(key, sizeof(key), "%s", prefix);
		for (int l = 0; labels[l]; l++)
			snprintf(key + strlen(key), sizeof(key) - strlen(key), " %s",
				 jv_string(metric_labels, labels[l]));
		counts_add(counts, key, (long)(sample_value(result->items[i]) + 0.5));
	}
	jv_free(answer);
	return true;
}

/* What Prometheus holds of the demo's processes, keyed as the demo's truth is. */
static bool prometheus_counts(struct run *run, struct counts *counts)
{
	static const char *const op_depth[] = { "op", "depth", NULL },
				 *const op_mode[] = { "op", "mode", "mode_reason", NULL },
				 *const op_status[] = { "op", "status", NULL },
				 *const op_reason[] = { "op", "reason", NULL },
				 *const task_variant[] = { "task", "variant", NULL },
				 *const task[] = { "task", NULL }, *const kind[] = { "kind", NULL };

	return add_sums(run, counts, "op", "optrace_operations_total", "", op_depth) &&
	       add_sums(run, counts, "mode", "optrace_operations_total", ",mode!=\"unset\"",
			op_mode) &&
	       add_sums(run, counts, "status", "optrace_operations_total", "", op_status) &&
	       add_sums(run, counts, "fallback", "optrace_fallbacks_total", "", op_reason) &&
	       add_sums(run, counts, "task", "optrace_task_points_total", "", task_variant) &&
	       add_sums(run, counts, "launch", "optrace_task_launches_total", "", task) &&
	       add_sums(run, counts, "points", "optrace_task_launch_points_total", "", task) &&
	       add_sums(run, counts, "wait", "optrace_waits_total", "", kind);
}

/* The value of a query that gives one sample, or -1. */
static double scalar(struct run *run, const char *promql)
{
	struct jv *answer = query(run, promql);
	const struct jv *result = samples(answer);
	double value = result && result->count == 1 ? sample_value(result->items[0]) : -1;

	jv_free(answer);
	return value;
}

/* The pids of the truth's blocks ("begin PID"), as a regex. */
static int truth_pids(const char *path, char *regex, size_t size)
{
	char *text = read_file(path), *line, *save;
	int blocks = 0;

	regex[0] = '\0';
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		int pid;

		if (sscanf(line, "begin %d", &pid) != 1)
			continue;
		snprintf(regex + strlen(regex), size - strlen(regex), "%s%d", blocks ? "|" : "",
			 pid);
		blocks++;
	}
	free(text);
	return blocks;
}

static double now_realtime(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Prometheus, scraping 127.0.0.1:serve_port every second. */
static bool start_prometheus(struct run *run)
{
	char *config = test_path("prometheus.yml"), *tsdb = test_path("tsdb"),
	     *log = test_path("prometheus.log"), config_arg[512], tsdb_arg[512], listen_arg[64];
	char *argv[] = { "prometheus", config_arg, tsdb_arg, listen_arg, "--log.level=warn", NULL };
	FILE *file = fopen(config, "w");

	ck_assert_ptr_nonnull(file);
	fprintf(file,
		"global:\n"
		"  scrape_interval: 1s\n"
		"  scrape_timeout: 1s\n"
		"scrape_configs:\n"
		"  - job_name: optrace\n"
		"    static_configs:\n"
		"      - targets: ['127.0.0.1:%d']\n",
		run->serve_port);
	if (run->web_config)
		fprintf(file,
			"    scheme: https\n"
			"    tls_config:\n"
			"      ca_file: %s\n"
			"    basic_auth:\n"
			"      username: %s\n"
			"      password: '%s'\n",
			run->ca, USER, PASSWORD);
	ck_assert_int_eq(fclose(file), 0);
	snprintf(config_arg, sizeof(config_arg), "--config.file=%s", config);
	snprintf(tsdb_arg, sizeof(tsdb_arg), "--storage.tsdb.path=%s", tsdb);
	snprintf(listen_arg, sizeof(listen_arg), "--web.listen-address=127.0.0.1:%d",
		 run->prometheus_port);
	run->prometheus = start(argv, log);
	free(config);
	free(tsdb);
	free(log);
	return wait_ready(run->prometheus, run->prometheus_port, "/-/ready", READY_S);
}

static bool scraped_and_compared(struct run *run)
{
	char *truth_path = test_path("truth.txt"), *metrics_path = test_path("metrics.txt");
	char *demo[] = { DEMO,	    "--workload", "all", "--procs", "2",
			 "--truth", truth_path,	  "-q",	 NULL };
	char check_command[512], *check_argv[] = { "/bin/sh", "-c", check_command, NULL };
	char *check_out = test_path("promtool.txt"), *text, message[8192], promql[256];
	struct counts truth = { 0 }, held = { 0 };
	double demo_end, scraped_at = 0;
	int status, differences;
	FILE *file;

	REQUIRE(run, start_prometheus(run), "Prometheus did not start within %d s", READY_S);
	status = run_command(demo, NULL, NULL, 60);
	REQUIRE(run, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the demo failed: %d", status);
	demo_end = now_realtime();
	REQUIRE(run, truth_parse(truth_path, &truth) == 2, "not the truth of two processes");
	REQUIRE(run, truth_pids(truth_path, run->pids, sizeof(run->pids)) == 2, "no pids");

	/* A scrape that began after the demo exited: it saw every operation. */
	for (int waited_ms = 0; scraped_at <= demo_end && waited_ms < SCRAPED_S * 1000;
	     waited_ms += 200) {
		usleep(200 * 1000);
		scraped_at = scalar(run, "timestamp(up{job=\"optrace\"} == 1)");
	}
	REQUIRE(run, scraped_at > demo_end, "no scrape of serve within %d s of the demo's exit",
		SCRAPED_S);

	REQUIRE(run, prometheus_counts(run, &held), "%s", run->query_error);
	differences = counts_diff(&truth, &held, message, sizeof(message));
	REQUIRE(run, differences == 0, "Prometheus differs from the ground truth:\n%s", message);
	snprintf(promql, sizeof(promql),
		 "count(count by (pid, rank) (optrace_operations_total{pid=~\"%s\"}))", run->pids);
	REQUIRE(run, scalar(run, promql) == 2, "not two processes with their ranks");
	snprintf(promql, sizeof(promql),
		 "count(count by (rank) (optrace_operations_total{pid=~\"%s\",rank=~\"0|1\"}))",
		 run->pids);
	REQUIRE(run, scalar(run, promql) == 2, "not the ranks 0 and 1");
	REQUIRE(run, scalar(run, "optrace_processes{state=\"exited\"}") >= 2,
		"the demo's processes are not counted as exited");
	REQUIRE(run, scalar(run, "optrace_events_lost_total{cause=\"map_full\"}") == 0,
		"serve lost events: a map was full");

	/* promtool on a scrape of serve: nothing to fix. */
	REQUIRE(run, serve_get(run, "/metrics", &text) == 200, "no scrape of serve");
	file = fopen(metrics_path, "w");
	ck_assert_ptr_nonnull(file);
	fputs(text, file);
	ck_assert_int_eq(fclose(file), 0);
	free(text);
	snprintf(check_command, sizeof(check_command), "promtool check metrics < %s 2>&1",
		 metrics_path);
	status = run_command(check_argv, check_out, NULL, 30);
	text = read_file(check_out);
	REQUIRE(run, status == 0 && text && !text[0], "promtool check metrics (status %d):\n%s",
		status, text ? text : "");
	free(text);

	counts_free(&truth);
	counts_free(&held);
	free(truth_path);
	free(metrics_path);
	free(check_out);
	return true;
}

/* SIGTERM, then SIGKILL after the grace period; the exit status, or -1 if killed. */
static int stop(pid_t pid)
{
	return pid > 0 ? reap_within(pid, SIGTERM, GRACE_S) : 0;
}

static void append_log(struct run *run, const char *name)
{
	char *path = test_path(name), *text = read_file(path);
	size_t used = strlen(run->failure), length = text ? strlen(text) : 0;

	snprintf(run->failure + used, sizeof(run->failure) - used, "\n--- %s (end):\n%s", name,
		 text ? text + (length > 2000 ? length - 2000 : 0) : "(none)");
	free(text);
	free(path);
}

/* serve -a on a free port (with --retention, if given); true once it answers: it attached. */
static bool start_serve(struct run *run, const char *retention)
{
	char listen[32], *log = test_path("serve.log");
	char *argv[10] = { OPTRACE, "serve", "-a", "--listen", listen };
	int argc = 5;
	bool ready = false;

	if (retention) {
		argv[argc++] = "--retention";
		argv[argc++] = (char *)retention;
	}
	if (run->web_config) {
		argv[argc++] = "--web-config";
		argv[argc++] = (char *)run->web_config;
	}
	run->serve_port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", run->serve_port);
	run->serve = start(argv, log);
	free(log);
	for (int waited_ms = 0; !ready && waited_ms < READY_S * 1000; waited_ms += 200) {
		char *body = NULL;
		int status;

		if (!run->web_config) {
			ready = wait_ready(run->serve, run->serve_port, "/metrics", READY_S);
			break;
		}
		status = https_get(run, "/metrics", USER ":" PASSWORD, &body, NULL);
		free(body);
		ready = status == 200;
		if (!ready)
			usleep(200 * 1000);
	}
	REQUIRE(run, ready, "serve did not answer within %d s", READY_S);
	return true;
}

/* Stops what the test started, serve first, which must exit 0; then fails on the first failure. */
static void finish(struct run *run)
{
	int serve_status = stop(run->serve);

	stop(run->prometheus);
	if (!run->failure[0] && !(WIFEXITED(serve_status) && WEXITSTATUS(serve_status) == 0))
		snprintf(run->failure, sizeof(run->failure),
			 "serve did not exit cleanly on SIGTERM (status %d)", serve_status);
	if (run->failure[0]) {
		append_log(run, "serve.log");
		append_log(run, "prometheus.log");
	}
	ck_assert_msg(!run->failure[0], "%s", run->failure);
}

START_TEST(test_prometheus_scrapes_serve)
{
	static struct run run;

	NEED_BPF();
	if (!have_program("prometheus") || !have_program("promtool"))
		SKIP_TEST("Prometheus is not installed (scripts/deps.sh installs it)");
	run.prometheus_port = free_port();
	if (start_serve(&run, NULL))
		scraped_and_compared(&run);
	finish(&run);
}
END_TEST

/* Whether a scrape of serve has series of process pid. */
static bool scrape_names(struct run *run, const char *pid_label, bool *named)
{
	char *text;

	REQUIRE(run, serve_get(run, "/metrics", &text) == 200 && text, "no scrape of serve");
	*named = strstr(text, pid_label) != NULL;
	free(text);
	return true;
}

static bool kept_then_forgotten(struct run *run)
{
	char *truth = test_path("truth.txt"), pid_label[80];
	char *demo[] = { DEMO, "--workload", "fallback", "-q", "--truth", truth, NULL };
	bool named = true;
	int status;

	status = run_command(demo, NULL, NULL, 60);
	REQUIRE(run, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the demo failed: %d", status);
	REQUIRE(run, truth_pids(truth, run->pids, sizeof(run->pids)) == 1, "no pid in the truth");
	free(truth);
	snprintf(pid_label, sizeof(pid_label), ",pid=\"%s\",", run->pids);
	/* Exited, and kept for the retention: counters do not vanish at the exit. */
	if (!scrape_names(run, pid_label, &named))
		return false;
	REQUIRE(run, named, "the demo's series went at its exit, before the retention");
	for (int waited_ms = 0; named && waited_ms < SCRAPED_S * 1000; waited_ms += 250) {
		usleep(250 * 1000);
		if (!scrape_names(run, pid_label, &named))
			return false;
	}
	REQUIRE(run, !named, "the demo's series are still there %d s after its retention",
		SCRAPED_S);
	return true;
}

/* An exited process keeps its series for --retention seconds, then they go. */
START_TEST(test_retention)
{
	static struct run run;

	NEED_BPF();
	if (start_serve(&run, "3"))
		kept_then_forgotten(&run);
	finish(&run);
}
END_TEST

/* Whether every series of pid_label in a scrape has a rank ("" would be other series). */
static bool ranked_everywhere(const char *text, const char *pid_label)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);
		char copy[1024];

		snprintf(copy, sizeof(copy), "%.*s", (int)length, line);
		if (strstr(copy, pid_label) && strstr(copy, "rank=\"\""))
			return false;
		line = end ? end + 1 : NULL;
	}
	return true;
}

static bool first_scrape_ranked(struct run *run)
{
	pid_t demo = start_demo_forever("stats");
	char pid_label[80], *text = NULL;
	bool seen = false, ranked = true;

	snprintf(pid_label, sizeof(pid_label), ",pid=\"%d\",", demo);
	/* Scraped as often as it can be, from the process's start: its first series too. */
	for (int i = 0; !seen && i < 12000; i++) {
		if (serve_get(run, "/metrics", &text) != 200 || !text) {
			free(text);
			break;
		}
		seen = strstr(text, pid_label) != NULL;
		ranked = !seen || ranked_everywhere(text, pid_label);
		free(text);
		text = NULL;
		if (!seen)
			usleep(10 * 1000);
	}
	reap_within(demo, SIGTERM, 10);
	REQUIRE(run, seen, "serve never had series of process %d", demo);
	REQUIRE(run, ranked, "the first series of process %d had rank=\"\"", demo);
	return true;
}

/* A process's series have its rank from the first scrape on (issue 43). */
START_TEST(test_first_scrape_has_the_rank)
{
	static struct run run;

	NEED_BPF();
	if (start_serve(&run, NULL))
		first_scrape_ranked(&run);
	finish(&run);
}
END_TEST

/* ---- over TLS with basic auth ---------------------------------------------------- */

/* A certificate for 127.0.0.1, a bcrypt hash of PASSWORD, a web config with both. */
static char *make_web_config(struct run *run)
{
	char *key = test_path("serve.key"), *web = test_path("web.yml"),
	     subject_alt[] = "subjectAltName=IP:127.0.0.1,DNS:localhost";
	char *openssl[] = { "openssl",	 "req",	    "-x509", "-newkey",	      "rsa:2048",
			    "-nodes",	 "-keyout", key,     "-out",	      run->ca,
			    "-days",	 "2",	    "-subj", "/CN=localhost", "-addext",
			    subject_alt, NULL };
	struct crypt_data data = { 0 };
	char *salt, *hash;
	FILE *file;

	char *log = test_path("openssl.log");

	ck_assert_int_eq(run_command(openssl, log, log, 60), 0);
	free(log);
	salt = crypt_gensalt_ra("$2b$", 10, NULL, 0);
	ck_assert_ptr_nonnull(salt);
	hash = crypt_r(PASSWORD, salt, &data);
	ck_assert_ptr_nonnull(hash);
	file = fopen(web, "w");
	ck_assert_ptr_nonnull(file);
	fprintf(file,
		"# serve's TLS and its one user, as docs/fleet.md makes them\n"
		"tls_server_config:\n"
		"  cert_file: %s\n"
		"  key_file: '%s'\n"
		"  min_version: TLS12\n"
		"\n"
		"basic_auth_users:\n"
		"  %s: \"%s\"   # Prometheus\n",
		run->ca, key, USER, hash);
	ck_assert_int_eq(fclose(file), 0);
	free(salt);
	free(key);
	return web;
}

/* Without credentials, with wrong ones, in plain HTTP: refused, and serve says how. */
static bool refuses_strangers(struct run *run)
{
	char *body = NULL, *headers = NULL;
	int status;

	status = https_get(run, "/metrics", "", &body, &headers);
	REQUIRE(run, status == 401, "no credentials: status %d, not 401", status);
	REQUIRE(run, headers && strcasestr(headers, "WWW-Authenticate: Basic realm=\"optrace\""),
		"a 401 without WWW-Authenticate: %s", headers ? headers : "");
	REQUIRE(run, body && !strstr(body, "optrace_"), "a 401 that shows the metrics");
	free(body);
	free(headers);
	status = https_get(run, "/metrics", USER ":wrong", &body, NULL);
	free(body);
	REQUIRE(run, status == 401, "wrong password: status %d, not 401", status);
	status = https_get(run, "/metrics", "nobody:" PASSWORD, &body, NULL);
	free(body);
	REQUIRE(run, status == 401, "unknown user: status %d, not 401", status);
	status = http_get(run->serve_port, "/metrics", &body);
	free(body);
	REQUIRE(run, status != 200, "plain HTTP answered %d on the TLS port", status);
	return true;
}

/* The descriptors and threads of process pid. */
static void resources(pid_t pid, int *fds, int *threads)
{
	char path[64], *status;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	*fds = 0;
	while (dir && readdir(dir))
		(*fds)++;
	if (dir)
		closedir(dir);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = read_file(path);
	*threads = status && strstr(status, "Threads:") ? atoi(strstr(status, "Threads:") + 8) : 0;
	free(status);
}

static int connect_serve(struct run *run)
{
	struct sockaddr_in address = { .sin_family = AF_INET,
				       .sin_port = htons((uint16_t)run->serve_port),
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof(address))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Garbage, a huge header, an absurd path and 200 half-open connections
 * (nothing sent, or half a request): serve stays up and bounded, and
 * answers a proper scrape once they are gone or timed out.
 */
static bool survives_abuse(struct run *run)
{
	static const char *const garbage[] = {
		"\x16\x03\x01\xff\xff garbage\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\n",
		"GET /../../../../etc/shadow%00 HTTP/1.1\r\n\r\n",
		"\x00\x01\x02\x03",
	};
	int fds[200], before_fds, before_threads, after_fds, after_threads, status = 0;
	char huge[80 * 1024], *body = NULL;

	resources(run->serve, &before_fds, &before_threads);
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		int fd = connect_serve(run);

		REQUIRE(run, fd >= 0, "serve refuses connections");
		(void)!write(fd, garbage[i], strlen(garbage[i]) + (i == 3 ? 4 : 0));
		close(fd);
	}
	memset(huge, 'a', sizeof(huge));
	memcpy(huge, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
	{
		int fd = connect_serve(run);

		REQUIRE(run, fd >= 0, "serve refuses connections");
		(void)!write(fd, huge, sizeof(huge));
		close(fd);
	}
	for (int i = 0; i < 200; i++) {
		fds[i] = connect_serve(run);
		if (fds[i] >= 0 && i % 2)
			(void)!write(fds[i], "\x16\x03\x01\x00", 4); /* half a TLS hello */
	}
	resources(run->serve, &after_fds, &after_threads);
	REQUIRE(run, after_fds <= before_fds + 64 + 8 && after_threads <= before_threads + 2,
		"200 half-open connections took %d descriptors and %d threads (from %d and %d)",
		after_fds, after_threads, before_fds, before_threads);
	for (int i = 0; i < 200; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* within the connection timeout (10 s) the slots are free again */
	for (int waited_ms = 0; status != 200 && waited_ms < 15000; waited_ms += 500) {
		free(body);
		body = NULL;
		status = serve_get(run, "/metrics", &body);
		if (status != 200)
			usleep(500 * 1000);
	}
	REQUIRE(run, status == 200 && body && strstr(body, "optrace_processes"),
		"serve does not answer a scrape after the abuse (status %d)", status);
	free(body);
	REQUIRE(run, waitpid(run->serve, &status, WNOHANG) == 0, "serve died");
	return true;
}

/* A web config serve must refuse at its start, saying file:line. */
static void refuses_bad_config(const char *text, const char *says)
{
	char *path = test_path("bad.yml"), *err = test_path("bad.err"), *said, where[600];
	char *argv[] = { OPTRACE, "serve", "--listen", "127.0.0.1:0", "--web-config", path, NULL };
	FILE *file = fopen(path, "w");
	int status;

	ck_assert_ptr_nonnull(file);
	fputs(text, file);
	ck_assert_int_eq(fclose(file), 0);
	status = run_command(argv, NULL, err, 30);
	said = read_file(err);
	snprintf(where, sizeof(where), "%s%s", path, says);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1 && said && strstr(said, where),
		      "a bad web config (%s): status %d, said: %s", says, status, said);
	free(said);
	free(path);
	free(err);
}

START_TEST(test_prometheus_scrapes_serve_over_tls)
{
	static struct run run;

	NEED_BPF();
	if (!have_program("prometheus") || !have_program("openssl") || !have_program("curl"))
		SKIP_TEST("Prometheus, openssl or curl is not installed (scripts/deps.sh installs "
			  "them)");
	snprintf(run.ca, sizeof(run.ca), "%s/serve.crt", test_dir);
	run.web_config = make_web_config(&run);
	run.prometheus_port = free_port();
	if (start_serve(&run, NULL) && refuses_strangers(&run) && scraped_and_compared(&run))
		survives_abuse(&run);
	finish(&run);
	refuses_bad_config("tls_server_config:\n  cert_file: x\n  client_auth_type: Any\n", ":3:");
	refuses_bad_config("basic_auth_users:\n  prometheus: plaintext\n", ":2:");
	refuses_bad_config("http_server_config:\n  http2: true\n", ":1:");
	/* A cost that would hold every scrape (2^31 rounds: minutes a check). */
	refuses_bad_config("basic_auth_users:\n  prometheus: "
			   "$2y$31$abcdefghijklmnopqrstuu5MZ0mYbZ4qOAMmEUVWuVYIRv6c9WEq6\n",
			   ":2: the password hash of prometheus costs more than 12");
	free((char *)run.web_config);
}
END_TEST

/*
 * Issue 41: a web config that another user could change (written by all,
 * owned by nobody, or reached through nobody's link) says who may scrape:
 * serve refuses it at its start, whatever it holds; root's own, 0644, is
 * read.
 */
START_TEST(test_web_config_others_can_change)
{
	char *path = test_path("web.yml"), *link_path = test_path("link.yml");
	char *err = test_path("err.txt"), *said;
	char *argv[] = { OPTRACE, "serve", "--listen", "127.0.0.1:0", "--web-config", path, NULL };
	static const struct {
		mode_t mode;
		bool nobody_owns;  /* the file */
		bool nobody_links; /* serve is given nobody's link to it */
		const char *says;
	} cases[] = {
		{ 0666, false, false, "group or others may write it" },
		{ 0620, false, false, "group or others may write it" },
		{ 0644, true, false, "it is not root's" },
		{ 0644, false, true, "is a link of another user's (uid 65534)" },
	};
	FILE *file;

	NEED_BPF();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(path);
		unlink(link_path);
		file = fopen(path, "w");
		ck_assert_ptr_nonnull(file);
		fputs("# no TLS, no users: any client may scrape\n", file);
		ck_assert_int_eq(fclose(file), 0);
		ck_assert_int_eq(chmod(path, cases[i].mode), 0);
		if (cases[i].nobody_owns)
			ck_assert_int_eq(chown(path, 65534, 65534), 0);
		argv[5] = path;
		if (cases[i].nobody_links) {
			ck_assert_int_eq(symlink(path, link_path), 0);
			ck_assert_int_eq(lchown(link_path, 65534, 65534), 0);
			argv[5] = link_path;
		}
		ck_assert_int_eq(WEXITSTATUS(run_command(argv, NULL, err, 30)), 1);
		said = read_file(err);
		ck_assert_msg(said && strstr(said, argv[5]) && strstr(said, cases[i].says),
			      "case %zu: %s", i, said);
		free(said);
	}
	free(path);
	free(link_path);
	free(err);
}
END_TEST

/* A connection to serve from 127.0.0.SOURCE (another address, as far as serve can tell). */
static int connect_from(struct run *run, int source)
{
	struct sockaddr_in from = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)source) };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)run->serve_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && (bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
			connect(fd, (struct sockaddr *)&to, sizeof(to)))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether serve closed fd: its end read, or the connection reset. */
static bool closed_by_peer(int fd)
{
	char byte;
	ssize_t got = recv(fd, &byte, 1, MSG_DONTWAIT);

	return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

#define SLOW_ADDRESSES 10
#define SLOW_PER_ADDRESS 14
#define SLOW_WITHIN_S 60

/*
 * Issue 41: 14 slow clients from each of 10 addresses, each sending a
 * header line every 2 s and never ending its request (what held all of
 * serve's slots for good: its timeout was an idle one). Scrapes made
 * meanwhile are answered, and serve closes every slow one (its deadline
 * is for a whole request; well within SLOW_WITHIN_S).
 */
static bool slow_clients_leave_room(struct run *run)
{
	int fds[SLOW_ADDRESSES * SLOW_PER_ADDRESS], open_count = 0, scrapes = 0, status;
	char *body = NULL;

	for (int i = 0; i < SLOW_ADDRESSES * SLOW_PER_ADDRESS; i++) {
		fds[i] = connect_from(run, 2 + i / SLOW_PER_ADDRESS);
		REQUIRE(run, fds[i] >= 0, "cannot connect from 127.0.0.%d: %s",
			2 + i / SLOW_PER_ADDRESS, strerror(errno));
		(void)!send(fds[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32, MSG_NOSIGNAL);
	}
	for (int second = 0; second < SLOW_WITHIN_S; second++) {
		open_count = 0;
		for (int i = 0; i < SLOW_ADDRESSES * SLOW_PER_ADDRESS; i++) {
			if (fds[i] < 0)
				continue;
			if (closed_by_peer(fds[i]) ||
			    (second % 2 == 0 &&
			     send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0)) {
				close(fds[i]);
				fds[i] = -1;
				continue;
			}
			open_count++;
		}
		if (second % 2 == 1 && scrapes < 6) {
			status = http_get(run->serve_port, "/metrics", &body);
			REQUIRE(run, status == 200 && body && strstr(body, "optrace_processes"),
				"scrape %d among %d slow clients: status %d", scrapes + 1,
				open_count, status);
			free(body);
			body = NULL;
			scrapes++;
		}
		if (!open_count && scrapes == 6)
			break;
		sleep(1);
	}
	for (int i = 0; i < SLOW_ADDRESSES * SLOW_PER_ADDRESS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	REQUIRE(run, open_count == 0, "%d slow clients still held after %d s", open_count,
		SLOW_WITHIN_S);
	REQUIRE(run, waitpid(run->serve, &status, WNOHANG) == 0, "serve died");
	return true;
}

START_TEST(test_slow_clients_leave_room)
{
	static struct run run;

	NEED_BPF();
	if (start_serve(&run, NULL))
		slow_clients_leave_room(&run);
	finish(&run);
}
END_TEST

#define FLOODERS 3
#define FLOOD_S 12

/* One flooder: wrong passwords as fast as curl goes, for FLOOD_S; exits 1 if one is let in. */
static void flood(struct run *run)
{
	char url[128], status_path[64];
	char *argv[] = { "curl",	 "-s",		"-o", "/dev/null", "-w",
			 "%{http_code}", "--max-time",	"5",  "--cacert",  run->ca,
			 "-u",		 USER ":wrong", url,  NULL };
	time_t end = time(NULL) + FLOOD_S;

	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", run->serve_port);
	snprintf(status_path, sizeof(status_path), "%s/flood.%d", test_dir, getpid());
	while (time(NULL) < end) {
		char *text;

		run_command(argv, status_path, "/dev/null", 30);
		text = read_file(status_path);
		if (text && atoi(text) == 200)
			_exit(1);
		free(text);
	}
	_exit(0);
}

/*
 * Issue 41: a flood of wrong passwords (bcrypt checks, tens of ms each)
 * while Prometheus scrapes with the right one: every scrape is answered,
 * no wrong password is let in, serve stays up. The checks run on a
 * thread of their own (session/http_server.c); bench/serve_flood.sh
 * measures the scrapes' time with and without the flood.
 */
static bool scrapes_through_a_flood(struct run *run)
{
	pid_t flooders[FLOODERS];
	int status;

	for (int i = 0; i < FLOODERS; i++) {
		flooders[i] = fork();
		REQUIRE(run, flooders[i] >= 0, "fork: %s", strerror(errno));
		if (!flooders[i])
			flood(run);
	}
	for (int i = 0; i < 5; i++) {
		char *body = NULL;

		sleep(2);
		status = https_get(run, "/metrics", USER ":" PASSWORD, &body, NULL);
		REQUIRE(run, status == 200 && body && strstr(body, "optrace_processes"),
			"scrape %d during a flood of wrong passwords: status %d", i + 1, status);
		free(body);
	}
	for (int i = 0; i < FLOODERS; i++) {
		REQUIRE(run, waitpid(flooders[i], &status, 0) == flooders[i], "a flooder lost: %s",
			strerror(errno));
		REQUIRE(run, WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"a wrong password was let in (flooder status %d)", status);
	}
	REQUIRE(run, waitpid(run->serve, &status, WNOHANG) == 0, "serve died");
	return true;
}

START_TEST(test_password_flood_leaves_scrapes)
{
	static struct run run;

	NEED_BPF();
	if (!have_program("openssl") || !have_program("curl"))
		SKIP_TEST("openssl or curl is not installed (scripts/deps.sh installs them)");
	snprintf(run.ca, sizeof(run.ca), "%s/serve.crt", test_dir);
	run.web_config = make_web_config(&run);
	if (start_serve(&run, NULL))
		scrapes_through_a_flood(&run);
	finish(&run);
	free((char *)run.web_config);
}
END_TEST

/* Polls the PromQL scalar until it passes the test within seconds; its last value. */
static double wait_value(struct run *run, const char *promql, bool (*test)(double), int seconds)
{
	double value = -1;

	for (int waited_ms = 0; waited_ms < seconds * 1000; waited_ms += 250) {
		value = scalar(run, promql);
		if (test(value))
			break;
		usleep(250 * 1000);
	}
	return value;
}

static bool present(double value)
{
	return value > 0;
}

static bool stuck(double value)
{
	return value > 2;
}

static bool moving(double value)
{
	return value >= 0 && value < 1;
}

/*
 * optrace_oldest_open_seconds rises while the demo is stuck (an Arange
 * point spins, demo.sort waits for it) and falls when it goes on.
 */
static bool gauge_follows_the_stall(struct run *run, pid_t demo)
{
	char operation[128], point[128], seen[128];
	double value;

	REQUIRE(run, start_prometheus(run), "Prometheus did not start within %d s", READY_S);
	snprintf(seen, sizeof(seen), "count(optrace_operations_total{pid=\"%d\"})", demo);
	snprintf(operation, sizeof(operation),
		 "optrace_oldest_open_seconds{pid=\"%d\",kind=\"operation\"}", demo);
	snprintf(point, sizeof(point),
		 "optrace_oldest_open_seconds{pid=\"%d\",kind=\"task_point\"}", demo);
	/* its first stall began before serve attached: let it go, and see it traced */
	kill(demo, SIGUSR1);
	REQUIRE(run, present(wait_value(run, seen, present, READY_S)),
		"no series of the demo within %d s", READY_S);
	REQUIRE(run, moving(wait_value(run, operation, moving, SCRAPED_S)),
		"the gauge is not low while the demo runs");
	kill(demo, SIGUSR2); /* the next pass stalls, traced */
	value = wait_value(run, operation, stuck, SCRAPED_S);
	REQUIRE(run, stuck(value), "the operation gauge did not rise past 2 s (%g)", value);
	value = scalar(run, point);
	REQUIRE(run, value > 1, "the task point gauge did not rise (%g)", value);
	kill(demo, SIGUSR1);
	value = wait_value(run, operation, moving, SCRAPED_S);
	REQUIRE(run, moving(value), "the gauge did not fall once the demo went on (%g)", value);
	return true;
}

START_TEST(test_oldest_open_gauge)
{
	static struct run run;
	char *log = test_path("demo.log");
	char *demo_argv[] = { DEMO, "-w", "hang",    "--forever", "--pause",
			      "50", "-q", "--truth", "/dev/null", NULL };
	pid_t demo;

	NEED_BPF();
	if (!have_program("prometheus"))
		SKIP_TEST("Prometheus is not installed (scripts/deps.sh installs it)");
	run.prometheus_port = free_port();
	if (start_serve(&run, NULL)) {
		demo = start(demo_argv, log);
		gauge_follows_the_stall(&run, demo);
		reap_within(demo, SIGTERM, GRACE_S);
	}
	finish(&run);
	free(log);
}
END_TEST

/* docs/fleet.md's alerting rule on the gauge: promtool accepts it. */
START_TEST(test_stuck_rule_of_the_docs)
{
	char *doc = read_file(OPTRACE_SOURCE_DIR "/docs/fleet.md"), *rules = test_path("rules.yml");
	char *out = test_path("promtool.txt"), *text, *start, *end;
	char *argv[] = { "promtool", "check", "rules", rules, NULL };
	FILE *file;

	if (!have_program("promtool"))
		SKIP_TEST("promtool is not installed (scripts/deps.sh installs it)");
	ck_assert_ptr_nonnull(doc);
	start = strstr(doc, "```yaml\n# /etc/prometheus/rules/optrace.yml");
	ck_assert_ptr_nonnull(start);
	start = strchr(start, '\n') + 1;
	end = strstr(start, "```");
	ck_assert_ptr_nonnull(end);
	file = fopen(rules, "w");
	ck_assert_ptr_nonnull(file);
	fwrite(start, 1, (size_t)(end - start), file);
	ck_assert_int_eq(fclose(file), 0);
	ck_assert_msg(run_command(argv, out, out, 30) == 0, "%s", (text = read_file(out)));
	text = read_file(out);
	ck_assert_msg(text && strstr(text, "SUCCESS: 1 rules found"), "%s", text ? text : "");
	free(text);
	free(doc);
	free(rules);
	free(out);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("serve");
	TCase *tc = tcase_create("prometheus");

	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_prometheus_scrapes_serve);
	tcase_add_test(tc, test_retention);
	tcase_add_test(tc, test_first_scrape_has_the_rank);
	tcase_add_test(tc, test_prometheus_scrapes_serve_over_tls);
	tcase_add_test(tc, test_web_config_others_can_change);
	tcase_add_test(tc, test_oldest_open_gauge);
	tcase_add_test(tc, test_stuck_rule_of_the_docs);
	tcase_add_test(tc, test_slow_clients_leave_room);
	tcase_add_test(tc, test_password_flood_leaves_scrapes);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
