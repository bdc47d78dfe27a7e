// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace serve scraped by a real Prometheus (Debian's prometheus package):
 * serve -a, Prometheus scraping it every second, a demo of two processes
 * run and gone; then Prometheus' HTTP API must hold exactly the demo's own
 * ground truth, and promtool must find nothing to fix in a scrape.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
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
	char pids[64]; /* the demo's processes, as a PromQL regex: "12|13" */
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
	REQUIRE(run, http_get(run->serve_port, "/metrics", &text) == 200, "no scrape of serve");
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
	char *argv[] = { OPTRACE,	    "serve", "-a",
			 "--listen",	    listen,  retention ? "--retention" : NULL,
			 (char *)retention, NULL };

	run->serve_port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", run->serve_port);
	run->serve = start(argv, log);
	free(log);
	REQUIRE(run, wait_ready(run->serve, run->serve_port, "/metrics", READY_S),
		"serve did not answer within %d s", READY_S);
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

	REQUIRE(run, http_get(run->serve_port, "/metrics", &text) == 200 && text,
		"no scrape of serve");
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

int main(void)
{
	Suite *suite = suite_create("serve");
	TCase *tc = tcase_create("prometheus");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_prometheus_scrapes_serve);
	tcase_add_test(tc, test_retention);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
