/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU activity of a capture (or of an OPTRACE_GPU_FILE), indexed for
 * attribution. CUPTI delivers records late, in buffers, in no global order:
 * a kernel may reach optrace seconds after the operation that launched it
 * ended. So the GPU records are read first, in a pass of their own, and the
 * profile model then meets each launch (an API call: thread and time) in
 * its thread's own order, while the operation or task open on that thread
 * is still alive: kernel → correlation id → launch → innermost open frame.
 */
#ifndef OPTRACE_MODEL_GPU_INDEX_H
#define OPTRACE_MODEL_GPU_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

#define GPU_NO_LAUNCH SIZE_MAX

/* A kernel, copy or memset: what ran on the device. */
struct gpu_activity {
	uint32_t tgid;
	uint32_t correlation_id;
	uint32_t runtime_correlation_id; /* a copy made by the driver for a runtime call */
	uint8_t kind;			 /* OPTRACE_GPU_REC_KERNEL, _MEMCPY or _MEMSET */
	uint8_t copy_kind;		 /* a copy's CUpti_ActivityMemcpyKind */
	bool time_invalid;		 /* CUPTI gave no usable times: both are 0 */
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t name_id; /* a kernel's; 0: no name */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes; /* copies and memsets */
	int32_t grid[3];
	int32_t block[3];
	size_t launch; /* index in launches, or GPU_NO_LAUNCH */
};

/* A CUDA runtime or driver call that may have launched activity. */
struct gpu_launch {
	uint32_t tgid;
	uint32_t tid;
	uint32_t correlation_id;
	uint32_t cbid;
	uint8_t api_kind; /* enum optrace_gpu_api_kind */
	uint64_t start_ns;
	uint64_t end_ns;
	size_t first_activity; /* its activities: gpu_launch_activity(index, launch, 0 ..) */
	uint32_t activity_count;
};

/* A thread's launches, in time order: launches[first .. first + count). */
struct gpu_thread_launches {
	size_t first;
	size_t count;
};

struct gpu_index_stats {
	uint64_t kernels, copies, memsets, launches, syncs;
	uint64_t dropped;	    /* records CUPTI dropped (its activity buffers), as said */
	uint64_t dropped_launches;  /* launches the collector's API callback could not mark */
	uint64_t malformed;	    /* records too short or of a version not read */
	uint64_t invalid_times;	    /* activities whose times CUPTI gave as 0 or INT64_MIN */
	uint64_t unlaunched;	    /* activities whose API record was not captured */
	uint64_t duplicate_apis;    /* runtime and driver records with one correlation id */
	uint64_t duplicate_records; /* the same record twice (a capture's and a file's) */
};

struct gpu_index {
	struct gpu_activity *activities;
	size_t activity_count;
	size_t activity_capacity;
	struct gpu_launch *launches;
	size_t launch_count;
	size_t launch_capacity;
	size_t *by_launch;    /* activity indices, each launch's side by side, once sealed */
	struct idmap names;   /* (tgid, name id) -> char * */
	struct idmap threads; /* (tgid, tid) -> struct gpu_thread_launches, once sealed */
	struct gpu_index_stats stats;
	unsigned int sources; /* captures and files read: duplicates need two */
	bool sealed;
	/* How reading the last OPTRACE_GPU_FILE ended: an enum gpu_file_end (gpufile.h). */
	int file_end;
};

void gpu_index_init(struct gpu_index *index);
void gpu_index_free(struct gpu_index *index);

/* One optrace_gpu record (include/optrace/gpu.h) of process tgid. 0 or -ENOMEM. */
int gpu_index_add(struct gpu_index *index, uint32_t tgid, const void *record, size_t size);
/* Kernel name name_id of process tgid. 0 or -ENOMEM. */
int gpu_index_add_name(struct gpu_index *index, uint32_t tgid, uint32_t name_id, const char *name);

/*
 * A capture's record of type RECORD_GPU, RECORD_GPU_NAME or RECORD_GPU_DROPPED
 * (others are ignored), as the replay reads them in a pass of their own. 0
 * or -ENOMEM; a malformed one is counted.
 */
int gpu_index_add_record(struct gpu_index *index, unsigned int type, const void *data, size_t size);

/*
 * Reads an OPTRACE_GPU_FILE: every record that checks, none of a damaged
 * part. Returns their count, with why (if not NULL) saying in sentences
 * what was damaged, missing, cut or ignored ("" when nothing was) and
 * index->file_end how reading ended; or a negative errno (a file that is
 * not a GPU file, of a newer version or with a damaged header: -EPROTO,
 * -EPROTONOSUPPORT, -EBADMSG), with why saying what is wrong.
 */
long gpu_index_read_file(struct gpu_index *index, const char *path, char *why, size_t why_size);

/* True if path starts like an OPTRACE_GPU_FILE. */
bool gpu_index_is_file(const char *path);

/*
 * After the last add: links each activity to its launch and orders each
 * thread's launches by time. 0 or -ENOMEM.
 */
int gpu_index_seal(struct gpu_index *index);

/* Activity i (< launch->activity_count) of a launch, once sealed. */
const struct gpu_activity *gpu_launch_activity(const struct gpu_index *index,
					       const struct gpu_launch *launch, uint32_t i);

/* A thread's launches, or NULL if it made none. */
const struct gpu_thread_launches *gpu_index_thread(const struct gpu_index *index, uint32_t tgid,
						   uint32_t tid);

/* The kernel's name, "memcpy HtoD" and such for copies, "memset"; never NULL. */
const char *gpu_activity_name(const struct gpu_index *index, const struct gpu_activity *activity);

#endif /* OPTRACE_MODEL_GPU_INDEX_H */
