// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Basic authentication against the web configuration's bcrypt hashes
 * (web_config.h): libxcrypt's crypt_r checks a password, GnuTLS's SHA-256
 * remembers one accepted, comparisons take the same time whatever matches.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "session/web_config.h"

static bool same(const void *a, const void *b, size_t length)
{
	const unsigned char *x = a, *y = b;
	unsigned char differ = 0;

	for (size_t i = 0; i < length; i++)
		differ |= x[i] ^ y[i];
	return !differ;
}

/* At most AUTH_CHECKS_PER_S bcrypt checks a second. */
static bool may_check(void)
{
	static time_t second;
	static int checks;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec != second) {
		second = now.tv_sec;
		checks = 0;
	}
	return checks++ < AUTH_CHECKS_PER_S;
}

bool web_auth_check(struct web_config *config, const char *user, const char *password)
{
	static struct crypt_data data; /* 32 KiB: one, the server's one thread's */
	struct web_user *found = NULL;
	unsigned char digest[32];
	char pair[1024];
	const char *hashed;
	int length;

	if (!config->user_count)
		return true;
	if (!user || !password)
		return false;
	for (size_t i = 0; i < config->user_count; i++)
		if (!strcmp(config->users[i].name, user))
			found = &config->users[i];
	length = snprintf(pair, sizeof(pair), "%s%c%s", user, '\0', password);
	if (length < 0 || (size_t)length >= sizeof(pair) ||
	    gnutls_hash_fast(GNUTLS_DIG_SHA256, pair, (size_t)length, digest)) {
		explicit_bzero(pair, sizeof(pair));
		return false;
	}
	explicit_bzero(pair, sizeof(pair));
	if (found && found->has_accepted && same(found->accepted, digest, sizeof(digest)))
		return true;
	if (!may_check())
		return false;
	/* An unknown user costs a check too: the time says nothing of who exists. */
	hashed = crypt_r(password, found ? found->hash : config->users[0].hash, &data);
	if (!found || !hashed || strlen(hashed) != strlen(found->hash) ||
	    !same(hashed, found->hash, strlen(found->hash)))
		return false;
	memcpy(found->accepted, digest, sizeof(digest));
	found->has_accepted = true;
	return true;
}
