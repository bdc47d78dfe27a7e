// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include <optrace/optrace.h>

#include "self_trace.h"
#include "trace/usdt_args.h"
#include "trace/usdt_notes.h"

#define MAX_EVENTS (1 << 20)
#define INT3 0xcc
#define NOP 0x90

struct site {
	const struct usdt_note *note;
	uint8_t *address;
	volatile uint16_t *semaphore;
	int argc;
	struct usdt_arg args[USDT_MAX_ARGS];
};

static struct usdt_notes notes;
static struct site *sites;
static struct self_event *events;
static _Atomic size_t event_count;
static struct sigaction previous_action;

static const int greg_of[USDT_REG__COUNT] = {
	[USDT_REG_RAX] = REG_RAX, [USDT_REG_RBX] = REG_RBX, [USDT_REG_RCX] = REG_RCX,
	[USDT_REG_RDX] = REG_RDX, [USDT_REG_RSI] = REG_RSI, [USDT_REG_RDI] = REG_RDI,
	[USDT_REG_RBP] = REG_RBP, [USDT_REG_RSP] = REG_RSP, [USDT_REG_R8] = REG_R8,
	[USDT_REG_R9] = REG_R9,	  [USDT_REG_R10] = REG_R10, [USDT_REG_R11] = REG_R11,
	[USDT_REG_R12] = REG_R12, [USDT_REG_R13] = REG_R13, [USDT_REG_R14] = REG_R14,
	[USDT_REG_R15] = REG_R15, [USDT_REG_RIP] = REG_RIP,
};

static uint64_t extend(uint64_t raw, int size, bool is_signed)
{
	int shift = 64 - 8 * size;

	if (size == 8)
		return raw;
	return is_signed ? (uint64_t)(((int64_t)(raw << shift)) >> shift) : (raw << shift) >> shift;
}

static uint64_t read_arg(const struct usdt_arg *arg, const greg_t *gregs)
{
	uint64_t raw = 0;

	switch (arg->kind) {
	case USDT_ARG_CONST:
		return (uint64_t)arg->value;
	case USDT_ARG_REG:
		raw = (uint64_t)gregs[greg_of[arg->reg]];
		break;
	case USDT_ARG_REG_DEREF:
		memcpy(&raw, (const char *)gregs[greg_of[arg->reg]] + arg->value,
		       (size_t)arg->size);
		break;
	}
	return extend(raw, arg->size, arg->is_signed);
}

static void on_trap(int signo, siginfo_t *info, void *context)
{
	greg_t *gregs = ((ucontext_t *)context)->uc_mcontext.gregs;
	uint8_t *site_address = (uint8_t *)gregs[REG_RIP] - 1;

	(void)signo;
	(void)info;
	for (size_t i = 0; i < notes.count; i++) {
		struct site *site = &sites[i];
		struct self_event *event;
		size_t slot;

		if (site->address != site_address)
			continue;
		slot = atomic_fetch_add(&event_count, 1);
		if (slot >= MAX_EVENTS)
			return;
		event = &events[slot];
		memcpy(event->probe, site->note->name, sizeof(event->probe) - 1);
		event->probe[sizeof(event->probe) - 1] = '\0';
		event->tid = gettid();
		event->argc = site->argc;
		for (int a = 0; a < site->argc && a < SELF_TRACE_MAX_ARGS; a++)
			event->args[a] = read_arg(&site->args[a], gregs);
		/* The trap left rip after the 1-byte site: the nop it replaced. */
		return;
	}
	abort();
}

static int patch(uint8_t *address, uint8_t byte)
{
	long page = sysconf(_SC_PAGESIZE);
	void *start = (void *)((uintptr_t)address & ~(uintptr_t)(page - 1));

	if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	*address = byte;
	__builtin___clear_cache((char *)address, (char *)address + 1);
	return mprotect(start, (size_t)page, PROT_READ | PROT_EXEC) ? -errno : 0;
}

int self_trace_start(void)
{
	struct sigaction action = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	Dl_info info;
	int err;

	if (!dladdr((void *)optrace_op_begin, &info) || !info.dli_fname)
		return -ENOENT;
	err = usdt_notes_read(info.dli_fname, "optrace", &notes);
	if (err)
		return err;
	sites = calloc(notes.count, sizeof(*sites));
	events = calloc(MAX_EVENTS, sizeof(*events));
	if (!sites || !events)
		return -ENOMEM;
	atomic_store(&event_count, 0);
	if (sigaction(SIGTRAP, &action, &previous_action))
		return -errno;
	for (size_t i = 0; i < notes.count; i++) {
		struct site *site = &sites[i];

		site->note = &notes.notes[i];
		site->address = (uint8_t *)info.dli_fbase + site->note->pc;
		site->semaphore = (uint16_t *)((char *)info.dli_fbase + site->note->semaphore);
		site->argc = usdt_args_parse(site->note->args, site->args, USDT_MAX_ARGS);
		if (site->argc < 0 || *site->address != NOP)
			return -EINVAL;
		err = patch(site->address, INT3);
		if (err)
			return err;
		(*site->semaphore)++;
	}
	return 0;
}

void self_trace_stop(void)
{
	for (size_t i = 0; sites && i < notes.count; i++) {
		(*sites[i].semaphore)--;
		patch(sites[i].address, NOP);
	}
	sigaction(SIGTRAP, &previous_action, NULL);
}

const struct self_event *self_trace_events(size_t *count)
{
	size_t n = atomic_load(&event_count);

	*count = n < MAX_EVENTS ? n : MAX_EVENTS;
	return events;
}
