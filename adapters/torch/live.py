# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training loop that runs until it is stopped, started with optrace.torch and never
traced at its start: the live commands attach to it (test_torch.py, docs/torch.md).
Says "ready" once it trained a step."""
import sys
import time

import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(32, 8), torch.randn(32, 2)
step = 0
while True:
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    step += 1
    if step == 1:
        print("ready", flush=True)
    time.sleep(0.005)
    if step % 1000 == 0:
        sys.stdout.flush()
