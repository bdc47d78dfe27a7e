/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which processes a program counts. With `-- COMMAND` the probes are
 * attached to every process that maps liboptrace, and only the command and
 * its descendants (followed through fork) are targets; otherwise the attach
 * itself selects the processes and filter_targets stays false.
 */
#ifndef OPTRACE_BPF_TARGETS_BPF_H
#define OPTRACE_BPF_TARGETS_BPF_H

/* Set by the loader before load; the verifier drops the dead branches. */
const volatile bool filter_targets = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

static __always_inline bool is_target(__u32 tgid)
{
	if (!filter_targets)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid), child_tgid = BPF_CORE_READ(child, tgid);
	__u8 yes = 1;

	if (!filter_targets || parent_tgid == child_tgid)
		return 0;
	if (bpf_map_lookup_elem(&targets, &parent_tgid))
		bpf_map_update_elem(&targets, &child_tgid, &yes, BPF_ANY);
	return 0;
}

#endif /* OPTRACE_BPF_TARGETS_BPF_H */
