"""mul then add without rounding modifiers: ptxas may fuse them into an fma.

9.7.3.3 add (and 9.7.3.4 sub, 9.7.3.5 mul, 9.7.4.1-9.7.4.3 their half forms), Notes:
"An add instruction with no rounding modifier defaults to round-to-nearest-even and may
be optimized aggressively by the code optimizer. In particular, mul/add sequences with no
rounding modifiers may be optimized to use fused-multiply-add instructions on the target
device." So where an add or sub without a rounding modifier reads the result of a mul
without one, its value is either the two roundings or the fma's one, and which is not the
text's to say (an H200 fuses `mul.f32; add.f32`; Spec notes 13): the result is
`If(choice, fused, unfused)`, `choice` a free Boolean of the operands' bits named after
the two instructions, so that one text on both sides of a query shares it (as `free_nan`
shares a NaN) and a verdict holds only if it holds both ways.

Read here: the product is a plain `mul` (no `.sat`: a clamped product is no fma's); the
add or sub has the mul's type and `.ftz` (the fma flushes both, or neither) and may
have `.sat` (`fma.sat` clamps the fused sum); the mul's own result stays unfused, and each
add or sub that reads it has its own choice (ptxas may fuse one and keep the product for
another). A guarded mul's register is no product (it may hold the old value). Each
operand of the add that is a product gives one way to fuse, tried in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from ..isa.syntax import Instruction
from ..isa.variants import Variant
from .arith import flush_bits
from .comparison import ftz
from .floatarith import saturate
from .options import Options
from .prims import lanes, pack
from .sorts import as_float, fields, unordered

FUSED = {"add", "sub"}  # the operations that may take a product into an fma


@dataclass(frozen=True)
class Product:
    """A plain mul's result `d` = a * b (its sources as read, before .ftz)."""

    variant: Variant
    a: z3.BitVecRef
    b: z3.BitVecRef
    d: z3.BitVecRef


class Products:
    """The plain muls' results of one encoding, by term: an add reads a product when its
    operand is that very term, however it got there (a mov, a register renamed)."""

    def __init__(self) -> None:
        self._by_term: dict[int, Product] = {}

    def record(self, ins: Instruction, src: dict, out: dict) -> None:
        v = ins.variant
        if v.family == "float-arith" and v.opcode == "mul" and v.rnd is None and not v.sat:
            d = out["d"]
            self._by_term[d.get_id()] = Product(v, src["a"], src["b"], d)

    def contract(self, ins: Instruction, src: dict, out: dict, opts: Options) -> dict:
        """`out` of an add/sub, with each way ptxas may fuse it (Spec notes 13)."""
        v = ins.variant
        if v.family != "float-arith" or v.opcode not in FUSED or v.rnd is not None:
            return out
        d = out["d"]
        for slot, other in (("a", "b"), ("b", "a")):
            p = self._by_term.get(src[slot].get_id())
            if p is None or not p.d.eq(src[slot]) or \
                    (p.variant.type, p.variant.ftz) != (v.type, v.ftz):
                continue
            fused = fused_value(v, p, src[other], slot, out["d"], opts)
            d = z3.If(choice(p.variant, v, slot, p, src[other]), fused, d)
        return {**out, "d": d}


def choice(mul: Variant, add: Variant, slot: str, p: Product, c: z3.BitVecRef) -> z3.BoolRef:
    """Whether ptxas fused this pair: a free Boolean of the product's operands (in either
    order: `a * b` names none) and the other addend, named after the two instructions
    (and, for sub, which side the product is on)."""
    side = f" ({slot})" if add.opcode == "sub" else ""
    name = f"{CHOICE} {mul} into {add}{side}"
    key = z3.Concat(unordered(p.a, p.b), c)
    return z3.Function(name, key.sort(), z3.BoolSort())(key)


CHOICE = "fused"  # the first word of a choice's name


def is_choice(t: z3.ExprRef) -> bool:
    """`t` is whether ptxas fused a pair: the hardware's to choose, where the other
    uninterpreted applications (an opaque instruction's result) stay free."""
    return z3.is_bool(t) and t.num_args() > 0 and t.decl().kind() == z3.Z3_OP_UNINTERPRETED \
        and t.decl().name().split(" ", 1)[0] == CHOICE


def fused_value(add: Variant, p: Product, c: z3.BitVecRef, slot: str, unfused: z3.BitVecRef,
                opts: Options) -> z3.BitVecRef:
    """The fma ptxas makes of the pair, lane by lane: a*b + c for add; a*b - c, or
    c - a*b, as fma(a, b, -c) and fma(-a, b, c) for sub (negation is exact), rounded
    once to nearest even, with the add's .ftz and .sat. Its NaN is the unfused result's:
    the fma is NaN only where the two roundings are (a NaN operand, inf * 0, or an
    infinite product against the other infinity, which the rounded product is too), and
    the text leaves both open, so whether ptxas fused is never told by a NaN's bits."""
    t = add.type
    flush = ftz(add, t.lane, opts)
    n, fmt = t.lane_width, t.lane.fmt
    out = []
    for x, y, z, u in zip(lanes(p.a, n), lanes(p.b, n), lanes(c, n), lanes(unfused, n)):
        if add.opcode == "sub":
            x, z = (x, negate(z, fmt)) if slot == "a" else (negate(x, fmt), z)
        if flush:
            x, y, z = (flush_bits(w, fmt) for w in (x, y, z))
        r = z3.fpFMA(z3.RNE(), *(as_float(w, fmt) for w in (x, y, z)))
        bits = flush_bits(z3.fpToIEEEBV(r), fmt) if flush else z3.fpToIEEEBV(r)
        out.append(z3.If(z3.fpIsNaN(r), u, saturate(bits, fmt) if add.sat else bits))
    return pack(out)


def negate(x: z3.BitVecRef, fmt) -> z3.BitVecRef:
    """-x on the bits: the sign flipped (exact, NaNs stay NaNs)."""
    sign, _, _ = fields(x, fmt)
    return z3.Concat(~sign, z3.Extract(fmt.width - 2, 0, x))
