"""IR values as terms: a lane is its bits, whether it is poison, and whether it is "any
NaN"; a value is its lanes (one for a scalar). Choices (undef, freeze of poison, a NaN's
bits where they are seen) are fresh constants a `Choices` hands out and remembers, so a
query can quantify over them.

A float result that is NaN may be any NaN (LangRef "Behavior of Floating-Point NaN
values"). Rather than a chosen constant (a quantifier in every refinement query), such
a lane says so in `nan` and holds one NaN in `bits`: instructions that only ask whether
their operand is a NaN (arithmetic, fcmp, casts, min/max, select, phi, vector lanes) use
it as is, and a comparison against PTX asks only that the PTX value be a NaN. Where the
bits themselves are seen (a bitcast, a store, fabs/copysign, an integer use) the lane is
`exposed`: its bits become a chosen NaN, one choice per value."""

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
    nan: z3.BoolRef = FALSE  # the value is any NaN (`bits` holds one)
    # a value the lane may be instead of `bits`: a denormal result's flushed zero where the
    # function's denormal mode lets results flush (floating.flushed_output); None: bits only
    flushed: z3.BitVecRef | None = None


def pick(cond: z3.BoolRef, a: Lane, b: Lane) -> Lane:
    """`a` where `cond` holds, else `b`: bits, poison, NaN and flush freedom alike."""
    flushed = None if a.flushed is None and b.flushed is None else \
        z3.If(cond, a.bits if a.flushed is None else a.flushed,
              b.bits if b.flushed is None else b.flushed)
    return Lane(z3.If(cond, a.bits, b.bits), z3.If(cond, a.poison, b.poison),
                z3.If(cond, a.nan, b.nan), flushed)


def some_nan(fmt: FloatFormat) -> z3.BitVecRef:
    """The NaN an "any NaN" lane holds."""
    return z3.BitVecVal(canonical_nan(fmt), fmt.width)


def float_lane(bits: z3.BitVecRef, poison: z3.BoolRef, fmt: FloatFormat,
               flushed: z3.BitVecRef | None = None) -> Lane:
    """The lane of a float operation whose every NaN result is any NaN (its bits hold
    `some_nan` then): arithmetic, casts, min/max, fma, sqrt."""
    return Lane(bits, poison, is_nan(bits, fmt), flushed)


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
        return z3.If(is_nan(c, fmt), c, some_nan(fmt))

    def exposed(self, lane: Lane, fmt: FloatFormat | None) -> Lane:
        """The lane with an "any NaN" made a chosen NaN: for uses that see the bits."""
        if fmt is None or z3.is_false(lane.nan):
            return lane
        return Lane(z3.If(lane.nan, self.any_nan(fmt), lane.bits), lane.poison)

    def unflushed(self, lane: Lane) -> Lane:
        """The lane with "flushed or not" made a choice: for uses that tell them apart."""
        if lane.flushed is None:
            return lane
        return Lane(z3.If(self.flag("denormal"), lane.flushed, lane.bits), lane.poison, lane.nan)


def bool_bits(b: z3.BoolRef) -> z3.BitVecRef:
    """An i1 from a condition."""
    return z3.If(b, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))


def any_poison(*lanes: Lane) -> z3.BoolRef:
    return z3.Or(*[x.poison for x in lanes]) if lanes else FALSE
