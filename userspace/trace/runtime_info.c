// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/runtime_info.h"
#include "trace/targets.h"

/* The symbol's address relative to the file's first loaded page. */
static int symbol_offset(const char *path, const char *name, uint64_t *offset)
{
	uint64_t first_load = UINT64_MAX;
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT;
	size_t count;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &count)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD &&
		    phdr.p_vaddr < first_load)
			first_load =
				phdr.p_vaddr & ~(uint64_t)(phdr.p_align ? phdr.p_align - 1 : 0);
	}
	while (err == -ENOENT && first_load != UINT64_MAX && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !data ||
		    !shdr.sh_entsize)
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *symbol;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			symbol = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (symbol && !strcmp(symbol, name) && sym.st_value >= first_load) {
				*offset = sym.st_value - first_load;
				err = 0;
				break;
			}
		}
	}

cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int liboptrace_symbol_address(pid_t pid, const char *name, uint64_t *address)
{
	struct library library;
	uint64_t offset = 0;
	int err;

	err = find_liboptrace(pid, &library);
	err = err ?: symbol_offset(library.path, name, &offset);
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
