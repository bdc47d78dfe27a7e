/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A scrape, as Prometheus makes one, for the tests of optrace serve. */
#ifndef OPTRACE_TEST_HTTP_GET_H
#define OPTRACE_TEST_HTTP_GET_H

/* A port nobody listens on now (the kernel's choice for port 0). */
int free_port(void);

/*
 * GET path from 127.0.0.1:port (HTTP/1.0: the server closes when done).
 * Returns the status code and the body in *body (to free), or -1.
 */
int http_get(int port, const char *path, char **body);

#endif /* OPTRACE_TEST_HTTP_GET_H */
