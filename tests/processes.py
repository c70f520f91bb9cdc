"""This process's children, running or not yet reaped, from Linux's /proc: tests that
check a command reaped what it started compare them before and after, so that children
another test left in the same process (a pytest-xdist worker runs many) are not theirs."""

from __future__ import annotations

import os
from pathlib import Path


def children() -> set[int]:
    out = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:  # a thread (a solver's watcher) may end between the listing and the reading
            out |= {int(pid) for pid in (task / "children").read_text().split()}
        except FileNotFoundError:
            continue
    return out
