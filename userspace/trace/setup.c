// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What loading BPF needs: libbpf's messages, this machine's abilities, liboptrace's place. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "trace/setup.h"

int libbpf_print(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG && diag_verbosity() < 2)
		return 0;
	if (!diag_verbosity())
		return 0;
	/* libbpf's own lines, as it words them: not diag(). */
	return vfprintf(stderr, format, args);
}

const char *tracing_unavailable(void)
{
	if (geteuid() != 0)
		return "optrace needs root to load BPF programs and attach uprobes: run it with "
		       "sudo";
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "this kernel has no BTF (/sys/kernel/btf/vmlinux): optrace needs a kernel "
		       "built with CONFIG_DEBUG_INFO_BTF=y";
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK))
		return "this kernel has no uprobes (/sys/bus/event_source/devices/uprobe): optrace "
		       "needs a kernel built with CONFIG_UPROBE_EVENTS=y";
	return NULL;
}

const char *default_liboptrace(char *buffer, unsigned long size)
{
	char self[4096];
	struct link_map *map = NULL;
	ssize_t length;
	void *handle;
	char *slash;

	/* The liboptrace installed beside optrace: PREFIX/bin/../lib. */
	length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (length > 0) {
		self[length] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buffer, size, "%s/../lib/liboptrace.so.1", self);
			if (!access(buffer, R_OK))
				return buffer;
		}
	}
	/* Else the one the dynamic linker finds. */
	handle = dlopen("liboptrace.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (handle && !dlinfo(handle, RTLD_DI_LINKMAP, &map) && map && map->l_name[0]) {
		snprintf(buffer, size, "%s", map->l_name);
		dlclose(handle);
		return buffer;
	}
	if (handle)
		dlclose(handle);
	return NULL;
}
