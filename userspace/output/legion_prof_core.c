// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The core of the Legion Prof writer: its state and the file, and nothing
 * of how a record is encoded. The ids it hands out (op ids, events,
 * provenances, processors) and the claims records make on them, the output
 * buffer and its gzip stream, the stack of a span's user ranges, the file
 * opened and closed, and its descriptor handed back and opened again when
 * the caller has more logs than descriptors. The encoders above it
 * (legion_preamble.c, legion_records.c, legion_spans.c) call down into it,
 * never the other way; legion_prof_log.c puts them together. Section
 * numbers refer to docs/legion-format.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/idmap.h"
#include "output/legion_prof.h"
#include "output/legion_prof_core.h"

/* ---- id sets ------------------------------------------------------------ */

static struct claim_chunk **claim_set_find(struct claim_set *set, uint64_t number)
{
	uint64_t first = number - number % CHUNK_IDS;
	size_t low = 0, high = set->count, middle;

	while (low < high) {
		middle = low + (high - low) / 2;
		if (set->chunks[middle]->first < first)
			low = middle + 1;
		else
			high = middle;
	}
	if (low < set->count && set->chunks[low]->first == first)
		return &set->chunks[low];
	return NULL;
}

/* Hands out the next number; a new chunk starts every CHUNK_IDS numbers. */
static int claim_set_issue(struct claim_set *set)
{
	struct claim_chunk *chunk, **chunks;
	size_t capacity;

	if (set->issued % CHUNK_IDS == 0) {
		if (set->count == set->capacity) {
			capacity = set->capacity ? 2 * set->capacity : 16;
			chunks = realloc(set->chunks, capacity * sizeof(*chunks));
			if (!chunks)
				return -ENOMEM;
			set->chunks = chunks;
			set->capacity = capacity;
		}
		chunk = calloc(1, sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		chunk->first = set->issued;
		set->chunks[set->count++] = chunk;
	}
	set->issued++;
	return 0;
}

/* Takes back the number just issued (when a sibling set could not issue it). */
static void claim_set_unissue(struct claim_set *set)
{
	set->issued--;
	if (set->issued % CHUNK_IDS == 0)
		free(set->chunks[--set->count]);
}

/* 0 if number was handed out and is unused, -EEXIST if used, else -EINVAL. */
int legion_prof_claim_set_check(struct claim_set *set, uint64_t number)
{
	struct claim_chunk **chunk;
	uint64_t bit;

	if (number >= set->issued)
		return -EINVAL;
	chunk = claim_set_find(set, number);
	if (!chunk)
		return -EEXIST; /* its chunk was used up and dropped */
	bit = number - (*chunk)->first;
	return (*chunk)->bits[bit / 64] & (1ULL << bit % 64) ? -EEXIST : 0;
}

/* Marks a number that legion_prof_claim_set_check() accepted as used. */
void legion_prof_claim_set_take(struct claim_set *set, uint64_t number)
{
	struct claim_chunk **chunk = claim_set_find(set, number);
	uint64_t bit = number - (*chunk)->first;
	size_t index = (size_t)(chunk - set->chunks);

	(*chunk)->bits[bit / 64] |= 1ULL << bit % 64;
	if (++(*chunk)->used < CHUNK_IDS)
		return;
	free(*chunk);
	memmove(chunk, chunk + 1, (set->count - index - 1) * sizeof(*chunk));
	set->count--;
}

static void claim_set_free(struct claim_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		free(set->chunks[i]);
	free(set->chunks);
}

/* Sets of declared keys (task kinds, (task, variant) pairs, op and meta kinds). */
bool legion_prof_key_set_has(const struct idmap *set, uint64_t key)
{
	return idmap_get(set, 0, key) != NULL;
}

int legion_prof_key_set_add(struct idmap *set, uint64_t key)
{
	return legion_prof_key_set_has(set, key) ? 0 : idmap_put(set, 0, key, (void *)1);
}

/* ---- ids ---------------------------------------------------------------- */

uint64_t legion_prof_proc_id(uint32_t node, uint32_t index)
{
	return 0x1dULL << 56 | (uint64_t)(node & 0xffff) << 40 | (index & 0xfff);
}

uint64_t legion_prof_event_id(uint32_t node, uint64_t index, uint32_t generation)
{
	return 1ULL << 63 | (uint64_t)(node & 0xffff) << 47 | (index & EVENT_INDEXES) << 20 |
	       (generation & EVENT_GENERATIONS);
}

/* Op and provenance ids: node_id, node_id + num_nodes, ... (node 0 starts at num_nodes). */
static uint64_t strided_first(const struct legion_prof *prof)
{
	return prof->node_id ? prof->node_id : prof->num_nodes;
}

uint64_t legion_prof_strided_id(const struct legion_prof *prof, uint64_t number)
{
	return strided_first(prof) + number * prof->num_nodes;
}

/* The number of a strided id, or -EINVAL if it is not one of this file's. */
int legion_prof_strided_number(const struct legion_prof *prof, uint64_t id, uint64_t issued,
			       uint64_t *number)
{
	uint64_t first = strided_first(prof);

	if (id < first || (id - first) % prof->num_nodes)
		return -EINVAL;
	*number = (id - first) / prof->num_nodes;
	return *number < issued ? 0 : -EINVAL;
}

int legion_prof_op_number(const struct legion_prof *prof, uint64_t op_id, uint64_t *number)
{
	return legion_prof_strided_number(prof, op_id, prof->op_runs.issued, number);
}

/* The number of an event this writer handed out, or -EINVAL. */
int legion_prof_event_number(const struct legion_prof *prof, uint64_t event, uint64_t *number)
{
	uint64_t index = event >> 20 & EVENT_INDEXES, generation = event & EVENT_GENERATIONS;

	if (!(event >> 63) || (event >> 47 & 0xffff) != prof->node_id || !index || !generation)
		return -EINVAL;
	*number = (generation - 1) * EVENT_INDEXES + index - 1;
	return *number < prof->fevents.issued ? 0 : -EINVAL;
}

int legion_prof_new_op(struct legion_prof *prof, uint64_t *op_id)
{
	int err;

	if (prof->error)
		return prof->error;
	if (prof->op_runs.issued >= SEQUENCE_MAX)
		return -ERANGE;
	err = claim_set_issue(&prof->op_instances);
	if (err)
		return err;
	err = claim_set_issue(&prof->op_runs);
	if (err) {
		claim_set_unissue(&prof->op_instances);
		return err;
	}
	*op_id = legion_prof_strided_id(prof, prof->op_runs.issued - 1);
	return 0;
}

int legion_prof_new_event(struct legion_prof *prof, uint64_t *event)
{
	uint64_t number = prof->fevents.issued;
	int err;

	if (prof->error)
		return prof->error;
	if (number >= EVENT_INDEXES * EVENT_GENERATIONS)
		return -ERANGE;
	err = claim_set_issue(&prof->fevents);
	if (err)
		return err;
	*event = legion_prof_event_id(prof->node_id, number % EVENT_INDEXES + 1,
				      (uint32_t)(number / EVENT_INDEXES + 1));
	return 0;
}

/* 0 (none) or an event handed out here: what creator fields may hold. */
int legion_prof_check_event_reference(const struct legion_prof *prof, uint64_t event)
{
	uint64_t number;

	return event ? legion_prof_event_number(prof, event, &number) : 0;
}

/* An fevent the record will own: given (handed out, unused) or 0 for a new one. */
int legion_prof_check_fevent(struct legion_prof *prof, uint64_t fevent, uint64_t *number)
{
	int err;

	if (!fevent) {
		*number = UINT64_MAX; /* handed out by legion_prof_take_fevent() */
		return 0;
	}
	err = legion_prof_event_number(prof, fevent, number);
	return err ? err : legion_prof_claim_set_check(&prof->fevents, *number);
}

int legion_prof_take_fevent(struct legion_prof *prof, uint64_t *fevent, uint64_t number)
{
	int err;

	if (number == UINT64_MAX) {
		err = legion_prof_new_event(prof, fevent);
		if (err)
			return err;
		number = prof->fevents.issued - 1;
	}
	legion_prof_claim_set_take(&prof->fevents, number);
	return 0;
}

/* A new processor of kind: its id, or -ERANGE past Realm's 12-bit index. */
int legion_prof_add_proc(struct legion_prof *prof, enum legion_prof_proc_kind kind,
			 uint64_t *proc_id)
{
	if (prof->proc_count >= LEGION_PROF_PROCS_MAX)
		return -ERANGE;
	*proc_id = legion_prof_proc_id(prof->node_id, prof->proc_count);
	prof->proc_kinds[prof->proc_count++] = (uint8_t)kind;
	return 0;
}

/* The kind of a processor declared here, or 0. */
int legion_prof_proc_kind_of(const struct legion_prof *prof, uint64_t proc_id)
{
	uint32_t index = proc_id & 0xfff;

	if (proc_id != legion_prof_proc_id(prof->node_id, index) || index >= prof->proc_count)
		return 0;
	return prof->proc_kinds[index];
}

/* ---- output ------------------------------------------------------------- */

/* The file's descriptor, opened again if it was released. */
static int file_fd(struct legion_prof *prof)
{
	int fd;

	if (prof->fd >= 0)
		return prof->fd;
	fd = prof->reopen ? prof->reopen(prof->reopen_ctx) : -EBADF;
	if (fd >= 0)
		prof->fd = fd;
	return fd;
}

static void write_out(struct legion_prof *prof, const unsigned char *data, size_t size)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	if (!size || prof->error)
		return;
	fd = file_fd(prof);
	if (fd < 0) {
		prof->error = fd;
		return;
	}
	while (done < size && !prof->error) {
		n = write(fd, data + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			prof->error = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
}

/*
 * Compresses the buffer into the one gzip stream (§1.3). What comes out is
 * kept until it fills zbuffer, as gzwrite() keeps it, so the file is
 * written (and opened again, if it was released) seldom; Z_FULL_FLUSH and
 * Z_FINISH write everything so far.
 */
static void compress_out(struct legion_prof *prof, int flush)
{
	z_stream *z = &prof->z;
	int ret;

	z->next_in = prof->buffer;
	z->avail_in = (unsigned int)prof->length;
	do {
		z->next_out = prof->zbuffer + prof->zlength;
		z->avail_out = (unsigned int)(GZIP_BUFFER_SIZE - prof->zlength);
		ret = deflate(z, flush);
		if (ret == Z_STREAM_ERROR) {
			prof->error = -EIO;
			return;
		}
		prof->zlength = GZIP_BUFFER_SIZE - z->avail_out;
		if (!z->avail_out || flush != Z_NO_FLUSH) {
			write_out(prof, prof->zbuffer, prof->zlength);
			prof->zlength = 0;
		}
	} while (!prof->error && ret != Z_STREAM_END &&
		 (z->avail_in || !z->avail_out || flush == Z_FINISH));
}

int legion_prof_drain(struct legion_prof *prof)
{
	if (prof->error)
		return prof->error;
	if (prof->zbuffer)
		compress_out(prof, Z_NO_FLUSH);
	else
		write_out(prof, prof->buffer, prof->length);
	prof->length = 0;
	return prof->error;
}

/* Room for one record at the end of the buffer, or NULL after an I/O error. */
unsigned char *legion_prof_record_begin(struct legion_prof *prof, uint32_t id)
{
	unsigned char *p;

	if (prof->length + RECORD_MAX > OUTPUT_BUFFER_SIZE && legion_prof_drain(prof))
		return NULL;
	p = prof->buffer + prof->length;
	p[0] = id;
	p[1] = id >> 8;
	p[2] = id >> 16;
	p[3] = id >> 24;
	return p + 4;
}

int legion_prof_record_end(struct legion_prof *prof, unsigned char *end)
{
	prof->length = (size_t)(end - prof->buffer);
	return 0;
}

int legion_prof_put_bytes(struct legion_prof *prof, const void *bytes, size_t size)
{
	if (prof->length + size > OUTPUT_BUFFER_SIZE && legion_prof_drain(prof))
		return prof->error;
	if (size > OUTPUT_BUFFER_SIZE)
		return -EINVAL;
	memcpy(prof->buffer + prof->length, bytes, size);
	prof->length += size;
	return 0;
}

int legion_prof_flush(struct legion_prof *prof)
{
	if (legion_prof_drain(prof))
		return prof->error;
	if (prof->zbuffer)
		compress_out(prof, Z_FULL_FLUSH);
	return prof->error;
}

int legion_prof_release_fd(struct legion_prof *prof)
{
	int fd = prof->fd;

	if (!prof->reopen || fd < 0)
		return -EINVAL;
	prof->fd = -1;
	return fd;
}

/* ---- the stack of a span's user ranges ---------------------------------- */

int legion_prof_span_link(struct legion_prof *prof, const struct legion_prof_task *task,
			  struct legion_prof_span **span)
{
	struct legion_prof_span *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->prof = prof;
	s->task = *task;
	s->frames[0].start = task->start;
	s->frames[0].children_stop = task->start;
	s->next = prof->spans;
	if (prof->spans)
		prof->spans->prev = s;
	prof->spans = s;
	*span = s;
	return 0;
}

void legion_prof_span_unlink(struct legion_prof_span *span)
{
	if (span->prev)
		span->prev->next = span->next;
	else
		span->prof->spans = span->next;
	if (span->next)
		span->next->prev = span->prev;
	free(span);
}

int legion_prof_range_begin(struct legion_prof_span *span, uint64_t start)
{
	struct range_frame *parent = &span->frames[span->depth];

	if (span->prof->error)
		return span->prof->error;
	if (span->depth == SPAN_DEPTH_MAX || span->dropped) {
		span->dropped++;
		return -ERANGE;
	}
	/* no earlier than its parent began or its previous sibling ended */
	start = max_u64(min_u64(start, TIME_MAX), parent->children_stop);
	span->frames[++span->depth] = (struct range_frame){ start, start };
	return 0;
}

int legion_prof_range_pop(struct legion_prof_span *span, uint64_t *start, uint64_t *stop)
{
	struct range_frame *frame;

	if (span->prof->error)
		return span->prof->error;
	if (span->dropped) {
		span->dropped--;
		return -ERANGE;
	}
	if (!span->depth)
		return -EINVAL; /* no open range */
	frame = &span->frames[span->depth--];
	/* no earlier than its children; its parent ends no earlier than it */
	*start = frame->start;
	*stop = max_u64(min_u64(*stop, TIME_MAX), frame->children_stop);
	span->frames[span->depth].children_stop = *stop;
	return 0;
}

/* ---- the file ----------------------------------------------------------- */

static int check_options(const struct legion_prof_options *options, uint32_t version,
			 uint32_t num_nodes)
{
	if (version != LEGION_PROF_VERSION && version != LEGION_PROF_VERSION_1007)
		return -EINVAL;
	if (options->node_id >= num_nodes || options->node_id > LEGION_PROF_NODE_MAX ||
	    num_nodes > LEGION_PROF_NODE_MAX + 1)
		return -EINVAL;
	return 0;
}

/* Frees the writer, and the spans still open; the file stays open. */
static void free_writer(struct legion_prof *prof)
{
	size_t i;

	while (prof->spans) {
		struct legion_prof_span *next = prof->spans->next;

		free(prof->spans);
		prof->spans = next;
	}
	if (prof->provenance_cache)
		for (i = 0; i < PROVENANCE_CACHE_SLOTS; i++)
			free(prof->provenance_cache[i].text);
	free(prof->provenance_cache);
	claim_set_free(&prof->op_instances);
	claim_set_free(&prof->op_runs);
	claim_set_free(&prof->fevents);
	idmap_free(&prof->task_kinds);
	idmap_free(&prof->task_variants);
	idmap_free(&prof->op_kinds);
	idmap_free(&prof->meta_kinds);
	free(prof->buffer);
	free(prof);
}

/*
 * One gzip stream (a zlib header of gzip's, windowBits 15 + 16) that the
 * writer writes itself: no descriptor of zlib's. Level 1: profiles
 * compress well and the export's speed matters more.
 */
static int open_gzip(struct legion_prof *prof)
{
	prof->zbuffer = malloc(GZIP_BUFFER_SIZE);
	if (!prof->zbuffer)
		return -ENOMEM;
	if (deflateInit2(&prof->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(prof->zbuffer);
		prof->zbuffer = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void close_gzip(struct legion_prof *prof)
{
	if (!prof->zbuffer)
		return;
	deflateEnd(&prof->z);
	free(prof->zbuffer);
	prof->zbuffer = NULL;
}

int legion_prof_core_open(struct legion_prof **out, int fd,
			  const struct legion_prof_options *options)
{
	struct legion_prof *prof;
	uint32_t version, num_nodes;
	int err;

	version = options->version ? options->version : LEGION_PROF_VERSION;
	num_nodes = options->num_nodes ? options->num_nodes : 1;
	err = check_options(options, version, num_nodes);
	if (err)
		return err;
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return -ENOMEM;
	prof->fd = fd;
	prof->version = version;
	prof->node_id = options->node_id;
	prof->num_nodes = num_nodes;
	prof->reopen = options->reopen;
	prof->reopen_ctx = options->reopen_ctx;
	prof->buffer = malloc(OUTPUT_BUFFER_SIZE);
	prof->provenance_cache = calloc(PROVENANCE_CACHE_SLOTS, sizeof(*prof->provenance_cache));
	if (!prof->buffer || !prof->provenance_cache) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!options->raw) {
		err = open_gzip(prof);
		if (err)
			goto cleanup;
	}
	*out = prof;
	return 0;

cleanup:
	free_writer(prof);
	return err;
}

void legion_prof_core_discard(struct legion_prof *prof)
{
	close_gzip(prof);
	free_writer(prof);
}

int legion_prof_core_close(struct legion_prof *prof)
{
	int err = legion_prof_drain(prof);

	if (!err && prof->zbuffer)
		compress_out(prof, Z_FINISH);
	err = err ?: prof->error;
	close_gzip(prof);
	if (prof->fd >= 0 && close(prof->fd) && !err)
		err = -errno;
	free_writer(prof);
	return err;
}
