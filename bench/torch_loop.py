# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small training loop, timed: bench/torch_overhead.sh runs it.

    torch_loop.py alone STEPS            PyTorch alone: CPU ns per step
    torch_loop.py adapted STEPS          the same with optrace.torch imported (its watcher
                                         running, nothing registered while untraced)
    torch_loop.py slices STEPS ROUNDS    in one process, slices of STEPS interleaved: no
                                         callback, optrace._torch's callbacks for every
                                         operator, for the program's calls alone (depth 1),
                                         torch.profiler; prints each round's four times
    torch_loop.py count                  the operators one step runs, as torch.profiler counts

The machine's speed drifts by tens of percent over seconds: slices of one process, run
side by side, compare what processes apart cannot.
"""
import os
import sys
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(8, 16), torch.randn(8, 4)


def step():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()


def timed(count):
    start = time.thread_time_ns()
    for _ in range(count):
        step()
    return (time.thread_time_ns() - start) // count


def slices(steps, rounds):
    from torch.profiler import ProfilerActivity, profile

    from optrace import _torch

    paths = [os.path.join(os.path.dirname(torch.__file__), "")]
    for _ in range(rounds):
        times = [timed(steps)]
        for depth in (0, 1):
            _torch.arm(paths, False, depth)
            times.append(timed(steps))
            _torch.disarm()
        with profile(activities=[ProfilerActivity.CPU]):
            times.append(timed(steps))
        print(*times)


def main():
    mode, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if mode == "adapted":
        import optrace.torch  # noqa: F401
    for _ in range(50):
        step()
    if mode == "count":
        from torch.profiler import profile
        with profile() as prof:
            step()
        print(len(prof.profiler.kineto_results.events()))
    elif mode == "slices":
        slices(steps, int(sys.argv[3]))
    else:
        print(sorted(timed(steps) for _ in range(5))[2])


if __name__ == "__main__":
    main()
