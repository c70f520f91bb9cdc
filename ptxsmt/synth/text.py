"""Snippet texts, read and written only through `ptxsmt.isa` (one grammar both ways).

A search keys everything by a snippet's text (the union-find, the proof cache, the
library it writes), so texts stay its currency; whatever it needs to know of one comes
from the parsed instructions, and every text it makes is printed by
`format_instruction`, so reading a text it wrote gives back the same instructions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..isa.body import parse
from ..isa.syntax import Instruction, Operand, format_instruction, rename_registers


@lru_cache(maxsize=1 << 17)  # a search reads each text many times over
def instructions(text: str) -> tuple[Instruction, ...]:
    return tuple(parse(text))


def text_of(instrs: Iterable[Instruction]) -> str:
    """Instructions as one snippet text, one space between them."""
    return " ".join(format_instruction(i) for i in instrs)


def register(name: str, negated: bool = False, lane_spec=None) -> Operand:
    return Operand("reg", name, negated, lane_spec)


def registers(ins: Instruction) -> list[str]:
    """The registers an instruction names, each time it names one (guard first)."""
    out = [ins.guard.register] if ins.guard else []
    return out + [r for o in ins.operands.values() for r in o.registers]


def rename(text: str, mapping: Mapping[str, str]) -> str:
    """The snippet with registers renamed through `mapping` (the others kept)."""
    return _renamed(text, tuple(sorted(mapping.items())))


@lru_cache(maxsize=1 << 16)
def _renamed(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    mapping = dict(pairs)
    return text_of(rename_registers(ins, {r: mapping.get(r, r) for r in registers(ins)})
                   for ins in instructions(text))
