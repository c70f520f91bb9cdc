"""Which readings of the PTX ISA and the LangRef a verdict rests on: the Spec notes
(docs/spec-notes.md) whose instructions the claim's PTX uses, the IR's flags that make
values poison or open, and the NaN policy the outputs were compared under."""

from __future__ import annotations

import re

FLOAT = r"(f16|bf16|f16x2|bf16x2|f32|f64)"
INTEGER = r"[su](8|16|32|64)"
MODS = r"(\.\w+)*"

# (patterns that must all match the PTX, Spec note, what it says): one row per reading
SPEC_NOTES = (
    ((r"\bvset[24]\.",), 1, "vset merges unmasked lanes from c, as the pseudocode says"),
    ((rf"\bset{MODS}\.(b?f16(x2)?)\b",), 2,
     "half-precision set writes 1.0 (float) or all ones (integer) per true lane"),
    ((rf"\bsetp{MODS}\.(and|or|xor)\b",), 4, "setp with a BoolOp: q = BoolOp(!t, c)"),
    ((r"\bslct\.ftz\b",), 5, "slct.ftz flushes a subnormal c to a zero of its sign"),
    ((rf"\bcvt{MODS}\.{FLOAT}\.{FLOAT}\b",), 9, "cvt of a NaN is an unspecified NaN"),
    ((rf"\b(min|max){MODS}\.{FLOAT}\b",), 10,
     "min/max order -0.0 < +0.0; one NaN operand gives the other operand"),
    ((rf"\bcvt{MODS}\.{INTEGER}\.{FLOAT}\b",), 11,
     "a NaN converted to an integer gives what an H200 gives (0, or the sign bit alone)"),
    ((rf"\b(abs|neg|copysign){MODS}\.{FLOAT}\b",), 12,
     "abs/neg of a NaN give an unspecified NaN (abs.f64 passes it through)"),
    ((rf"\bmul(\.ftz|\.sat)*\.{FLOAT}\b", rf"\b(add|sub)(\.ftz|\.sat)*\.{FLOAT}\b"), 13,
     "a mul and an add without rounding modifiers may be fused into one fma"),
)
_SPEC_NOTES = tuple((tuple(re.compile(p) for p in ps), n, what) for ps, n, what in SPEC_NOTES)

# IR flags and intrinsics (LangRef) that make a value poison or leave it open
IR_READINGS = (
    (r"\bfast\b", "fast: nnan, ninf, nsz, arcp, contract, afn and reassoc together"),
    (r"\bnnan\b", "nnan: a NaN operand or result is poison"),
    (r"\bninf\b", "ninf: an infinite operand or result is poison"),
    (r"\bnsz\b", "nsz: the sign of a zero operand or result is insignificant"),
    (r"\bcontract\b", "contract: an fmul and an fadd may be fused into one rounding"),
    (r"\bnsw\b", "nsw: a signed overflow is poison"),
    (r"\bnuw\b", "nuw: an unsigned overflow is poison"),
    (r"\bexact\b", "exact: a division or right shift that drops set bits is poison"),
    (r"\bdisjoint\b", "or disjoint: operands with a common set bit make poison"),
    (r"\bnneg\b", "nneg: a negative operand is poison"),
    (r"@llvm\.(minnum|maxnum)\.", "minnum/maxnum of +0.0 and -0.0 may return either"),
    (r"@llvm\.fmuladd\.", "llvm.fmuladd may be fused or not"),
    (r"\bfpto[su]i\b", "fptosi/fptoui of a value out of the result's range is poison"),
)
_IR_READINGS = tuple((re.compile(p), what) for p, what in IR_READINGS)

REFINEMENT = ("refinement as Alive2 defines it: wherever the IR has no undefined behaviour, "
              "the PTX's results equal the IR's non-poison ones (docs/llvm.md)")


def spec_notes(*ptx: str) -> list[str]:
    """`Spec notes N: ...` for each note whose instructions the PTX texts use."""
    text = "\n".join(ptx)
    return [f"Spec notes {n}: {what}" for patterns, n, what in _SPEC_NOTES
            if all(p.search(text) for p in patterns)]


def ir_flags(ir_text: str) -> list[str]:
    """The LangRef readings the IR function's flags and intrinsics call on."""
    return [what for p, what in _IR_READINGS if p.search(ir_text)]


def nan_policy(nan: str, float_outputs: bool, up_to_payloads: bool) -> list[str]:
    """How NaNs at float-typed outputs were compared (Spec notes 14), where there are any."""
    if not float_outputs:
        return []
    if nan == "exact":
        return ["Spec notes 14: NaNs at float outputs compared bit for bit (nan = \"exact\")"]
    proved = "; bit-for-bit equality was not proved" if up_to_payloads else ""
    return ["Spec notes 14: NaNs at float outputs compared payload-free, any NaN equals "
            f"any NaN (nan = \"exact\" compares bits){proved}"]
