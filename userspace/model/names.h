/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the profile knows of each process and thread besides its ids: the
 * command and thread names the recorder read from /proc (RECORD_NAME) and
 * the rank the runtime announced (rt_init). Every output names a process as
 * "optrace-demo 9117 rank 0 of 2" and a thread by its own name from here.
 */
#ifndef OPTRACE_MODEL_NAMES_H
#define OPTRACE_MODEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

struct profile_process {
	char command[40]; /* "" when not recorded */
	int rank;
	int rank_count; /* 0: no rank announced */
	/* Merged captures: its pid on its host (its id in the profile may differ). */
	uint32_t pid;  /* 0: the id is the pid */
	char host[64]; /* "" unless merged */
};

struct profile_names {
	struct idmap processes; /* (tgid, 0) -> struct profile_process */
	struct idmap threads;	/* (tgid, tid) -> char * */
};

/* A RECORD_NAME record (bpf/events.h). 0 or -ENOMEM; a malformed one: -EINVAL. */
int profile_names_add(struct profile_names *names, const void *record, size_t size);

/* A rank announced by process tgid's runtime. 0 or -ENOMEM. */
int profile_names_set_rank(struct profile_names *names, uint32_t tgid, int rank, int rank_count);

/* Process tgid of a merge is pid on host (model/replay.h). 0 or -ENOMEM. */
int profile_names_set_origin(struct profile_names *names, uint32_t tgid, uint32_t pid,
			     const char *host);

/* The pid to show for process tgid: its own on its host. */
uint32_t profile_names_pid(const struct profile_names *names, uint32_t tgid);

/* Process tgid, or NULL if nothing is known of it. */
const struct profile_process *profile_names_process(const struct profile_names *names,
						    uint32_t tgid);

/* Thread tid's own name, or NULL. */
const char *profile_names_thread(const struct profile_names *names, uint32_t tgid, uint32_t tid);

/*
 * "optrace-demo 9117 rank 0 of 2": command (when recorded), pid, rank (when
 * announced), "on HOST" for a merge of several captures; the text as
 * recorded (writers sanitise it). Returns buffer.
 */
const char *profile_names_describe(const struct profile_names *names, uint32_t tgid, char *buffer,
				   size_t size);

struct stat_snapshot;

/* The snapshot's process rows (stat's names for them) from what is known. 0 or -ENOMEM. */
int profile_names_fill_snapshot(const struct profile_names *names, struct stat_snapshot *snapshot);

void profile_names_free(struct profile_names *names);

#endif /* OPTRACE_MODEL_NAMES_H */
