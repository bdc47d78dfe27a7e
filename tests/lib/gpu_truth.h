/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Checking report --json's "gpu" member against a GPU fixture's truth file. */
#ifndef OPTRACE_TEST_GPU_TRUTH_H
#define OPTRACE_TEST_GPU_TRUTH_H

#include "json_read.h"

/* The JSON in the file at path (asserted valid); jv_free() it. */
struct jv *read_json_file(const char *path);

/*
 * Every line of the truth holds in gpu: "op NAME VARIANT KERNELS COPIES"
 * rows, and "outside", "unlaunched", "invalid", "dropped" totals.
 */
void check_gpu_truth(const char *truth_path, const struct jv *gpu);

/* The value of "KEY N" in the truth file, or -1. */
long gpu_truth_value(const char *truth_path, const char *key);

#endif /* OPTRACE_TEST_GPU_TRUTH_H */
