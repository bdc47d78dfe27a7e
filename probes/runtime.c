// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The runtime's identity: ABI version, rank and rank count, announced by the
 * rt_init probe and kept in the exported symbol optrace_runtime for tracers
 * that attach later.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <optrace/optrace.h>

#include "optrace_probes.h"

/* Used through a local name: see optrace_batches in batch.c (copy relocations). */
static struct optrace_runtime_info runtime = {
	.abi_version = OPTRACE_ABI_VERSION,
	.rank = 0,
	.rank_count = 1,
};
extern struct optrace_runtime_info optrace_runtime __attribute__((alias("runtime")));

/* Launchers' variables, most specific first. */
static const char *const rank_variables[] = {
	"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID",
};

static const char *const rank_count_variables[] = {
	"OMPI_COMM_WORLD_SIZE",
	"PMI_SIZE",
	"MV2_COMM_WORLD_SIZE",
	"SLURM_NTASKS",
};

static int int_from_environment(const char *const *names, unsigned int count, int fallback)
{
	for (unsigned int i = 0; i < count; i++) {
		const char *text = getenv(names[i]);
		char *end;
		long value;

		if (!text || !*text)
			continue;
		errno = 0;
		value = strtol(text, &end, 10);
		if (errno || *end || value < 0 || value > INT_MAX)
			continue;
		return (int)value;
	}
	return fallback;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void runtime_from_environment(void)
{
	runtime.rank = int_from_environment(rank_variables, ARRAY_SIZE(rank_variables), 0);
	runtime.rank_count =
		int_from_environment(rank_count_variables, ARRAY_SIZE(rank_count_variables), 1);
}

__attribute__((constructor)) static void optrace_load(void)
{
	runtime_from_environment();
}

void optrace_rt_init(int rank, int rank_count)
{
	runtime_from_environment();
	if (rank >= 0)
		runtime.rank = rank;
	if (rank_count > 0)
		runtime.rank_count = rank_count;
	runtime.initialized = 1;
	if (OPTRACE_RT_INIT_ENABLED()) {
		int32_t announced_rank = runtime.rank, announced_count = runtime.rank_count;

		/* In registers: a probe argument that names a local symbol reads nowhere. */
		__asm__("" : "+r"(announced_rank), "+r"(announced_count));
		OPTRACE_RT_INIT(OPTRACE_ABI_VERSION, announced_rank, announced_count);
	}
}
