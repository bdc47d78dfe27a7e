// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The records optrace record synthesizes about the recording, from process
 * facts; see record_meta.h.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "trace/batch_read.h"
#include "trace/runtime_info.h"
#include "session/record_meta.h"

bool record_meta_first_line(const char *path, char line[RECORD_NAME_LEN])
{
	FILE *file = fopen(path, "re");
	bool found;

	if (!file)
		return false;
	memset(line, 0, RECORD_NAME_LEN);
	found = fgets(line, RECORD_NAME_LEN, file) != NULL;
	fclose(file);
	line[strcspn(line, "\n")] = '\0';
	return found && line[0];
}

static bool proc_comm(void *ctx, uint32_t tgid, uint32_t tid, char name[RECORD_NAME_LEN])
{
	char path[64];

	(void)ctx;
	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	return record_meta_first_line(path, name);
}

static int proc_runtime_info(void *ctx, pid_t tgid, struct optrace_runtime_info *info)
{
	(void)ctx;
	return runtime_info_read(tgid, info);
}

static int proc_string(void *ctx, pid_t pid, uint64_t address, char *text, size_t size,
		       bool *truncated)
{
	(void)ctx;
	return process_read_string(pid, address, text, size, truncated);
}

const struct record_facts record_facts_proc = {
	.comm = proc_comm,
	.runtime_info = proc_runtime_info,
	.string = proc_string,
};

bool record_meta_name(const struct record_facts *facts, uint64_t timestamp, uint32_t tgid,
		      uint32_t tid, const char *given, struct record_name *record)
{
	*record = (struct record_name){
		.timestamp = timestamp, .tgid = tgid, .tid = tid, .type = RECORD_NAME
	};
	if (given && given[0]) {
		memcpy(record->name, given, strnlen(given, 16));
		return true;
	}
	return facts->comm(facts->ctx, tgid, tid, record->name);
}

bool record_meta_rank(const struct record_facts *facts, uint64_t timestamp, uint32_t tgid,
		      uint32_t tid, struct record_event *event)
{
	struct optrace_runtime_info info;

	*event = (struct record_event){
		.timestamp = timestamp, .tgid = tgid, .tid = tid, .type = RECORD_RT_INIT
	};
	if (facts->runtime_info(facts->ctx, (pid_t)tgid, &info) || !info.initialized)
		return false;
	event->rt_init.abi_version = info.abi_version;
	event->rt_init.rank = info.rank;
	event->rt_init.rank_count = info.rank_count;
	return true;
}

void record_meta_string(const struct record_facts *facts, uint64_t timestamp, pid_t pid,
			uint64_t address, struct record_string *record)
{
	bool truncated = false;

	*record = (struct record_string){
		.timestamp = timestamp,
		.tgid = (__u32)pid,
		.type = RECORD_STRING,
		.address = address,
	};
	if (facts->string(facts->ctx, pid, address, record->text, sizeof(record->text), &truncated))
		record->unreadable = 1;
	record->truncated = truncated;
}

void record_meta_clock(struct record_clock *record)
{
	struct timespec before, realtime, after;
	uint64_t before_ns, after_ns;

	*record = (struct record_clock){ .type = RECORD_CLOCK };
	clock_gettime(CLOCK_MONOTONIC, &before);
	clock_gettime(CLOCK_REALTIME, &realtime);
	clock_gettime(CLOCK_MONOTONIC, &after);
	before_ns = timespec_ns(&before);
	after_ns = timespec_ns(&after);
	record->timestamp = before_ns + (after_ns - before_ns) / 2;
	record->realtime_ns = timespec_ns(&realtime);
	record->uncertainty_ns = after_ns - before_ns;
}

static char *join_command(char *const *command)
{
	size_t size = 1;
	char *text;

	for (int i = 0; command[i]; i++)
		size += strlen(command[i]) + 1;
	text = calloc(1, size);
	for (int i = 0; text && command[i]; i++) {
		strcat(text, command[i]);
		if (command[i + 1])
			strcat(text, " ");
	}
	return text;
}

char *record_meta_target(const struct record_facts *facts, char *const *command, bool all,
			 const pid_t *pids, int pid_count)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	if (command)
		return join_command(command);
	if (all)
		return strdup("every process that maps liboptrace (-a)");
	out = open_memstream(&text, &size);
	if (!out)
		return NULL;
	for (int i = 0; i < pid_count; i++) {
		char comm[RECORD_NAME_LEN] = "";

		if (!facts->comm(facts->ctx, (uint32_t)pids[i], 0, comm))
			comm[0] = '\0';
		fprintf(out, "%sprocess %d%s%s%s", i ? ", " : "", pids[i], comm[0] ? " (" : "",
			comm, comm[0] ? ")" : "");
	}
	fclose(out);
	return text;
}
