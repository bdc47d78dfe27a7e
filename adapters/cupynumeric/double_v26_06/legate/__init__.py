# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A double of the few legate names cuPyNumeric v26.06's profiling uses: see ../README.md."""
