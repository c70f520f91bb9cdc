"""Which tier of the suite runs: `ci`, the default, which keeps the whole run within
minutes, or `thorough` (`PTXSMT_PROFILE=thorough python -m pytest`), which runs every
case of the heavy tests. A test scales itself by these, never by how fast the machine is."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import TypeVar

PROFILE = os.environ.get("PTXSMT_PROFILE", "ci")
THOROUGH = PROFILE == "thorough"

T = TypeVar("T")


def sample(items: Sequence[T], k: int, seed: object = 0) -> list[T]:
    """Every item in the thorough tier; else a fixed sample of k of them (seeded by
    `seed`, so a failure reproduces), in their order."""
    if THOROUGH or len(items) <= k:
        return list(items)
    keep = sorted(random.Random(str(seed)).sample(range(len(items)), k))
    return [items[i] for i in keep]
