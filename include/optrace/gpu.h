/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU records of liboptrace-cupti (provider optrace_gpu), version 1.
 *
 * liboptrace-cupti turns each completed CUPTI activity record into one of
 * these packed, fixed-size records and passes a pointer to it in a USDT
 * probe (or writes it to the OPTRACE_GPU_FILE file). Every record starts
 * with struct optrace_gpu_head: a tracer checks type, version and size
 * before reading the rest. Times are CLOCK_MONOTONIC nanoseconds, the clock
 * of bpf_ktime_get_ns(); a record whose CUPTI times were 0 or INT64_MIN
 * (or ended before it started) has OPTRACE_GPU_F_TIME_INVALID set and both
 * times 0. docs/cupti.md documents every field.
 *
 * Fields are only ever appended: a new field bumps the record's version and
 * its size, and a reader takes the first fields of a longer record.
 */
#ifndef OPTRACE_GPU_H
#define OPTRACE_GPU_H

#ifndef __bpf__ /* BPF programs bring the fixed-width types themselves */
#include <stdbool.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define OPTRACE_GPU_RECORD_VERSION 1

/* optrace_gpu_head.type */
enum optrace_gpu_record_type {
	OPTRACE_GPU_REC_KERNEL = 1,	 /* struct optrace_gpu_kernel */
	OPTRACE_GPU_REC_MEMCPY = 2,	 /* struct optrace_gpu_memcpy */
	OPTRACE_GPU_REC_MEMSET = 3,	 /* struct optrace_gpu_memset */
	OPTRACE_GPU_REC_API = 4,	 /* struct optrace_gpu_api */
	OPTRACE_GPU_REC_SYNC = 5,	 /* struct optrace_gpu_sync */
	OPTRACE_GPU_REC_KERNEL_NAME = 6, /* struct optrace_gpu_kernel_name (file only) */
	OPTRACE_GPU_REC_DROPPED = 7,	 /* struct optrace_gpu_dropped (file only) */
	OPTRACE_GPU_REC__COUNT
};

/* optrace_gpu_head.flags */
#define OPTRACE_GPU_F_TIME_INVALID 0x1u /* CUPTI gave no usable start/end: both are 0 */

struct optrace_gpu_head {
	uint8_t type;	 /* enum optrace_gpu_record_type */
	uint8_t version; /* OPTRACE_GPU_RECORD_VERSION */
	uint16_t size;	 /* bytes of the whole record, this head included */
	uint32_t flags;	 /* OPTRACE_GPU_F_* */
} __attribute__((packed));

/* A kernel ran (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL or _KERNEL). */
struct optrace_gpu_kernel {
	struct optrace_gpu_head head;
	uint64_t start_ns;	 /* monotonic ns the kernel started on the device */
	uint64_t end_ns;	 /* monotonic ns it ended */
	uint32_t correlation_id; /* the launching runtime/driver API call's correlation id */
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	int32_t grid_x, grid_y, grid_z;
	int32_t block_x, block_y, block_z;
	int32_t static_shared_bytes;  /* static shared memory per block */
	int32_t dynamic_shared_bytes; /* dynamic shared memory per block */
	uint16_t registers_per_thread;
	uint8_t launch_type; /* CUpti_ActivityLaunchType: 0 regular, 1 cooperative, ... */
	uint8_t pad;
	uint32_t name_id; /* see the kernel_name probe; 0: no name */
	int64_t grid_id;  /* unique per device and context */
} __attribute__((packed));

/* A memory copy (CUPTI_ACTIVITY_KIND_MEMCPY). */
struct optrace_gpu_memcpy {
	struct optrace_gpu_head head;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint32_t correlation_id;
	uint32_t runtime_correlation_id; /* the runtime call, when the driver made the copy */
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint8_t copy_kind; /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, ... */
	uint8_t src_kind;  /* CUpti_ActivityMemoryKind of the source: 1 pageable, 2 pinned, 3 device
			    */
	uint8_t dst_kind;  /* same, of the destination */
	uint8_t cupti_flags; /* CUpti_ActivityFlag bits (e.g. 1: asynchronous) */
} __attribute__((packed));

/* A memory set (CUPTI_ACTIVITY_KIND_MEMSET). */
struct optrace_gpu_memset {
	struct optrace_gpu_head head;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint32_t correlation_id;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t value;	      /* the byte value set */
	uint16_t memory_kind; /* CUpti_ActivityMemoryKind of the memory set */
	uint16_t cupti_flags; /* CUpti_ActivityFlag bits (e.g. 1: asynchronous) */
} __attribute__((packed));

/* optrace_gpu_api.api_kind */
enum optrace_gpu_api_kind {
	OPTRACE_GPU_API_RUNTIME = 0, /* cbid is a CUpti_runtime_api_trace_cbid */
	OPTRACE_GPU_API_DRIVER = 1,  /* cbid is a CUpti_driver_api_trace_cbid */
};

/* A CUDA runtime or driver API call (CUPTI_ACTIVITY_KIND_RUNTIME / _DRIVER). */
struct optrace_gpu_api {
	struct optrace_gpu_head head;
	uint64_t start_ns; /* monotonic ns the call entered */
	uint64_t end_ns;   /* monotonic ns it returned */
	uint32_t correlation_id;
	uint32_t cbid;	  /* which function */
	uint32_t pid;	  /* process id */
	uint32_t tid;	  /* thread id as CUPTI reports it (the kernel tid on Linux) */
	uint32_t result;  /* the call's return value (cudaError_t / CUresult) */
	uint8_t api_kind; /* enum optrace_gpu_api_kind */
	uint8_t pad[3];
} __attribute__((packed));

/* A host wait on the GPU (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION). */
struct optrace_gpu_sync {
	struct optrace_gpu_head head;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t correlation_id; /* the API call that synchronized */
	uint32_t sync_kind;	 /* CUpti_ActivitySynchronizationType: 1 event sync, 2 stream wait
				    event, 3 stream sync, 4 context sync */
	uint32_t context_id;
	uint32_t stream_id; /* CUPTI_SYNCHRONIZATION_INVALID_VALUE (~0) if none */
	uint32_t event_id;  /* the CUDA event, or ~0 if none */
	uint32_t result;
} __attribute__((packed));

/* File only (the kernel_name probe carries id and pointer instead). */
struct optrace_gpu_kernel_name {
	struct optrace_gpu_head head; /* size = 16 + length */
	uint32_t name_id;
	uint32_t length; /* bytes of name that follow; no NUL */
	char name[];
} __attribute__((packed));

/* File only: CUPTI dropped this many records (the dropped probe's argument). */
struct optrace_gpu_dropped {
	struct optrace_gpu_head head;
	uint64_t count;
} __attribute__((packed));

/*
 * The OPTRACE_GPU_FILE (docs/cupti.md), version 2: the header, then blocks,
 * each a struct optrace_gpu_file_block and its payload: records back to
 * back, or in the last block (written when the file is closed) a struct
 * optrace_gpu_file_end. The header and every block carry CRC-32s (zlib's
 * crc32()), so that a reader finds any damage. Version 1 (32-byte header,
 * then records, nothing checked) is still read.
 */
#define OPTRACE_GPU_FILE_MAGIC "OPTRGPU"
#define OPTRACE_GPU_FILE_VERSION 2u

struct optrace_gpu_file_header {
	char magic[8];		 /* OPTRACE_GPU_FILE_MAGIC, NUL-padded */
	uint16_t version;	 /* OPTRACE_GPU_FILE_VERSION */
	uint16_t header_size;	 /* sizeof(struct optrace_gpu_file_header); 32 in version 1 */
	uint32_t pid;		 /* the traced process */
	uint32_t clock_id;	 /* CLOCK_MONOTONIC (1): the clock of every time */
	uint32_t record_version; /* OPTRACE_GPU_RECORD_VERSION of the writer */
	uint64_t created_ns;	 /* monotonic ns the file was created */
	/* From version 2. */
	uint32_t reserved; /* 0 */
	uint32_t crc;	   /* CRC-32 of the 36 bytes before it */
} __attribute__((packed));

#define OPTRACE_GPU_FILE_BLOCK_MAGIC "OGPB" /* 4 bytes, no NUL */

enum optrace_gpu_file_block_kind {
	OPTRACE_GPU_BLOCK_RECORDS = 1, /* records back to back */
	OPTRACE_GPU_BLOCK_END = 2,     /* struct optrace_gpu_file_end: the file was closed */
};

struct optrace_gpu_file_block {
	char magic[4];	   /* OPTRACE_GPU_FILE_BLOCK_MAGIC */
	uint16_t kind;	   /* enum optrace_gpu_file_block_kind; others are skipped */
	uint16_t flags;	   /* 0 */
	uint64_t sequence; /* 0, 1, 2, ... in file order, the end block included */
	uint32_t size;	   /* bytes of payload after this header */
	uint32_t records;  /* records in the payload */
	uint32_t payload_crc;
	uint32_t crc; /* CRC-32 of the 28 bytes before it */
} __attribute__((packed));

struct optrace_gpu_file_end {
	uint64_t records; /* in the record blocks */
	uint64_t blocks;  /* record blocks */
} __attribute__((packed));

/*
 * The optrace_gpu probes, in liboptrace. A producer (liboptrace-cupti)
 * checks optrace_gpu_enabled() before building records, at most once per
 * batch: it is true while a tracer has armed any optrace_gpu probe.
 */
bool optrace_gpu_enabled(void);
/*
 * How many tracers listen for kernel names now. A producer sends each name
 * again when it grows: a tracer that came later has not seen them.
 */
unsigned int optrace_gpu_tracers(void);
/* Fires the probe of record's type; the record need only live for the call. */
void optrace_gpu_record(const void *record);
/* Kernel name name_id (from 1) is name: fire before its first kernel. The
 * string must stay valid for the life of the process. */
void optrace_gpu_kernel_name(uint32_t name_id, const char *name);
/* The producer dropped count records (e.g. CUPTI's buffers were full). */
void optrace_gpu_dropped(uint64_t count);

/* Where GPU records were lost (the dropped probe's second argument). */
enum optrace_gpu_drop_source {
	OPTRACE_GPU_DROP_ACTIVITY_BUFFER = 0, /* CUPTI's activity buffers were full */
	OPTRACE_GPU_DROP_API_CALLBACK = 1,    /* launches the API callback could not mark */
	OPTRACE_GPU_DROP__COUNT
};
/* count records lost at source (enum optrace_gpu_drop_source). */
void optrace_gpu_dropped_from(uint64_t count, int source);

/* optrace_gpu_launch()'s flags. */
#define OPTRACE_GPU_LAUNCH_MANY 0x1u /* the call may launch several activities (a graph) */

/*
 * On the thread that makes a CUDA call that launches device work (a kernel,
 * a copy, a memset, a graph), before the work can complete: the call's
 * CUPTI correlation id, enum optrace_gpu_api_kind and OPTRACE_GPU_LAUNCH_*
 * flags. A tracer then ties
 * the activity records of that id to the operation or task open on the
 * thread, in the thread's own order (the fast path's gpu_launch event, or
 * the launch probe). False if a tracer wanted it but it could not be kept
 * (the thread's buffer could not be set up): count it as a drop.
 */
bool optrace_gpu_launch(uint32_t correlation_id, int api_kind, uint32_t flags);

#define OPTRACE_GPU_CHECK_SIZE(type, n) _Static_assert(sizeof(type) == (n), #type " size")
#ifndef __cplusplus
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_head, 8);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_kernel, 88);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_memcpy, 56);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_memset, 56);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_api, 48);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_sync, 48);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_kernel_name, 16);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_dropped, 16);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_file_header, 40);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_file_block, 32);
OPTRACE_GPU_CHECK_SIZE(struct optrace_gpu_file_end, 16);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_GPU_H */
