"""Forms of ptxsmt's opcodes that ptxas 13.0 takes and ptxsmt does not model.

ptxsmt models some opcodes only in part (`Syntax.partial`: the glue and the arithmetic
around the comparisons). A spelling of one of them is judged only where ptxsmt knows
every form it could be: each modifier is one the opcode's syntax gives (`opcodes.SYNTAX`)
and the form is none of the rows below. Then a variant outside the catalogue, or a
catalogued one with another number of operands, is one ptxas refuses, and `check` says
illegal; the rest (`.xorsign`, `.cc`, cvt's `.relu`, ... and these rows) are not judged.

The rows were measured: every spelling the syntax allows (each modifier present or not,
every type) assembled with the catalogue's operand count, and each catalogued variant with
one operand fewer and one more, under sm_13/1.4, sm_20/2.0, sm_53/6.5, sm_90/9.0 and
sm_90a, sm_100a, sm_103a, sm_110a, sm_120a, sm_121a at 9.0. A spelling ptxas took, or
refused only for its operands, is a row; ptxas refused every other one for its modifiers
or types (tests/test_unmodelled.py asks ptxas again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .types import PtxType
from .variants import Variant


@dataclass(frozen=True)
class Unmodelled:
    """Variants of `opcode` whose `fields` (a Variant attribute, types by their ISA role)
    take one of the values given, with `operands` operands (None: any number)."""

    opcode: str
    form: str  # what it is, as a message names it
    fields: Mapping[str, tuple]
    operands: int | None = None

    def matches(self, v: Variant, operands: int) -> bool:
        return (v.opcode == self.opcode and self.operands in (None, operands)
                and all(_value(v, name) in values for name, values in self.fields.items()))


def _value(v: Variant, name: str):
    value = getattr(v, name)
    return value.name if isinstance(value, PtxType) else value


UNMODELLED = (
    Unmodelled("cvt", "a packed destination from two sources (cvt.rn.f16x2.f32 d, a, b)",
               {"dtype": ("f16x2", "bf16x2")}),
    Unmodelled("cvt", "an 8-bit integer destination", {"dtype": ("s8", "u8")}),
    Unmodelled("cvt", "an 8-bit integer source", {"atype": ("s8", "u8")}),
    Unmodelled("mad", "mad.f32 without a rounding modifier (sm_1x and sm_20 only)",
               {"type": ("f32",), "rnd": (None,), "mode": (None,)}),
    Unmodelled("rcp", ".ftz on .f64 (the ISA text gives it no meaning)",
               {"type": ("f64",), "ftz": (True,)}),
    Unmodelled("testp", "testp without a test (.finite, .normal, ...)", {"mode": (None,)}),
    *(Unmodelled(op, f"{op}.f32 of three sources (d, a, b, c: sm_100 and later)",
                 {"type": ("f32",)}, operands=4) for op in ("min", "max")),
)


def unmodelled(v: Variant, operands: int) -> Unmodelled | None:
    """The row that says ptxsmt does not model `v` written with `operands` operands."""
    return next((row for row in UNMODELLED if row.matches(v, operands)), None)
