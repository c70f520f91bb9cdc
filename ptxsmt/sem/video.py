"""9.7.18.2 SIMD Video Instructions: vset2 (half-words) and vset4 (bytes).

One lane helper serves both: vset2 is 2 lanes of 16 bits, vset4 4 lanes of 8.
"""

from __future__ import annotations

import z3

from ..isa.modifiers import LaneSpec
from ..isa.types import Kind
from ..isa.variants import Variant
from .options import Options
from .prims import compare_int, lanes, pack


def extract_and_sign_ext(a, b, sel: LaneSpec, signed: bool, width: int) -> list[z3.BitVecRef]:
    """Lane i is half-word/byte sel[i] of the 64-bit bank b:a, widened by one bit
    (sign- or zero-extended) so mixed signedness compares as plain integers."""
    bank = lanes(z3.Concat(b, a), width)
    ext = z3.SignExt if signed else z3.ZeroExt
    return [ext(1, bank[k]) for k in sel.by_lane]


def vset(v: Variant, a, b, c, mask: LaneSpec, asel: LaneSpec, bsel: LaneSpec,
         opts: Options) -> dict[str, z3.ExprRef]:
    """Va = extractAndSignExt(a, b, .asel, .atype);  Vb = extractAndSignExt(a, b, .bsel, .btype);
    t[i] = compare(Va[i], Vb[i], .cmp) ? 1 : 0;
    .add:  d = c;  d += mask[i] ? t[i] : 0;            (one 32-bit add)
    merge: d |= mask[i] ? t[i] : Vc[i];                (Vc[i]: lane i of c, in place;
                                                        of b with vset_merge="b")"""
    n = v.syntax.lanes  # vset2: 2 half-words, vset4: 4 bytes
    width = 32 // n
    va = extract_and_sign_ext(a, b, asel, v.atype.kind is Kind.SIGNED, width)
    vb = extract_and_sign_ext(a, b, bsel, v.btype.kind is Kind.SIGNED, width)
    t = [compare_int(v.cmp, x, y, signed=True) for x, y in zip(va, vb)]
    if v.add:
        counted = [z3.If(t[i], z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)) for i in mask.lanes]
        return {"d": c + sum(counted[1:], counted[0])}
    vc = lanes(c if opts.vset_merge == "c" else b, width)
    one, zero = z3.BitVecVal(1, width), z3.BitVecVal(0, width)
    return {"d": pack([z3.If(t[i], one, zero) if i in mask.lanes else vc[i]
                       for i in range(n)])}
