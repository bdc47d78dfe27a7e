/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Running optrace record and export for the tests of optrace export (test_export*.c). */
#ifndef OPTRACE_TEST_EXPORT_RUN_H
#define OPTRACE_TEST_EXPORT_RUN_H

/* Runs argv (within 120 s), which must succeed; its stderr is shown if not. */
void run_ok(char *const argv[]);

/* optrace record -q -o CAPTURE -- optrace-demo DEMO_ARGS... --truth TRUTH -q */
void record_demo(const char *const demo_args[], const char *capture, const char *truth);

/* optrace export OPTIONS... -o OUT CAPTURE */
void run_export(const char *const options[], const char *out, const char *capture);

/*
 * The options of the exports a capture is checked with: Legion Prof logs
 * plain, with --show-helpers, of version 1007 and with --python; Chrome
 * trace JSON plain and with --show-helpers.
 */
extern const char *const export_legion_options[];
extern const char *const export_helper_options[];
extern const char *const export_v1007_options[];
extern const char *const export_python_options[];
extern const char *const export_chrome_options[];
extern const char *const export_chrome_helper_options[];

#endif /* OPTRACE_TEST_EXPORT_RUN_H */
