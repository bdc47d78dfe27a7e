#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs tests/python/test_*.py and each adapter's adapters/NAME/test_*.py
with unittest and ends with one line that tests/run.sh reads:

    python: N passed, N failed, N skipped

Under CI=true a skipped test counts as failed, as the Check suites' do.
Needs the optrace module on PYTHONPATH (tests/run.sh sets it).

    tests/python/run.py [FILE.py ...]    (default: every one)
"""

import os
import sys
import unittest


def main():
    # No __pycache__ in the source tree, here or in the demo's children.
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) > 1:
        # The files named: each loaded from its folder, as discovery would.
        suite = unittest.TestSuite()
        for path in sys.argv[1:]:
            folder, name = os.path.split(os.path.abspath(path))
            suite.addTests(unittest.defaultTestLoader.discover(folder, pattern=name,
                                                               top_level_dir=folder))
    else:
        suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py",
                                                    top_level_dir=here)
        adapters = os.path.join(os.path.dirname(os.path.dirname(here)), "adapters")
        for name in sorted(os.listdir(adapters)) if os.path.isdir(adapters) else ():
            folder = os.path.join(adapters, name)
            suite.addTests(unittest.defaultTestLoader.discover(folder, pattern="test_*.py",
                                                               top_level_dir=folder))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + \
        len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    for test, reason in result.skipped:
        print(f"SKIP: {test.id()}: {reason}")
    if os.environ.get("CI") == "true" and skipped:
        print(f"FAIL: {skipped} skipped, and CI=true does not allow a skip")
        failed += skipped
        skipped = 0
    print(f"python: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
