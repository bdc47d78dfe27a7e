/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --wait: a loop starts on SIGUSR1, once a tracer is attached. The signal
 * stays blocked from before its handler is set until sigsuspend() takes it,
 * so that a signal sent between the test of the flag and the wait is not
 * lost (pause() would sleep on). The scripts send it once the handler shows
 * in /proc/PID/status (bench/attached.sh: wait_start_handler).
 */
#ifndef OPTRACE_BENCH_START_SIGNAL_H
#define OPTRACE_BENCH_START_SIGNAL_H

#include <signal.h>

static volatile sig_atomic_t start_signalled;

static void on_start_signal(int signo)
{
	(void)signo;
	start_signalled = 1;
}

static void wait_start_signal(void)
{
	sigset_t start, others;

	sigemptyset(&start);
	sigaddset(&start, SIGUSR1);
	sigprocmask(SIG_BLOCK, &start, &others);
	signal(SIGUSR1, on_start_signal);
	sigdelset(&others, SIGUSR1);
	while (!start_signalled)
		sigsuspend(&others);
	sigprocmask(SIG_UNBLOCK, &start, NULL);
}

#endif
