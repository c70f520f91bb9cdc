"""Concrete evaluation by substituting input values into the Z3 terms.

There is no second interpreter: the value of an output is what Z3's
simplifier makes of the very formula the prover reasons about.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import z3

from ..isa.literals import LiteralError, hex_bits, parse_value
from ..isa.syntax import PtxError
from ..isa.types import PtxType
from ..program import compiled
from ..sem.options import DEFAULT, Options
from ..sem.sorts import register_value

Value = int | bool


@dataclass(frozen=True)
class Evaluation:
    types: dict[str, PtxType]
    inputs: dict[str, Value]
    outputs: dict[str, Value]
    spelling: dict[str, str] = field(default_factory=dict)  # register -> as written

    def name(self, register: str) -> str:
        return self.spelling.get(register, register)


def to_json(value: Value, t: PtxType) -> str | bool:
    """The JSON contract: booleans for predicates, exact-width lower-case hex otherwise."""
    return bool(value) if t.width == 1 else hex_bits(int(value), t.width)


def convert_inputs(raw: Mapping[str, object], types: Mapping[str, PtxType],
                   wanted: Mapping[str, object]) -> dict[str, Value]:
    """Input values as register bits. Strings are literals/friendly values; ints are bits."""
    out: dict[str, Value] = {}
    for name, value in raw.items():
        key = name.lstrip("%")
        if key not in types:
            known = ", ".join(wanted) or "nothing"
            raise PtxError(f"unknown input {name!r}: the snippet reads {known}")
        t = types[key]
        try:
            out[key] = _convert(value, t)
        except LiteralError as e:
            raise PtxError(f"input {name}: {e}") from None
    return out


def _convert(value: object, t: PtxType) -> Value:
    if isinstance(value, bool):
        if t.width != 1:
            raise LiteralError(f"{value} is a predicate value; .{t.name} needs bits")
        return value
    if isinstance(value, int):
        if t.width == 1:
            return bool(value)
        if not 0 <= value < 1 << t.width:
            raise LiteralError(f"{value:#x} does not fit a {t.width}-bit .{t.name} register")
        return value
    if isinstance(value, str):
        return parse_value(value, t)
    raise LiteralError(f"{value!r} is not a value (use a string, an integer or a boolean)")


def evaluate(ptx: str, inputs: Mapping[str, object] | None = None,
             opts: Options = DEFAULT) -> Evaluation:
    """Run a snippet on concrete inputs.

    >>> evaluate("setp.lt.f32 p, a, b;", {"a": "nan", "b": "1.0"}).outputs
    {'p': False}
    """
    program, enc = compiled(ptx, opts)
    values = convert_inputs(inputs or {}, program.types, enc.inputs)
    pairs = [(const, register_value(values[name], program.types[name]))
             for name, const in enc.inputs.items() if name in values]
    outputs: dict[str, Value] = {}
    for name, term in enc.outputs.items():
        result = z3.simplify(z3.substitute(term, *pairs) if pairs else term)
        outputs[name] = _value(result, name, enc, values)
    used = {k: v for k, v in values.items() if k in enc.inputs}
    return Evaluation(program.types, used, outputs, program.spelling)


def _value(term: z3.ExprRef, name: str, enc, values) -> Value:
    if z3.is_true(term) or z3.is_false(term):
        return z3.is_true(term)
    if z3.is_bv_value(term):
        return term.as_long()
    missing = [n for n in enc.inputs if n not in values]
    raise PtxError(f"output {name} depends on inputs without a value: {', '.join(missing)}")
