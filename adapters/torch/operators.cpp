// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace._torch: PyTorch's operators as optrace operations, from the
 * callbacks torch.profiler itself uses (at::RecordFunction).
 *
 * Nothing is registered until a tracer arms the probes: optrace.torch's
 * watcher calls arm() then, and disarm() once it is gone, so that an
 * untraced process runs PyTorch's own path untouched. While armed, every
 * RecordFunction is one operation, named as torch.profiler names it, and
 * nesting makes the operators an operator calls its helpers:
 *
 * - mode: deferred when an input lives on the lazy device, eager otherwise
 *   (CPU and CUDA run where they are called);
 * - fallback: the lazy backend's eager fallback moves the inputs to the CPU
 *   with aten::_to_cpu, which nothing else calls: the operator it runs
 *   under fell back (no_variant, the operator's name as detail);
 * - tasks: the lazy backend runs each graph it compiles as an unnamed
 *   TorchScript function: a task ("lazy graph") of the operation open on
 *   that thread, with the device's variant;
 * - call site: the user's line (the first Python frame outside the library
 *   paths) for an operator no other operator called; its helpers share it,
 *   a backward operator on a thread without Python (the autograd engine's
 *   device threads) gets its forward operator's, by the sequence number
 *   that torch.profiler pairs them by.
 */
#include <Python.h>

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <optrace/abi.h>
#include <optrace/optrace.h>

#include "python_frames.h"

namespace
{

constexpr char unknown_site[] = "(unknown)";
constexpr char lazy_graph[] = "lazy graph";
constexpr size_t site_max = 4096;

/* ---- strings that live as long as the process, for the probes ------------ */

std::mutex intern_lock;
std::unordered_set<std::string> *interned; /* never freed: the probes keep pointers */

const char *intern_slow(std::string_view text)
{
	std::lock_guard<std::mutex> guard(intern_lock);

	if (!interned)
		interned = new std::unordered_set<std::string>;
	return interned->emplace(text).first->c_str();
}

/* Per thread, so that a name seen before costs one hash and no lock. */
const char *intern(std::string_view text)
{
	thread_local std::unordered_map<std::string_view, const char *> seen;
	auto found = seen.find(text);

	if (found != seen.end())
		return found->second;
	const char *kept = intern_slow(text);
	seen.emplace(std::string_view(kept, text.size()), kept);
	return kept;
}

/* ---- the library paths: files whose frames are not the user's ------------ */

std::atomic<const std::vector<std::string> *> library_paths{ nullptr };

bool in_library(const char *file, size_t len)
{
	const std::vector<std::string> *paths = library_paths.load(std::memory_order_acquire);

	if (len && file[0] == '<')
		return true; /* <frozen importlib._bootstrap>, <string> and the like */
	if (!paths)
		return false;
	for (const std::string &path : *paths) {
		if (len >= path.size() && !memcmp(file, path.data(), path.size()))
			return true;
	}
	return false;
}

/*
 * The user's line. The frames a thread calls operators from repeat: the
 * sites found last, by frame, spare formatting and interning one again.
 */
const char *user_site()
{
	struct site_cache_entry {
		python_frame frame;
		const char *site;
	};
	thread_local site_cache_entry cache[64];
	python_frame frame;
	char site[site_max];

	if (!python_user_frame(&frame, in_library))
		return unknown_site;
	size_t slot = (((uintptr_t)frame.code >> 4) ^ (size_t)frame.offset) % 64;
	site_cache_entry &entry = cache[slot];
	if (entry.site && entry.frame.code == frame.code && entry.frame.offset == frame.offset &&
	    entry.frame.filename == frame.filename && entry.frame.first_line == frame.first_line)
		return entry.site;
	int len = python_frame_site(&frame, site, sizeof(site));
	if (len < 0)
		return unknown_site;
	entry = { frame, intern(std::string_view(site, (size_t)len)) };
	return entry.site;
}

/*
 * Forward operators' call sites by sequence number, for the backward
 * operators that the autograd engine runs on its own threads. A slot that
 * another number took since gives "(unknown)", never a wrong line.
 */
constexpr size_t forward_slots = 1 << 14;
struct forward_site {
	std::atomic<int64_t> seq{ -1 };
	std::atomic<const char *> site{ nullptr };
};
forward_site forward_sites[forward_slots];

void remember_forward(int64_t seq, const char *site)
{
	forward_site &slot = forward_sites[(uint64_t)seq % forward_slots];

	slot.seq.store(-1, std::memory_order_relaxed);
	slot.site.store(site, std::memory_order_relaxed);
	slot.seq.store(seq, std::memory_order_release);
}

const char *forward_site_of(int64_t seq)
{
	forward_site &slot = forward_sites[(uint64_t)seq % forward_slots];
	const char *site;

	if (slot.seq.load(std::memory_order_acquire) != seq)
		return unknown_site;
	site = slot.site.load(std::memory_order_relaxed);
	if (slot.seq.load(std::memory_order_acquire) != seq || !site)
		return unknown_site;
	return site;
}

/* ---- the callbacks ----------------------------------------------------------- */

/*
 * What this thread has open, innermost last: what on_end ends (RecordFunction
 * ends a thread's records in the reverse order it began them), its helpers'
 * call site, and whether its inputs are lazy. No context is allocated per
 * operator: the stack is the context.
 */
struct open_record {
	uint64_t op;
	uint64_t task; /* a lazy graph, not an operation */
	const char *name;
	const char *site;
	bool lazy;
	bool fell_back;
	bool untraced; /* deeper than max_depth: its helpers' helper, left out */
	size_t depth;  /* operators open down to this one, user scopes and graphs not counted */
};
thread_local std::vector<open_record> open_records;

/* Whether the callbacks box each operator's inputs: only once the lazy device is in use. */
std::atomic<bool> reading_inputs{ false };

/*
 * How deep a thread's operators are traced (OPTRACE_TORCH_DEPTH): 1, the
 * program's calls alone. record_function scopes do not count, so that the
 * calls inside one stay calls; nor do lazy graphs, whose operators are what
 * the program asked for.
 */
std::atomic<size_t> max_depth{ SIZE_MAX };

int graph_variant()
{
	/* The TorchScript backend runs its graphs on the GPU with LTC_TS_CUDA set. */
	const char *cuda = getenv("LTC_TS_CUDA");

	return cuda && *cuda && strcmp(cuda, "0") ? OPTRACE_VARIANT_GPU : OPTRACE_VARIANT_CPU;
}

bool is_lazy(const at::Tensor &tensor)
{
	return tensor.defined() && tensor.device().type() == c10::DeviceType::Lazy;
}

bool has_lazy_input(const at::RecordFunction &fn)
{
	if (!fn.needsInputs())
		return false;
	for (const c10::IValue &input : fn.inputs()) {
		if (input.isTensor() && is_lazy(input.toTensor()))
			return true;
		if (input.isTensorList()) {
			for (const at::Tensor &tensor : input.toTensorVector()) {
				if (is_lazy(tensor))
					return true;
			}
		}
	}
	return false;
}

/*
 * The lazy backend's eager fallback, under the operator that fell back: the
 * outermost of its records of the same name (the dispatcher's redispatch
 * makes one inside another), the one operator torch.profiler shows for them.
 * Said when that one ends, the innermost operation again, which is where
 * tracers attribute a fallback.
 */
void note_fallback(std::vector<open_record> &open)
{
	size_t at = open.size();
	while (at > 0 && open[at - 1].untraced)
		at--;
	if (at-- == 0)
		return;
	while (at > 0 && open[at - 1].name == open[at].name && open[at - 1].lazy)
		at--;
	if (open[at].lazy)
		open[at].fell_back = true;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
	std::vector<open_record> &open = open_records;
	const char *name = fn.name();
	at::RecordScope scope = fn.scope();

	if (scope == at::RecordScope::TORCHSCRIPT_FUNCTION && !*name) {
		/* a graph of the lazy backend: a task of whatever operation runs it */
		uint64_t task = optrace_task_launch(optrace_current_op(), lazy_graph, 1);

		optrace_task_begin(task, 0, graph_variant(), 0);
		open.push_back({ 0, task, lazy_graph, nullptr, false, false, false,
				 open.empty() ? 0 : open.back().depth });
		return nullptr;
	}
	if (scope == at::RecordScope::FUNCTION && !strcmp(name, "aten::_to_cpu"))
		note_fallback(open);
	size_t depth =
		(open.empty() ? 0 : open.back().depth) + (scope != at::RecordScope::USER_SCOPE);
	if (depth > max_depth.load(std::memory_order_relaxed)) {
		open.push_back({ 0, 0, nullptr, open.back().site, false, false, true, depth });
		return nullptr;
	}

	const char *site;
	if (!open.empty() && open.back().site) {
		site = open.back().site;
	} else {
		site = user_site();
		/* the autograd engine's own threads run no Python */
		if (site == unknown_site && fn.seqNr() >= 0 &&
		    scope == at::RecordScope::BACKWARD_FUNCTION)
			site = forward_site_of(fn.seqNr());
	}
	if (scope == at::RecordScope::FUNCTION && fn.seqNr() >= 0 && site != unknown_site)
		remember_forward(fn.seqNr(), site);

	name = intern(name);
	uint64_t op = optrace_op_begin(name, site);
	bool lazy = has_lazy_input(fn);
	/* Eager is said once per user call, deferred on every lazy operator. */
	if (lazy)
		optrace_op_mode(op, OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_NONE);
	else if (open.empty())
		optrace_op_mode(op, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_NONE);
	open.push_back({ op, 0, name, site, lazy, false, false, depth });
	return nullptr;
}

void on_end(const at::RecordFunction &fn, at::ObserverContext *)
{
	std::vector<open_record> &open = open_records;

	/* An asynchronous record ends elsewhere: this thread's stack is not its own. */
	if (fn.threadId() != at::RecordFunction::currentThreadId())
		return;
	/* A record begun before the callbacks were registered has nothing here. */
	if (open.empty())
		return;
	open_record ended = open.back();
	open.pop_back();
	if (ended.untraced)
		return;
	if (ended.task) {
		optrace_task_end(ended.task, 0, OPTRACE_STATUS_OK);
		return;
	}
	if (ended.fell_back) {
		optrace_op_mode(ended.op, OPTRACE_MODE_FALLBACK, OPTRACE_MODE_REASON_FALLBACK);
		optrace_op_fallback(ended.op, OPTRACE_FALLBACK_NO_VARIANT, ended.name);
	}
	optrace_op_end(ended.op, OPTRACE_STATUS_OK);
}

/* ---- arming ----------------------------------------------------------------- */

std::mutex arm_lock;
bool registered;
at::CallbackHandle handle;

PyObject *py_arm(PyObject *, PyObject *args)
{
	PyObject *paths_arg;
	int lazy = 0;
	Py_ssize_t depth = 0;

	if (!PyArg_ParseTuple(args, "O|pn:arm", &paths_arg, &lazy, &depth))
		return NULL;
	max_depth.store(depth > 0 ? (size_t)depth : SIZE_MAX);
	PyObject *sequence = PySequence_Fast(paths_arg, "arm: library paths must be a sequence");
	if (!sequence)
		return NULL;
	auto paths = std::make_unique<std::vector<std::string>>();
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence); i++) {
		const char *path = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(sequence, i));
		if (!path) {
			Py_DECREF(sequence);
			return NULL;
		}
		paths->emplace_back(path);
	}
	Py_DECREF(sequence);

	std::lock_guard<std::mutex> guard(arm_lock);
	const std::vector<std::string> *old = library_paths.load();
	if (!old || *old != *paths)
		library_paths.store(paths.release(), std::memory_order_release);
	/* an old list stays: a callback on another thread may be reading it */
	/* Boxing each operator's inputs costs: only the lazy device needs them. */
	if (registered && reading_inputs.load() != (lazy != 0)) {
		at::removeCallback(handle);
		registered = false;
	}
	if (!registered) {
		reading_inputs.store(lazy != 0);
		handle = at::addGlobalCallback(
			at::RecordFunctionCallback(on_start, on_end).needsInputs(lazy != 0));
		registered = true;
	}
	Py_RETURN_NONE;
}

PyObject *py_disarm(PyObject *, PyObject *)
{
	std::lock_guard<std::mutex> guard(arm_lock);

	/* RecordFunctions already running keep the callbacks they started with. */
	if (registered) {
		at::removeCallback(handle);
		registered = false;
	}
	Py_RETURN_NONE;
}

PyObject *py_armed(PyObject *, PyObject *)
{
	std::lock_guard<std::mutex> guard(arm_lock);

	return PyBool_FromLong(registered);
}

PyMethodDef methods[] = {
	{ "arm", py_arm, METH_VARARGS,
	  "arm(library_paths, lazy=False, depth=0): trace every operator from now on, or\n"
	  "those at most depth deep (0: all); lazy: tell "
	  "operators on the lazy device (boxes each operator's inputs)" },
	{ "disarm", py_disarm, METH_NOARGS, "disarm(): stop tracing operators" },
	{ "armed", py_armed, METH_NOARGS, "armed() -> bool: whether the callbacks are registered" },
	{ nullptr, nullptr, 0, nullptr },
};

PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	"optrace._torch",
	"PyTorch's operators as optrace operations (see optrace.torch).",
	-1,
	methods,
	nullptr,
	nullptr,
	nullptr,
	nullptr,
};

} // namespace

PyMODINIT_FUNC PyInit__torch(void)
{
	return PyModule_Create(&module);
}
