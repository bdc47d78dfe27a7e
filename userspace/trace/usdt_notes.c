// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reads SystemTap SDT notes (the USDT format of sys/sdt.h): each note holds
 * the probe site's address, the link-time address of .stapsdt.base, the
 * semaphore's address, then provider, name and argument strings.
 * The file is untrusted: every length is checked against the note's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/targets.h"
#include "trace/usdt_notes.h"

#define NT_STAPSDT 3
#define STAPSDT_OWNER "stapsdt"

struct elf_file {
	int fd;
	Elf *elf;
	uint64_t stapsdt_base; /* address of .stapsdt.base, 0 if none */
};

/* The file offset of a link-time address: the PT_LOAD that maps it. */
static int offset_of(Elf *elf, uint64_t address, uint64_t *offset)
{
	size_t count;

	if (elf_getphdrnum(elf, &count))
		return -ENOEXEC;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		if (address >= phdr.p_vaddr && address < phdr.p_vaddr + phdr.p_memsz) {
			*offset = address - phdr.p_vaddr + phdr.p_offset;
			return 0;
		}
	}
	return -ENOEXEC;
}

static int copy_string(char *dst, size_t size, const char **cursor, const char *end)
{
	size_t length = strnlen(*cursor, end - *cursor);

	if (*cursor + length >= end || length >= size)
		return -ENOEXEC;
	memcpy(dst, *cursor, length + 1);
	*cursor += length + 1;
	return 0;
}

static int parse_note(struct elf_file *file, const char *desc, size_t size, struct usdt_note *note)
{
	const char *cursor = desc + 3 * sizeof(uint64_t), *end = desc + size;
	uint64_t addresses[3];
	int err;

	if (size < sizeof(addresses))
		return -ENOEXEC;
	memcpy(addresses, desc, sizeof(addresses));
	memset(note, 0, sizeof(*note));
	err = copy_string(note->provider, sizeof(note->provider), &cursor, end);
	err = err ?: copy_string(note->name, sizeof(note->name), &cursor, end);
	err = err ?: copy_string(note->args, sizeof(note->args), &cursor, end);
	if (err)
		return err;

	note->pc = addresses[0];
	note->semaphore = addresses[2];
	/* A prelinked file moved .stapsdt.base: move the addresses with it. */
	if (file->stapsdt_base && addresses[1]) {
		note->pc += file->stapsdt_base - addresses[1];
		if (note->semaphore)
			note->semaphore += file->stapsdt_base - addresses[1];
	}
	err = offset_of(file->elf, note->pc, &note->pc_offset);
	if (!err && note->semaphore)
		err = offset_of(file->elf, note->semaphore, &note->semaphore_offset);
	return err;
}

static int append(struct usdt_notes *out, const struct usdt_note *note)
{
	struct usdt_note *grown;

	if ((out->count & (out->count - 1)) == 0) {
		size_t capacity = out->count ? out->count * 2 : 16;

		grown = realloc(out->notes, capacity * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->notes = grown;
	}
	out->notes[out->count++] = *note;
	return 0;
}

static int read_section(struct elf_file *file, Elf_Scn *scn, const char *provider,
			struct usdt_notes *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t offset = 0, name_offset, desc_offset;
	GElf_Nhdr nhdr;
	int err;

	if (!data)
		return -ENOEXEC;
	while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
		struct usdt_note note;

		if (nhdr.n_type != NT_STAPSDT || nhdr.n_namesz != sizeof(STAPSDT_OWNER) ||
		    memcmp((char *)data->d_buf + name_offset, STAPSDT_OWNER, nhdr.n_namesz))
			continue;
		err = parse_note(file, (char *)data->d_buf + desc_offset, nhdr.n_descsz, &note);
		if (err)
			return err;
		if (provider && strcmp(provider, note.provider))
			continue;
		err = append(out, &note);
		if (err)
			return err;
	}
	return 0;
}

static int find_stapsdt_base(struct elf_file *file, size_t shstrndx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(file->elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		name = elf_strptr(file->elf, shstrndx, shdr.sh_name);
		if (name && !strcmp(name, ".stapsdt.base"))
			file->stapsdt_base = shdr.sh_addr;
	}
	return 0;
}

int usdt_notes_read(const char *path, const char *provider, struct usdt_notes *out)
{
	struct elf_file file = { .fd = -1 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	file.fd = target_file_open(path);
	if (file.fd < 0)
		return file.fd;
	file.elf = elf_begin(file.fd, ELF_C_READ, NULL);
	if (!file.elf || elf_kind(file.elf) != ELF_K_ELF ||
	    elf_getshdrstrndx(file.elf, &shstrndx)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = find_stapsdt_base(&file, shstrndx);
	while (!err && (scn = elf_nextscn(file.elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr)) {
			err = -ENOEXEC;
			break;
		}
		if (shdr.sh_type == SHT_NOTE)
			err = read_section(&file, scn, provider, out);
	}

cleanup:
	if (err)
		usdt_notes_free(out);
	if (file.elf)
		elf_end(file.elf);
	close(file.fd);
	return err;
}

void usdt_notes_free(struct usdt_notes *notes)
{
	free(notes->notes);
	notes->notes = NULL;
	notes->count = 0;
}

const struct usdt_note *usdt_notes_find(const struct usdt_notes *notes, const char *name)
{
	for (size_t i = 0; i < notes->count; i++) {
		if (!strcmp(notes->notes[i].name, name))
			return &notes->notes[i];
	}
	return NULL;
}
