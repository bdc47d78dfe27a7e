// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/diag.h"
#include "output/async_out.h"

struct async_out {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	char *buffers[2];
	char *pending; /* handed over, not written yet; NULL: none */
	size_t pending_used;
	bool closing;
	int error; /* the first write error, as a negative errno */
};

static int write_all(int fd, const char *data, size_t size)
{
	while (size) {
		ssize_t written = write(fd, data, size);

		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += written;
		size -= (size_t)written;
	}
	return 0;
}

static void *write_loop(void *arg)
{
	struct async_out *out = arg;

	pthread_mutex_lock(&out->lock);
	for (;;) {
		char *buffer;
		size_t used;
		int err;

		while (!out->pending && !out->closing)
			pthread_cond_wait(&out->changed, &out->lock);
		if (!out->pending)
			break;
		buffer = out->pending;
		used = out->pending_used;
		pthread_mutex_unlock(&out->lock);
		/* After an error, later buffers are dropped: the output is lost anyway. */
		err = out->error ? 0 : write_all(out->fd, buffer, used);
		pthread_mutex_lock(&out->lock);
		keep_first_error(&out->error, err);
		out->pending = NULL;
		pthread_cond_broadcast(&out->changed);
	}
	pthread_mutex_unlock(&out->lock);
	return NULL;
}

int async_out_open(struct async_out **result, int fd, char **buffer)
{
	struct async_out *out = calloc(1, sizeof(*out));
	int err;

	if (!out)
		return -ENOMEM;
	out->fd = fd;
	out->buffers[0] = malloc(ASYNC_OUT_BUFFER);
	out->buffers[1] = malloc(ASYNC_OUT_BUFFER);
	if (!out->buffers[0] || !out->buffers[1]) {
		err = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&out->lock, NULL);
	pthread_cond_init(&out->changed, NULL);
	err = -pthread_create(&out->thread, NULL, write_loop, out);
	if (err) {
		pthread_mutex_destroy(&out->lock);
		pthread_cond_destroy(&out->changed);
		goto fail;
	}
	*buffer = out->buffers[0];
	*result = out;
	return 0;
fail:
	free(out->buffers[0]);
	free(out->buffers[1]);
	free(out);
	return err;
}

char *async_out_swap(struct async_out *out, char *buffer, size_t used)
{
	pthread_mutex_lock(&out->lock);
	while (out->pending)
		pthread_cond_wait(&out->changed, &out->lock);
	out->pending = buffer;
	out->pending_used = used;
	pthread_cond_broadcast(&out->changed);
	pthread_mutex_unlock(&out->lock);
	return buffer == out->buffers[0] ? out->buffers[1] : out->buffers[0];
}

int async_out_close(struct async_out *out, char *buffer, size_t used)
{
	int err;

	if (used)
		async_out_swap(out, buffer, used);
	pthread_mutex_lock(&out->lock);
	out->closing = true;
	pthread_cond_broadcast(&out->changed);
	pthread_mutex_unlock(&out->lock);
	pthread_join(out->thread, NULL);
	err = out->error;
	pthread_mutex_destroy(&out->lock);
	pthread_cond_destroy(&out->changed);
	free(out->buffers[0]);
	free(out->buffers[1]);
	free(out);
	return err;
}
