/*
 * The optrace_gpu USDT provider of liboptrace-cupti, record version 1.
 * Turned into optrace_gpu_probes.h by systemtap-sdt-dev's `dtrace -h`, and
 * into the semaphores' object by `dtrace -G`. Each record probe carries a
 * pointer to a packed record of include/optrace/gpu.h; docs/cupti.md
 * documents them.
 */
provider optrace_gpu {
	probe kernel(const void *record);
	probe memcpy(const void *record);
	probe memset(const void *record);
	probe api(const void *record);
	probe sync(const void *record);
	probe kernel_name(uint32_t name_id, const char *name);
	probe dropped(uint64_t count);
};
