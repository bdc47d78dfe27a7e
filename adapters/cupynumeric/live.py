# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A cuPyNumeric process that runs until SIGTERM, for the live tests (stat -p, record -p,
dump): rounds of eager calls, each round also inside a fallback that waits (NumPy's
apply_along_axis, which cuPyNumeric lacks, calls back into Python), so that a dump finds an
operation open. Prints "ready" once cuPyNumeric is imported."""
import signal
import sys
import time

import cupynumeric as np

stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))


def slow_sum(v):
    time.sleep(0.02)
    return v.sum()


a = np.ones((4, 3))
print("ready", flush=True)
while not stop:
    np.add(a, a).sum()
    np.apply_along_axis(slow_sum, 0, a)
sys.exit(0)
