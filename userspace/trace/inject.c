// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loading a library into a running process (inject.h), on x86-64.
 *
 * A helper process does the ptrace work, so that optrace killed or
 * interrupted meanwhile never leaves the target inside a call with nobody
 * to put it back: the helper ignores the terminal's signals and finishes.
 * It seizes one thread (PTRACE_SEIZE, PTRACE_INTERRUPT), preferably one
 * blocked in a system call (it holds no lock of libc's that dlopen needs),
 * the main thread first; the other threads run on, as they do during gdb's
 * inferior calls, so that a lock one of them holds can be released. It saves
 * the registers and the vector state (XSAVE), writes the library's path
 * below the stack's red zone, and calls dlopen(path, RTLD_NOW) with a return
 * address of 0: the return faults (SIGSEGV at address 0, rsp just above the
 * slot), which is how the helper knows the call came back, with rax. Then
 * the library's init function, the same way. Then the saved registers go
 * back and the thread is released.
 *
 * System calls: a thread stopped inside one has rax = -ERESTART* and
 * orig_rax = its number. The calls run with orig_rax = -1, so that the
 * kernel does not "restart" at the new pc (gdb does the same); the saved
 * registers restored, the kernel restarts the system call as it would have
 * without us. A restart-block call (nanosleep, poll, futex with a timeout)
 * whose restart data a call overwrote (a signal interrupted one of the
 * call's own system calls) is returned -EINTR instead, as a signal would.
 *
 * Signals that arrive meanwhile are held (suppressed at their stop, their
 * siginfo kept) and delivered once the thread is back where it was: the
 * first one at the detach itself, with its siginfo, the others queued again
 * (rt_tgsigqueueinfo, with their siginfo where the kernel allows it, else
 * tgkill). A handler never runs inside the loader.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "trace/process_read.h"
#include "trace/elf_symbols.h"
#include "trace/inject.h"

#if defined(__x86_64__)

/*
 * Every wait on the target's account is bounded, from its start and not
 * from the last signal stop, so that a target that rains signals on itself
 * cannot stretch it: the stop, each call (past it, said; the helper waits
 * on, to put the thread back if the call ever returns), the helper's answer
 * and its exit.
 */
#define STOP_TIMEOUT_MS 5000  /* for the chosen thread to stop */
#define CALL_TIMEOUT_MS 20000 /* for a call to return */
#define ANSWER_TIMEOUT_MS 120000
#define EXIT_TIMEOUT_MS 1000 /* for the helper to exit once it answered */
#define MAX_HELD_SIGNALS 256

/* The helper's answer. */
struct answer {
	int err;
	bool hung; /* a call has not returned: the helper stays, to finish it if it does */
	char why[INJECT_WHY_SIZE];
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

#define RED_ZONE 128
#define EFLAGS_DF 0x400
/* The kernel's restart code for a system call with restart data (include/linux/errno.h). */
#define ERESTART_RESTARTBLOCK 516

struct thread {
	pid_t pid, tid;
	int answer_fd;
	struct user_regs_struct saved;
	struct iovec xstate; /* XSAVE area, or NULL: fpregs below */
	struct user_fpregs_struct fpregs;
	uint64_t scratch; /* the lowest byte written below the red zone */
	siginfo_t held[MAX_HELD_SIGNALS];
	int held_count;
	unsigned int more_held[_NSIG]; /* past held[]: by number only */
	bool in_signal_stop;	       /* detach can deliver a signal */
	bool restart_clobbered;	       /* see above */
};

static long long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)((timespec_ns(&now) - timespec_ns(start)) / 1000000);
}

/*
 * Waits for the child's next stop or end (flags: __WALL for a traced
 * thread); -ETIMEDOUT once timeout_ms have passed since *since (< 0: never).
 */
static int wait_child(pid_t child, int flags, int *status, const struct timespec *since,
		      int timeout_ms)
{
	struct timespec pause = { 0, 20 * 1000 };
	pid_t got;

	for (;;) {
		got = waitpid(child, status, flags | WNOHANG);
		if (got == child)
			return 0;
		if (got < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && elapsed_ms(since) >= timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 1000 * 1000)
			pause.tv_nsec *= 2;
	}
}

static int wait_thread(struct thread *t, int *status, const struct timespec *since, int timeout_ms)
{
	return wait_child(t->tid, __WALL, status, since, timeout_ms);
}

/* A signal at its delivery stop: kept for later, not delivered now. */
static void hold_signal(struct thread *t, int sig)
{
	siginfo_t info;

	if (t->held_count < MAX_HELD_SIGNALS && !ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &info) &&
	    info.si_signo == sig)
		t->held[t->held_count++] = info;
	else if (sig > 0 && sig < _NSIG)
		t->more_held[sig]++;
}

static void resend(const struct thread *t, const siginfo_t *info)
{
	/* The kernel takes a siginfo from another process only with a negative code. */
	if (info->si_code < 0 && info->si_code != SI_TKILL &&
	    !syscall(SYS_rt_tgsigqueueinfo, t->pid, t->tid, info->si_signo, info))
		return;
	syscall(SYS_tgkill, t->pid, t->tid, info->si_signo);
}

/*
 * Detaches (the thread is stopped) and delivers what was held: the first
 * signal at the detach when it can. Without detach (the thread never
 * stopped), the signals are queued again and the helper's exit detaches.
 */
static void release(struct thread *t, bool detach)
{
	int first = 0, from = 0;

	if (detach && t->in_signal_stop && t->held_count &&
	    !ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &t->held[0])) {
		first = t->held[0].si_signo;
		from = 1;
	}
	if (detach)
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)first);
	for (int i = from; i < t->held_count; i++)
		resend(t, &t->held[i]);
	for (int sig = 1; sig < _NSIG; sig++) {
		for (unsigned int i = 0; i < t->more_held[sig]; i++)
			syscall(SYS_tgkill, t->pid, t->tid, sig);
	}
}

/* Why the kernel refused PTRACE_SEIZE. */
static void explain_refusal(pid_t pid, int err, char *why, size_t size)
{
	char mine[64] = "", its[64] = "", path[64];
	FILE *file = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (file) {
		if (fscanf(file, "%d", &scope) != 1)
			scope = 0;
		fclose(file);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	if (readlink("/proc/self/ns/user", mine, sizeof(mine) - 1) < 0 ||
	    readlink(path, its, sizeof(its) - 1) < 0)
		mine[0] = its[0] = '\0';
	if (err != EPERM)
		snprintf(why, size, "cannot ptrace process %d: %s; it is left untouched", pid,
			 strerror(err));
	else if (mine[0] && strcmp(mine, its))
		snprintf(
			why, size,
			"cannot ptrace process %d: it is in another user namespace (%s; optrace is "
			"in %s), where optrace has no CAP_SYS_PTRACE; it is left untouched",
			pid, its, mine);
	else if (scope)
		snprintf(
			why, size,
			"cannot ptrace process %d: kernel.yama.ptrace_scope is %d, which lets only "
			"a parent or CAP_SYS_PTRACE (root) stop it; it is left untouched",
			pid, scope);
	else
		snprintf(why, size,
			 "cannot ptrace process %d: the kernel refused (EPERM: not root, or a "
			 "security module forbids it); it is left untouched",
			 pid);
}

/*
 * System calls a thread waits in while it holds none of the C library's
 * locks (not inside malloc, not inside the loader): where it is safest to
 * make it call dlopen. A thread in another one (an ioctl of the GPU
 * driver's) may hold a lock of a library's that the call needs.
 */
static bool waiting_call(long nr)
{
	static const long waits[] = {
		SYS_read,      SYS_poll,	SYS_select,	     SYS_pause,
		SYS_nanosleep, SYS_wait4,	SYS_rt_sigsuspend,   SYS_rt_sigtimedwait,
		SYS_futex,     SYS_epoll_wait,	SYS_clock_nanosleep, SYS_pselect6,
		SYS_ppoll,     SYS_epoll_pwait, SYS_accept,	     SYS_accept4,
		SYS_recvfrom,  SYS_recvmsg,	SYS_waitid,
	};

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		if (nr == waits[i])
			return true;
	}
	return false;
}

/*
 * A thread to stop: one waiting in a system call (waiting_call), the main
 * thread first; then one in another system call; then one running.
 */
static pid_t choose_thread(pid_t pid)
{
	char path[96], line[512];
	pid_t best = 0;
	int best_score = -1;
	struct dirent *entry;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((entry = readdir(dir))) {
		pid_t tid = (pid_t)atoi(entry->d_name);
		char state = '?', *paren;
		int score = 0;
		long nr = -1;
		FILE *file;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		file = fopen(path, "re");
		if (file) {
			if (fgets(line, sizeof(line), file) && (paren = strrchr(line, ')')))
				sscanf(paren + 1, " %c", &state);
			fclose(file);
		}
		if (state != 'S' && state != 'R')
			continue; /* D: it may not stop soon; T, t, Z: not ours to run */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
		file = fopen(path, "re");
		if (file) {
			if (!fgets(line, sizeof(line), file) || sscanf(line, "%ld", &nr) != 1)
				nr = -1; /* "running" */
			fclose(file);
		}
		if (state == 'S' && nr >= 0)
			score = waiting_call(nr) ? 4 : 2;
		score += tid == pid;
		if (score > best_score) {
			best = tid;
			best_score = score;
		}
	}
	closedir(dir);
	return best;
}

/* Seizes the thread and waits for it to stop (signals meanwhile are held). */
static int stop_thread(struct thread *t, char *why, size_t size)
{
	struct timespec start;
	int status, err;

	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL)) {
		err = errno;
		explain_refusal(t->pid, err, why, size);
		return err == ESRCH ? -ESRCH : -EPERM;
	}
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL)) {
		err = errno;
		snprintf(why, size, "cannot stop thread %d of process %d: %s", t->tid, t->pid,
			 strerror(err));
		return -err;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		err = wait_thread(t, &status, &start, STOP_TIMEOUT_MS);
		if (err == -ETIMEDOUT) {
			snprintf(why, size,
				 "thread %d of process %d did not stop within %d s (in an "
				 "uninterruptible wait, or a storm of signals?); it is left "
				 "untouched: try again when it is idle",
				 t->tid, t->pid, STOP_TIMEOUT_MS / 1000);
			return err;
		}
		if (err || !WIFSTOPPED(status)) {
			snprintf(why, size, "process %d ended", t->pid);
			return -ESRCH;
		}
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) == SIGTRAP)
				return 0;
			snprintf(why, size,
				 "process %d is being stopped (signal %d): it is left untouched, "
				 "stopped",
				 t->pid, WSTOPSIG(status));
			return -EAGAIN;
		}
		if (!(status >> 16))
			hold_signal(t, WSTOPSIG(status));
		ptrace(PTRACE_CONT, t->tid, NULL, NULL);
	}
}

static int save_state(struct thread *t)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->saved))
		return -errno;
	/* The whole XSAVE area (AVX, AVX-512, AMX): the calls use vector registers. */
	t->xstate.iov_len = 64 * 1024;
	t->xstate.iov_base = calloc(1, t->xstate.iov_len);
	if (t->xstate.iov_base &&
	    !ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &t->xstate))
		return 0;
	free(t->xstate.iov_base);
	t->xstate.iov_base = NULL;
	return ptrace(PTRACE_GETFPREGS, t->tid, NULL, &t->fpregs) ? -errno : 0;
}

static int restore_state(struct thread *t)
{
	struct user_regs_struct regs = t->saved;
	int err = 0;

	if (t->restart_clobbered && (long long)regs.orig_rax >= 0 &&
	    (long long)regs.rax == -ERESTART_RESTARTBLOCK)
		regs.rax = (unsigned long long)-EINTR;
	if (t->xstate.iov_base ? ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &t->xstate)
			       : ptrace(PTRACE_SETFPREGS, t->tid, NULL, &t->fpregs))
		err = -errno;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs))
		err = -errno;
	free(t->xstate.iov_base);
	t->xstate.iov_base = NULL;
	return err;
}

static int write_memory(pid_t pid, uint64_t address, const void *data, size_t size)
{
	struct iovec local = { .iov_base = (void *)data, .iov_len = size };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)address, .iov_len = size };
	char path[64];
	ssize_t done;
	int fd;

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)size)
		return 0;
	/* Stack pages not yet touched, or no process_vm_writev: through /proc/PID/mem. */
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	done = pwrite(fd, data, size, (off_t)address);
	close(fd);
	return done == (ssize_t)size ? 0 : -EFAULT;
}

/* Writes text below what is already used of the stack; its address into *address. */
static int push_string(struct thread *t, const char *text, uint64_t *address)
{
	size_t length = strlen(text) + 1;

	t->scratch = (t->scratch - length) & ~(uint64_t)15;
	*address = t->scratch;
	return write_memory(t->pid, t->scratch, text, length);
}

static void say_hung(struct thread *t, const char *what)
{
	struct answer answer = { .err = -ETIMEDOUT, .hung = true };

	snprintf(answer.why, sizeof(answer.why),
		 "the call of %s in process %d has not returned in %d s: it waits on a lock (of "
		 "the loader, or of CUDA) that its own thread %d holds? optrace's helper, "
		 "process %d, stays attached to put the thread back if it ever returns",
		 what, t->pid, CALL_TIMEOUT_MS / 1000, t->tid, getpid());
	if (write(t->answer_fd, &answer, sizeof(answer)) != (ssize_t)sizeof(answer))
		t->answer_fd = -1;
}

/* Calls function(arg0, arg1) on the thread; its return value into *result. */
static int call(struct thread *t, const char *what, uint64_t function, uint64_t arg0, uint64_t arg1,
		uint64_t *result, char *why, size_t size)
{
	struct user_regs_struct regs = t->saved, now;
	/* At the entry rsp + 8 is 16-byte aligned, as after a call instruction. */
	uint64_t sp = (t->scratch & ~(uint64_t)15) - 8, zero = 0;
	bool said_hung = false;
	struct timespec start;
	siginfo_t info;
	int status, err;

	err = write_memory(t->pid, sp, &zero, sizeof(zero));
	if (err) {
		snprintf(why, size, "cannot write to the stack of process %d: %s", t->pid,
			 strerror(-err));
		return err;
	}
	regs.rip = function;
	regs.rdi = arg0;
	regs.rsi = arg1;
	regs.rax = 0;
	regs.rsp = sp;
	regs.orig_rax = (unsigned long long)-1; /* no system call restart at the new pc */
	regs.eflags &= ~(unsigned long long)EFLAGS_DF;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs) ||
	    ptrace(PTRACE_CONT, t->tid, NULL, NULL)) {
		snprintf(why, size, "cannot run a call in process %d: %s", t->pid, strerror(errno));
		return -errno;
	}
	t->in_signal_stop = false;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		err = wait_thread(t, &status, &start, said_hung ? -1 : CALL_TIMEOUT_MS);
		if (err == -ETIMEDOUT) {
			say_hung(t, what);
			said_hung = true;
			continue;
		}
		if (err || !WIFSTOPPED(status)) {
			snprintf(why, size, "process %d ended during the call of %s (%s)", t->pid,
				 what,
				 !err && WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
							     : "gone");
			return -ESRCH;
		}
		if (status >> 16) {
			/*
			 * The process is being stopped (PTRACE_EVENT_STOP): this
			 * thread finishes the call first; at the detach the
			 * kernel stops it with the others.
			 */
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
			continue;
		}
		if (WSTOPSIG(status) == SIGSEGV &&
		    !ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &info) && info.si_code > 0 &&
		    !ptrace(PTRACE_GETREGS, t->tid, NULL, &now)) {
			t->in_signal_stop = true; /* the fault is never delivered */
			if (now.rip == 0 && now.rsp == sp + 8) {
				*result = now.rax;
				return 0;
			}
			snprintf(why, size,
				 "the call of %s faulted in process %d (at pc %#llx, address %p); "
				 "its thread is put back where it was, but the loader may be left "
				 "locked",
				 what, t->pid, now.rip, info.si_addr);
			return -EFAULT;
		}
		if (!ptrace(PTRACE_GETREGS, t->tid, NULL, &now) && (long long)now.orig_rax >= 0 &&
		    (long long)now.rax == -ERESTART_RESTARTBLOCK)
			t->restart_clobbered = true;
		hold_signal(t, WSTOPSIG(status));
		ptrace(PTRACE_CONT, t->tid, NULL, NULL);
	}
}

/* The text the library left in its error array, or dlerror()'s. */
static void read_text(pid_t pid, uint64_t address, char *text, size_t size)
{
	bool truncated;

	if (!address || process_read_string(pid, address, text, size, &truncated))
		snprintf(text, size, "(no reason given)");
}

/* dlopen, then init; the library unloaded again if init failed and it was asked. */
static int load(struct thread *t, const struct inject_request *request,
		const struct inject_loader *loader, char *why, size_t size)
{
	uint64_t path, handle = 0, base = 0, init = 0, error = 0, result = 0, text_at = 0;
	char host_path[PATH_MAX + 64], text[256];
	const char *name = base_name(request->library);
	int err;

	err = push_string(t, request->library, &path);
	if (err) {
		snprintf(why, size, "cannot write to the stack of process %d: %s", t->pid,
			 strerror(-err));
		return err;
	}
	err = call(t, "dlopen", loader->dlopen, path, RTLD_NOW, &handle, why, size);
	if (err)
		return err;
	if (!handle) {
		text[0] = '\0';
		if (loader->dlerror &&
		    !call(t, "dlerror", loader->dlerror, 0, 0, &text_at, why, size))
			read_text(t->pid, text_at, text, sizeof(text));
		snprintf(why, size, "dlopen(%s) failed in process %d: %s", request->library, t->pid,
			 text[0] ? text : "(no reason given)");
		return -ENOEXEC;
	}
	/* The handle is the loader's link_map (glibc) or dso (musl): its load bias first. */
	snprintf(host_path, sizeof(host_path), "/proc/%d/root%s", t->pid, request->library);
	err = process_read(t->pid, handle, &base, sizeof(base));
	err = err ?: elf_symbol_value(host_path, request->init, &init);
	if (err) {
		if (request->unload_on_failure && loader->dlclose)
			call(t, "dlclose", loader->dlclose, handle, 0, &result, text, sizeof(text));
		snprintf(why, size,
			 "%s was loaded into process %d, but its %s was not found (%s)%s", name,
			 t->pid, request->init, strerror(-err),
			 request->unload_on_failure && loader->dlclose ? ": unloaded again" : "");
		return err;
	}
	err = call(t, request->init, base + init, 0, 0, &result, why, size);
	if (err)
		return err;
	if ((int)result == 1)
		return 0;
	if (request->error && !elf_symbol_value(host_path, request->error, &error))
		read_text(t->pid, base + error, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s returned %d", request->init, (int)result);
	if (request->unload_on_failure && loader->dlclose &&
	    !call(t, "dlclose", loader->dlclose, handle, 0, &result, why, size))
		snprintf(why, size, "%s did not start in process %d: %s; it was unloaded again",
			 name, t->pid, text);
	else
		snprintf(why, size, "%s did not start in process %d: %s; it stays loaded, dormant",
			 name, t->pid, text);
	return -ECANCELED;
}

/* In the helper: all of it, from the thread's stop to its release. */
static int run(pid_t pid, const struct inject_request *request, const struct inject_loader *loader,
	       int answer_fd, char *why, size_t size)
{
	static struct thread t; /* large: held signals */
	struct timespec start;
	int err, restore_err;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.answer_fd = answer_fd;
	t.tid = choose_thread(pid);
	if (!t.tid) {
		snprintf(why, size,
			 "no thread of process %d can be stopped now; it is left untouched", pid);
		return -EAGAIN;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	err = stop_thread(&t, why, size);
	if (err) {
		/* Stopped by a stop signal: detached, it stays so; else the helper's exit lets go.
		 */
		if (err != -EPERM && err != -ESRCH)
			release(&t, err == -EAGAIN);
		return err;
	}
	err = save_state(&t);
	if (err) {
		snprintf(why, size, "cannot read the registers of process %d: %s", pid,
			 strerror(-err));
		release(&t, true);
		return err;
	}
	t.scratch = t.saved.rsp - RED_ZONE;
	err = load(&t, request, loader, why, size);
	restore_err = restore_state(&t);
	if (restore_err && !err) {
		snprintf(why, size, "cannot put back the registers of process %d: %s", pid,
			 strerror(-restore_err));
		err = restore_err;
	}
	if (!err) {
		int held = t.held_count;

		for (int sig = 1; sig < _NSIG; sig++)
			held += (int)t.more_held[sig];
		/* For -v: how it went. */
		snprintf(why, size,
			 "loaded %s into process %d through its thread %d (stopped %s, at pc "
			 "%#llx, for %lld ms), with %.200s; %d signal(s) that came meanwhile "
			 "delivered after",
			 base_name(request->library), pid, t.tid,
			 (long long)t.saved.orig_rax >= 0 ? "in a system call" : "running",
			 t.saved.rip, elapsed_ms(&start), loader->found_in, held);
	}
	release(&t, true);
	return err;
}

static int start_helper(pid_t pid, const struct inject_request *request,
			const struct inject_loader *loader, int *answer_fd, pid_t *helper)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	struct answer answer = { 0 };
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	*helper = fork();
	if (*helper < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (*helper == 0) {
		/* Ctrl-C and optrace's end do not stop it halfway. */
		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			signal(ignored[i], SIG_IGN);
		close(fds[0]);
		answer.err = run(pid, request, loader, fds[1], answer.why, sizeof(answer.why));
		if (write(fds[1], &answer, sizeof(answer)) != (ssize_t)sizeof(answer))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	*answer_fd = fds[0];
	return 0;
}

/*
 * The helper's answer, within ANSWER_TIMEOUT_MS: 0, -ETIMEDOUT, -EIO (it
 * died), or -EINTR: a signal optrace handles came (only its stop signals
 * have handlers), acted on now; the helper finishes alone.
 */
static int await_answer(int fd, struct answer *answer)
{
	struct pollfd poll_fd = { .fd = fd, .events = POLLIN };
	int ready = poll(&poll_fd, 1, ANSWER_TIMEOUT_MS);

	if (ready < 0)
		return -errno;
	if (!ready)
		return -ETIMEDOUT;
	return read(fd, answer, sizeof(*answer)) == (ssize_t)sizeof(*answer) ? 0 : -EIO;
}

/* Reaps the helper, which answered or died: it is gone within a second, or left. */
static void reap_helper(pid_t helper, int *status)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	*status = 0;
	wait_child(helper, 0, status, &now, EXIT_TIMEOUT_MS);
}

int inject_library(pid_t pid, const struct inject_request *request, char *why, size_t size)
{
	const char *name = base_name(request->library);
	struct inject_loader loader;
	struct answer answer = { 0 };
	pid_t helper = -1;
	int err, status, fd = -1;

	err = inject_check(pid, why, size);
	if (err)
		return err;
	err = inject_find_loader(pid, &loader);
	if (err) {
		snprintf(why, size,
			 err == -ESRCH
				 ? "no process %d"
				 : "process %d maps no dlopen (neither glibc nor musl): it is "
				   "left untouched",
			 pid);
		return err;
	}
	err = start_helper(pid, request, &loader, &fd, &helper);
	if (err) {
		snprintf(why, size, "cannot start a helper process: %s", strerror(-err));
		return err;
	}
	err = await_answer(fd, &answer);
	close(fd);
	if (err == -EINTR) {
		snprintf(why, size,
			 "interrupted while optrace's helper (process %d) loads %s into process "
			 "%d: the helper finishes alone and puts its thread back; run optrace "
			 "again to record it",
			 helper, name, pid);
		return err;
	}
	if (err == -ETIMEDOUT) {
		snprintf(why, size,
			 "no answer in %d s from optrace's helper (process %d) loading %s into "
			 "process %d; it is left to finish: see whether process %d runs (kill "
			 "the helper if it stays)",
			 ANSWER_TIMEOUT_MS / 1000, helper, name, pid, pid);
		return err;
	}
	if (err) {
		reap_helper(helper, &status);
		snprintf(why, size, "optrace's helper loading %s into process %d died (status %#x)",
			 name, pid, status);
		return -EIO;
	}
	if (!answer.hung)
		reap_helper(helper, &status);
	snprintf(why, size, "%s", answer.why);
	return answer.err;
}

#else /* not x86-64: inject_check() says so */

int inject_library(pid_t pid, const struct inject_request *request, char *why, size_t size)
{
	(void)request;
	return inject_check(pid, why, size) ?: -ENOTSUP;
}

#endif
