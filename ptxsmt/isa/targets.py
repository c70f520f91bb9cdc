"""`.target` and `.version`: the header facts ptxas 13.0 knows, and their spellings.

The lowest `.version` each `.target` needs comes from ptxas 13.0
(docs/ptxas-legality.md §1); an `sm_` ptxas does not know is an error, not a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import PtxError, quote

# The lowest `.version` ptxas 13.0 accepts with each `.target` (docs/ptxas-legality.md §1;
# sm_11 … sm_82 probed on ptxas 13.0.88 with a minimal kernel).
TARGET_MIN_PTX: dict[str, tuple[int, int]] = {
    "sm_10": (1, 0), "sm_11": (1, 0), "sm_12": (1, 2), "sm_13": (1, 4), "sm_20": (2, 0),
    "sm_21": (2, 0), "sm_30": (3, 0), "sm_32": (4, 0), "sm_35": (3, 1), "sm_37": (4, 1),
    "sm_50": (4, 1), "sm_52": (4, 1), "sm_53": (4, 2), "sm_60": (5, 0), "sm_61": (5, 0),
    "sm_62": (5, 0), "sm_70": (6, 0), "sm_72": (6, 1), "sm_75": (6, 3), "sm_80": (7, 0),
    "sm_82": (6, 2), "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (7, 3), "sm_89": (7, 8),
    "sm_90": (7, 8), "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8),
    "sm_103": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8), "sm_110": (9, 0), "sm_110a": (9, 0),
    "sm_110f": (9, 0), "sm_120": (8, 7), "sm_120a": (8, 7), "sm_120f": (8, 8),
    "sm_121": (8, 8), "sm_121a": (8, 8), "sm_121f": (8, 8),
}
# The `.version`s ptxas 13.0 knows.
PTX_VERSIONS: tuple[tuple[int, int], ...] = tuple(
    (major, minor) for major, last in ((1, 5), (2, 3), (3, 2), (4, 3), (5, 1), (6, 5), (7, 8),
                                       (8, 8), (9, 0)) for minor in range(last + 1))
_TARGET = re.compile(r"(?:sm_)?(\d{1,4})([af]?)")
_VERSION = re.compile(r"(\d{1,3})\.(\d{1,3})")


@dataclass(frozen=True)
class Target:
    sm: int
    suffix: str = ""

    def __str__(self) -> str:
        return f"sm_{self.sm}{self.suffix}"


def parse_target(text: str) -> Target:
    """`sm_90`, `sm_90a` or `90`; only targets ptxas 13.0 knows."""
    m = _TARGET.fullmatch(text.strip())
    if not m:
        raise PtxError(f"target {quote(text)} is not like sm_90")
    target = Target(int(m.group(1)), m.group(2))
    if str(target) not in TARGET_MIN_PTX:
        raise PtxError(f"{target} is not a target ptxas 13.0 knows "
                       f"(sm_10 to sm_121f; `ptxsmt check --help` lists them)")
    return target


def parse_version(text: str) -> tuple[int, int]:
    m = _VERSION.fullmatch(text.strip())
    if not m:
        raise PtxError(f"PTX ISA version {quote(text)} is not like 9.0")
    return int(m.group(1)), int(m.group(2))

