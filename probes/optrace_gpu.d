/*
 * The optrace_gpu USDT provider, record version 1: GPU activity, fired by
 * liboptrace's optrace_gpu_*() functions (which liboptrace-cupti calls for
 * each CUPTI record). Living in liboptrace, beside the optrace provider,
 * they are found wherever a tracer finds liboptrace. Turned into
 * optrace_gpu_probes.h by systemtap-sdt-dev's `dtrace -h`, and into the
 * semaphores' object by `dtrace -G`. Each record probe carries a pointer to
 * a packed record of include/optrace/gpu.h; docs/cupti.md documents them.
 */
provider optrace_gpu {
	probe kernel(const void *record);
	probe memcpy(const void *record);
	probe memset(const void *record);
	probe api(const void *record);
	probe sync(const void *record);
	probe kernel_name(uint32_t name_id, const char *name);
	probe dropped(uint64_t count, uint32_t source);
	probe launch(uint32_t correlation_id, uint32_t api_kind, uint32_t flags);
};
