// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Parses the argument strings of SDT notes, in the operand syntax that
 * sys/sdt.h makes gas print: SIZE@OPERAND, where a negative SIZE means
 * signed and OPERAND is %reg, $constant, or offset(%reg).
 */
#include <asm/ptrace.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace/usdt_args.h"

static const struct {
	const char *names[4]; /* 64, 32, 16 and 8-bit names */
	int pt_regs_offset;
} registers[USDT_REG__COUNT] = {
	[USDT_REG_RAX] = { { "rax", "eax", "ax", "al" }, offsetof(struct pt_regs, rax) },
	[USDT_REG_RBX] = { { "rbx", "ebx", "bx", "bl" }, offsetof(struct pt_regs, rbx) },
	[USDT_REG_RCX] = { { "rcx", "ecx", "cx", "cl" }, offsetof(struct pt_regs, rcx) },
	[USDT_REG_RDX] = { { "rdx", "edx", "dx", "dl" }, offsetof(struct pt_regs, rdx) },
	[USDT_REG_RSI] = { { "rsi", "esi", "si", "sil" }, offsetof(struct pt_regs, rsi) },
	[USDT_REG_RDI] = { { "rdi", "edi", "di", "dil" }, offsetof(struct pt_regs, rdi) },
	[USDT_REG_RBP] = { { "rbp", "ebp", "bp", "bpl" }, offsetof(struct pt_regs, rbp) },
	[USDT_REG_RSP] = { { "rsp", "esp", "sp", "spl" }, offsetof(struct pt_regs, rsp) },
	[USDT_REG_R8] = { { "r8", "r8d", "r8w", "r8b" }, offsetof(struct pt_regs, r8) },
	[USDT_REG_R9] = { { "r9", "r9d", "r9w", "r9b" }, offsetof(struct pt_regs, r9) },
	[USDT_REG_R10] = { { "r10", "r10d", "r10w", "r10b" }, offsetof(struct pt_regs, r10) },
	[USDT_REG_R11] = { { "r11", "r11d", "r11w", "r11b" }, offsetof(struct pt_regs, r11) },
	[USDT_REG_R12] = { { "r12", "r12d", "r12w", "r12b" }, offsetof(struct pt_regs, r12) },
	[USDT_REG_R13] = { { "r13", "r13d", "r13w", "r13b" }, offsetof(struct pt_regs, r13) },
	[USDT_REG_R14] = { { "r14", "r14d", "r14w", "r14b" }, offsetof(struct pt_regs, r14) },
	[USDT_REG_R15] = { { "r15", "r15d", "r15w", "r15b" }, offsetof(struct pt_regs, r15) },
	[USDT_REG_RIP] = { { "rip", "eip", NULL, NULL }, offsetof(struct pt_regs, rip) },
};

static int reg_by_name(const char *name, size_t length)
{
	for (int reg = 0; reg < USDT_REG__COUNT; reg++) {
		for (int width = 0; width < 4; width++) {
			const char *candidate = registers[reg].names[width];

			if (candidate && strlen(candidate) == length &&
			    !strncmp(candidate, name, length))
				return reg;
		}
	}
	return -EINVAL;
}

/* "%reg" at *cursor; advances past it. */
static int parse_reg(const char **cursor)
{
	const char *start = *cursor + 1;
	size_t length = 0;

	if (**cursor != '%')
		return -EINVAL;
	while ((start[length] >= 'a' && start[length] <= 'z') ||
	       (start[length] >= '0' && start[length] <= '9'))
		length++;
	*cursor = start + length;
	return reg_by_name(start, length);
}

static int parse_one(const char **cursor, struct usdt_arg *arg)
{
	const char *p = *cursor;
	char *end;
	long size;

	size = strtol(p, &end, 10);
	if (end == p || *end != '@')
		return -EINVAL;
	arg->is_signed = size < 0;
	arg->size = (int)labs(size);
	if (arg->size != 1 && arg->size != 2 && arg->size != 4 && arg->size != 8)
		return -EINVAL;
	p = end + 1;

	arg->value = 0;
	if (*p == '$') {
		arg->kind = USDT_ARG_CONST;
		arg->value = strtoll(p + 1, &end, 0);
		if (end == p + 1)
			return -EINVAL;
		p = end;
	} else if (*p == '%') {
		arg->kind = USDT_ARG_REG;
		arg->reg = parse_reg(&p);
	} else {
		arg->kind = USDT_ARG_REG_DEREF;
		if (*p != '(') {
			arg->value = strtoll(p, &end, 0);
			if (end == p)
				return -EINVAL;
			p = end;
		}
		if (*p != '(')
			return -EINVAL;
		p++;
		arg->reg = parse_reg(&p);
		if (*p != ')')
			return -EINVAL;
		p++;
	}
	if (arg->kind != USDT_ARG_CONST && arg->reg < 0)
		return -EINVAL;
	if (*p && *p != ' ')
		return -EINVAL;
	*cursor = p;
	return 0;
}

int usdt_args_parse(const char *spec, struct usdt_arg *args, int max)
{
	const char *cursor = spec;
	int count = 0;

	for (;;) {
		while (*cursor == ' ')
			cursor++;
		if (!*cursor)
			return count;
		if (count == max || parse_one(&cursor, &args[count]))
			return -EINVAL;
		count++;
	}
}

int usdt_reg_pt_regs_offset(int reg)
{
	return reg >= 0 && reg < USDT_REG__COUNT ? registers[reg].pt_regs_offset : -EINVAL;
}
