// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening a capture for reading: the path checked (a regular file, never a
 * pipe to block on), the file header read and checked, its metadata copied
 * out; the reader's accessors. Its chunks are read in chunks.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/format.h"

/* Reads up to size bytes; fewer only at the end of the file. */
ssize_t capture_read_full(int fd, void *data, size_t size)
{
	uint8_t *p = data;
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, p + got, size - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void say(char *why, size_t why_size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t why_size, const char *format, ...)
{
	va_list args;

	if (!why || !why_size)
		return;
	va_start(args, format);
	vsnprintf(why, why_size, format, args);
	va_end(args);
}

void capture_describe_bytes(char *text, size_t size, const uint8_t *bytes, size_t count)
{
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < count && i < 8 && used + 4 < size; i++)
		used += (size_t)snprintf(text + used, size - used, "%s%02x", i ? " " : "",
					 bytes[i]);
}

/*
 * Copies the metadata entries out of the header, NUL-terminated: 0,
 * -EBADMSG if they do not fit in it, or -ENOMEM.
 */
static int parse_meta(struct capture_reader *r, const uint8_t *header, uint32_t fixed_size,
		      uint32_t header_size, uint32_t count)
{
	uint64_t pos = fixed_size;
	char *strings;

	/* Each entry takes at least 8 bytes: a bound before allocating. */
	if (count > (header_size - fixed_size) / 8)
		return -EBADMSG;
	r->meta = calloc(count ? count : 1, sizeof(*r->meta));
	r->meta_strings = malloc(header_size + 2 * (size_t)count + 1);
	if (!r->meta || !r->meta_strings)
		return -ENOMEM;
	strings = r->meta_strings;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t key_length, value_length;

		if (header_size - pos < 8)
			return -EBADMSG;
		key_length = get_le32(header + pos);
		value_length = get_le32(header + pos + 4);
		pos += 8;
		if (key_length + value_length > header_size - pos)
			return -EBADMSG;
		r->meta[i].key = strings;
		memcpy(strings, header + pos, key_length);
		strings[key_length] = '\0';
		strings += key_length + 1;
		r->meta[i].value = strings;
		memcpy(strings, header + pos + key_length, value_length);
		strings[value_length] = '\0';
		strings += value_length + 1;
		pos += key_length + value_length;
	}
	r->header.meta = r->meta;
	r->header.meta_count = count;
	return 0;
}

const char *capture_header_get(const struct capture_header *header, const char *key)
{
	for (size_t i = 0; i < header->meta_count; i++) {
		if (!strcmp(header->meta[i].key, key))
			return header->meta[i].value;
	}
	return NULL;
}

static const char *header_string(const struct capture_header *header, const char *key)
{
	const char *value = capture_header_get(header, key);

	return value ? value : "";
}

/* Checks and parses the file header; says why not in why. */
static int read_file_header(struct capture_reader *r, char *why, size_t why_size)
{
	uint32_t header_size, fixed_size, chunk_size;
	uint8_t start[16], *header = NULL;
	uint16_t major, minor;
	char bytes[32];
	ssize_t got;
	int err = -EBADMSG;

	got = capture_read_full(r->fd, start, sizeof(start));
	if (got < 0) {
		say(why, why_size, "cannot read the file: %s", strerror((int)-got));
		return (int)got;
	}
	if (got == 0) {
		say(why, why_size, "the file is empty: the recorder wrote nothing");
		return -EBADMSG;
	}
	if (memcmp(start, file_magic,
		   (size_t)got < sizeof(file_magic) ? (size_t)got : sizeof(file_magic))) {
		capture_describe_bytes(bytes, sizeof(bytes), start, (size_t)got);
		say(why, why_size, "not an optrace capture: it starts with bytes %s", bytes);
		return -EBADMSG;
	}
	if ((size_t)got < sizeof(start)) {
		say(why, why_size,
		    "the file ends %zd bytes into its header: the recorder stopped before writing "
		    "it",
		    got);
		return -EBADMSG;
	}
	major = get_le16(start + 8);
	minor = get_le16(start + 10);
	if (major > CAPTURE_VERSION_MAJOR || major < CAPTURE_VERSION_MAJOR_OLDEST) {
		char formats[32];

		if (CAPTURE_VERSION_MAJOR_OLDEST == CAPTURE_VERSION_MAJOR)
			snprintf(formats, sizeof(formats), "format %d.x", CAPTURE_VERSION_MAJOR);
		else
			snprintf(formats, sizeof(formats), "formats %d.x to %d.x",
				 CAPTURE_VERSION_MAJOR_OLDEST, CAPTURE_VERSION_MAJOR);
		say(why, why_size, "capture format %u.%u is %s than this optrace reads (%s): %s",
		    major, minor, major > CAPTURE_VERSION_MAJOR ? "newer" : "older", formats,
		    major > CAPTURE_VERSION_MAJOR ? "read it with a newer optrace"
						  : "read it with an older optrace");
		return -EPROTONOSUPPORT;
	}
	header_size = get_le32(start + 12);
	if (header_size < FILE_HEADER_FIXED || header_size > FILE_HEADER_MAX || header_size % 8) {
		say(why, why_size, "the capture header is damaged: it claims a size of %" PRIu32,
		    header_size);
		return -EBADMSG;
	}
	header = malloc(header_size);
	if (!header) {
		say(why, why_size, "out of memory");
		return -ENOMEM;
	}
	memcpy(header, start, sizeof(start));
	got = capture_read_full(r->fd, header + sizeof(start), header_size - sizeof(start));
	if (got < 0) {
		say(why, why_size, "cannot read the file: %s", strerror((int)-got));
		err = (int)got;
		goto cleanup;
	}
	if ((size_t)got < header_size - sizeof(start)) {
		say(why, why_size,
		    "the file ends %zu bytes into its header (of %" PRIu32
		    "): the recorder stopped before writing it",
		    (size_t)got + sizeof(start), header_size);
		goto cleanup;
	}
	if (file_header_crc(header, header_size) != get_le32(header + 16)) {
		say(why, why_size, "the capture header is damaged: it fails its CRC");
		goto cleanup;
	}
	fixed_size = get_le32(header + 20);
	chunk_size = get_le32(header + 40);
	if (fixed_size < FILE_HEADER_FIXED || fixed_size > header_size ||
	    chunk_size < CAPTURE_CHUNK_MIN || chunk_size > CAPTURE_CHUNK_MAX || chunk_size % 8) {
		say(why, why_size, "the capture header is malformed");
		goto cleanup;
	}
	err = parse_meta(r, header, fixed_size, header_size, get_le32(header + 44));
	if (err) {
		say(why, why_size, "%s",
		    err == -ENOMEM ? "out of memory"
				   : "the capture header's metadata is malformed");
		goto cleanup;
	}
	r->header.version_major = major;
	r->header.version_minor = minor;
	r->header.header_size = header_size;
	r->header.realtime_ns = get_le64(header + 24);
	r->header.monotonic_ns = get_le64(header + 32);
	r->header.chunk_size = chunk_size;
	r->header.optrace_version = header_string(&r->header, CAPTURE_KEY_VERSION);
	r->header.hostname = header_string(&r->header, CAPTURE_KEY_HOSTNAME);
	r->header.target = header_string(&r->header, CAPTURE_KEY_TARGET);
	r->offset = header_size;
	r->status.good_bytes = header_size;
	err = 0;
cleanup:
	free(header);
	return err;
}

/* What path is when it is no regular file, for a sentence. */
static void say_not_regular(char *why, size_t why_size, const char *path, mode_t mode)
{
	if (S_ISDIR(mode))
		say(why, why_size, "%s is a directory: give the capture file to read", path);
	else
		say(why, why_size,
		    "%s is not a regular file (%s): record to a file, then read that", path,
		    S_ISFIFO(mode)		     ? "a pipe"
		    : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
		    : S_ISSOCK(mode)		     ? "a socket"
						     : "a special file");
}

int capture_check_input(const char *path, char *why, size_t why_size)
{
	struct stat st;

	say(why, why_size, "%s", "");
	if (stat(path, &st) || S_ISREG(st.st_mode))
		return 0; /* opening it says what is wrong */
	say_not_regular(why, why_size, path, st.st_mode);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

/*
 * Opens path for reading if it is a regular file: opened without blocking
 * first, as a pipe without a writer would block open() for ever (and a pipe
 * cannot be read twice, as report and export do).
 */
int capture_open_regular(const char *path, char *why, size_t why_size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		say(why, why_size, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		say(why, why_size, "cannot read %s: %s", path, strerror(-err));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		say_not_regular(why, why_size, path, st.st_mode);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

void capture_reader_close(struct capture_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->meta);
	free(r->meta_strings);
	free(r->payload);
	record_codec_free(&r->codec);
	decode_buffer_free(&r->decoded);
	free(r->counters);
	free(r->counter_names);
	free(r);
}

int capture_reader_open(struct capture_reader **reader, const char *path, char *why,
			size_t why_size)
{
	struct capture_reader *r;
	int err;

	*reader = NULL;
	say(why, why_size, "%s", "");
	r = calloc(1, sizeof(*r));
	if (!r) {
		say(why, why_size, "out of memory");
		return -ENOMEM;
	}
	record_codec_init(&r->codec, false);
	r->fd = capture_open_regular(path, why, why_size);
	if (r->fd < 0) {
		err = r->fd;
		goto fail;
	}
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	err = read_file_header(r, why, why_size);
	if (err && why && why_size) {
		/* Which file: a command may read several. */
		char said[512];

		snprintf(said, sizeof(said), "%s", why);
		say(why, why_size, "%s: %s", path, said);
	}
	if (err)
		goto fail;
	*reader = r;
	return 0;
fail:
	capture_reader_close(r);
	return err;
}

int capture_reader_open_again(struct capture_reader **again, const struct capture_reader *r)
{
	char path[64];

	/* A new open file (its own offset) of the same inode. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	return capture_reader_open(again, path, NULL, 0);
}

uint64_t capture_reader_size(const struct capture_reader *r)
{
	struct stat st;

	return fstat(r->fd, &st) ? 0 : (uint64_t)st.st_size;
}

const struct capture_header *capture_reader_header(const struct capture_reader *r)
{
	return &r->header;
}

const struct capture_status *capture_reader_status(const struct capture_reader *r)
{
	return &r->status;
}

uint64_t capture_wall_ns(const struct capture_header *header, uint64_t monotonic_ns)
{
	return header->realtime_ns + (monotonic_ns - header->monotonic_ns);
}
