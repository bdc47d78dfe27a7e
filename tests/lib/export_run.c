// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record of the demo and optrace export, run for the tests of
 * optrace export: each must succeed, or the test fails with its stderr.
 */
#include <stdlib.h>

#include "export_run.h"
#include "testlib.h"

const char *const export_legion_options[] = { "--legion", NULL };
const char *const export_helper_options[] = { "--legion", "--show-helpers", NULL };
const char *const export_v1007_options[] = { "--legion", "--legion-version", "1007", NULL };
const char *const export_python_options[] = { "--legion", "--python", NULL };
const char *const export_chrome_options[] = { "--chrome", NULL };
const char *const export_chrome_helper_options[] = { "--chrome", "--show-helpers", NULL };

void run_ok(char *const argv[])
{
	char *err_path = test_path("stderr.txt"), *text;
	int status = run_command(argv, NULL, err_path, 120);

	text = read_file(err_path);
	ck_assert_msg(status == 0, "%s %s failed (status %d):\n%.2000s", argv[0], argv[1], status,
		      text ? text : "");
	free(text);
	free(err_path);
}

void record_demo(const char *const demo_args[], const char *capture, const char *truth)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "record";
	argv[argc++] = "-q";
	argv[argc++] = "-o";
	argv[argc++] = (char *)capture;
	argv[argc++] = "--";
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = (char *)truth;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	run_ok(argv);
}

void run_export(const char *const options[], const char *out, const char *capture)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "export";
	for (int i = 0; options[i]; i++)
		argv[argc++] = (char *)options[i];
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	argv[argc++] = (char *)capture;
	argv[argc] = NULL;
	run_ok(argv);
}
