# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# optrace: `make` builds everything into .output/, `make test` runs every
# suite, `make demo` runs the demo workload, `make bench` the benchmarks,
# `make install PREFIX=/usr DESTDIR=...` installs. `make V=1` shows commands.

OUTPUT ?= $(abspath .output)
CC ?= gcc
DTRACE ?= dtrace
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0
SOVERSION := 1

CFLAGS ?= -O2 -g
# CI builds with WERROR=1: a warning fails the build there.
WARNINGS := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
INCLUDES := -Iinclude -I$(OUTPUT)/probes
# -MMD -MP: each object's .d lists the headers it includes (read at the end).
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) $(INCLUDES) -std=gnu11 -fPIC -pthread -MMD -MP

LIB_DIR := $(OUTPUT)/lib
BIN_DIR := $(OUTPUT)/bin
LIBEXEC_DIR := $(OUTPUT)/libexec
LIBOPTRACE := $(LIB_DIR)/liboptrace.so.$(VERSION)
LIBOPTRACE_SONAME := liboptrace.so.$(SOVERSION)
# Programs find liboptrace beside them, in .output/lib or PREFIX/lib.
RPATH := -Wl,-rpath,'$$ORIGIN/../lib'
LINK_OPTRACE := -L$(LIB_DIR) -loptrace $(RPATH)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
MAKEFLAGS += --no-print-directory
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all lib optrace python demo tests bench run-bench test test-unit install uninstall clean deps \
	sanitize format format-check lint man deb

all: lib optrace python $(DEMO) tests bench

# A fresh machine needs nothing by hand: missing packages are installed once.
# NO_DEPS=1 (a package build, whose Build-Depends say what it needs) skips it.
ifeq ($(NO_DEPS),1)
DEPS_STAMP :=
else
DEPS_STAMP := $(OUTPUT)/.deps-ok
$(DEPS_STAMP): scripts/deps.sh | $(OUTPUT)
	$(call msg,DEPS,scripts/deps.sh)
	$(Q)scripts/deps.sh --check 2>/dev/null || scripts/deps.sh
	$(Q)touch $@
endif
deps: $(DEPS_STAMP)

$(OUTPUT) $(OUTPUT)/probes $(OUTPUT)/demo $(OUTPUT)/tests $(OUTPUT)/bench $(OUTPUT)/bpf \
$(LIB_DIR) $(BIN_DIR) $(LIBEXEC_DIR):
	$(Q)mkdir -p $@

# ---- liboptrace: the probes ------------------------------------------------

# Two providers, each a .d file: optrace (operations) and optrace_gpu (GPU activity).
PROVIDERS := optrace optrace_gpu
PROBES_HEADERS := $(patsubst %,$(OUTPUT)/probes/%_probes.h,$(PROVIDERS))
# The optrace provider's semaphores come from probes/semaphores.c (side by side).
PROBES_OBJS := $(OUTPUT)/probes/optrace_gpu_semaphores.o
LIBOPTRACE_SRCS := probes/liboptrace.c probes/batch.c probes/semaphores.c probes/runtime.c \
	probes/names.c probes/gpu.c probes/thread.c probes/view.c probes/clock.c \
	probes/lifecycle.c
LIBOPTRACE_OBJS := $(patsubst probes/%.c,$(OUTPUT)/probes/%.o,$(LIBOPTRACE_SRCS))

$(OUTPUT)/probes/%_probes.h: probes/%.d | $(OUTPUT)/probes $(DEPS_STAMP)
	$(call msg,DTRACE,$@)
	$(Q)$(DTRACE) -h -s $< -o $@

$(OUTPUT)/probes/%_semaphores.o: probes/%.d | $(OUTPUT)/probes $(DEPS_STAMP)
	$(call msg,DTRACE,$@)
	$(Q)CFLAGS=-fPIC $(DTRACE) -G -s $< -o $@

$(OUTPUT)/probes/%.o: probes/%.c $(PROBES_HEADERS) $(wildcard include/optrace/*.h probes/*.h) \
		| $(OUTPUT)/probes
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# -z nodelete: its thread-exit key and fork handlers must outlive a dlclose().
$(LIBOPTRACE): $(LIBOPTRACE_OBJS) $(PROBES_OBJS) probes/liboptrace.map | $(LIB_DIR)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -pthread -Wl,-soname,$(LIBOPTRACE_SONAME) -Wl,-z,nodelete \
		-Wl,--version-script=probes/liboptrace.map -o $@ $(filter %.o,$^)
	$(Q)ln -sf $(notdir $@) $(LIB_DIR)/$(LIBOPTRACE_SONAME)
	$(Q)ln -sf $(LIBOPTRACE_SONAME) $(LIB_DIR)/liboptrace.so

lib: $(LIBOPTRACE)

# ---- the optrace Python module (Debian's python3 and python3-dev) ---------------

PYTHON ?= /usr/bin/python3
PY_INCLUDE := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_DIR := $(OUTPUT)/python
# The optrace package: its C core (python/*.c), its own modules (python/optrace/)
# and one module per runtime adapter: adapters/NAME/adapter.py is optrace.NAME
# (docs/adapters.md). optrace-adapters.pth goes beside it once installed.
PY_PKG_DIR := $(PY_DIR)/optrace
PY_MODULE := $(PY_PKG_DIR)/_optrace$(PY_EXT_SUFFIX)
ADAPTERS := $(notdir $(patsubst %/adapter.py,%,$(wildcard adapters/*/adapter.py)))
PY_PKG_FILES := $(patsubst python/optrace/%,$(PY_PKG_DIR)/%,$(wildcard python/optrace/*.py)) \
	$(patsubst %,$(PY_PKG_DIR)/%.py,$(ADAPTERS))
PY_PACKAGE := $(PY_MODULE) $(PY_PKG_FILES)
# Where `make install` puts it, where Debian's python3 looks: /usr/lib/python3/dist-packages
# for PREFIX=/usr, PREFIX/lib/python3.X/dist-packages for /usr/local and others.
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_INSTALL_DIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VERSION)/dist-packages)

$(PY_DIR) $(PY_PKG_DIR):
	$(Q)mkdir -p $@

$(PY_PKG_DIR)/%.py: python/optrace/%.py | $(PY_PKG_DIR)
	$(Q)cp $< $@

$(PY_PKG_DIR)/%.py: adapters/%/adapter.py | $(PY_PKG_DIR)
	$(call msg,ADAPTER,$@)
	$(Q)cp $< $@

# liboptrace beside it: .output/lib from .output/python, PREFIX/lib once installed.
PY_SRCS := $(wildcard python/*.c)
$(PY_MODULE): $(PY_SRCS) $(wildcard python/*.h include/optrace/*.h) $(LIBOPTRACE) | $(PY_PKG_DIR) $(DEPS_STAMP)
	$(call msg,PYEXT,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -fno-strict-aliasing -I$(PY_INCLUDE) -shared \
		-o $@ $(PY_SRCS) -L$(LIB_DIR) -loptrace -Wl,-rpath,'$$ORIGIN/../../lib:$$ORIGIN/../../..'

# optrace._torch: optrace.torch's operator callbacks (adapters/torch), built only where
# libtorch-dev's headers are found, against the libtorch that python3-torch loads.
# TORCH=no leaves it out (the Debian packages do: it would make python3-optrace
# depend on libtorch).
TORCH ?= auto
TORCH_HEADER := $(if $(filter no,$(TORCH)),,$(wildcard /usr/include/ATen/record_function.h))
ifneq ($(TORCH_HEADER),)
PY_TORCH := $(PY_PKG_DIR)/_torch$(PY_EXT_SUFFIX)
TORCH_DIR := $(OUTPUT)/adapters/torch
# -DNDEBUG as Debian's release libtorch was built: its headers' inline code must match.
TORCH_CXXFLAGS := $(CFLAGS) $(WARNINGS) $(INCLUDES) -std=c++17 -fPIC -pthread -DNDEBUG \
	-fvisibility=hidden -I$(PY_INCLUDE) -MMD -MP
$(TORCH_DIR):
	$(Q)mkdir -p $@
$(TORCH_DIR)/operators.o: adapters/torch/operators.cpp | $(TORCH_DIR) $(DEPS_STAMP)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(TORCH_CXXFLAGS) -c -o $@ $<
$(TORCH_DIR)/python_frames.o: adapters/torch/python_frames.c | $(TORCH_DIR) $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -I$(PY_INCLUDE) -c -o $@ $<
$(PY_TORCH): $(TORCH_DIR)/operators.o $(TORCH_DIR)/python_frames.o $(LIBOPTRACE) | $(PY_PKG_DIR)
	$(call msg,PYEXT,$@)
	$(Q)$(CXX) -shared -o $@ $(filter %.o,$^) -L$(LIB_DIR) -loptrace -ltorch_cpu -lc10 \
		-Wl,-rpath,'$$ORIGIN/../../lib:$$ORIGIN/../../..'
PY_PACKAGE += $(PY_TORCH)
-include $(TORCH_DIR)/operators.d $(TORCH_DIR)/python_frames.d
endif

python: $(PY_PACKAGE)

# ---- liboptrace-starpu: StarPU's tasks (adapters/starpu), where its headers are found --
# LD_PRELOADed into an unmodified StarPU program (docs/starpu.md); its tests'
# programs beside it in .output/tests.
# STARPU=no leaves it out (the Debian packages do: it would depend on StarPU).
STARPU ?= auto
STARPU_PC := $(if $(filter no,$(STARPU)),,$(shell pkg-config --exists starpu-1.3 2>/dev/null && \
	echo starpu-1.3))
ifneq ($(STARPU_PC),)
STARPU_CFLAGS := $(shell pkg-config --cflags $(STARPU_PC))
STARPU_LIBS := $(shell pkg-config --libs $(STARPU_PC))
LIBOPTRACE_STARPU := $(LIB_DIR)/liboptrace-starpu.so
STARPU_SRCS := $(wildcard adapters/starpu/*.c)
STARPU_LIB_SRCS := $(filter-out adapters/starpu/two_variants.c,$(STARPU_SRCS))
$(LIBOPTRACE_STARPU): $(STARPU_LIB_SRCS) $(wildcard adapters/starpu/*.h) $(LIBOPTRACE) | $(LIB_DIR) $(DEPS_STAMP)
	$(call msg,LIB,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -D_GNU_SOURCE $(STARPU_CFLAGS) -fvisibility=hidden -shared -o $@ \
		$(STARPU_LIB_SRCS) -L$(LIB_DIR) -loptrace $(STARPU_LIBS) -ldl \
		-Wl,-soname,liboptrace-starpu.so -Wl,-rpath,'$$ORIGIN'
$(OUTPUT)/tests/starpu_two_variants: adapters/starpu/two_variants.c $(LIBOPTRACE) | $(OUTPUT)/tests $(DEPS_STAMP)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(STARPU_CFLAGS) -o $@ $< $(LINK_OPTRACE) $(STARPU_LIBS) -lOpenCL
STARPU_FIXTURES := $(LIBOPTRACE_STARPU) $(OUTPUT)/tests/starpu_two_variants
lib: $(LIBOPTRACE_STARPU)
endif

# ---- liboptrace-cupti: the GPU collector, only where CUPTI's headers are found --
# Built from probes/cupti/*.c into .output/lib/liboptrace-cupti.so; CUPTI is
# dlopen()ed at run time, never linked. Without the headers neither the
# library nor tests/unit/test_cupti_*.c is built.
CUDA_HOME ?= /usr/local/cuda
CUPTI_HEADER := $(firstword $(wildcard $(CUDA_HOME)/include/cupti_activity.h \
	$(CUDA_HOME)/extras/CUPTI/include/cupti_activity.h))
ifneq ($(CUPTI_HEADER),)
CUPTI_DIR := $(OUTPUT)/probes/cupti
CUPTI_CFLAGS := $(ALL_CFLAGS) -I$(CUPTI_DIR) -isystem $(CUDA_HOME)/include \
	-isystem $(CUDA_HOME)/extras/CUPTI/include -fvisibility=hidden
CUPTI_SRCS := $(wildcard probes/cupti/*.c)
CUPTI_OBJS := $(patsubst probes/cupti/%.c,$(CUPTI_DIR)/%.o,$(CUPTI_SRCS))
# What the tests link: everything but the injection entry (probes, dlopen).
CUPTI_TEST_OBJS := $(filter-out $(CUPTI_DIR)/injection.o,$(CUPTI_OBJS))
LIBOPTRACE_CUPTI := $(LIB_DIR)/liboptrace-cupti.so

$(CUPTI_DIR):
	$(Q)mkdir -p $@

$(CUPTI_DIR)/%.o: probes/cupti/%.c $(wildcard probes/cupti/*.h) include/optrace/gpu.h \
		| $(CUPTI_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CUPTI_CFLAGS) -c $< -o $@

# The probes it fires are liboptrace's, found beside it.
$(LIBOPTRACE_CUPTI): $(CUPTI_OBJS) $(LIBOPTRACE) | $(LIB_DIR)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -pthread -o $@ $(CUPTI_OBJS) -L$(LIB_DIR) -loptrace \
		-Wl,-rpath,'$$ORIGIN' -ldl

lib: $(LIBOPTRACE_CUPTI)

endif

# ---- BPF programs and the optrace command -----------------------------------

CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_DIR := $(OUTPUT)/bpf
VMLINUX := $(BPF_DIR)/vmlinux.h
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.skel.h,$(BPF_SRCS))
# Like libbpf-tools: the host's system headers after the BPF ones (asm/ types).
BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
# probes/names.c (enum names) and the GPU file reader are shared with the libraries.
OPTRACE_SHARED_SRCS := probes/names.c probes/cupti/gpufile.c
# userspace/ holds one folder per stage of the pipeline (userspace/README.md).
USERSPACE_STAGES := common trace capture model output session cli
OPTRACE_SRCS := $(foreach stage,$(USERSPACE_STAGES),$(wildcard userspace/$(stage)/*.c))
OPTRACE_SHARED_OBJS := $(patsubst %.c,$(OUTPUT)/userspace/shared/%.o,\
	$(notdir $(OPTRACE_SHARED_SRCS)))
# serve's HTTP server, TLS and bcrypt (libmicrohttpd, GnuTLS, libcrypt) are linked into a
# program of its own, PREFIX/libexec/optrace-serve, that `optrace serve` runs in its place
# (cli/serve_exec.c): the other commands load none of them. Its other objects are the
# stages' and serve's own (cli/serve_main.c its main).
SERVE_ONLY_SRCS := userspace/cli/serve.c userspace/cli/serve_main.c userspace/session/web_config.c \
	userspace/session/web_auth.c userspace/session/http_server.c userspace/session/serve_metrics.c \
	userspace/output/prometheus.c
OPTRACE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(filter-out $(SERVE_ONLY_SRCS),$(OPTRACE_SRCS))) \
	$(OPTRACE_SHARED_OBJS)
OPTRACE_SERVE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(filter-out userspace/cli/%,$(OPTRACE_SRCS)) \
	$(filter userspace/cli/%,$(SERVE_ONLY_SRCS)) userspace/cli/common_flags.c \
	userspace/cli/tracer_flags.c) $(OPTRACE_SHARED_OBJS)
OPTRACE := $(BIN_DIR)/optrace
OPTRACE_SERVE := $(LIBEXEC_DIR)/optrace-serve
# Includes name their stage ("model/profile.h") or the repository's folder ("bpf/events.h").
USERSPACE_INCLUDES := -iquote . -iquote userspace
OPTRACE_CFLAGS := $(ALL_CFLAGS) $(USERSPACE_INCLUDES) -I$(BPF_DIR) -DOPTRACE_VERSION='"$(VERSION)"'
USERSPACE_HEADERS := $(wildcard userspace/*/*.h bpf/*.h include/optrace/*.h)

# The running kernel's types: CO-RE relocates against the target's at load.
$(VMLINUX): | $(OUTPUT)/bpf $(DEPS_STAMP)
	$(call msg,GEN,$@)
	$(Q)test -r /sys/kernel/btf/vmlinux || { echo "no kernel BTF (/sys/kernel/btf/vmlinux): optrace needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BPF_DIR)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/optrace/abi.h $(VMLINUX) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(BPF_DIR) -Ibpf -Iinclude \
		$(BPF_SYS_INCLUDES) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BPF_DIR)/%.bpf.o: bench/%.bpf.c $(VMLINUX) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BPF_DIR) -Ibpf \
		$(BPF_SYS_INCLUDES) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BPF_DIR)/%.skel.h: $(BPF_DIR)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Generated headers first (order only): what each object includes is in its .d.
$(OUTPUT)/userspace/%.o: userspace/%.c | $(BPF_SKELS) $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -c $< -o $@

# The sources the command shares with the libraries, built for it on their own.
$(OUTPUT)/userspace/shared/names.o: probes/names.c
$(OUTPUT)/userspace/shared/gpufile.o: probes/cupti/gpufile.c probes/cupti/gpufile.h
$(OUTPUT)/userspace/shared/%.o: | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -c $< -o $@

$(OPTRACE): $(OPTRACE_OBJS) | $(BIN_DIR)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -pthread -o $@ $^ -lbpf -lelf -lz -ldl

$(OPTRACE_SERVE): $(OPTRACE_SERVE_OBJS) | $(LIBEXEC_DIR)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -pthread -o $@ $^ -lbpf -lelf -lz -ldl -lmicrohttpd -lgnutls -lcrypt

optrace: $(OPTRACE) $(OPTRACE_SERVE)

# ---- the demo array runtime --------------------------------------------------

DEMO_LIB_SRCS := $(wildcard examples/demo/lib/*.c)
DEMO_LIB_OBJS := $(patsubst examples/demo/lib/%.c,$(OUTPUT)/demo/%.o,$(DEMO_LIB_SRCS))
DEMO_SRCS := examples/demo/driver.c examples/demo/workloads.c
DEMO_OBJS := $(patsubst examples/demo/%.c,$(OUTPUT)/demo/%.o,$(DEMO_SRCS))
DEMO_CFLAGS := $(ALL_CFLAGS) -fopenmp -Iexamples/demo/lib
DEMO_LIB := $(OUTPUT)/demo/libdemo.a
DEMO := $(BIN_DIR)/optrace-demo
all: $(DEMO) # defined after `all:` is first read

$(OUTPUT)/demo/%.o: examples/demo/lib/%.c $(wildcard examples/demo/lib/*.h) $(wildcard include/optrace/*.h) | $(OUTPUT)/demo $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(DEMO_CFLAGS) -c $< -o $@

$(OUTPUT)/demo/%.o: examples/demo/%.c $(wildcard examples/demo/*.h examples/demo/lib/*.h) | $(OUTPUT)/demo $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(DEMO_CFLAGS) -c $< -o $@

$(DEMO_LIB): $(DEMO_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(DEMO): $(DEMO_OBJS) $(DEMO_LIB) $(LIBOPTRACE) | $(BIN_DIR)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -fopenmp -pthread -o $@ $(DEMO_OBJS) $(DEMO_CUDA_OBJS) $(DEMO_LIB) $(LINK_OPTRACE) -lm $(DEMO_CUDA_LIBS)

# The main job: record the demo workload with optrace, then write its report,
# a Legion Prof profile and a Chrome trace into .output/demo-run/.
DEMO_ARGS ?= --workload all --omp 1
DEMO_RUN := $(OUTPUT)/demo-run
# With a GPU, the collector and the CUDA variant too (where both were built).
DEMO_GPU = $(if $(and $(LIBOPTRACE_CUPTI),$(DEMO_CUDA_OBJS),$(wildcard /dev/nvidia0)),1)
demo: $(DEMO) $(OPTRACE)
	$(Q)mkdir -p $(DEMO_RUN)
	$(Q)$(OPTRACE) record $(if $(DEMO_GPU),--cuda) -o $(DEMO_RUN)/demo.capture -- \
		$(DEMO) $(DEMO_ARGS) $(if $(DEMO_GPU),--gpus auto) --truth $(DEMO_RUN)/truth.txt
	$(Q)$(OPTRACE) report $(DEMO_RUN)/demo.capture | tee $(DEMO_RUN)/report.txt
	$(Q)$(OPTRACE) export --legion -o $(DEMO_RUN)/legion $(DEMO_RUN)/demo.capture
	$(Q)$(OPTRACE) export --chrome -o $(DEMO_RUN)/trace.json $(DEMO_RUN)/demo.capture
	@echo "report: $(DEMO_RUN)/report.txt"
	@echo "Legion Prof: legion_prof view $(DEMO_RUN)/legion/prof_*.gz"
	@echo "Chrome trace (open in ui.perfetto.dev): $(DEMO_RUN)/trace.json"

# ---- the demo's CUDA variant, only where nvcc is found ------------------------
# examples/demo/lib/cuda.cu: GPU processors for the demo (--gpus), built with
# $(CUDA_HOME)/bin/nvcc and linked with the static CUDA runtime, so that
# optrace-demo needs no libcudart.so and runs where there is no GPU or
# driver. Without nvcc (or libcudart_static.a) DEMO_CUDA_OBJS is empty and
# libdemo.a's weak cuda_stub.o says that the build has no CUDA variant.
# DEMO_CUDA_ARCH: real code for A100 and H100/H200, and PTX for newer GPUs.
DEMO_NVCC := $(wildcard $(CUDA_HOME)/bin/nvcc)
DEMO_CUDART := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a \
	$(CUDA_HOME)/targets/$(shell uname -m)-linux/lib/libcudart_static.a))
DEMO_CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=[sm_90,compute_90]
DEMO_NVCC_CCBIN ?= $(CC)
DEMO_CUDA_OBJS :=
DEMO_CUDA_LIBS :=
ifneq ($(and $(DEMO_NVCC),$(DEMO_CUDART)),)
DEMO_CUDA_OBJS := $(OUTPUT)/demo/cuda.o
# libstdc++: the kernel stubs nvcc writes use C++'s thread-safe statics.
DEMO_CUDA_LIBS := $(DEMO_CUDART) -ldl -lrt -lpthread -lstdc++
NVCC_FLAGS := -ccbin $(DEMO_NVCC_CCBIN) -O2 -g -std=c++17 $(DEMO_CUDA_ARCH) \
	-Xcompiler -fPIC,-Wall,-Wextra $(INCLUDES) -Iexamples/demo/lib

$(OUTPUT)/demo/cuda.o: examples/demo/lib/cuda.cu $(wildcard examples/demo/lib/*.h) \
		$(wildcard include/optrace/*.h) | $(OUTPUT)/demo $(DEPS_STAMP)
	$(call msg,NVCC,$@)
	$(Q)$(DEMO_NVCC) $(NVCC_FLAGS) -c $< -o $@
endif

# Relink the demo when the variant comes or goes (CUDA_HOME changed): the
# stamp is rewritten, and so newer, only when its text changes.
DEMO_CUDA_STAMP := $(OUTPUT)/demo/cuda-variant
DEMO_CUDA_STATE := $(if $(DEMO_CUDA_OBJS),cuda $(DEMO_NVCC),none)
.PHONY: demo-cuda-state
$(DEMO_CUDA_STAMP): demo-cuda-state | $(OUTPUT)/demo
	$(Q)echo '$(DEMO_CUDA_STATE)' | cmp -s - $@ || echo '$(DEMO_CUDA_STATE)' > $@

$(DEMO): $(DEMO_CUDA_OBJS) $(DEMO_CUDA_STAMP)

# ---- end of the demo's CUDA variant ------------------------------------------

# ---- tests -------------------------------------------------------------------

CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
# The unit tests link every userspace module but those that need BPF, a server's libraries or main().
USERSPACE_BPF_SRCS := $(wildcard userspace/cli/*.c) \
	$(addprefix userspace/session/,stat_live.c stat_read.c cuda.c web_auth.c http_server.c serve_metrics.c \
		recorder.c) \
	$(addprefix userspace/trace/,attach.c uprobe_multi.c tracer.c)
USERSPACE_PURE_SRCS := $(filter-out $(USERSPACE_BPF_SRCS),$(OPTRACE_SRCS))
TEST_HELPER_SRCS := $(wildcard tests/lib/*.c)
TEST_HELPER_OBJS := $(patsubst tests/lib/%.c,$(OUTPUT)/tests/lib_%.o,$(TEST_HELPER_SRCS)) \
	$(patsubst userspace/%.c,$(OUTPUT)/tests/us/%.o,$(USERSPACE_PURE_SRCS)) \
	$(OUTPUT)/tests/us_gpufile.o
TEST_SRCS := $(wildcard tests/unit/test_*.c tests/integration/test_*.c)
TEST_BINS := $(patsubst %.c,$(OUTPUT)/tests/%,$(notdir $(TEST_SRCS)))
TEST_CFLAGS := $(ALL_CFLAGS) $(USERSPACE_INCLUDES) -Itests/lib -DOPTRACE_BUILD_DIR='"$(OUTPUT)"' \
	-DOPTRACE_SOURCE_DIR='"$(CURDIR)"'

# The GPU collector's tests: only with the collector.
ifneq ($(CUPTI_HEADER),)
$(OUTPUT)/tests/test_cupti_%: tests/unit/test_cupti_%.c tests/unit/cupti_records.h \
		$(CUPTI_TEST_OBJS) $(TEST_HELPER_OBJS) \
		$(LIBOPTRACE) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -Iprobes/cupti -isystem $(CUDA_HOME)/include \
		-isystem $(CUDA_HOME)/extras/CUPTI/include -o $@ $< $(CUPTI_TEST_OBJS) \
		$(filter-out %/us_gpufile.o,$(TEST_HELPER_OBJS)) $(LINK_OPTRACE) -lelf -lz $(CHECK_LIBS)
else
TEST_SRCS := $(filter-out tests/unit/test_cupti_%.c tests/integration/test_cupti_%.c,$(TEST_SRCS))
TEST_BINS := $(patsubst %.c,$(OUTPUT)/tests/%,$(notdir $(TEST_SRCS)))
endif

$(OUTPUT)/tests/lib_%.o: tests/lib/%.c | $(PROBES_HEADERS) $(OUTPUT)/tests $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/us/%.o: userspace/%.c | $(PROBES_HEADERS) $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/us_gpufile.o: probes/cupti/gpufile.c probes/cupti/gpufile.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/test_%: tests/*/test_%.c $(TEST_HELPER_OBJS) $(LIBOPTRACE) | $(PROBES_HEADERS) $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_HELPER_OBJS) $(LINK_OPTRACE) -lelf -lz -lcrypt -lutil \
		$(CHECK_LIBS)

# Legion Prof's legacy viewer data from profiles, for docs/legion.md's pictures
# (scripts/legion-legacy-picture.sh): the project's Legion reader, not optrace.
LEGION_LEGACY := $(OUTPUT)/tests/legion-legacy
LEGION_READER_OBJS := $(filter-out %/lib_legion_write.o,$(filter $(OUTPUT)/tests/lib_legion_%.o,$(TEST_HELPER_OBJS))) \
	$(OUTPUT)/tests/lib_json_read.o
$(LEGION_LEGACY): tests/tools/legion_legacy.c $(LEGION_READER_OBJS) | $(OUTPUT)/tests
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(LEGION_READER_OBJS) -lz -lm

# Programs the integration tests trace (a runtime with a pretend GPU).
FIXTURES := $(OUTPUT)/tests/gpu_replay $(OUTPUT)/tests/idle_threads \
	$(OUTPUT)/tests/hostile_batch $(OUTPUT)/tests/hostile_views $(OUTPUT)/tests/overlap_points \
	$(OUTPUT)/tests/dlclose_app $(OUTPUT)/tests/many_names
# Processes `record --cuda -p` must leave alone (tests/fixtures/waiter.c): one
# also built static, with the compiler alone (a sanitizer's runtime links no -static).
FIXTURES += $(OUTPUT)/tests/waiter $(OUTPUT)/tests/waiter-static $(STARPU_FIXTURES)
$(OUTPUT)/tests/%: tests/fixtures/%.c probes/cupti/gpufile.c $(LIBOPTRACE) \
		$(wildcard include/optrace/*.h tests/fixtures/*.h) | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< probes/cupti/gpufile.c $(LINK_OPTRACE)

# Loads liboptrace with dlopen(): not linked with it.
$(OUTPUT)/tests/dlclose_app: tests/fixtures/dlclose_app.c | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -ldl

$(OUTPUT)/tests/waiter: tests/fixtures/waiter.c | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<

$(OUTPUT)/tests/waiter-static: tests/fixtures/waiter.c | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(firstword $(CC)) $(CFLAGS) $(WARNINGS) -static -o $@ $<

# The collector end to end without a GPU: a fake libcupti.so and an application
# that loads liboptrace-cupti as the CUDA driver would; only with the collector.
ifneq ($(CUPTI_HEADER),)
FAKE_CUPTI := $(OUTPUT)/tests/libfakecupti.so
$(FAKE_CUPTI): tests/fixtures/fake_cupti.c | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -isystem $(CUDA_HOME)/include \
		-isystem $(CUDA_HOME)/extras/CUPTI/include -fvisibility=hidden -shared -o $@ $<

# The CUDA driver's name in cuda_app's mappings, in a folder where nothing else looks.
FAKE_CUDA := $(OUTPUT)/tests/fakecuda/libcuda.so.1
$(FAKE_CUDA): tests/fixtures/fake_cuda.c | $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -shared -Wl,-soname,libcuda.so.1 -o $@ $<

$(OUTPUT)/tests/cuda_app: tests/fixtures/cuda_app.c $(FAKE_CUPTI) $(FAKE_CUDA) $(LIBOPTRACE) \
		| $(OUTPUT)/tests
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(OUTPUT)/tests -lfakecupti -L$(dir $(FAKE_CUDA)) \
		-l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN:$$ORIGIN/fakecuda' $(LINK_OPTRACE) -ldl

FIXTURES += $(FAKE_CUPTI) $(FAKE_CUDA) $(OUTPUT)/tests/cuda_app $(LIBOPTRACE_CUPTI)
endif

tests: $(TEST_BINS) $(FIXTURES)

# One line "N passed, N failed" over every suite; non-zero on any failure.
# gen_capture: tests/python/test_perfetto.py's synthetic capture with GPU activity;
# probe_loop: test_record's target that fills the ring buffer; legion-legacy: the
# adapters' tests read their Legion Prof exports' pop-ups with it.
test: $(TEST_BINS) $(FIXTURES) $(DEMO) $(OPTRACE) $(OPTRACE_SERVE) $(PY_PACKAGE) \
		$(OUTPUT)/bench/gen_capture $(OUTPUT)/bench/probe_loop $(LEGION_LEGACY)
	$(Q)PYTHON=$(PYTHON) PYTHONPATH=$(PY_DIR) OPTRACE_BUILD_DIR=$(OUTPUT) \
		tests/run.sh $(TEST_BINS) tests/python/run.py tests/docs/run_docs.py

# The unit suites alone: no root, no BPF, no demo; under a minute.
UNIT_TEST_BINS := $(filter $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(wildcard tests/unit/test_*.c)),\
	$(TEST_BINS))
test-unit: $(UNIT_TEST_BINS) $(FIXTURES)
	$(Q)OPTRACE_BUILD_DIR=$(OUTPUT) tests/run.sh $(UNIT_TEST_BINS)

# Every suite again under AddressSanitizer and UndefinedBehaviorSanitizer, in
# a build of its own (.output-sanitize); the Python suites run Debian's python3
# with the sanitizers' runtime preloaded. Leaks are not checked: the tool
# frees what it must at exit, not everything.
SANITIZE_OUTPUT := $(abspath .output-sanitize)
SANITIZE_CC := gcc -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer

sanitize:
	$(Q)ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) OUTPUT=$(SANITIZE_OUTPUT) CC="$(SANITIZE_CC)" DEMO_NVCC_CCBIN=gcc CFLAGS="-O1 -g" \
		PYTHON=$(abspath scripts/python-sanitized) test

# ---- benchmarks --------------------------------------------------------------

BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard bench/*.c))
# LTTng-UST, the overhead anchor (bench/lttng_overhead.sh): only where its
# headers are (Debian's liblttng-ust-dev puts them under the multiarch dir).
LTTNG_UST_HEADER := $(firstword $(wildcard /usr/include/lttng/tracepoint.h \
	/usr/include/*/lttng/tracepoint.h /usr/local/include/lttng/tracepoint.h))
ifneq ($(LTTNG_UST_HEADER),)
$(OUTPUT)/bench/lttng_loop: bench/lttng_loop.c bench/lttng_tp.h | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench -o $@ $< -llttng-ust -ldl
else
BENCH_SRCS := $(filter-out bench/lttng_loop.c,$(BENCH_SRCS))
endif
# uftrace's loop: its function built with -pg, for uftrace record to trace.
$(OUTPUT)/bench/uftrace_loop: bench/uftrace_loop.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -pg -o $@ $<

BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS)) \
	$(OUTPUT)/bench/probe_untraced-noplt

$(OUTPUT)/bench/%: bench/%.c $(LIBOPTRACE) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LINK_OPTRACE) -lpthread

# probe_loop --arm finds the batch probe's semaphore in liboptrace's notes.
PROBE_LOOP_OBJS := $(OUTPUT)/userspace/trace/usdt_notes.o $(OUTPUT)/userspace/trace/targets.o
$(OUTPUT)/bench/probe_loop: bench/probe_loop.c $(PROBE_LOOP_OBJS) $(LIBOPTRACE) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuserspace -o $@ $< $(PROBE_LOOP_OBJS) $(LINK_OPTRACE) -lpthread \
		-ldl -lelf

# The same calls from a caller built with -fno-plt (one indirect call, no PLT).
$(OUTPUT)/bench/%-noplt: bench/%.c $(LIBOPTRACE) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fno-plt -o $@ $< $(LINK_OPTRACE)

# The uprobe floor: empty programs attached as optrace attaches its own.
FLOOR_OBJS := $(patsubst %,$(OUTPUT)/userspace/trace/%.o,attach targets uprobe_multi usdt_notes usdt_args)
$(OUTPUT)/bench/floor: bench/floor.c $(BPF_DIR)/floor.skel.h $(FLOOR_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -o $@ $< $(FLOOR_OBJS) -lbpf -lelf -lz

# The verifier's cost per program of an object (docs/bench.md, "Start-up").
$(OUTPUT)/bench/verifier_stats: bench/verifier_stats.c | $(OUTPUT)/bench $(DEPS_STAMP)
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -o $@ $< -lbpf -lelf -lz

# Synthetic captures for the export benchmark.
CAPTURE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(wildcard userspace/capture/*.c) \
	userspace/common/idmap.c)
$(OUTPUT)/bench/gen_capture: bench/gen_capture.c $(CAPTURE_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -o $@ $< $(CAPTURE_OBJS) -lz
$(OUTPUT)/bench/capture_codec: bench/capture_codec.c $(CAPTURE_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(OPTRACE_CFLAGS) -o $@ $< $(CAPTURE_OBJS) -lz

bench: $(BENCH_BINS)

run-bench: $(BENCH_BINS) $(OPTRACE)
	$(Q)bench/run.sh $(OUTPUT)

# ---- habits: layout and lint ------------------------------------------------

# Every C source of the project, laid out by .clang-format.
FORMAT_SRCS := $(wildcard include/optrace/*.h probes/*.[ch] probes/cupti/*.[ch] bpf/*.[ch] \
	userspace/*/*.[ch] python/*.[ch] tests/*/*.[ch] bench/*.[ch] examples/demo/*.[ch] \
	examples/demo/lib/*.[ch] adapters/*/*.[ch] adapters/*/*.cpp)
CLANG_FORMAT ?= clang-format
CPPCHECK ?= cppcheck

format:
	$(call msg,FORMAT,$(words $(FORMAT_SRCS)) files)
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)

format-check: | $(DEPS_STAMP)
	$(call msg,FORMAT,check of $(words $(FORMAT_SRCS)) files)
	$(Q)$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRCS) || \
		{ echo "make format: lays these files out as .clang-format says" >&2; exit 1; }

# The tool's own sources: cppcheck's warnings, the stages' include order, the headers'
# guards, the command table's copies and stderr's lines (scripts/check-*.sh).
LINT_SRCS := $(wildcard userspace/*/*.c probes/*.c probes/cupti/*.c python/*.c adapters/*/*.c)
lint: | $(DEPS_STAMP)
	$(call msg,LINT,cppcheck and scripts/check-*.sh)
	$(Q)$(CPPCHECK) --quiet --error-exitcode=1 --std=c11 --inline-suppr \
		--enable=warning,performance,portability --suppressions-list=scripts/cppcheck.supp \
		--include=scripts/cppcheck.h -D__linux__ -D__x86_64__ -Iinclude -Iuserspace -I. \
		$(LINT_SRCS)
	$(Q)scripts/check-layers.sh
	$(Q)scripts/check-guards.sh
	$(Q)scripts/check-commands.sh
	$(Q)scripts/check-stderr.sh

# ---- install -----------------------------------------------------------------

# ---- man pages, completion, the service --------------------------------------
# optrace(8) is docs/optrace.md (pandoc); optrace-COMMAND(8) each command's
# --help (help2man), its one-line summary from `optrace --help`.
MAN_DIR := $(OUTPUT)/man
# The commands, as userspace/cli/commands.h lists them (one X(NAME, ...) a line).
COMMANDS := $(shell sed -n 's/^[[:space:]]*X.\([a-z]*\),.*/\1/p' userspace/cli/commands.h)
MAN_PAGES := $(MAN_DIR)/optrace.8 $(patsubst %,$(MAN_DIR)/optrace-%.8,$(COMMANDS)) \
	$(MAN_DIR)/optrace-demo.8

$(MAN_DIR):
	$(Q)mkdir -p $@

# For a terminal of 80 columns: tables as lists, examples indented once, no
# hyphenation (metric names stay whole): packaging/man-tables.lua.
$(MAN_DIR)/optrace.8: docs/optrace.md packaging/man-tables.lua | $(MAN_DIR) $(DEPS_STAMP)
	$(call msg,MAN,$@)
	$(Q)pandoc -s -t man --shift-heading-level-by=-1 -M title=OPTRACE -M section=8 \
		-M footer='optrace $(VERSION)' -M header='System Administration Utilities' \
		-V header-includes=.nh --lua-filter=packaging/man-tables.lua $< -o $@

$(MAN_DIR)/optrace-%.8: $(OPTRACE) $(OPTRACE_SERVE) packaging/see-also.h2m | $(MAN_DIR) $(DEPS_STAMP)
	$(call msg,MAN,$@)
	$(Q)help2man -N -s 8 --version-string=$(VERSION) -I packaging/see-also.h2m \
		-n "$$($(OPTRACE) --help | sed -n 's/^  $* *//p')" '$(OPTRACE) $*' | \
		sed -e '/^\.TH /s/^\.TH OPTRACE /.TH OPTRACE-$(shell echo $* | tr a-z A-Z) /' \
			-e 's/^optrace $* \\-/optrace-$* \\-/' > $@

# optrace-demo(8), the demo runtime, from its --help.
$(MAN_DIR)/optrace-demo.8: $(DEMO) packaging/see-also.h2m | $(MAN_DIR) $(DEPS_STAMP)
	$(call msg,MAN,$@)
	$(Q)help2man -N -s 8 --version-string=$(VERSION) -I packaging/see-also.h2m \
		-n "the demo array runtime that optrace traces" '$(DEMO)' > $@

man: $(MAN_PAGES)

# ---- install and uninstall ---------------------------------------------------
# Every file `make install` puts down is named once, in INSTALLED; `make
# uninstall` removes exactly those, and the folders install made if empty.
BINDIR := $(PREFIX)/bin
LIBEXECDIR := $(PREFIX)/libexec
LIBDIR := $(PREFIX)/lib
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
INSTALLED := $(BINDIR)/optrace $(BINDIR)/optrace-demo $(LIBEXECDIR)/optrace-serve \
	$(LIBDIR)/$(notdir $(LIBOPTRACE)) $(LIBDIR)/$(LIBOPTRACE_SONAME) $(LIBDIR)/liboptrace.so \
	$(LIBDIR)/pkgconfig/optrace.pc \
	$(patsubst include/optrace/%,$(PREFIX)/include/optrace/%,$(wildcard include/optrace/*.h)) \
	$(PREFIX)/include/optrace/optrace.d $(PREFIX)/include/optrace/optrace_gpu.d \
	$(patsubst %,$(PREFIX)/share/doc/optrace/%,README.md $(notdir $(wildcard docs/*.md))) \
	$(patsubst $(MAN_DIR)/%,$(PREFIX)/share/man/man8/%.gz,$(MAN_PAGES)) \
	$(PREFIX)/share/bash-completion/completions/optrace \
	$(LIBDIR)/systemd/system/optrace-serve.service $(SYSCONFDIR)/default/optrace-serve \
	$(patsubst $(PY_DIR)/%,$(PY_INSTALL_DIR)/%,$(PY_PACKAGE)) \
	$(PY_INSTALL_DIR)/optrace-adapters.pth \
	$(if $(LIBOPTRACE_CUPTI),$(LIBDIR)/liboptrace-cupti.so) \
	$(if $(LIBOPTRACE_STARPU),$(LIBDIR)/liboptrace-starpu.so)
# The folders install had to make, deepest first: uninstall removes them once empty.
INSTALL_MANIFEST := $(PREFIX)/share/doc/optrace/installed-folders

install: lib $(DEMO) $(PY_PACKAGE) $(OPTRACE) $(OPTRACE_SERVE) $(MAN_PAGES)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)for file in $(INSTALLED); do dir=$$(dirname $$file); \
		while [ "$$dir" != / ] && [ ! -d "$(DESTDIR)$$dir" ]; do \
			echo $$dir; dir=$$(dirname $$dir); done; done | sort -ur > $(OUTPUT)/installed-folders
	$(Q)install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/optrace \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(PREFIX)/share/doc/optrace \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(LIBDIR)/systemd/system $(DESTDIR)$(SYSCONFDIR)/default
	$(Q)install -m 0755 $(LIBOPTRACE) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(notdir $(LIBOPTRACE)) $(DESTDIR)$(LIBDIR)/$(LIBOPTRACE_SONAME)
	$(Q)ln -sf $(LIBOPTRACE_SONAME) $(DESTDIR)$(LIBDIR)/liboptrace.so
	$(Q)install -m 0644 include/optrace/*.h $(DESTDIR)$(PREFIX)/include/optrace/
	$(Q)install -m 0644 probes/optrace.d probes/optrace_gpu.d $(DESTDIR)$(PREFIX)/include/optrace/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' probes/optrace.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/optrace.pc
	$(Q)install -m 0755 $(OPTRACE) $(DEMO) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 0755 $(OPTRACE_SERVE) $(DESTDIR)$(LIBEXECDIR)/
	$(Q)install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/optrace/
	$(Q)for page in $(MAN_PAGES); do \
		gzip -n -9 -c $$page > $(DESTDIR)$(PREFIX)/share/man/man8/$$(basename $$page).gz; done
	$(Q)install -m 0644 packaging/optrace.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/optrace
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|' -e 's|/etc/default/|$(SYSCONFDIR)/default/|' \
		packaging/optrace-serve.service > $(DESTDIR)$(LIBDIR)/systemd/system/optrace-serve.service
	$(Q)install -m 0644 packaging/optrace-serve.default $(DESTDIR)$(SYSCONFDIR)/default/optrace-serve
	$(if $(LIBOPTRACE_CUPTI),$(Q)install -m 0755 $(LIBOPTRACE_CUPTI) $(DESTDIR)$(LIBDIR)/)
	$(if $(LIBOPTRACE_STARPU),$(Q)install -m 0755 $(LIBOPTRACE_STARPU) $(DESTDIR)$(LIBDIR)/)
	$(Q)install -d $(DESTDIR)$(PY_INSTALL_DIR)/optrace
	$(Q)install -m 0644 $(PY_PACKAGE) $(DESTDIR)$(PY_INSTALL_DIR)/optrace/
	$(Q)install -m 0644 python/optrace-adapters.pth $(DESTDIR)$(PY_INSTALL_DIR)/
	$(Q)[ -f $(DESTDIR)$(INSTALL_MANIFEST) ] || \
		install -m 0644 $(OUTPUT)/installed-folders $(DESTDIR)$(INSTALL_MANIFEST)
	@# Into the system itself, the loader must learn the new library (a DESTDIR is a package's).
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ]; then ldconfig; fi

# Debian packages (debian/), into .output/deb/: liboptrace-cupti only where
# CUPTI's headers are found (the build profile nocupti leaves it out).
DEB_DIR := $(OUTPUT)/deb
deb: | $(DEPS_STAMP)
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	$(Q)git ls-files -z | xargs -0 cp --parents -t $(DEB_DIR)/src
	$(Q)cd $(DEB_DIR)/src && $(if $(CUPTI_HEADER),,DEB_BUILD_PROFILES=nocupti) \
		CUDA_HOME=$(CUDA_HOME) dpkg-buildpackage -us -uc -b >$(DEB_DIR)/build.log 2>&1 || \
		{ tail -40 $(DEB_DIR)/build.log; exit 1; }
	$(Q)rm -rf $(DEB_DIR)/src
	$(Q)ls $(DEB_DIR)/*.deb

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)folders=$$(cat $(DESTDIR)$(INSTALL_MANIFEST) 2>/dev/null); \
	rm -f $(addprefix $(DESTDIR),$(INSTALLED) $(INSTALL_MANIFEST)) && \
	rm -rf $(DESTDIR)$(PY_INSTALL_DIR)/optrace/__pycache__ && \
	for dir in $$folders; do [ ! -d "$(DESTDIR)$$dir" ] || \
		rmdir --ignore-fail-on-non-empty "$(DESTDIR)$$dir"; done

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# The headers each object and program included when it was last built.
-include $(shell find $(OUTPUT) -name '*.d' -not -path '*/probes/*.d' 2>/dev/null)
