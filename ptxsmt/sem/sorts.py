"""PTX registers are bit-vectors; floats are a view of them.

The only module that knows Z3's FP sorts. NaN payloads and -0.0 stay in the
register bits; the FP view is taken inside a comparison, after FTZ.
"""

from __future__ import annotations

import z3

from ..isa.types import FloatFormat, PtxType


def fp_sort(fmt: FloatFormat) -> z3.FPSortRef:
    return z3.FPSort(fmt.ebits, fmt.sbits)


def as_float(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.FPRef:
    return z3.fpBVToFP(bits, fp_sort(fmt))


def register(name: str, t: PtxType) -> z3.ExprRef:
    """A fresh register of type `t`: a Bool for .pred, else a bit-vector of its width."""
    return z3.Bool(name) if t.width == 1 else z3.BitVec(name, t.width)


def register_value(value: int | bool, t: PtxType) -> z3.ExprRef:
    return z3.BoolVal(bool(value)) if t.width == 1 else z3.BitVecVal(int(value), t.width)
