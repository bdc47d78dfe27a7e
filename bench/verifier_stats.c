// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the verifier costs, program by program (veristat's figures, which
 * libbpf 1.1's tools lack): each program of a BPF object is loaded alone,
 * with the verifier's statistics (log level 4), and its wall time, processed
 * instructions and states are printed. The start-up of stat and record is
 * mostly this (docs/bench.md, "Start-up").
 */
#include <argp.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char log_buffer[1 << 20];

static const char doc[] = "Load each program of a BPF object alone; print the verifier's cost.\n"
			  "\n"
			  "EXAMPLES:\n"
			  "    verifier_stats .output/bpf/stat.bpf.o         # every program\n"
			  "    verifier_stats .output/bpf/stat.bpf.o batch   # one\n";

static const struct argp_option options[] = { {} };

static struct {
	const char *object;
	const char *only;
} env;

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_ARG:
		if (!env.object)
			env.object = arg;
		else if (!env.only)
			env.only = arg;
		else
			argp_usage(state);
		return 0;
	case ARGP_KEY_END:
		if (!env.object)
			argp_usage(state);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int quiet_print(enum libbpf_print_level level, const char *format, va_list args)
{
	(void)level;
	(void)format;
	(void)args;
	return 0;
}

/* The number after label in the verifier's statistics, or -1. */
static long stat_after(const char *label)
{
	const char *at = strstr(log_buffer, label);

	return at ? strtol(at + strlen(label), NULL, 10) : -1;
}

/* Loads the object with only the program named name; prints one row. */
static int measure(const char *name)
{
	struct bpf_object *obj = bpf_object__open_file(env.object, NULL);
	struct timespec start, end;
	struct bpf_program *prog;
	int err;

	if (!obj) {
		fprintf(stderr, "verifier_stats: cannot open %s: %s\n", env.object,
			strerror(errno));
		return -1;
	}
	bpf_object__for_each_program (prog, obj) {
		bool wanted = !strcmp(bpf_program__name(prog), name);

		bpf_program__set_autoload(prog, wanted);
		if (wanted) {
			bpf_program__set_log_level(prog, 4);
			bpf_program__set_log_buf(prog, log_buffer, sizeof(log_buffer));
		}
	}
	log_buffer[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &start);
	err = bpf_object__load(obj);
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (err)
		printf("%-20s %s\n", name, "refused (libbpf -v: bpftool prog load)");
	else
		printf("%-20s %9.1f %10.1f %10ld %8ld %7ld\n", name,
		       ((double)(end.tv_sec - start.tv_sec) * 1e3 +
			(double)(end.tv_nsec - start.tv_nsec) / 1e6),
		       (double)stat_after("verification time ") / 1e3, stat_after("processed "),
		       stat_after("total_states "), stat_after("peak_states "));
	bpf_object__close(obj);
	return err;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options, .parser = parse_arg, .args_doc = "OBJECT [PROGRAM]", .doc = doc
	};
	struct bpf_object *obj;
	struct bpf_program *prog;
	int err = argp_parse(&argp, argc, argv, 0, NULL, NULL), failed = 0;

	if (err)
		return err;
	libbpf_set_print(quiet_print);
	obj = bpf_object__open_file(env.object, NULL);
	if (!obj) {
		fprintf(stderr, "verifier_stats: cannot open %s: %s\n", env.object,
			strerror(errno));
		return 1;
	}
	printf("%-20s %9s %10s %10s %8s %7s\n", "program", "load ms", "verify ms", "insns",
	       "states", "peak");
	bpf_object__for_each_program (prog, obj) {
		if (!env.only || !strcmp(bpf_program__name(prog), env.only))
			failed |= measure(bpf_program__name(prog)) != 0;
	}
	bpf_object__close(obj);
	return failed;
}
