# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small model trained for a few steps, then a lazy-tensor section, under torch.profiler:
what optrace.torch's tests compare optrace with.

    workload.py TRUTH.json [STEPS] [--no-profiler] [--no-lazy]

Each step: zero_grad, forward (linear, relu, linear, mse_loss) inside a record_function
scope, backward, optimizer.step. The lazy section (torch._lazy on its TorchScript backend):
the same arithmetic on lazy tensors, aten::nonzero (which the backend does not lower: it
falls back to the CPU) and mark_step, STEPS times. TRUTH.json gets what torch.profiler
counted (every operator, before its merge rule; the operators no other called, after it)
and what torch._lazy.metrics counted (graphs compiled or reused, fallbacks per operator).
"""
import collections
import json
import sys

import torch


def train(steps):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(32, 8), torch.randn(32, 2)
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.autograd.profiler.record_function("workload.forward"):
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    return float(loss)


def lazy(steps):
    import torch._lazy
    import torch._lazy.metrics
    import torch._lazy.ts_backend

    torch._lazy.ts_backend.init()
    weights = torch.randn(4, 4).to("lazy")
    for _ in range(steps):
        result = (weights @ weights + 1).relu()
        torch.nonzero(result)
        torch._lazy.mark_step()
    total = float(result.sum().cpu())
    metrics = torch._lazy.metrics
    counters = {name: metrics.counter_value(name) for name in metrics.counter_names()}
    return total, counters


def profiled(steps, with_lazy):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train(steps)
        counters = lazy(steps)[1] if with_lazy else {}
    raw = collections.Counter(e.name() for e in prof.profiler.kineto_results.events()
                              if e.device_type() == torch.autograd.DeviceType.CPU)
    top = collections.Counter(e.name for e in prof.events() if e.cpu_parent is None)
    return {
        "operators": raw,
        "top_level": top,
        "lazy_counters": counters,
        "lazy_graphs": counters.get("UncachedCompile", 0) + counters.get("CachedCompile", 0),
    }


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    truth_path, steps = args[0], int(args[1]) if len(args) > 1 else 3
    with_lazy = "--no-lazy" not in sys.argv
    if "--no-profiler" in sys.argv:
        train(steps)
        truth = {"lazy_counters": lazy(steps)[1] if with_lazy else {}}
    else:
        truth = profiled(steps, with_lazy)
    with open(truth_path, "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
