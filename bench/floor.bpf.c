// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The uprobe floor: empty programs on the same probes, attached the same way
 * as optrace stat's. What a hit costs before any work is done.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "usdt_fetch.bpf.h"

SEC("usdt")
int BPF_USDT(op_begin)
{
	return 0;
}

SEC("usdt")
int BPF_USDT(op_end)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
