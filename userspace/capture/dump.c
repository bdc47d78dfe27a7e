// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capture_dump(): a capture laid out as it is on disk, for `optrace report
 * --dump`: the header, every chunk with its CRC verdict, the end marker,
 * the status, and on request every record's first bytes.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "capture/format.h"

/* Untrusted text, quoted, with anything unprintable as \xNN. */
static void print_quoted(FILE *out, const char *text)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void print_wall(FILE *out, uint64_t realtime_ns)
{
	time_t seconds = (time_t)(realtime_ns / 1000000000u);
	char text[32] = "?";
	struct tm tm;

	if (gmtime_r(&seconds, &tm))
		strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, "%s.%09" PRIu64 "Z", text, realtime_ns % 1000000000u);
}

static void dump_header(FILE *out, const char *path, const struct capture_header *h)
{
	fprintf(out, "capture ");
	print_quoted(out, path);
	fprintf(out,
		": format %u.%u, header %" PRIu32 " bytes, chunks of up to %" PRIu32
		" record bytes\n",
		h->version_major, h->version_minor, h->header_size, h->chunk_size);
	fprintf(out, "  started ");
	print_wall(out, h->realtime_ns);
	fprintf(out, " (CLOCK_REALTIME %" PRIu64 " ns = CLOCK_MONOTONIC %" PRIu64 " ns)\n",
		h->realtime_ns, h->monotonic_ns);
	for (size_t i = 0; i < h->meta_count; i++) {
		fprintf(out, "  ");
		print_quoted(out, h->meta[i].key);
		fprintf(out, " = ");
		print_quoted(out, h->meta[i].value);
		fputc('\n', out);
	}
}

static void dump_record(FILE *out, uint64_t index, const struct capture_record *record)
{
	const uint8_t *data = record->data;
	uint32_t shown = record->size < 16 ? record->size : 16;

	fprintf(out, "    record %" PRIu64 ": type %u, %" PRIu32 " bytes:", index, record->type,
		record->size);
	for (uint32_t i = 0; i < shown; i++)
		fprintf(out, " %02x", data[i]);
	fprintf(out, "%s  |", record->size > shown ? " ..." : "");
	for (uint32_t i = 0; i < shown; i++)
		fputc(data[i] >= 0x20 && data[i] < 0x7f ? data[i] : '.', out);
	fprintf(out, "|\n");
}

static void dump_trailer(FILE *out, const struct capture_header *h, const struct capture_trailer *t)
{
	fprintf(out,
		"    records %" PRIu64 ", chunks %" PRIu64 ", record bytes %" PRIu64
		", lost %" PRIu64 ", write error %s\n",
		t->records, t->chunks, t->record_bytes, t->records_lost,
		t->write_error ? strerror(t->write_error) : "none");
	fprintf(out, "    stopped ");
	print_wall(out, t->realtime_ns);
	fprintf(out, ", %.3f s after the start\n",
		(double)(int64_t)(t->monotonic_ns - h->monotonic_ns) / 1e9);
	for (size_t i = 0; i < t->counter_count; i++) {
		fprintf(out, "    counter ");
		print_quoted(out, t->counters[i].name);
		fprintf(out, " = %" PRIu64 "\n", t->counters[i].value);
	}
}

static const char *kind_name(uint16_t kind)
{
	return kind == CHUNK_RECORDS ? "records"
	       : kind == CHUNK_END   ? "end marker"
				     : "unknown kind";
}

int capture_dump(FILE *out, const char *path, bool records)
{
	struct capture_reader *r;
	struct capture_record record;
	uint64_t index = 0;
	char why[256];
	int err;

	err = capture_reader_open(&r, path, why, sizeof(why));
	if (err) {
		fprintf(out, "capture ");
		print_quoted(out, path);
		fprintf(out, ": %s\n", why);
		return err;
	}
	dump_header(out, path, &r->header);
	for (;;) {
		const struct chunk_info *c = &r->chunk;

		err = capture_read_chunk(r);
		/* No kind: the chunk's header itself is cut, damaged or not there. */
		if (err < 0 || (err == 0 && !c->kind))
			break;
		fprintf(out,
			"  chunk %" PRIu64 " at offset %" PRIu64 ": %s, %" PRIu64
			" bytes (payload %" PRIu32 "), %" PRIu32 " records, %s\n",
			c->seq, c->offset, kind_name(c->kind),
			CHUNK_HEADER_SIZE + (uint64_t)c->payload_size, c->payload_size, c->records,
			c->cut	    ? "cut"
			: c->crc_ok ? "crc ok"
				    : "crc BAD");
		if (err == 0)
			break;
		if (err == CHUNK_SKIPPED) {
			fprintf(out,
				"    damaged: skipped to chunk %" PRIu64 " at offset %" PRIu64 "\n",
				r->next_seq, r->offset);
			continue;
		}
		if (c->kind == CHUNK_END)
			dump_trailer(out, &r->header, &r->status.trailer);
		while (r->records_left && capture_next(r, &record) > 0) {
			if (records)
				dump_record(out, index, &record);
			index++;
		}
		if (r->status.end != CAPTURE_END_NONE)
			break;
	}
	fprintf(out, "status: %s: %s\n", capture_end_name(r->status.end), r->status.message);
	err = err < 0 ? err : r->status.end == CAPTURE_END_CLEAN ? 0 : 1;
	capture_reader_close(r);
	return err;
}
