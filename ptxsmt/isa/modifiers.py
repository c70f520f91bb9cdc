"""Instruction modifiers: spelling and meaning, no solver logic.

`CmpOp.relation` names the plain relation a comparison tests and
`CmpOp.unordered` whether NaN operands make it true, so the semantics can
compose `Xu = isNaN(a) or isNaN(b) or X` instead of listing 18 cases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class CmpOp(Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    LO = "lo"
    LS = "ls"
    HI = "hi"
    HS = "hs"
    EQU = "equ"
    NEU = "neu"
    LTU = "ltu"
    LEU = "leu"
    GTU = "gtu"
    GEU = "geu"
    NUM = "num"
    NAN = "nan"

    @property
    def relation(self) -> str:
        """eq/ne/lt/le/gt/ge, or num/nan, with the unsigned and unordered spellings folded."""
        return _RELATION.get(self.value, self.value)

    @property
    def unordered(self) -> bool:
        return self.value in _UNORDERED

    @property
    def unsigned_only(self) -> bool:
        """lo/ls/hi/hs: the unsigned-integer spellings of lt/le/gt/ge."""
        return self.value in _UNSIGNED

    def __str__(self) -> str:
        return self.value


_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}
_RELATION = {**_UNSIGNED, **_UNORDERED}

ORDERED_CMPS = tuple(CmpOp(s) for s in ("eq", "ne", "lt", "le", "gt", "ge"))
UNSIGNED_CMPS = tuple(CmpOp(s) for s in _UNSIGNED)
UNORDERED_CMPS = tuple(CmpOp(s) for s in _UNORDERED)
FLOAT_CMPS = (*ORDERED_CMPS, *UNORDERED_CMPS, CmpOp.NUM, CmpOp.NAN)


class BoolOp(Enum):
    AND = "and"
    OR = "or"
    XOR = "xor"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LaneSpec:
    """A vset lane modifier: `.h10`, `.b3210`, ... (the last digit is lane 0).

    As a selector it names, per lane, which half-word/byte of the 64-bit
    bank `b:a` feeds that lane; as a mask it names the lanes written.
    """

    prefix: str  # "h" (vset2) or "b" (vset4)
    digits: tuple[int, ...]  # as written, most significant lane first

    @property
    def spelling(self) -> str:
        return "." + self.prefix + "".join(map(str, self.digits))

    @property
    def by_lane(self) -> tuple[int, ...]:
        """Source index for lane 0, lane 1, ..."""
        return tuple(reversed(self.digits))

    @property
    def lanes(self) -> frozenset[int]:
        return frozenset(self.digits)

    def __str__(self) -> str:
        return self.spelling


_LANE_SPEC = re.compile(r"\.?([hb])([0-9]+)")


def parse_lane_spec(text: str) -> LaneSpec | None:
    m = _LANE_SPEC.fullmatch(text)
    if not m:
        return None
    return LaneSpec(m.group(1), tuple(int(ch) for ch in m.group(2)))
