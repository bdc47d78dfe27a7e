// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Basic authentication against the web configuration's bcrypt hashes
 * (web_config.h): libxcrypt's crypt_r checks a password, GnuTLS's SHA-256
 * remembers one accepted, comparisons take the same time whatever matches.
 * The HTTP thread asks web_auth_quick(); the bcrypt runs on another thread
 * (web_auth_check()): one lock guards what both touch.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/web_config.h"

/* The users' remembered pairs and the second's count of checks. */
static pthread_mutex_t auth_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same(const void *a, const void *b, size_t length)
{
	const unsigned char *x = a, *y = b;
	unsigned char differ = 0;

	for (size_t i = 0; i < length; i++)
		differ |= x[i] ^ y[i];
	return !differ;
}

/* At most AUTH_CHECKS_PER_S bcrypt checks a second; called under auth_lock. */
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

static struct web_user *find_user(struct web_config *config, const char *user)
{
	struct web_user *found = NULL;

	/* Every name compared: the time says nothing of which one matched. */
	for (size_t i = 0; i < config->user_count; i++)
		if (!strcmp(config->users[i].name, user))
			found = &config->users[i];
	return found;
}

/* SHA-256 of (user, NUL, password): false if the pair is too long to be one. */
static bool pair_digest(const char *user, const char *password, unsigned char digest[32])
{
	char pair[1024];
	int length;
	bool ok;

	length = snprintf(pair, sizeof(pair), "%s%c%s", user, '\0', password);
	ok = length >= 0 && (size_t)length < sizeof(pair) &&
	     !gnutls_hash_fast(GNUTLS_DIG_SHA256, pair, (size_t)length, digest);
	explicit_bzero(pair, sizeof(pair));
	return ok;
}

enum web_auth_verdict web_auth_quick(struct web_config *config, const char *user,
				     const char *password)
{
	enum web_auth_verdict verdict = WEB_AUTH_NEEDS_CHECK;
	unsigned char digest[32];
	struct web_user *found;

	if (!config->user_count)
		return WEB_AUTH_ACCEPTED;
	if (!user || !password || !pair_digest(user, password, digest))
		return WEB_AUTH_REFUSED;
	pthread_mutex_lock(&auth_lock);
	found = find_user(config, user);
	if (found && found->has_accepted && same(found->accepted, digest, sizeof(digest)))
		verdict = WEB_AUTH_ACCEPTED;
	else if (!may_check())
		verdict = WEB_AUTH_REFUSED;
	pthread_mutex_unlock(&auth_lock);
	explicit_bzero(digest, sizeof(digest));
	return verdict;
}

bool web_auth_check(struct web_config *config, const char *user, const char *password)
{
	struct crypt_data *data;
	struct web_user *found;
	unsigned char digest[32];
	const char *hashed;
	bool ok;

	if (!config->user_count)
		return true;
	if (!user || !password || !pair_digest(user, password, digest))
		return false;
	data = calloc(1, sizeof(*data)); /* 32 KiB: not on a thread's stack */
	if (!data)
		return false;
	pthread_mutex_lock(&auth_lock);
	found = find_user(config, user);
	pthread_mutex_unlock(&auth_lock);
	/* An unknown user costs a check too: the time says nothing of who exists. */
	hashed = crypt_r(password, found ? found->hash : config->users[0].hash, data);
	ok = found && hashed && strlen(hashed) == strlen(found->hash) &&
	     same(hashed, found->hash, strlen(found->hash));
	explicit_bzero(data, sizeof(*data));
	free(data);
	if (ok) {
		pthread_mutex_lock(&auth_lock);
		memcpy(found->accepted, digest, sizeof(digest));
		found->has_accepted = true;
		pthread_mutex_unlock(&auth_lock);
	}
	explicit_bzero(digest, sizeof(digest));
	return ok;
}
