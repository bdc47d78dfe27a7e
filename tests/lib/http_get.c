// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <check.h>

#include "http_get.h"

/* A port nobody listens on now (the kernel's choice for port 0). */
int free_port(void)
{
	struct sockaddr_in address = { .sin_family = AF_INET,
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t size = sizeof(address);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&address, sizeof(address)) &&
	    !getsockname(fd, (struct sockaddr *)&address, &size))
		port = ntohs(address.sin_port);
	if (fd >= 0)
		close(fd);
	ck_assert_int_gt(port, 0);
	return port;
}

/*
 * GET path from 127.0.0.1:port (HTTP/1.0: the server closes when done).
 * Returns the status code and the body in *body (to free), or -1.
 */
int http_get(int port, const char *path, char **body)
{
	struct sockaddr_in address = { .sin_family = AF_INET,
				       .sin_port = htons((uint16_t)port),
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval timeout = { .tv_sec = 5 };
	char request[8192], *response = NULL, *start;
	size_t length = 0, capacity = 0;
	int fd, status = -1;
	ssize_t got;

	*body = NULL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path,
		 port);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) ||
	    write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		close(fd);
		return -1;
	}
	do {
		if (length + 4096 + 1 > capacity) {
			capacity = capacity ? capacity * 2 : 65536;
			response = realloc(response, capacity);
			ck_assert_ptr_nonnull(response);
		}
		got = read(fd, response + length, capacity - length - 1);
		if (got > 0)
			length += (size_t)got;
	} while (got > 0);
	close(fd);
	if (got < 0 || !response) {
		free(response);
		return -1;
	}
	response[length] = '\0';
	start = strstr(response, "\r\n\r\n");
	if (sscanf(response, "HTTP/%*s %d", &status) != 1 || !start) {
		free(response);
		return -1;
	}
	*body = strdup(start + 4);
	free(response);
	return status;
}
