// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The start of every Legion Prof log (§2.14 steps 1-3): the text preamble
 * that maps record names to ids, byte for byte as Legion writes it, then the
 * MachineDesc and ZeroTime records and the OpDesc of tasks.
 */
#include <string.h>

#include "output/legion_preamble.h"
#include "output/legion_prof.h"
#include "output/legion_prof_core.h"

/*
 * The preamble Legion 25.06 writes (x86-64 sizes), byte for byte: the reader
 * maps names to ids from it and ignores the field lists (§1.1). Writing all
 * of it also satisfies the 24.09 reader, which wanted every name declared.
 * "since" marks the line 1007 files must not have (§3.2).
 */
static const char preamble_first_line[] = "FileType: BinaryLegionProf v: 1.0\n";
static const struct preamble_line {
	const char *text;
	unsigned int since;
} preamble_lines[] = {
	{ "MapperName {id:1, mapper_id:MapperID:4, mapper_proc:ProcID:8, name:string:-1}\n", 0 },
	{ "MapperCallDesc {id:2, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "RuntimeCallDesc {id:3, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "MetaDesc {id:4, kind:unsigned:4, message:bool:1, ordered_vc:bool:1, name:string:-1}\n",
	  0 },
	{ "OpDesc {id:5, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "ProcDesc {id:6, proc_id:ProcID:8, kind:ProcKind:4, uuid_size:uuid_size:4, "
	  "cuda_device_uuid:uuid:1}\n",
	  0 },
	{ "MaxDimDesc {id:8, max_dim:maxdim:4}\n", 0 },
	{ "RuntimeConfig {id:9, debug:bool:1, spy:bool:1, gc:bool:1, inorder:bool:1, "
	  "safe_mapper:bool:1, safe_runtime:bool:1, safe_ctrlrepl:bool:1, part_checks:bool:1, "
	  "bounds_checks:bool:1, resilient:bool:1}\n",
	  0 },
	{ "MachineDesc {id:10, node_id:unsigned:4, num_nodes:unsigned:4, version:unsigned:4, "
	  "hostname:string:-1, host_id:unsigned long long:8, process_id:unsigned:4}\n",
	  0 },
	{ "CalibrationErr {id:61, calibration_err:long long:8}\n", 0 },
	{ "ZeroTime {id:60, zero_time:long long:8}\n", 0 },
	{ "Provenance {id:62, provenance:unsigned long long:8, prov:string:-1}\n", 0 },
	{ "MemDesc {id:7, mem_id:MemID:8, kind:MemKind:4, capacity:unsigned long long:8}\n", 0 },
	{ "ProcMDesc {id:30, proc_id:ProcID:8, mem_id:MemID:8, bandwidth:unsigned:4, "
	  "latency:unsigned:4}\n",
	  0 },
	{ "IndexSpacePointDesc {id:31, unique_id:IDType:8, dim:unsigned:4, rem:point:8}\n", 0 },
	{ "IndexSpaceRectDesc {id:32, unique_id:IDType:8, dim:unsigned:4, rem:array:8}\n", 0 },
	{ "IndexSpaceEmptyDesc {id:33, unique_id:IDType:8}\n", 0 },
	{ "FieldDesc {id:34, unique_id:UniqueID:8, field_id:unsigned:4, size:unsigned long long:8, "
	  "name:string:-1}\n",
	  0 },
	{ "FieldSpaceDesc {id:35, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "PartDesc {id:36, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "IndexSpaceDesc {id:38, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "IndexSubSpaceDesc {id:39, parent_id:UniqueID:8, unique_id:UniqueID:8}\n", 0 },
	{ "IndexPartitionDesc {id:37, parent_id:UniqueID:8, unique_id:UniqueID:8, disjoint:bool:1, "
	  "point0:unsigned long long:8}\n",
	  0 },
	{ "IndexSpaceSizeDesc {id:45, unique_id:UniqueID:8, dense_size:unsigned long long:8, "
	  "sparse_size:unsigned long long:8, is_sparse:bool:1}\n",
	  0 },
	{ "LogicalRegionDesc {id:40, ispace_id:IDType:8, fspace_id:unsigned:4, tree_id:unsigned:4, "
	  "name:string:-1}\n",
	  0 },
	{ "PhysicalInstRegionDesc {id:41, inst_uid:unsigned long long:8, ispace_id:IDType:8, "
	  "fspace_id:unsigned:4, tree_id:unsigned:4}\n",
	  0 },
	{ "PhysicalInstLayoutDesc {id:42, inst_uid:unsigned long long:8, field_id:unsigned:4, "
	  "fspace_id:unsigned:4, has_align:bool:1, eqk:unsigned:4, align_desc:unsigned:4}\n",
	  0 },
	{ "PhysicalInstDimOrderDesc {id:43, inst_uid:unsigned long long:8, dim:unsigned:4, "
	  "dim_kind:unsigned:4}\n",
	  0 },
	{ "PhysicalInstanceUsage {id:44, inst_uid:unsigned long long:8, op_id:UniqueID:8, "
	  "index_id:unsigned:4, field_id:unsigned:4}\n",
	  0 },
	{ "TaskKind {id:11, task_id:TaskID:4, name:string:-1, overwrite:bool:1}\n", 0 },
	{ "TaskVariant {id:12, task_id:TaskID:4, variant_id:VariantID:4, name:string:-1}\n", 0 },
	{ "OperationInstance {id:13, op_id:UniqueID:8, parent_id:UniqueID:8, kind:unsigned:4, "
	  "provenance:unsigned long long:8}\n",
	  0 },
	{ "MultiTask {id:14, op_id:UniqueID:8, task_id:TaskID:4}\n", 0 },
	{ "SliceOwner {id:15, parent_id:UniqueID:8, op_id:UniqueID:8}\n", 0 },
	{ "TaskWaitInfo {id:16, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "wait_start:timestamp_t:8, wait_ready:timestamp_t:8, wait_end:timestamp_t:8, "
	  "wait_event:unsigned long long:8}\n",
	  0 },
	{ "MetaWaitInfo {id:17, op_id:UniqueID:8, lg_id:unsigned:4, wait_start:timestamp_t:8, "
	  "wait_ready:timestamp_t:8, wait_end:timestamp_t:8, wait_event:unsigned long long:8}\n",
	  0 },
	{ "TaskInfo {id:18, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "ImplicitTaskInfo {id:28, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "GPUTaskInfo {id:29, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, gpu_start:timestamp_t:8, gpu_stop:timestamp_t:8, creator:unsigned "
	  "long long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "MetaInfo {id:19, op_id:UniqueID:8, lg_id:unsigned:4, proc_id:ProcID:8, "
	  "create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, "
	  "creator:unsigned long long:8, critical:unsigned long long:8, fevent:unsigned long "
	  "long:8}\n",
	  0 },
	{ "MessageInfo {id:24, op_id:UniqueID:8, lg_id:unsigned:4, proc_id:ProcID:8, "
	  "spawn:timestamp_t:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "CopyInfo {id:20, op_id:UniqueID:8, size:unsigned long long:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8, "
	  "collective:unsigned:4}\n",
	  0 },
	{ "CopyInstInfo {id:47, src:MemID:8, dst:MemID:8, src_fid:unsigned:4, dst_fid:unsigned:4, "
	  "src_inst:unsigned long long:8, dst_inst:unsigned long long:8, fevent:unsigned long "
	  "long:8, num_hops:unsigned:4, indirect:bool:1}\n",
	  0 },
	{ "FillInfo {id:21, op_id:UniqueID:8, size:unsigned long long:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "FillInstInfo {id:48, dst:MemID:8, fid:unsigned:4, dst_inst:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "InstTimelineInfo {id:22, inst_uid:unsigned long long:8, inst_id:InstID:8, "
	  "mem_id:MemID:8, size:unsigned long long:8, op_id:UniqueID:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, destroy:timestamp_t:8, creator:unsigned long long:8}\n",
	  0 },
	{ "PartitionInfo {id:23, op_id:UniqueID:8, part_op:DepPartOpKind:4, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "MapperCallInfo {id:25, mapper_id:MapperID:4, mapper_proc:ProcID:8, "
	  "kind:MappingCallKind:4, op_id:UniqueID:8, start:timestamp_t:8, stop:timestamp_t:8, "
	  "proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "RuntimeCallInfo {id:26, kind:RuntimeCallKind:4, start:timestamp_t:8, "
	  "stop:timestamp_t:8, proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "ApplicationCallInfo {id:27, provenance:unsigned long long:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "BacktraceDesc {id:49, backtrace_id:unsigned long long:8, backtrace:string:-1}\n", 0 },
	{ "EventWaitInfo {id:50, proc_id:ProcID:8, fevent:unsigned long long:8, "
	  "wait_event:unsigned long long:8, backtrace_id:unsigned long long:8}\n",
	  0 },
	{ "EventMergerInfo {id:51, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8, pre0:unsigned long long:8, pre1:unsigned long long:8, "
	  "pre2:unsigned long long:8, pre3:unsigned long long:8}\n",
	  0 },
	{ "EventTriggerInfo {id:52, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "precondition:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "EventPoisonInfo {id:53, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8}\n",
	  0 },
	{ "BarrierArrivalInfo {id:54, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "precondition:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "ReservationAcquireInfo {id:55, result:unsigned long long:8, fevent:unsigned long "
	  "long:8, precondition:unsigned long long:8, performed:timestamp_t:8, "
	  "reservation:unsigned long long:8}\n",
	  0 },
	{ "InstanceReadyInfo {id:56, result:unsigned long long:8, precondition:unsigned long "
	  "long:8, inst_uid:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "InstanceRedistrictInfo {id:57, result:unsigned long long:8, precondition:unsigned long "
	  "long:8, previous:unsigned long long:8, next:unsigned long long:8, "
	  "performed:timestamp_t:8}\n",
	  1008 },
	{ "CompletionQueueInfo {id:58, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8, pre0:unsigned long long:8, pre1:unsigned long long:8, "
	  "pre2:unsigned long long:8, pre3:unsigned long long:8}\n",
	  0 },
	{ "ProfTaskInfo {id:59, proc_id:ProcID:8, op_id:UniqueID:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, fevent:unsigned long long:8, "
	  "completion:bool:1}\n",
	  0 },
};

static int write_preamble(struct legion_prof *prof)
{
	size_t i;
	int err = 0;

	for (i = 0; i <= sizeof(preamble_lines) / sizeof(preamble_lines[0]) && !err; i++) {
		const char *text = i ? preamble_lines[i - 1].text : preamble_first_line;

		if (i && preamble_lines[i - 1].since > prof->version)
			continue;
		err = legion_prof_put_bytes(prof, text, strlen(text));
	}
	return err ?: legion_prof_put_bytes(prof, "\n", 1); /* the empty line that ends it */
}

static int write_machine_desc(struct legion_prof *prof, const struct legion_prof_options *options)
{
	unsigned char *p = legion_prof_record_begin(prof, MACHINE_DESC_ID);

	if (!p)
		return prof->error;
	p = put_u32(p, prof->node_id);
	p = put_u32(p, prof->num_nodes);
	p = put_u32(p, prof->version);
	p = put_string(p, options->hostname);
	p = put_u64(p, options->host_id);
	p = put_u32(p, options->process_id);
	return legion_prof_record_end(prof, p);
}

static int write_zero_time(struct legion_prof *prof, int64_t zero_time_ns)
{
	unsigned char *p = legion_prof_record_begin(prof, ZERO_TIME_ID);

	if (!p)
		return prof->error;
	return legion_prof_record_end(prof, put_u64(p, (uint64_t)zero_time_ns));
}

/* The preamble and the records every file starts with (§2.14 steps 1-3). */
int legion_prof_write_header(struct legion_prof *prof, const struct legion_prof_options *options)
{
	int err = write_preamble(prof);

	if (!err)
		err = write_machine_desc(prof, options);
	if (!err)
		err = write_zero_time(prof, options->zero_time_ns);
	return err;
}
