// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "trace/elf_symbols.h"
#include "trace/process_read.h"
#include "trace/runtime_info.h"
#include "trace/targets.h"

int liboptrace_symbol_address(pid_t pid, const char *name, uint64_t *address)
{
	struct library library;
	uint64_t offset = 0;
	int err;

	err = find_liboptrace(pid, &library);
	err = err ?: elf_symbol_offset(library.path, name, &offset);
	if (!err)
		*address = library.base + offset;
	return err;
}

/*
 * The addresses found last, by process (its pid and start time: a reused
 * pid is another process) and symbol: direct-mapped, a slot taken by a later
 * pair is only looked up again. Tracers read from a thread or two; the lock
 * keeps a slot whole.
 */
#define SYMBOL_SLOTS 1024

struct symbol_slot {
	pid_t pid; /* 0: empty */
	uint64_t start_time;
	const char *name; /* static: the callers' literals */
	uint64_t address;
};

static struct symbol_slot symbol_slots[SYMBOL_SLOTS];
static pthread_mutex_t symbol_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t symbol_lookups;

static struct symbol_slot *symbol_slot(pid_t pid, const char *name)
{
	uint32_t hash = (uint32_t)pid * 2654435761u;

	for (const char *c = name; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 16777619u;
	return &symbol_slots[hash % SYMBOL_SLOTS];
}

/* The address the last lookup for this process and name found; fresh: look again. */
static int symbol_address(pid_t pid, const char *name, bool fresh, uint64_t *address)
{
	struct symbol_slot *slot = symbol_slot(pid, name);
	uint64_t start_time = process_start_time(pid);
	int err;

	if (!start_time)
		return -ESRCH;
	pthread_mutex_lock(&symbol_lock);
	if (!fresh && slot->pid == pid && slot->start_time == start_time &&
	    !strcmp(slot->name, name)) {
		*address = slot->address;
		pthread_mutex_unlock(&symbol_lock);
		return 0;
	}
	symbol_lookups++;
	pthread_mutex_unlock(&symbol_lock);
	err = liboptrace_symbol_address(pid, name, address);
	if (err)
		return err;
	pthread_mutex_lock(&symbol_lock);
	*slot = (struct symbol_slot){
		.pid = pid, .start_time = start_time, .name = name, .address = *address
	};
	pthread_mutex_unlock(&symbol_lock);
	return 0;
}

int liboptrace_symbol_read(pid_t pid, const char *name, void *buffer, size_t size,
			   bool (*valid)(const void *buffer), uint64_t *address)
{
	int err = 0;

	for (int fresh = 0; fresh < 2; fresh++) {
		err = symbol_address(pid, name, fresh, address);
		if (err)
			return err;
		err = process_read(pid, *address, buffer, size);
		if (err == -ESRCH)
			return err;
		if (!err && valid(buffer))
			return 0;
	}
	return err && err != -EFAULT ? err : -EPROTO;
}

uint64_t liboptrace_symbol_lookups(void)
{
	uint64_t lookups;

	pthread_mutex_lock(&symbol_lock);
	lookups = symbol_lookups;
	pthread_mutex_unlock(&symbol_lock);
	return lookups;
}

/* The process is untrusted: believe only what makes sense. */
static bool runtime_info_valid(const void *buffer)
{
	const struct optrace_runtime_info *info = buffer;

	return info->abi_version >= 1 && info->abi_version <= OPTRACE_ABI_VERSION &&
	       info->rank_count >= 1 && info->rank >= 0 && info->rank < info->rank_count;
}

int runtime_info_read(pid_t pid, struct optrace_runtime_info *info)
{
	uint64_t address;

	return liboptrace_symbol_read(pid, "optrace_runtime", info, sizeof(*info),
				      runtime_info_valid, &address);
}
