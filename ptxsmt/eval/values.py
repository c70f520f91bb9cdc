"""Concrete values: what an evaluation reads and returns, and their JSON spelling.

Free of Z3, so a batch answered from compiled programs never imports the solver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..isa.errors import PtxError, quote
from ..isa.literals import LiteralError, hex_bits, parse_value
from ..isa.types import PtxType
from ..sem.unspecified import UNSPECIFIED, OpenValue, Value


class UnspecifiedOutput(PtxError):
    """An output holds a value the PTX ISA leaves open (a cvt of a NaN): no bits exist."""


@dataclass(frozen=True)
class Evaluation:
    types: dict[str, PtxType]
    inputs: dict[str, Value]
    outputs: dict[str, Value]
    spelling: dict[str, str] = field(default_factory=dict)  # register -> as written
    chosen: tuple[OpenValue, ...] = ()  # the open values taken, where a caller chose them

    def name(self, register: str) -> str:
        return self.spelling.get(register, register)

    def outputs_json(self) -> dict[str, str | bool]:
        """The outputs as the JSON contract writes them, by register as spelled."""
        return {self.name(k): to_json(v, self.types[k]) for k, v in self.outputs.items()}


def to_json(value: Value, t: PtxType) -> str | bool:
    """The JSON contract: booleans for predicates, exact-width lower-case hex otherwise
    ("unspecified" for a value the ISA leaves open)."""
    if value is UNSPECIFIED:
        return "unspecified"
    return bool(value) if t.width == 1 else hex_bits(int(value), t.width)


def outputs_json(outputs: Mapping[str, tuple[Value, PtxType]]) -> dict[str, str | bool]:
    """Outputs (a function's, by name, each with its type) as the JSON contract writes them."""
    return {k: to_json(v, t) for k, (v, t) in outputs.items()}


def convert_inputs(raw: Mapping[str, object], types: Mapping[str, PtxType],
                   wanted: Mapping[str, object]) -> dict[str, Value]:
    """Input values as register bits. Strings are literals/friendly values; ints are bits."""
    out: dict[str, Value] = {}
    for name, value in raw.items():
        key = name.lstrip("%")
        if key not in types:
            known = ", ".join(wanted) or "nothing"
            raise PtxError(f"unknown input {quote(name)}: the snippet reads {known}")
        if key in out:  # %r1 is r1
            raise PtxError(f"input {quote(name)} is given twice")
        try:
            out[key] = _convert(value, types[key])
        except LiteralError as e:
            raise PtxError(f"input {quote(name)}: {e}") from None
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
            raise LiteralError(f"{quote(hex(value))} does not fit a {t.width}-bit .{t.name} "
                               f"register")
        return value
    if isinstance(value, str):
        return parse_value(value, t)
    raise LiteralError(f"{quote(value)} is not a value (use a string, an integer or a boolean)")
