/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The records a capture holds about the recording rather than the targets'
 * events (as perf keeps its synthesized events in util/synthetic-events.c):
 * process and thread names, the ranks runtimes announced before the
 * recording began, strings an idle thread's events name, clock anchors, and
 * the header's target and boot id. Each is made from process facts asked of
 * a struct record_facts: /proc and the processes' memory when recording, a
 * table in the tests. Nothing here writes: the recorder decides what goes
 * in the capture and when (session/recorder_core.h).
 */
#ifndef OPTRACE_SESSION_RECORD_META_H
#define OPTRACE_SESSION_RECORD_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include <optrace/optrace.h>

#include "bpf/events.h"

/* What the recorder asks about the processes it meets. */
struct record_facts {
	/*
	 * Thread tid's name, or its process's when tid is 0, zero-padded in
	 * name; false if there is none (the process has exited).
	 */
	bool (*comm)(void *ctx, uint32_t tgid, uint32_t tid, char name[RECORD_NAME_LEN]);
	/* The rank process tgid announced: runtime_info_read()'s contract. */
	int (*runtime_info)(void *ctx, pid_t tgid, struct optrace_runtime_info *info);
	/* The string at address in process pid: process_read_string()'s contract. */
	int (*string)(void *ctx, pid_t pid, uint64_t address, char *text, size_t size,
		      bool *truncated);
	void *ctx;
};

/* The facts of the processes of this machine: /proc and their memory. */
extern const struct record_facts record_facts_proc;

/* The first line of a file (a comm, the boot id), zero-padded; false if none. */
bool record_meta_first_line(const char *path, char line[RECORD_NAME_LEN]);

/*
 * The name record of thread tid (0: of process tgid), from given when it is
 * not empty (a batch's comm, read by the kernel while the thread ran), else
 * from facts. False if there is no name to write.
 */
bool record_meta_name(const struct record_facts *facts, uint64_t timestamp, uint32_t tgid,
		      uint32_t tid, const char *given, struct record_name *record);

/*
 * The rt_init event process tgid's runtime announced before the recording
 * began, as its probe would have written it, from facts. False if it did
 * not announce one yet (its probe will).
 */
bool record_meta_rank(const struct record_facts *facts, uint64_t timestamp, uint32_t tgid,
		      uint32_t tid, struct record_event *event);

/* The string record of address in process pid, read through facts now. */
void record_meta_string(const struct record_facts *facts, uint64_t timestamp, pid_t pid,
			uint64_t address, struct record_string *record);

/* A clock anchor: realtime read between two monotonic reads, at their middle. */
void record_meta_clock(struct record_clock *record);

/*
 * The header's target: the command, its arguments joined by spaces; else
 * how the processes were chosen (-a, or each -p by pid and command name, as
 * ps shows them). NULL if out of memory; the caller frees it.
 */
char *record_meta_target(const struct record_facts *facts, char *const *command, bool all,
			 const pid_t *pids, int pid_count);

#endif /* OPTRACE_SESSION_RECORD_META_H */
