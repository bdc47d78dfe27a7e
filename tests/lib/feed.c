// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include "feed.h"
#include "testlib.h"

void feed_event(struct profile *profile, uint32_t tgid, uint64_t ts, uint32_t tid, int type,
		uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct record_event event = {
		.timestamp = ts,
		.tgid = tgid,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, a4 },
	};

	ck_assert_int_eq(profile_feed(profile, &event, sizeof(event)), 0);
}

void feed_text(struct profile *profile, uint32_t tgid, uint64_t address, const char *text)
{
	struct record_string record = {
		.tgid = tgid,
		.tid = tgid,
		.type = RECORD_STRING,
		.address = address,
	};

	snprintf(record.text, sizeof(record.text), "%s", text);
	ck_assert_int_eq(profile_feed(profile, &record, sizeof(record)), 0);
}
