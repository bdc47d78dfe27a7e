// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The OPTRACE_GPU_FILE format: writer and reader.
 *
 * The writer gathers records into a block of up to GPU_FILE_BLOCK_TARGET
 * bytes and writes it whole, header and CRCs first, so that a process
 * killed at any moment leaves every block but the one it was filling; the
 * end block, at close, says that nothing is missing after it. The reader
 * trusts nothing: a header, block or record that does not check is never
 * used; it skips a damaged block (its size is trusted only when its header
 * checks, else it looks for the next block that does), counts what it
 * skipped and says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpufile.h"

#define NAME_MAX_LENGTH (UINT16_MAX - sizeof(struct optrace_gpu_kernel_name))
#define HEADER_V1_SIZE 32u
/* The header's bytes that its CRC covers: those before the CRC. */
#define HEADER_CRC_BYTES offsetof(struct optrace_gpu_file_header, crc)
#define BLOCK_CRC_BYTES offsetof(struct optrace_gpu_file_block, crc)

/* CRC-32/ISO-HDLC, as zlib's crc32(): the collector does not link zlib. */
static const uint32_t crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f, 0xe963a535,
	0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988, 0x09b64c2b, 0x7eb17cbd,
	0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2, 0xf3b97148, 0x84be41de, 0x1adad47d,
	0x6ddde4eb, 0xf4d4b551, 0x83d385c7, 0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec,
	0x14015c4f, 0x63066cd9, 0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4,
	0xa2677172, 0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59, 0x26d930ac,
	0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423, 0xcfba9599, 0xb8bda50f,
	0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924, 0x2f6f7c87, 0x58684c11, 0xc1611dab,
	0xb6662d3d, 0x76dc4190, 0x01db7106, 0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f,
	0x9fbfe4a5, 0xe8b8d433, 0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb,
	0x086d3d2d, 0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950, 0x8bbeb8ea,
	0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65, 0x4db26158, 0x3ab551ce,
	0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7, 0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a,
	0x346ed9fc, 0xad678846, 0xda60b8d0, 0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9,
	0x5005713c, 0x270241aa, 0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409,
	0xce61e49f, 0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a, 0xead54739,
	0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84, 0x0d6d6a3e, 0x7a6a5aa8,
	0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1, 0xf00f9344, 0x8708a3d2, 0x1e01f268,
	0x6906c2fe, 0xf762575d, 0x806567cb, 0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0,
	0x10da7a5a, 0x67dd4acc, 0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8,
	0xa1d1937e, 0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55, 0x316e8eef,
	0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236, 0xcc0c7795, 0xbb0b4703,
	0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28, 0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7,
	0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d, 0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a,
	0x9c0906a9, 0xeb0e363f, 0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae,
	0x0cb61b38, 0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777, 0x88085ae6,
	0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69, 0x616bffd3, 0x166ccf45,
	0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2, 0xa7672661, 0xd06016f7, 0x4969474d,
	0x3e6e77db, 0xaed16a4a, 0xd9d65adc, 0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5,
	0x47b2cf7f, 0x30b5ffe9, 0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605,
	0xcdd70693, 0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

static uint32_t crc32_of(const void *data, size_t size)
{
	const uint8_t *p = data;
	uint32_t crc = 0xffffffffu;

	while (size--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

/* ---- writing ------------------------------------------------------------------ */

static int put(struct gpu_file_writer *writer, const void *data, size_t size)
{
	if (writer->error)
		return -writer->error;
	if (fwrite(data, 1, size, writer->file) != size) {
		writer->error = errno ? errno : EIO;
		return -writer->error;
	}
	return 0;
}

/* One block, whole, then to the file: a killed process leaves whole blocks. */
static int put_block(struct gpu_file_writer *writer, uint16_t kind, const void *payload,
		     uint32_t size, uint32_t records)
{
	struct optrace_gpu_file_block block = { 0 };
	int err;

	memcpy(block.magic, OPTRACE_GPU_FILE_BLOCK_MAGIC, sizeof(block.magic));
	block.kind = kind;
	block.sequence = writer->sequence;
	block.size = size;
	block.records = records;
	block.payload_crc = crc32_of(payload, size);
	block.crc = crc32_of(&block, BLOCK_CRC_BYTES);
	err = put(writer, &block, sizeof(block));
	err = err ?: put(writer, payload, size);
	if (!err && fflush(writer->file)) {
		writer->error = errno ? errno : EIO;
		err = -writer->error;
	}
	if (!err)
		writer->sequence++;
	return err;
}

static int put_pending(struct gpu_file_writer *writer)
{
	int err;

	if (writer->error)
		return -writer->error;
	if (!writer->records)
		return 0;
	err = put_block(writer, OPTRACE_GPU_BLOCK_RECORDS, writer->block, writer->used,
			writer->records);
	if (err)
		return err;
	writer->total_records += writer->records;
	writer->total_blocks++;
	writer->used = 0;
	writer->records = 0;
	return 0;
}

int gpu_file_create(struct gpu_file_writer *writer, const char *path)
{
	struct optrace_gpu_file_header header = { 0 };
	struct timespec now;
	int err;

	memset(writer, 0, sizeof(*writer));
	/* Room for a whole block and one more record of any size. */
	writer->block = malloc(GPU_FILE_BLOCK_TARGET + UINT16_MAX);
	if (!writer->block)
		return -ENOMEM;
	writer->file = fopen(path, "we");
	if (!writer->file) {
		err = -errno;
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	memcpy(header.magic, OPTRACE_GPU_FILE_MAGIC, sizeof(OPTRACE_GPU_FILE_MAGIC));
	header.version = OPTRACE_GPU_FILE_VERSION;
	header.header_size = sizeof(header);
	header.pid = getpid();
	header.clock_id = CLOCK_MONOTONIC;
	header.record_version = OPTRACE_GPU_RECORD_VERSION;
	header.created_ns = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
	header.crc = crc32_of(&header, HEADER_CRC_BYTES);
	err = put(writer, &header, sizeof(header));
	if (!err && fflush(writer->file))
		err = -(errno ? errno : EIO);
	if (!err)
		return 0;
	fclose(writer->file);
	writer->file = NULL;
fail:
	free(writer->block);
	writer->block = NULL;
	return err;
}

/* Appends size bytes (head, then rest) as one record, writing the block first when full. */
static int add_record(struct gpu_file_writer *writer, const void *head, size_t head_size,
		      const void *rest, size_t rest_size)
{
	size_t size = head_size + rest_size;
	int err;

	if (writer->error)
		return -writer->error;
	if (!writer->block)
		return -EBADF;
	if (writer->used && writer->used + size > GPU_FILE_BLOCK_TARGET) {
		err = put_pending(writer);
		if (err)
			return err;
	}
	memcpy(writer->block + writer->used, head, head_size);
	if (rest_size)
		memcpy(writer->block + writer->used + head_size, rest, rest_size);
	writer->used += (uint32_t)size;
	writer->records++;
	return writer->used >= GPU_FILE_BLOCK_TARGET ? put_pending(writer) : 0;
}

int gpu_file_write(struct gpu_file_writer *writer, const void *record)
{
	struct optrace_gpu_head head;

	memcpy(&head, record, sizeof(head));
	if (head.size < sizeof(head))
		return -EINVAL;
	return add_record(writer, record, head.size, NULL, 0);
}

int gpu_file_write_name(struct gpu_file_writer *writer, uint32_t name_id, const char *name)
{
	struct optrace_gpu_kernel_name record = { 0 };
	size_t length = strlen(name);

	if (length > NAME_MAX_LENGTH)
		length = NAME_MAX_LENGTH;
	record.head.type = OPTRACE_GPU_REC_KERNEL_NAME;
	record.head.version = OPTRACE_GPU_RECORD_VERSION;
	record.head.size = sizeof(record) + length;
	record.name_id = name_id;
	record.length = length;
	return add_record(writer, &record, sizeof(record), name, length);
}

int gpu_file_write_dropped(struct gpu_file_writer *writer, uint64_t count)
{
	struct optrace_gpu_dropped record = { 0 };

	record.head.type = OPTRACE_GPU_REC_DROPPED;
	record.head.version = OPTRACE_GPU_RECORD_VERSION;
	record.head.size = sizeof(record);
	record.count = count;
	return add_record(writer, &record, sizeof(record), NULL, 0);
}

int gpu_file_flush(struct gpu_file_writer *writer)
{
	if (!writer->file)
		return writer->error ? -writer->error : -EBADF;
	return put_pending(writer);
}

int gpu_file_close(struct gpu_file_writer *writer)
{
	struct optrace_gpu_file_end end;
	int err;

	if (!writer->file)
		return 0;
	if (!put_pending(writer)) {
		end.records = writer->total_records;
		end.blocks = writer->total_blocks;
		put_block(writer, OPTRACE_GPU_BLOCK_END, &end, sizeof(end), 0);
	}
	if (fclose(writer->file) && !writer->error)
		writer->error = errno ? errno : EIO;
	writer->file = NULL;
	free(writer->block);
	writer->block = NULL;
	err = writer->error;
	return err ? -err : 0;
}

/* ---- reading ------------------------------------------------------------------ */

int gpu_file_open(struct gpu_file_reader *reader, const char *path)
{
	struct optrace_gpu_file_header *header = &reader->header;
	int err = -EPROTO;

	memset(reader, 0, sizeof(*reader));
	reader->file = fopen(path, "re");
	if (!reader->file)
		return -errno;
	if (fread(header, HEADER_V1_SIZE, 1, reader->file) != 1 ||
	    memcmp(header->magic, OPTRACE_GPU_FILE_MAGIC, sizeof(OPTRACE_GPU_FILE_MAGIC)))
		goto fail;
	if (header->version > OPTRACE_GPU_FILE_VERSION) {
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	if (header->version == 1) {
		/* Unchecked; a later 1.x may have a longer header. */
		if (header->header_size < HEADER_V1_SIZE ||
		    fseek(reader->file, header->header_size, SEEK_SET))
			goto fail;
		header->reserved = header->crc = 0;
		return 0;
	}
	err = -EBADMSG;
	if (header->version != 2 || header->header_size != sizeof(*header) ||
	    fread((char *)header + HEADER_V1_SIZE, sizeof(*header) - HEADER_V1_SIZE, 1,
		  reader->file) != 1 ||
	    crc32_of(header, HEADER_CRC_BYTES) != header->crc)
		goto fail;
	reader->offset = sizeof(*header);
	return 0;
fail:
	fclose(reader->file);
	reader->file = NULL;
	return err;
}

void gpu_file_open_error(const struct gpu_file_reader *reader, int err, char *why, size_t size)
{
	switch (err) {
	case -EPROTO:
		snprintf(why, size, "not an OPTRACE_GPU_FILE (no \"%s\" header)",
			 OPTRACE_GPU_FILE_MAGIC);
		break;
	case -EPROTONOSUPPORT:
		snprintf(why, size,
			 "an OPTRACE_GPU_FILE of version %u, newer than this optrace reads (1 to "
			 "%u): read it with a newer optrace",
			 reader->header.version, OPTRACE_GPU_FILE_VERSION);
		break;
	case -EBADMSG:
		snprintf(why, size,
			 "the OPTRACE_GPU_FILE's header is damaged (it fails its CRC or is cut): "
			 "nothing in the file can be trusted");
		break;
	default:
		snprintf(why, size, "%s", strerror(-err));
		break;
	}
}

/* Version 1: records back to back, unchecked. */
static int next_v1(struct gpu_file_reader *reader, void *buffer, size_t capacity)
{
	struct optrace_gpu_head head;
	size_t got;

	got = fread(&head, 1, sizeof(head), reader->file);
	if (got == 0 && feof(reader->file)) {
		reader->end = GPU_FILE_END_CLEAN;
		return 0;
	}
	if (got != sizeof(head) || head.size < sizeof(head))
		goto cut;
	if (head.size > capacity)
		return -ENOBUFS;
	memcpy(buffer, &head, sizeof(head));
	if (fread((char *)buffer + sizeof(head), 1, head.size - sizeof(head), reader->file) !=
	    head.size - sizeof(head))
		goto cut;
	reader->records++;
	return head.size;
cut:
	reader->end = GPU_FILE_END_TRUNCATED;
	snprintf(reader->end_detail, sizeof(reader->end_detail),
		 "the file ends inside a record (the process was killed?): read up to there");
	return -EPROTO;
}

static void note_damage(struct gpu_file_reader *reader, uint64_t records, bool unknown,
			const char *format, ...) __attribute__((format(printf, 4, 5)));

static void note_damage(struct gpu_file_reader *reader, uint64_t records, bool unknown,
			const char *format, ...)
{
	va_list args;

	if (!reader->damaged++) {
		va_start(args, format);
		vsnprintf(reader->first_damage, sizeof(reader->first_damage), format, args);
		va_end(args);
	}
	reader->damaged_records += records;
	reader->damaged_unknown = reader->damaged_unknown || unknown;
}

static bool block_header_ok(const struct optrace_gpu_file_block *block)
{
	return !memcmp(block->magic, OPTRACE_GPU_FILE_BLOCK_MAGIC, sizeof(block->magic)) &&
	       crc32_of(block, BLOCK_CRC_BYTES) == block->crc;
}

static uint64_t file_size(FILE *file)
{
	struct stat st;

	return fstat(fileno(file), &st) ? 0 : (uint64_t)st.st_size;
}

/*
 * After a block header that does not check at from - 1: the next one that
 * does, numbered as one still to come. 1: found, reading goes on there
 * (and reader->next_sequence is its number); 0: none, the rest of the file
 * is lost; or -EIO, -ENOMEM.
 */
static int find_next_block(struct gpu_file_reader *reader, uint64_t from)
{
	static const size_t window = 64 << 10;
	uint8_t *bytes = malloc(window);
	uint64_t at = from;
	int found = 0;

	if (!bytes)
		return -ENOMEM;
	for (;;) {
		size_t got;

		if (fseeko(reader->file, (off_t)at, SEEK_SET)) {
			found = -EIO;
			break;
		}
		got = fread(bytes, 1, window, reader->file);
		for (size_t i = 0; i + sizeof(struct optrace_gpu_file_block) <= got; i++) {
			struct optrace_gpu_file_block block;

			if (bytes[i] != (uint8_t)OPTRACE_GPU_FILE_BLOCK_MAGIC[0])
				continue;
			memcpy(&block, bytes + i, sizeof(block));
			if (!block_header_ok(&block) || block.sequence < reader->next_sequence)
				continue;
			reader->offset = at + i;
			reader->next_sequence = block.sequence;
			found = 1;
			break;
		}
		if (found || got < window)
			break;
		at += got - sizeof(struct optrace_gpu_file_block) + 1;
	}
	free(bytes);
	if (found > 0 && fseeko(reader->file, (off_t)reader->offset, SEEK_SET))
		found = -EIO;
	return found;
}

/* The records of a payload that checks: each whole, as many as its header says. */
static bool records_ok(const uint8_t *payload, uint32_t size, uint32_t count)
{
	uint32_t pos = 0, n = 0;

	while (pos < size) {
		struct optrace_gpu_head head;

		if (size - pos < sizeof(head))
			return false;
		memcpy(&head, payload + pos, sizeof(head));
		if (head.size < sizeof(head) || head.size > size - pos)
			return false;
		pos += head.size;
		n++;
	}
	return n == count;
}

static void read_end_block(struct gpu_file_reader *reader, const uint8_t *payload, uint32_t size)
{
	struct optrace_gpu_file_end end;
	uint64_t after = reader->offset;

	reader->end = GPU_FILE_END_CLEAN;
	if (size < sizeof(end)) {
		note_damage(reader, 0, true, "its end block is malformed");
	} else {
		memcpy(&end, payload, sizeof(end));
		/* With damage noted already, the totals cannot match: said once. */
		if (!reader->damaged &&
		    (end.records != reader->records || end.blocks != reader->blocks))
			note_damage(reader,
				    end.records > reader->records ? end.records - reader->records
								  : 0,
				    false,
				    "its end block counts %" PRIu64 " records in %" PRIu64
				    " blocks, but the file holds %" PRIu64 " in %" PRIu64,
				    (uint64_t)end.records, (uint64_t)end.blocks, reader->records,
				    reader->blocks);
	}
	if (file_size(reader->file) > after)
		reader->trailing_bytes = file_size(reader->file) - after;
}

/* Reads the next block: its records are next, or reading has ended (reader->end). */
static int read_block(struct gpu_file_reader *reader)
{
	struct optrace_gpu_file_block block;
	uint64_t at = reader->offset, expected = reader->next_sequence;
	size_t got;
	int found;

	reader->block_size = reader->block_pos = reader->block_records = 0;
	got = fread(&block, 1, sizeof(block), reader->file);
	if (got < sizeof(block) && ferror(reader->file))
		return -EIO;
	if (got == 0) {
		reader->end = GPU_FILE_END_NO_MARKER;
		snprintf(reader->end_detail, sizeof(reader->end_detail),
			 "it has no end block: the process did not exit cleanly (or still runs), "
			 "and the records of its last block are missing");
		return 0;
	}
	if (got < sizeof(block) &&
	    !memcmp(&block, OPTRACE_GPU_FILE_BLOCK_MAGIC, got < 4 ? got : 4)) {
		reader->end = GPU_FILE_END_TRUNCATED;
		snprintf(reader->end_detail, sizeof(reader->end_detail),
			 "the file ends %zu bytes into the header of block %" PRIu64
			 " (the process was killed?): the records after it are lost",
			 got, reader->next_sequence);
		return 0;
	}
	if (got < sizeof(block) || !block_header_ok(&block) || block.size > GPU_FILE_BLOCK_MAX) {
		/* Its size cannot be trusted: on at the next block that checks. */
		found = find_next_block(reader, at + 1);
		if (found < 0)
			return found;
		if (found) {
			note_damage(reader, 0, true,
				    "block %" PRIu64 " at offset %" PRIu64
				    " is damaged (its header fails its CRC): %" PRIu64
				    " bytes up to block %" PRIu64 " are skipped",
				    expected, at, reader->offset - at, reader->next_sequence);
			return 0;
		}
		note_damage(reader, 0, true,
			    "block %" PRIu64 " at offset %" PRIu64
			    " is damaged (its header fails its CRC) and no whole block follows: "
			    "the rest of the file (%" PRIu64 " bytes) is not read",
			    expected, at, file_size(reader->file) - at);
		reader->end = GPU_FILE_END_CORRUPT;
		return 0;
	}
	if (block.sequence > reader->next_sequence)
		note_damage(reader, 0, true,
			    "blocks %" PRIu64 " to %" PRIu64 " are missing (before offset %" PRIu64
			    ")",
			    reader->next_sequence, block.sequence - 1, at);
	if (block.size > reader->block_capacity) {
		uint8_t *grown = realloc(reader->block, block.size);

		if (!grown)
			return -ENOMEM;
		reader->block = grown;
		reader->block_capacity = block.size;
	}
	got = fread(reader->block, 1, block.size, reader->file);
	if (got < block.size) {
		if (ferror(reader->file))
			return -EIO;
		reader->end = GPU_FILE_END_TRUNCATED;
		snprintf(reader->end_detail, sizeof(reader->end_detail),
			 "the file ends %zu bytes into block %" PRIu64 " (of %zu; the process "
			 "was killed?): its %" PRIu32 " records and any after are lost",
			 sizeof(block) + got, block.sequence, sizeof(block) + block.size,
			 block.records);
		return 0;
	}
	reader->offset = at + sizeof(block) + block.size;
	if (block.sequence < reader->next_sequence) {
		note_damage(reader, 0, false,
			    "block %" PRIu64 " comes again at offset %" PRIu64 ": skipped",
			    block.sequence, at);
		return 0;
	}
	reader->next_sequence = block.sequence + 1;
	if (crc32_of(reader->block, block.size) != block.payload_crc) {
		if (block.kind == OPTRACE_GPU_BLOCK_END) {
			/* The file was closed: its totals are what is lost. */
			note_damage(reader, 0, false,
				    "its end block (block %" PRIu64 " at offset %" PRIu64
				    ") is damaged: the totals it holds are not checked",
				    block.sequence, at);
			reader->end = GPU_FILE_END_CLEAN;
			return 0;
		}
		note_damage(reader, block.records, false,
			    "block %" PRIu64 " at offset %" PRIu64
			    " is damaged (its records fail their CRC): skipped",
			    block.sequence, at);
		return 0;
	}
	switch (block.kind) {
	case OPTRACE_GPU_BLOCK_RECORDS:
		if (!records_ok(reader->block, block.size, block.records)) {
			note_damage(reader, block.records, false,
				    "block %" PRIu64 " at offset %" PRIu64
				    " is malformed (its records do not fill it): skipped",
				    block.sequence, at);
			return 0;
		}
		reader->block_size = block.size;
		reader->block_records = block.records;
		reader->blocks++;
		return 0;
	case OPTRACE_GPU_BLOCK_END:
		read_end_block(reader, reader->block, block.size);
		return 0;
	default:
		return 0; /* a kind of a later version: skipped */
	}
}

int gpu_file_next(struct gpu_file_reader *reader, void *buffer, size_t capacity)
{
	struct optrace_gpu_head head;
	int err;

	if (reader->header.version == 1)
		return reader->end ? (reader->end == GPU_FILE_END_CLEAN ? 0 : -EPROTO)
				   : next_v1(reader, buffer, capacity);
	while (reader->block_pos >= reader->block_size) {
		if (reader->end)
			return reader->end == GPU_FILE_END_TRUNCATED ? -EPROTO : 0;
		err = read_block(reader);
		if (err)
			return err;
	}
	/* The block was checked whole: every record in it is. */
	memcpy(&head, reader->block + reader->block_pos, sizeof(head));
	if (head.size > capacity)
		return -ENOBUFS;
	memcpy(buffer, reader->block + reader->block_pos, head.size);
	reader->block_pos += head.size;
	reader->block_records--;
	reader->records++;
	return head.size;
}

enum gpu_file_end gpu_file_reader_status(const struct gpu_file_reader *reader, char *why,
					 size_t size)
{
	size_t used = 0;

#define SAY(...)                                                                        \
	do {                                                                            \
		if (why && used < size)                                                 \
			used += (size_t)snprintf(why + used, size - used, __VA_ARGS__); \
	} while (0)

	if (why && size)
		why[0] = '\0';
	if (reader->header.version == 1)
		SAY("an OPTRACE_GPU_FILE of version 1, without checksums: damage in it cannot "
		    "be found");
	if (reader->damaged) {
		SAY("%s%s", used ? "; " : "", reader->first_damage);
		if (reader->damaged > 1)
			SAY(" (and %" PRIu64 " more damaged or missing parts)",
			    reader->damaged - 1);
		if (reader->damaged_records)
			SAY("; %" PRIu64 "%s GPU records are not used", reader->damaged_records,
			    reader->damaged_unknown ? " or more" : "");
		else if (reader->damaged_unknown)
			SAY("; the GPU records there (how many is not known) are not used");
	}
	if (reader->end == GPU_FILE_END_NO_MARKER || reader->end == GPU_FILE_END_TRUNCATED)
		SAY("%s%s", used ? "; " : "", reader->end_detail);
	if (reader->trailing_bytes)
		SAY("%s%" PRIu64 " bytes after the end block ignored", used ? "; " : "",
		    reader->trailing_bytes);
#undef SAY
	if (reader->damaged)
		return GPU_FILE_END_CORRUPT;
	return reader->end;
}

void gpu_file_reader_close(struct gpu_file_reader *reader)
{
	if (reader->file)
		fclose(reader->file);
	reader->file = NULL;
	free(reader->block);
	reader->block = NULL;
	reader->block_capacity = 0;
}
