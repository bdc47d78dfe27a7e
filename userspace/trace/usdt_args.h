/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* USDT argument specifications ("8@%rdi", "-4@-16(%rbp)", "$5") on x86-64. */
#ifndef OPTRACE_TRACE_USDT_ARGS_H
#define OPTRACE_TRACE_USDT_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#define USDT_MAX_ARGS 12

enum usdt_arg_kind {
	USDT_ARG_CONST,	    /* the value itself */
	USDT_ARG_REG,	    /* a register's value */
	USDT_ARG_REG_DEREF, /* memory at register + offset */
};

struct usdt_arg {
	enum usdt_arg_kind kind;
	int size; /* bytes: 1, 2, 4 or 8 */
	bool is_signed;
	int reg;       /* enum usdt_reg, for REG and REG_DEREF */
	int64_t value; /* the constant, or the offset for REG_DEREF */
};

/* The registers that can hold an argument, in struct pt_regs terms. */
enum usdt_reg {
	USDT_REG_RAX,
	USDT_REG_RBX,
	USDT_REG_RCX,
	USDT_REG_RDX,
	USDT_REG_RSI,
	USDT_REG_RDI,
	USDT_REG_RBP,
	USDT_REG_RSP,
	USDT_REG_R8,
	USDT_REG_R9,
	USDT_REG_R10,
	USDT_REG_R11,
	USDT_REG_R12,
	USDT_REG_R13,
	USDT_REG_R14,
	USDT_REG_R15,
	USDT_REG_RIP,
	USDT_REG__COUNT
};

/*
 * Parses a note's argument string into args (at most max). Returns the
 * number of arguments, or -EINVAL for a specification it cannot read.
 */
int usdt_args_parse(const char *spec, struct usdt_arg *args, int max);

/* Byte offset of reg in the kernel's struct pt_regs (x86-64). */
int usdt_reg_pt_regs_offset(int reg);

#endif /* OPTRACE_TRACE_USDT_ARGS_H */
