# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The v26.06 double's workload: OUT.json gets its ranges (../README.md). ROUNDS rounds."""
import json
import sys

import cupynumeric as cn


def main():
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for _ in range(rounds):
        cn.matmul([[1, 2], [3, 4]], [[1], [1]])
        cn.sum_([1, 2, 3])
        try:
            cn.divide([1.0], [0.0])
        except ZeroDivisionError:
            pass
    from legate.core import RANGE_EVENTS

    with open(sys.argv[1], "w") as out:
        json.dump({"events": [list(event) for event in RANGE_EVENTS]}, out)


main()
