// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A model of the fast path's handover, without BPF: what a traced event
 * costs its thread when its full buffer goes to a reader on another core in
 * one way or another. The writer stamps 48-byte events with rdtsc into
 * buffers of 256, as liboptrace does; a reader thread takes each full buffer
 * with a memcpy, as optrace reads one. Issue 26 asked whether taking record's
 * copy off the traced thread would bring a traced event under 20 ns:
 *
 *   none     nothing handed over: the event alone
 *   copy     the writer copies each buffer into a ring of --ring MiB that the
 *            reader reads right behind it (record today: the batch program
 *            copies into the BPF ring buffer)
 *   inplace  --buffers buffers a thread; the reader reads each in place and
 *            gives it back; a writer with none free waits (a reader that
 *            spins on a core of its own)
 *   wake     inplace, but the reader sleeps when it has caught up and the
 *            writer wakes it (FUTEX_WAKE) when it finds it asleep
 *   lazy     inplace, but the reader wakes every --poll us (timed drains, as
 *            record's); a writer with no buffer free copies into the ring
 *            instead (the fallback a real design needs)
 *
 * A full ring loses the buffer, as BPF's ring buffer does: the share lost is
 * printed.
 *
 * Prints the writer's CPU ns per event for each, over `none` in the same run.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define EVENT_BYTES 48
#define BATCH_EVENTS 256
#define BATCH_BYTES (EVENT_BYTES * BATCH_EVENTS)
#define MAX_BUFFERS 4096

enum handover { NONE, COPY, INPLACE, WAKE, LAZY, HANDOVER_COUNT };

static const char *const handover_names[HANDOVER_COUNT] = { "none", "copy", "inplace", "wake",
							    "lazy" };

static struct {
	long events;
	long ring_mb;
	long buffers;
	long poll_us;
	int repeats;
} env = {
	.events = 20 * 1000 * 1000,
	.ring_mb = 64,
	.buffers = 64,
	.poll_us = 10000,
	.repeats = 3,
};

static const char doc[] =
	"A model of the fast path's handover: the writer's ns per event when full\n"
	"buffers go to a reader on another core by a copy into a ring, in place\n"
	"with a spinning, a sleeping or a polling reader.\n"
	"\n"
	"EXAMPLES:\n"
	"    handover_model                  # 20M events, 64 MiB ring, 64 buffers\n"
	"    handover_model --ring 4         # a ring that stays in the caches\n"
	"    handover_model -b 4 -p 1000     # 4 buffers, a reader every ms\n";

static const struct argp_option options[] = {
	{ "events", 'n', "N", 0, "Events per run (default 20000000)", 0 },
	{ "ring", 'r', "MiB", 0, "The copy's ring (default 64, record's)", 0 },
	{ "buffers", 'b', "N", 0, "Buffers a thread in place, at least 2 (default 64)", 0 },
	{ "poll", 'p', "US", 0, "The lazy reader's period (default 10000, record's)", 0 },
	{ "repeats", 'R', "N", 0, "Runs of each, the fastest kept (default 3)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	long value;

	if (key != 'n' && key != 'r' && key != 'b' && key != 'p' && key != 'R')
		return ARGP_ERR_UNKNOWN;
	value = strtol(arg, &end, 10);
	if (*end || value <= 0)
		argp_error(state, "'%s' is not a positive number", arg);
	switch (key) {
	case 'n':
		if (value < BATCH_EVENTS)
			argp_error(state, "--events takes at least %d (a buffer)", BATCH_EVENTS);
		env.events = value;
		break;
	case 'r':
		env.ring_mb = value;
		break;
	case 'b':
		/* One buffer could never be handed over while the writer fills the next. */
		if (value < 2 || value > MAX_BUFFERS)
			argp_error(state, "--buffers takes 2 to %d", MAX_BUFFERS);
		env.buffers = value;
		break;
	case 'p':
		env.poll_us = value;
		break;
	default:
		env.repeats = (int)value;
	}
	return 0;
}

/* What the writer and the reader share; counters count buffers. */
struct channel {
	enum handover handover;
	char *ring;
	uint64_t ring_slots;
	char *buffers;
	_Atomic uint64_t handed;   /* buffers the writer handed over in place */
	_Atomic uint64_t read;	   /* of those, read and given back */
	_Atomic uint64_t copied;   /* ring slots written */
	_Atomic uint64_t drained;  /* ring slots read */
	_Atomic uint32_t sleeping; /* WAKE: the reader is about to sleep, or sleeps, on bell */
	_Atomic uint32_t bell;	   /* WAKE: rung by the writer to wake the reader */
	_Atomic int done;
	uint64_t fallbacks; /* LAZY: buffers copied, none being free */
	uint64_t lost;	    /* buffers the full ring lost */
	char scratch[BATCH_BYTES];
};

static void pin_to(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return; /* one core: both threads share it, as the OS decides */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Sleeps while *word is value, 10 ms at most (a wake cannot be lost, but a bound is cheap). */
static void futex_wait_while(_Atomic uint32_t *word, uint32_t value)
{
	struct timespec timeout = { 0, 10 * 1000 * 1000 };

	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, value, &timeout, NULL, 0);
}

/* Rings the bell a WAKE reader sleeps on. */
static void ring_bell(_Atomic uint32_t *bell)
{
	atomic_fetch_add(bell, 1);
	syscall(SYS_futex, (uint32_t *)bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Takes whatever was handed over or copied since the last call; true if anything. */
static int read_what_is_there(struct channel *c)
{
	uint64_t handed = atomic_load_explicit(&c->handed, memory_order_acquire);
	uint64_t copied = atomic_load_explicit(&c->copied, memory_order_acquire);
	uint64_t read = atomic_load_explicit(&c->read, memory_order_relaxed);
	uint64_t drained = atomic_load_explicit(&c->drained, memory_order_relaxed);
	int any = read < handed || drained < copied;

	for (; read < handed; read++) {
		memcpy(c->scratch, c->buffers + (read % (uint64_t)env.buffers) * BATCH_BYTES,
		       BATCH_BYTES);
		atomic_store_explicit(&c->read, read + 1, memory_order_release);
	}
	for (; drained < copied; drained++) {
		memcpy(c->scratch, c->ring + (drained % c->ring_slots) * BATCH_BYTES, BATCH_BYTES);
		atomic_store_explicit(&c->drained, drained + 1, memory_order_release);
	}
	return any;
}

static void *reader(void *arg)
{
	struct channel *c = arg;
	struct timespec period = { env.poll_us / 1000000, env.poll_us % 1000000 * 1000 };

	pin_to(1);
	while (!atomic_load(&c->done)) {
		if (c->handover == LAZY) {
			nanosleep(&period, NULL);
			read_what_is_there(c);
		} else if (!read_what_is_there(c) && c->handover == WAKE) {
			uint32_t bell = atomic_load(&c->bell);

			/*
			 * The writer hands over, then looks at sleeping; the reader says it
			 * sleeps, then looks at what was handed over: one sees the other,
			 * and a bell rung before the wait makes the wait return at once.
			 */
			atomic_store(&c->sleeping, 1);
			if (atomic_load(&c->handed) == atomic_load(&c->read) &&
			    !atomic_load(&c->done))
				futex_wait_while(&c->bell, bell);
			atomic_store(&c->sleeping, 0);
		}
	}
	read_what_is_there(c);
	return NULL;
}

/* The writer copies a full buffer into the ring; a full ring loses it, as BPF's does. */
static void copy_to_ring(struct channel *c, const char *buffer)
{
	uint64_t copied = atomic_load_explicit(&c->copied, memory_order_relaxed);

	if (copied - atomic_load_explicit(&c->drained, memory_order_acquire) >= c->ring_slots) {
		c->lost++;
		return;
	}
	memcpy(c->ring + (copied % c->ring_slots) * BATCH_BYTES, buffer, BATCH_BYTES);
	atomic_store_explicit(&c->copied, copied + 1, memory_order_release);
}

/* In place: the buffer after handed is still the reader's. */
static bool no_buffer_free(const struct channel *c, uint64_t handed)
{
	return handed + 1 - atomic_load_explicit(&c->read, memory_order_acquire) >=
	       (uint64_t)env.buffers;
}

/* A full buffer handed over; returns the one to fill next. */
static char *hand_over(struct channel *c, char *buffer)
{
	uint64_t handed = atomic_load_explicit(&c->handed, memory_order_relaxed);

	switch (c->handover) {
	case NONE:
		return buffer;
	case COPY:
		copy_to_ring(c, buffer);
		return buffer;
	case LAZY:
		if (no_buffer_free(c, handed)) {
			c->fallbacks++;
			copy_to_ring(c, buffer);
			return buffer;
		}
		break;
	default:
		while (no_buffer_free(c, handed))
			;
	}
	atomic_store_explicit(&c->handed, handed + 1, memory_order_seq_cst);
	if (c->handover == WAKE && atomic_load(&c->sleeping))
		ring_bell(&c->bell);
	return c->buffers + ((handed + 1) % (uint64_t)env.buffers) * BATCH_BYTES;
}

/* The event's time: the TSC, as liboptrace reads it where it can. */
static inline uint64_t stamp(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct result {
	double ns;	       /* the writer's CPU ns per event */
	double fallback_share; /* of the buffers, those LAZY copied */
	double lost_share;     /* of the buffers, those lost */
};

/* One run: 0, -ENOMEM, or a positive errno from pthread_create(). */
static int run(enum handover handover, struct result *result)
{
	struct channel *c = calloc(1, sizeof(*c));
	pthread_t reader_thread;
	double start;
	char *buffer;
	int err = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->handover = handover;
	c->ring_slots = ((uint64_t)env.ring_mb << 20) / BATCH_BYTES;
	c->ring = aligned_alloc(4096, c->ring_slots * BATCH_BYTES);
	c->buffers = aligned_alloc(4096, (size_t)env.buffers * BATCH_BYTES);
	if (!c->ring || !c->buffers || !c->ring_slots)
		goto cleanup;
	/* Touched first, as the kernel zeroes a ring buffer's pages when it makes them. */
	memset(c->ring, 0, c->ring_slots * BATCH_BYTES);
	memset(c->buffers, 0, (size_t)env.buffers * BATCH_BYTES);
	err = pthread_create(&reader_thread, NULL, reader, c);
	if (err)
		goto cleanup;
	pin_to(0);
	buffer = c->buffers;
	start = thread_cpu_ns();
	for (long i = 0, slot = 0; i < env.events; i++) {
		uint64_t *event = (uint64_t *)(buffer + slot * EVENT_BYTES);

		event[0] = stamp();
		event[1] = (uint64_t)i;
		event[2] = (uint64_t)i;
		event[3] = 1;
		event[4] = 2;
		event[5] = 3;
		if (++slot == BATCH_EVENTS) {
			slot = 0;
			buffer = hand_over(c, buffer);
		}
	}
	result->ns = (thread_cpu_ns() - start) / (double)env.events;
	result->fallback_share = (double)c->fallbacks / (double)(env.events / BATCH_EVENTS);
	result->lost_share = (double)c->lost / (double)(env.events / BATCH_EVENTS);
	atomic_store(&c->done, 1);
	ring_bell(&c->bell);
	pthread_join(reader_thread, NULL);
	err = 0;
cleanup:
	free(c->ring);
	free(c->buffers);
	free(c);
	return err;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, NULL, NULL, NULL };
	struct result best[HANDOVER_COUNT];

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 1;
	for (int h = 0; h < HANDOVER_COUNT; h++)
		best[h].ns = 1e300;
	/* Interleaved, so that a slow moment of the machine hits every handover alike. */
	for (int r = 0; r < env.repeats; r++) {
		for (int h = 0; h < HANDOVER_COUNT; h++) {
			struct result result;
			int err = run((enum handover)h, &result);

			if (err) {
				fprintf(stderr, "handover_model: %s\n",
					err == -ENOMEM ? "out of memory; try a smaller --ring"
						       : "cannot start the reader thread");
				return 1;
			}
			if (result.ns < best[h].ns)
				best[h] = result;
		}
	}
	printf("%-8s %10s %10s  (%ld events, ring %ld MiB, %ld buffers, poll %ld us)\n", "handover",
	       "ns/event", "over none", env.events, env.ring_mb, env.buffers, env.poll_us);
	for (int h = 0; h < HANDOVER_COUNT; h++) {
		printf("%-8s %10.2f %10.2f", handover_names[h], best[h].ns,
		       best[h].ns - best[NONE].ns);
		if (h == LAZY)
			printf("  %.0f%% copied (no buffer free)", 100.0 * best[h].fallback_share);
		if (best[h].lost_share > 0)
			printf("  %.0f%% lost (the ring full)", 100.0 * best[h].lost_share);
		printf("\n");
	}
	return 0;
}
