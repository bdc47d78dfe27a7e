// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/events.h"
#include "model/aggregates.h"
#include "model/names.h"

static struct profile_process *process_for(struct profile_names *names, uint32_t tgid)
{
	struct profile_process *process = idmap_get(&names->processes, tgid, 0);

	if (process)
		return process;
	process = calloc(1, sizeof(*process));
	if (process && idmap_put(&names->processes, tgid, 0, process)) {
		free(process);
		process = NULL;
	}
	return process;
}

int profile_names_add(struct profile_names *names, const void *record, size_t size)
{
	const struct record_name *name = record;
	char text[RECORD_NAME_LEN];
	struct profile_process *process;
	char *copy, *old;

	if (size < sizeof(*name))
		return -EINVAL;
	/* From the file: NUL-terminated here whatever it holds. */
	memcpy(text, name->name, sizeof(text));
	text[sizeof(text) - 1] = '\0';
	if (!name->tid) {
		process = process_for(names, name->tgid);
		if (!process)
			return -ENOMEM;
		memcpy(process->command, text, sizeof(process->command));
		return 0;
	}
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	old = idmap_get(&names->threads, name->tgid, name->tid);
	if (idmap_put(&names->threads, name->tgid, name->tid, copy)) {
		free(copy);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

int profile_names_set_rank(struct profile_names *names, uint32_t tgid, int rank, int rank_count)
{
	struct profile_process *process = process_for(names, tgid);

	if (!process)
		return -ENOMEM;
	process->rank = rank;
	process->rank_count = rank_count;
	return 0;
}

int profile_names_set_origin(struct profile_names *names, uint32_t tgid, uint32_t pid,
			     const char *host)
{
	struct profile_process *process = process_for(names, tgid);

	if (!process)
		return -ENOMEM;
	process->pid = pid;
	snprintf(process->host, sizeof(process->host), "%s", host ? host : "");
	return 0;
}

uint32_t profile_names_pid(const struct profile_names *names, uint32_t tgid)
{
	const struct profile_process *process = profile_names_process(names, tgid);

	return process && process->pid ? process->pid : tgid;
}

const struct profile_process *profile_names_process(const struct profile_names *names,
						    uint32_t tgid)
{
	return idmap_get(&names->processes, tgid, 0);
}

const char *profile_names_thread(const struct profile_names *names, uint32_t tgid, uint32_t tid)
{
	return idmap_get(&names->threads, tgid, tid);
}

const char *profile_names_describe(const struct profile_names *names, uint32_t tgid, char *buffer,
				   size_t size)
{
	const struct profile_process *process = profile_names_process(names, tgid);
	uint32_t pid = profile_names_pid(names, tgid);
	int used;

	if (process && process->command[0])
		used = snprintf(buffer, size, "%s %u", process->command, pid);
	else
		used = snprintf(buffer, size, "process %u", pid);
	if (process && process->host[0] && used > 0 && (size_t)used < size)
		used += snprintf(buffer + used, size - (size_t)used, " on %s", process->host);
	if (process && process->rank_count > 0 && used > 0 && (size_t)used < size)
		snprintf(buffer + used, size - (size_t)used, " rank %d of %d", process->rank,
			 process->rank_count);
	return buffer;
}

int profile_names_fill_snapshot(const struct profile_names *names, struct stat_snapshot *snapshot)
{
	size_t count = snapshot->process_count;
	struct process_row *rows;

	rows = realloc(snapshot->processes, (count + names->processes.count + 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	snapshot->processes = rows;
	for (size_t i = 0; i < names->processes.capacity; i++) {
		const struct profile_process *process = names->processes.slots[i].value;
		struct process_row *row = &rows[count];

		if (!process)
			continue;
		memset(row, 0, sizeof(*row));
		row->tgid = names->processes.slots[i].tgid;
		memcpy(row->info.comm, process->command, sizeof(row->info.comm) - 1);
		row->rank = process->rank;
		row->rank_count = process->rank_count;
		count++;
	}
	snapshot->process_count = count;
	return 0;
}

void profile_names_free(struct profile_names *names)
{
	for (size_t i = 0; i < names->processes.capacity; i++)
		free(names->processes.slots[i].value);
	for (size_t i = 0; i < names->threads.capacity; i++)
		free(names->threads.slots[i].value);
	idmap_free(&names->processes);
	idmap_free(&names->threads);
}
