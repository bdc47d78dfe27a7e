// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/elf_symbols.h"
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

int runtime_info_read(pid_t pid, struct optrace_runtime_info *info)
{
	uint64_t address = 0;
	char mem_path[64];
	int err, fd;

	err = liboptrace_symbol_address(pid, "optrace_runtime", &address);
	if (err)
		return err;
	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", pid);
	fd = open(mem_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, info, sizeof(*info), (off_t)address) != sizeof(*info))
		err = -EIO;
	close(fd);
	/* The process is untrusted: believe only what makes sense. */
	if (!err && (info->abi_version < 1 || info->abi_version > OPTRACE_ABI_VERSION ||
		     info->rank_count < 1 || info->rank < 0 || info->rank >= info->rank_count))
		err = -EPROTO;
	return err;
}
