"""Two results observed side by side: when do they differ? The NaN policy (Spec notes 14).

A NaN result the PTX ISA leaves open may be any NaN, sign and payload included
(Alive2's model; `sorts.free_nan`). At a float-typed observation point the policy
(`options.NAN_POLICIES`) says whether two NaNs are told apart:

- "payload-free" (the default): two NaNs are equal whatever their sign and payload, so
  a difference only in an open NaN's bits is never a difference;
- "exact": the bits are compared, so two open NaNs that may be chosen differently differ.

Bits observed as bits (an integer or `.b` type) are always compared bit for bit. The
snippet, function and IR comparisons all build their `differ` here and replay with
`values_differ`: one place for the rule.
"""

from __future__ import annotations

import z3

from ..isa.types import FloatFormat, PtxType
from .sorts import as_float

# After a payload-free proof, the seconds spent asking whether it holds bit for bit too:
# undecided, the verdict keeps the weaker claim ("up to NaN payloads"), which is proved;
# asked with the whole time limit, it doubled the time of every float equivalence
BIT_FOR_BIT_SECONDS = 2.0


def observed_format(*types: PtxType | None) -> FloatFormat | None:
    """The float format of an observation point that every side types as that float
    (a packed f16x2: its lanes' f16), else None: bits observed as bits. One side's
    `.b32`, `.u32` or `and.b32` view is enough to make the point bits."""
    formats = {t.fmt if t is not None and t.is_float else None for t in types}
    return formats.pop() if len(formats) == 1 else None


def _lanes(width: int, fmt: FloatFormat) -> range:
    """The low bit of each `fmt` lane of a `width`-bit value (a packed f16x2: two)."""
    if width % fmt.width:
        raise ValueError(f"{width} bits are no whole number of {fmt.name} lanes")
    return range(0, width, fmt.width)


def differ(a: z3.BitVecRef, b: z3.BitVecRef, fmt: FloatFormat | None,
           nan: str) -> z3.BoolRef:
    """a and b, observed at a point of float format `fmt` (None: bits observed as bits),
    differ under the NaN policy `nan`."""
    if fmt is None or nan == "exact":
        return a != b
    # SMT-LIB's `=` on floats is exactly payload-free equality: every NaN is one NaN, and
    # -0.0 is not +0.0
    return z3.Or(*[x != y for x, y in zip(observed(a, fmt, nan), observed(b, fmt, nan),
                                          strict=True)])


def observed(a: z3.BitVecRef, fmt: FloatFormat | None, nan: str) -> list[z3.ExprRef]:
    """The terms `differ` compares of a result `a`: its bits, or under the payload-free
    policy the float of each `fmt` lane, where `as_float` reads an IEEE result as that
    result (so the solver compares the operations themselves, the open NaNs out of the
    query, and the query may not hold the bits at all)."""
    if fmt is None or nan == "exact":
        return [a]
    return [as_float(x, fmt) for x in lanes(a, fmt)]


def lanes(a: z3.BitVecRef, fmt: FloatFormat) -> list[z3.BitVecRef]:
    """The bits of each `fmt` lane of `a`, low lane first; where `a` is a concatenation
    with a part on the lane, that part itself (an IEEE result stays one for `as_float`:
    llc-14's f16 return, `st.param.b16` into a `.b32` parameter, is the f16's bits
    under the two bytes it never writes)."""
    parts = {(0, a.size()): a}
    if z3.is_app_of(a, z3.Z3_OP_CONCAT):
        hi = a.size()
        for part in a.children():  # most significant first
            hi -= part.size()
            parts[hi, part.size()] = part
    return [parts[lo, fmt.width] if (lo, fmt.width) in parts
            else z3.Extract(lo + fmt.width - 1, lo, a) for lo in _lanes(a.size(), fmt)]


def payloads_only(a: z3.BitVecRef, b: z3.BitVecRef, fmt: FloatFormat | None) -> z3.BoolRef:
    """a and b differ bit for bit but not payload-free: only in which NaN each lane is
    (false where bits are observed as bits)."""
    return z3.And(differ(a, b, fmt, "exact"), z3.Not(differ(a, b, fmt, "payload-free")))


def _is_nan_bits(v: int, fmt: FloatFormat) -> bool:
    man = fmt.sbits - 1
    return (v >> man) & ((1 << fmt.ebits) - 1) == (1 << fmt.ebits) - 1 and \
        v & ((1 << man) - 1) != 0


def values_differ(a: int, b: int, fmt: FloatFormat | None, nan: str) -> bool:
    """`differ` on concrete bits (a replay's values)."""
    if fmt is None or nan == "exact" or a == b:
        return a != b
    mask = (1 << fmt.width) - 1
    width = max(a.bit_length(), b.bit_length(), fmt.width)
    return any((x := (a >> lo) & mask) != (y := (b >> lo) & mask)
               and not (_is_nan_bits(x, fmt) and _is_nan_bits(y, fmt))
               for lo in range(0, width, fmt.width))
