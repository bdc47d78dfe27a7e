/*
 * The optrace USDT provider, ABI 2. Turned into probes/optrace_probes.h by
 * systemtap-sdt-dev's `dtrace -h`, and into the semaphores' object by
 * probes/semaphores.c (which keeps the semaphores side by side, so that one
 * test sees whether any is armed). docs/probes.md documents every argument.
 * batch (ABI 2, the fast path): count struct optrace_event at events,
 * buffered by thread tid, the first with that thread's sequence number;
 * since ABI 4 also the string_count addresses at strings that they name.
 */
provider optrace {
	probe rt_init(uint32_t abi_version, int32_t rank, int32_t rank_count);
	probe op_begin(uint64_t op, uint64_t parent, uint32_t depth, const char *name, const char *callsite);
	probe op_end(uint64_t op, int32_t status);
	probe op_mode(uint64_t op, int32_t mode, int32_t reason);
	probe op_fallback(uint64_t op, int32_t reason, const char *detail);
	probe task_launch(uint64_t task, uint64_t op, uint64_t root_op, const char *name, uint32_t points);
	probe task_begin(uint64_t task, uint32_t point, int32_t variant, uint32_t processor);
	probe task_end(uint64_t task, uint32_t point, int32_t status);
	probe wait_begin(uint64_t op, int32_t kind);
	probe wait_end(uint64_t op, int32_t kind);
	probe batch(const void *events, uint32_t count, uint32_t tid, uint64_t sequence,
		    const uint64_t *strings, uint32_t string_count);
};
