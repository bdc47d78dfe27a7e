/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * For the CUPTI unit tests: records staged in a buffer at known offsets, and
 * cuptiActivityGetNextRecord over them, as CUPTI walks its own buffers.
 */
#ifndef OPTRACE_TEST_CUPTI_RECORDS_H
#define OPTRACE_TEST_CUPTI_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

static size_t offsets[64];
static size_t record_count;

static CUptiResult fake_next(uint8_t *buf, size_t valid, CUpti_Activity **record)
{
	size_t i = 0;

	if (*record) {
		while (i < record_count && buf + offsets[i] != (uint8_t *)*record)
			i++;
		i++;
	}
	if (i >= record_count || offsets[i] >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buf + offsets[i]);
	return CUPTI_SUCCESS;
}

#endif /* OPTRACE_TEST_CUPTI_RECORDS_H */
