// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "trace/elf_symbols.h"
#include "trace/targets.h"

/*
 * Dynamic symbol name in the ELF file: a function or an object, defined,
 * not an IFUNC (calling a resolver would not call the function).
 */
static int find_dynsym(Elf *elf, const char *name, GElf_Sym *found)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !data ||
		    !shdr.sh_entsize)
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			const char *symbol;
			int type;

			if (!gelf_getsym(data, (int)i, found))
				break;
			type = GELF_ST_TYPE(found->st_info);
			if (found->st_shndx == SHN_UNDEF || !found->st_value ||
			    (type != STT_FUNC && type != STT_OBJECT))
				continue;
			symbol = elf_strptr(elf, shdr.sh_link, found->st_name);
			if (symbol && !strcmp(symbol, name))
				return 0;
		}
	}
	return -ENOENT;
}

/* The paths come from a traced process: a FIFO there must not hang us. */
static Elf *open_elf(const char *path, int *fd)
{
	Elf *elf;

	errno = ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = target_file_open(path);
	if (*fd < 0) {
		errno = -*fd;
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		return elf;
	if (elf)
		elf_end(elf);
	close(*fd);
	errno = ENOEXEC;
	return NULL;
}

int elf_symbol_value(const char *path, const char *name, uint64_t *value)
{
	GElf_Sym sym;
	int fd, err;
	Elf *elf = open_elf(path, &fd);

	if (!elf)
		return -errno;
	err = find_dynsym(elf, name, &sym);
	if (!err)
		*value = sym.st_value;
	elf_end(elf);
	close(fd);
	return err;
}

int elf_symbol_offset(const char *path, const char *name, uint64_t *offset)
{
	uint64_t first_load = UINT64_MAX;
	size_t count = 0;
	GElf_Sym sym;
	int fd, err;
	Elf *elf = open_elf(path, &fd);

	if (!elf)
		return -errno;
	err = find_dynsym(elf, name, &sym);
	if (!err && elf_getphdrnum(elf, &count))
		count = 0;
	for (size_t i = 0; !err && i < count; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD &&
		    phdr.p_vaddr < first_load)
			first_load =
				phdr.p_vaddr & ~(uint64_t)(phdr.p_align ? phdr.p_align - 1 : 0);
	}
	if (!err && (first_load == UINT64_MAX || sym.st_value < first_load))
		err = -ENOEXEC;
	if (!err)
		*offset = sym.st_value - first_load;
	elf_end(elf);
	close(fd);
	return err;
}
