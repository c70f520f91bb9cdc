"""IR values as terms: a lane is its bits and whether it is poison; a value is its lanes
(one for a scalar). Choices (undef, freeze of poison, a NaN's bits) are fresh constants
a `Choices` hands out and remembers, so a query can quantify over them."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

import z3

from ..isa.literals import canonical_nan
from ..isa.types import FloatFormat
from ..sem.sorts import is_nan

FALSE = z3.BoolVal(False)


@dataclass(frozen=True)
class Lane:
    bits: z3.BitVecRef
    poison: z3.BoolRef = FALSE


Value = tuple[Lane, ...]


@dataclass
class Choices:
    """The fresh constants of one encoding: the IR leaves these values open."""

    made: list[z3.ExprRef] = field(default_factory=list)
    _ids: count = field(default_factory=count)

    def bits(self, why: str, width: int) -> z3.BitVecRef:
        c = z3.BitVec(f"{why}!{next(self._ids)}", width)
        self.made.append(c)
        return c

    def flag(self, why: str) -> z3.BoolRef:
        c = z3.Bool(f"{why}!{next(self._ids)}")
        self.made.append(c)
        return c

    def any_nan(self, fmt: FloatFormat) -> z3.BitVecRef:
        """LangRef "Behavior of Floating-Point NaN values": a NaN result's sign and payload
        are chosen non-deterministically (modelled as any NaN of the format)."""
        c = self.bits("nan", fmt.width)
        return z3.If(is_nan(c, fmt), c, z3.BitVecVal(canonical_nan(fmt), fmt.width))


def bool_bits(b: z3.BoolRef) -> z3.BitVecRef:
    """An i1 from a condition."""
    return z3.If(b, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))


def any_poison(*lanes: Lane) -> z3.BoolRef:
    return z3.Or(*[x.poison for x in lanes]) if lanes else FALSE
