/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A USDT probe's arguments, all at once. libbpf's bpf_usdt_arg() is an
 * out-of-line function that looks the probe's argument specification up in
 * a map once per argument; on a probe with five arguments that is five map
 * lookups per hit. This reads the same specification (usdt.bpf.h's maps and
 * layout, filled by libbpf or by optrace's uprobe_multi attach) once.
 */
#ifndef OPTRACE_BPF_USDT_FETCH_BPF_H
#define OPTRACE_BPF_USDT_FETCH_BPF_H

/*
 * Each attached process takes one argument specification per probe site:
 * room for -p with the most processes optrace takes, and for -a.
 */
#define BPF_USDT_MAX_SPEC_CNT 2048
#include <bpf/usdt.bpf.h>

/*
 * The register at pt_regs offset reg_off, read from the context at a
 * constant offset: the verifier allows that without a helper call, which
 * bpf_probe_read_kernel() on a variable offset needs.
 */
static __always_inline int read_reg(struct pt_regs *ctx, short reg_off, unsigned long *value)
{
	switch (reg_off) {
	case offsetof(struct pt_regs, ax):
		*value = ctx->ax;
		return 0;
	case offsetof(struct pt_regs, bx):
		*value = ctx->bx;
		return 0;
	case offsetof(struct pt_regs, cx):
		*value = ctx->cx;
		return 0;
	case offsetof(struct pt_regs, dx):
		*value = ctx->dx;
		return 0;
	case offsetof(struct pt_regs, si):
		*value = ctx->si;
		return 0;
	case offsetof(struct pt_regs, di):
		*value = ctx->di;
		return 0;
	case offsetof(struct pt_regs, bp):
		*value = ctx->bp;
		return 0;
	case offsetof(struct pt_regs, sp):
		*value = ctx->sp;
		return 0;
	case offsetof(struct pt_regs, r8):
		*value = ctx->r8;
		return 0;
	case offsetof(struct pt_regs, r9):
		*value = ctx->r9;
		return 0;
	case offsetof(struct pt_regs, r10):
		*value = ctx->r10;
		return 0;
	case offsetof(struct pt_regs, r11):
		*value = ctx->r11;
		return 0;
	case offsetof(struct pt_regs, r12):
		*value = ctx->r12;
		return 0;
	case offsetof(struct pt_regs, r13):
		*value = ctx->r13;
		return 0;
	case offsetof(struct pt_regs, r14):
		*value = ctx->r14;
		return 0;
	case offsetof(struct pt_regs, r15):
		*value = ctx->r15;
		return 0;
	case offsetof(struct pt_regs, ip):
		*value = ctx->ip;
		return 0;
	default:
		return bpf_probe_read_kernel(value, sizeof(*value), (void *)ctx + reg_off);
	}
}

static __always_inline int usdt_fetch(struct pt_regs *ctx, __u64 *args, int count)
{
	struct __bpf_usdt_spec *spec;
	int spec_id = __bpf_usdt_spec_id(ctx);

	if (spec_id < 0)
		return -ESRCH;
	spec = bpf_map_lookup_elem(&__bpf_usdt_specs, &spec_id);
	if (!spec || spec->arg_cnt < count)
		return -ESRCH;
#pragma unroll
	for (int i = 0; i < count && i < BPF_USDT_MAX_ARG_CNT; i++) {
		struct __bpf_usdt_arg_spec *arg = &spec->args[i];
		unsigned long value = 0;

		switch (arg->arg_type) {
		case BPF_USDT_ARG_CONST:
			value = arg->val_off;
			break;
		case BPF_USDT_ARG_REG:
			if (read_reg(ctx, arg->reg_off, &value))
				return -EFAULT;
			break;
		case BPF_USDT_ARG_REG_DEREF:
			if (read_reg(ctx, arg->reg_off, &value) ||
			    bpf_probe_read_user(&value, sizeof(value),
						(void *)value + arg->val_off))
				return -EFAULT;
			break;
		default:
			return -EINVAL;
		}
		/* Widen 1, 2 or 4-byte arguments, with their sign if signed. */
		value <<= arg->arg_bitshift;
		if (arg->arg_signed)
			value = ((long)value) >> arg->arg_bitshift;
		else
			value = value >> arg->arg_bitshift;
		args[i] = value;
	}
	return 0;
}

/*
 * bpf_probe_read_user_str() returns its buffer's size both for a string
 * that exactly fills it and for one it cut: the byte after tells which.
 */
static __always_inline bool string_was_cut(__u64 address, long length, long size)
{
	char next = 0;

	if (length != size)
		return false;
	return bpf_probe_read_user(&next, 1, (void *)(address + size - 1)) || next;
}

#define ___usdt_pass0()
#define ___usdt_pass1(x) , ___a[0]
#define ___usdt_pass2(x, args...) ___usdt_pass1(args), ___a[1]
#define ___usdt_pass3(x, args...) ___usdt_pass2(args), ___a[2]
#define ___usdt_pass4(x, args...) ___usdt_pass3(args), ___a[3]
#define ___usdt_pass5(x, args...) ___usdt_pass4(args), ___a[4]
#define ___usdt_pass6(x, args...) ___usdt_pass5(args), ___a[5]
#define ___usdt_pass(args...) ___bpf_apply(___usdt_pass, ___bpf_narg(args))(args)

/*
 * Like usdt.bpf.h's BPF_USDT(name, args...), but the arguments named (the
 * first ones of the probe, up to 6) are fetched with one lookup, and a hit
 * whose arguments cannot be read is skipped.
 */
#define USDT_PROBE(name, args...)                                                       \
	name(struct pt_regs *ctx);                                                      \
	static __always_inline typeof(name(0)) ____##name(struct pt_regs *ctx, ##args); \
	typeof(name(0)) name(struct pt_regs *ctx)                                       \
	{                                                                               \
		__u64 ___a[6] = {};                                                     \
		if (usdt_fetch(ctx, ___a, ___bpf_narg(args)))                           \
			return 0;                                                       \
		return ____##name(ctx ___usdt_pass(args));                              \
	}                                                                               \
	static __always_inline typeof(name(0)) ____##name(struct pt_regs *ctx, ##args)

#endif /* OPTRACE_BPF_USDT_FETCH_BPF_H */
