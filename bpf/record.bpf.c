// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record: one fixed-size record per probe hit into a ring buffer.
 *
 * Submits never wake the consumer (BPF_RB_NO_WAKEUP): a wakeup costs more
 * than the event itself, and optrace polls every few milliseconds instead.
 * Strings go once per (process, address), just before the first event that
 * names them; every loss is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "targets.bpf.h"
#include "usdt_fetch.bpf.h"

#include "batch.bpf.h"
#include "events.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024); /* the loader may resize it */
} events SEC(".maps");

/* Strings already sent; an evicted one is sent again, which is harmless. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct string_key);
	__type(value, __u8);
} sent_strings SEC(".maps");

#define LOSS_COUNT RECORD_LOSS__COUNT
#include "losses.bpf.h"

/*
 * A global function: the verifier checks it once, not once for each place
 * and each round of the batch walks that call it (docs/bench.md, "Start-up").
 */
__noinline int send_string(__u64 pid_tgid, __u64 address)
{
	struct string_key key = { .tgid = pid_tgid >> 32, .address = address };
	struct record_string *record;
	__u8 yes = 1;
	long length;

	if (!address || bpf_map_lookup_elem(&sent_strings, &key))
		return 0;
	record = bpf_ringbuf_reserve(&events, sizeof(*record), 0);
	if (!record) {
		count_loss(RECORD_LOSS_STRING_DROPPED);
		return 0;
	}
	record->timestamp = bpf_ktime_get_ns();
	record->tgid = pid_tgid >> 32;
	record->tid = (__u32)pid_tgid;
	record->type = RECORD_STRING;
	record->reserved = 0;
	record->address = address;
	record->truncated = 0;
	record->unreadable = 0;
	length = bpf_probe_read_user_str(record->text, sizeof(record->text), (void *)address);
	if (length < 0) {
		record->text[0] = '\0';
		record->unreadable = 1;
		count_loss(RECORD_LOSS_STRING_UNREADABLE);
	} else if (string_was_cut(address, length, sizeof(record->text))) {
		record->truncated = 1;
		count_loss(RECORD_LOSS_STRING_TRUNCATED);
	}
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
	bpf_map_update_elem(&sent_strings, &key, &yes, BPF_ANY);
	return 0;
}

/*
 * The current thread's id as its own pid namespace numbers it: what
 * gettid() gives inside a container, and so what CUPTI puts in its records.
 */
static __always_inline __u32 ns_tid(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	/* Levels run 0 to MAX_PID_NS_LEVEL (32); numbers[] has level + 1 entries. */
	if (level > 32)
		return 0;
	bpf_core_read(&nr, sizeof(nr), &pid->numbers[level].nr);
	return (__u32)nr;
}

static __always_inline int send_event_as(__u16 type, __u32 thread_ns_tid, __u64 a0, __u64 a1,
					 __u64 a2, __u64 a3, __u64 a4)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct record_event *event;

	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		count_loss(RECORD_LOSS_RINGBUF_FULL);
		return 0;
	}
	event->timestamp = bpf_ktime_get_ns();
	event->tgid = pid_tgid >> 32;
	event->tid = (__u32)pid_tgid;
	event->type = type;
	event->cpu = (__u16)bpf_get_smp_processor_id();
	event->ns_tid = thread_ns_tid;
	event->args[0] = a0;
	event->args[1] = a1;
	event->args[2] = a2;
	event->args[3] = a3;
	event->args[4] = a4;
	bpf_ringbuf_submit(event, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int send_event(__u16 type, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	return send_event_as(type, 0, a0, a1, a2, a3, a4);
}

#define TARGETS_ONLY()                                            \
	do {                                                      \
		if (!is_target(bpf_get_current_pid_tgid() >> 32)) \
			return 0;                                 \
	} while (0)

SEC("usdt")
int USDT_PROBE(rt_init, int abi_version, int rank, int rank_count)
{
	TARGETS_ONLY();
	return send_event(RECORD_RT_INIT, abi_version, rank, rank_count, 0, 0);
}

SEC("usdt")
int USDT_PROBE(op_begin, __u64 op, __u64 parent, __u32 depth, __u64 name, __u64 callsite)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	TARGETS_ONLY();
	send_string(pid_tgid, name);
	send_string(pid_tgid, callsite);
	return send_event_as(RECORD_OP_BEGIN, ns_tid(), op, parent, depth, name, callsite);
}

SEC("usdt")
int USDT_PROBE(op_end, __u64 op, int status)
{
	TARGETS_ONLY();
	return send_event(RECORD_OP_END, op, status, 0, 0, 0);
}

SEC("usdt")
int USDT_PROBE(op_mode, __u64 op, int mode, int reason)
{
	TARGETS_ONLY();
	return send_event(RECORD_OP_MODE, op, mode, reason, 0, 0);
}

SEC("usdt")
int USDT_PROBE(op_fallback, __u64 op, int reason, __u64 detail)
{
	TARGETS_ONLY();
	send_string(bpf_get_current_pid_tgid(), detail);
	return send_event(RECORD_OP_FALLBACK, op, reason, detail, 0, 0);
}

SEC("usdt")
int USDT_PROBE(task_launch, __u64 task, __u64 op, __u64 root_op, __u64 name, __u32 points)
{
	TARGETS_ONLY();
	send_string(bpf_get_current_pid_tgid(), name);
	return send_event(RECORD_TASK_LAUNCH, task, op, root_op, name, points);
}

SEC("usdt")
int USDT_PROBE(task_begin, __u64 task, __u32 point, int variant, __u32 processor)
{
	TARGETS_ONLY();
	return send_event_as(RECORD_TASK_BEGIN, ns_tid(), task, point, variant, processor, 0);
}

SEC("usdt")
int USDT_PROBE(task_end, __u64 task, __u32 point, int status)
{
	TARGETS_ONLY();
	return send_event(RECORD_TASK_END, task, point, status, 0, 0);
}

SEC("usdt")
int USDT_PROBE(wait_begin, __u64 op, int kind)
{
	TARGETS_ONLY();
	return send_event(RECORD_WAIT_BEGIN, op, kind, 0, 0, 0);
}

SEC("usdt")
int USDT_PROBE(wait_end, __u64 op, int kind)
{
	TARGETS_ONLY();
	return send_event(RECORD_WAIT_END, op, kind, 0, 0, 0);
}

/*
 * GPU activity (the optrace_gpu provider, also in liboptrace): records are
 * copied as they are; optrace decodes them. Fired in bursts from the
 * producer's own thread (CUPTI's buffer completion), not from the thread
 * that launched the work: the record's own fields say which that was.
 */
static __always_inline int send_gpu_record(__u64 address)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct record_gpu_head head;
	struct record_gpu *record;
	__u32 size;

	if (bpf_probe_read_user(&head, sizeof(head), (void *)address)) {
		count_loss(RECORD_LOSS_GPU_UNREADABLE);
		return 0;
	}
	size = head.size;
	if (size < sizeof(head))
		size = sizeof(head);
	if (size > RECORD_GPU_MAX)
		size = RECORD_GPU_MAX; /* a newer, longer record: its first fields */
	record = bpf_ringbuf_reserve(&events, sizeof(*record), 0);
	if (!record) {
		count_loss(RECORD_LOSS_GPU_RINGBUF_FULL);
		return 0;
	}
	record->timestamp = bpf_ktime_get_ns();
	record->tgid = pid_tgid >> 32;
	record->tid = (__u32)pid_tgid;
	record->type = RECORD_GPU;
	record->size = (__u16)size;
	record->reserved = 0;
	if (bpf_probe_read_user(record->data, size, (void *)address)) {
		count_loss(RECORD_LOSS_GPU_UNREADABLE);
		bpf_ringbuf_discard(record, BPF_RB_NO_WAKEUP);
		return 0;
	}
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int USDT_PROBE(gpu_kernel, __u64 record)
{
	TARGETS_ONLY();
	return send_gpu_record(record);
}

SEC("usdt")
int USDT_PROBE(gpu_memcpy, __u64 record)
{
	TARGETS_ONLY();
	return send_gpu_record(record);
}

SEC("usdt")
int USDT_PROBE(gpu_memset, __u64 record)
{
	TARGETS_ONLY();
	return send_gpu_record(record);
}

SEC("usdt")
int USDT_PROBE(gpu_api, __u64 record)
{
	TARGETS_ONLY();
	return send_gpu_record(record);
}

SEC("usdt")
int USDT_PROBE(gpu_sync, __u64 record)
{
	TARGETS_ONLY();
	return send_gpu_record(record);
}

SEC("usdt")
int USDT_PROBE(gpu_kernel_name, __u32 name_id, __u64 name)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct record_gpu_name *record;
	long length;

	TARGETS_ONLY();
	record = bpf_ringbuf_reserve(&events, sizeof(*record), 0);
	if (!record) {
		count_loss(RECORD_LOSS_STRING_DROPPED);
		return 0;
	}
	record->timestamp = bpf_ktime_get_ns();
	record->tgid = pid_tgid >> 32;
	record->tid = (__u32)pid_tgid;
	record->type = RECORD_GPU_NAME;
	record->name_id = name_id;
	record->truncated = 0;
	record->unreadable = 0;
	length = bpf_probe_read_user_str(record->text, sizeof(record->text), (void *)name);
	if (length < 0) {
		record->text[0] = '\0';
		record->unreadable = 1;
		count_loss(RECORD_LOSS_STRING_UNREADABLE);
	} else if (string_was_cut(name, length, sizeof(record->text))) {
		record->truncated = 1;
		count_loss(RECORD_LOSS_STRING_TRUNCATED);
	}
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
	return 0;
}

/* A CUDA call that launches, one probe hit each (the fast path has them in batches). */
SEC("usdt")
int USDT_PROBE(gpu_launch, __u32 correlation_id, __u32 api_kind, __u32 flags)
{
	TARGETS_ONLY();
	return send_event(RECORD_GPU_LAUNCH, correlation_id, api_kind, flags, 0, 0);
}

/* count [, source]: a library from before the source counts CUPTI's buffers. */
SEC("usdt")
int gpu_dropped(struct pt_regs *ctx)
{
	__u64 args[2] = {};

	TARGETS_ONLY();
	if ((usdt_fetch(ctx, args, 2) && usdt_fetch(ctx, args, 1)))
		return 0;
	return send_event(RECORD_GPU_DROPPED, args[0], args[1], 0, 0, 0);
}

/*
 * The fast path: a thread's batch goes into the ring buffer as it is, and
 * optrace decodes it. First the strings its events name, each once per
 * process: those the library listed (ABI 4), or else those found in its
 * events (a batch repeats the same few: the last ones sent are remembered
 * here, to spare most lookups).
 */
#define RECENT_STRINGS 4

struct string_walk {
	__u64 pid_tgid;
	__u64 events;
	__u64 strings;		      /* the library's list of the batch's strings */
	struct record_batch *copy;    /* the events in their reservation, or NULL: read them */
	__u64 recent[RECENT_STRINGS]; /* the newest first */
	bool unreadable;	   /* a flag, not a count: the verifier must see iterations alike */
	struct optrace_event read; /* an event read from the process, without a reservation */
};

static __always_inline void send_string_once(struct string_walk *walk, __u64 address)
{
	if (!address)
		return;
	for (int i = 0; i < RECENT_STRINGS; i++) {
		if (walk->recent[i] == address)
			return;
	}
	send_string(walk->pid_tgid, address);
	/*
	 * Shifted, not indexed by a counter: a counter the verifier must
	 * track exactly makes every round of the walk a new state to check.
	 */
	for (int i = RECENT_STRINGS - 1; i > 0; i--)
		walk->recent[i] = walk->recent[i - 1];
	walk->recent[0] = address;
}

static int send_event_strings(__u32 index, struct string_walk *walk)
{
	__u64 strings[OPTRACE_EVENT_MAX_STRINGS] = { 0 };
	const struct optrace_event *event = &walk->read;

	if (walk->copy) {
		if (index >= OPTRACE_BATCH_EVENTS)
			return 1;
		event = &walk->copy->events[index]; /* in place: no copy per event */
	} else if (read_event(&walk->read, walk->events, index)) {
		walk->unreadable = true;
		return 1;
	}
	/* the decoder keeps no copy: task_begin's names are task_launch's */
	optrace_event_strings(event, false, strings);
	send_string_once(walk, strings[0]);
	send_string_once(walk, strings[1]);
	return 0;
}

static int send_listed_string(__u32 index, struct string_walk *walk)
{
	__u64 address;

	if (bpf_probe_read_user(&address, sizeof(address),
				(void *)(walk->strings + (__u64)index * sizeof(address)))) {
		walk->unreadable = true;
		return 1;
	}
	send_string_once(walk, address);
	return 0;
}

/*
 * The batch's strings: from the library's list where it gave a whole one
 * that can be read, else from each of its count events.
 */
static __always_inline void send_batch_strings(struct string_walk *walk, __u32 count,
					       __u64 string_count)
{
	if (string_count <= OPTRACE_BATCH_STRINGS) {
		bpf_loop(string_count, send_listed_string, walk, 0);
		if (!walk->unreadable)
			return;
		walk->unreadable = false;
	}
	bpf_loop(count, send_event_strings, walk, 0);
}

/* Everything of a record_batch but its events. */
static __always_inline void fill_batch_head(struct record_batch *batch,
					    const struct string_walk *walk, __u32 count, __u32 tid,
					    __u64 sequence)
{
	struct task_struct *task;

	batch->timestamp = bpf_ktime_get_ns();
	batch->tgid = walk->pid_tgid >> 32;
	batch->tid = tid;
	batch->type = RECORD_BATCH;
	batch->cpu = (__u16)bpf_get_smp_processor_id();
	batch->ns_tid = tid == (__u32)walk->pid_tgid ? ns_tid() : 0;
	batch->sequence = sequence;
	batch->buffer = walk->events;
	batch->count = count;
	batch->reserved = 0;
	__builtin_memset(batch->thread_comm, 0, sizeof(batch->thread_comm));
	if (tid == (__u32)walk->pid_tgid)
		bpf_get_current_comm(batch->thread_comm, sizeof(batch->thread_comm));
	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ_STR_INTO(&batch->process_comm, task, group_leader, comm) < 0)
		batch->process_comm[0] = '\0';
}

/*
 * The batch into the ring buffer, in a reservation of capacity events: a
 * thread's buffer always has room for all of its events, so reading a whole
 * reservation reads its own stale slots past count, and a constant size is
 * what the verifier checks.
 */
static __always_inline void send_batch(struct string_walk *walk, __u32 capacity, __u32 count,
				       __u32 tid, __u64 sequence)
{
	__u32 size = RECORD_BATCH_SIZE(capacity);
	struct record_batch *batch = bpf_ringbuf_reserve(&events, size, 0);

	if (!batch) {
		count_losses(RECORD_LOSS_RINGBUF_FULL, count);
		return;
	}
	if (bpf_probe_read_user(batch->events, capacity * sizeof(struct optrace_event),
				(void *)walk->events)) {
		count_losses(RECORD_LOSS_BATCH_BAD, count);
		bpf_ringbuf_discard(batch, BPF_RB_NO_WAKEUP);
		return;
	}
	fill_batch_head(batch, walk, count, tid, sequence);
	bpf_ringbuf_submit(batch, BPF_RB_NO_WAKEUP);
}

/* events, count, tid, sequence [, strings, string_count] (ABI 4) */
SEC("usdt")
int batch(struct pt_regs *ctx)
{
	struct string_walk walk = { .pid_tgid = bpf_get_current_pid_tgid() };
	__u64 args[6] = {};
	__u32 count, tid;
	__u64 sequence;

	TARGETS_ONLY();
	if (usdt_fetch(ctx, args, 6)) {
		if (usdt_fetch(ctx, args, 4))
			return 0;
		args[5] = OPTRACE_BATCH_STRINGS + 1; /* a library before ABI 4 lists none */
	}
	walk.events = args[0];
	count = (__u32)args[1];
	tid = (__u32)args[2];
	sequence = args[3];
	walk.strings = args[4];
	if (count == 0 || count > OPTRACE_BATCH_EVENTS) {
		count_losses(RECORD_LOSS_BATCH_BAD, count ? count : 1);
		return 0;
	}
	/*
	 * A full batch: read at once into its reservation, its strings sent
	 * from there, and submitted: one copy of the events.
	 */
	if (count > RECORD_BATCH_SMALL) {
		struct record_batch *batch =
			bpf_ringbuf_reserve(&events, RECORD_BATCH_SIZE(OPTRACE_BATCH_EVENTS), 0);

		if (!batch) {
			count_losses(RECORD_LOSS_RINGBUF_FULL, count);
			return 0;
		}
		if (bpf_probe_read_user(batch->events,
					OPTRACE_BATCH_EVENTS * sizeof(struct optrace_event),
					(void *)walk.events)) {
			count_losses(RECORD_LOSS_BATCH_BAD, count);
			bpf_ringbuf_discard(batch, BPF_RB_NO_WAKEUP);
			return 0;
		}
		walk.copy = batch;
		send_batch_strings(&walk, count, args[5]);
		fill_batch_head(batch, &walk, count, tid, sequence);
		bpf_ringbuf_submit(batch, BPF_RB_NO_WAKEUP);
		return 0;
	}
	send_batch_strings(&walk, count, args[5]);
	if (walk.unreadable) {
		count_losses(RECORD_LOSS_BATCH_BAD, count);
		return 0;
	}
	if (count <= RECORD_BATCH_SMALL)
		send_batch(&walk, RECORD_BATCH_SMALL, count, tid, sequence);
	else
		send_batch(&walk, OPTRACE_BATCH_EVENTS, count, tid, sequence);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
