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
from ..isa.syntax import Guard, Instruction, Operand, format_instruction, rename_registers
from ..isa.variants import Variant

# Texts read, and texts printed here with the instructions they print (a text printed by
# `format_instruction` parses back to the same instructions: tests/test_synth.py).
_READ: dict[str, tuple[Instruction, ...]] = {}
_READ_LIMIT = 1 << 18


def instructions(text: str) -> tuple[Instruction, ...]:
    """The snippet's instructions (a search reads each text many times over)."""
    found = _READ.get(text)
    if found is None:
        found = tuple(parse(text))
        _remember(text, found)
    return found


def _remember(text: str, instrs: tuple[Instruction, ...]) -> None:
    if len(_READ) >= _READ_LIMIT:
        _READ.clear()
    _READ.setdefault(text, instrs)


def text_of(instrs: Iterable[Instruction]) -> str:
    """Instructions as one snippet text, one space between them."""
    instrs = tuple(instrs)
    text = " ".join(printed(i.variant, i.guard, **i.operands) for i in instrs)
    _remember(text, instrs)
    return text


def printed(v: Variant, guard: Guard | None = None, **operands: Operand) -> str:
    """One instruction's text, as `format_instruction` prints it."""
    return _printed(v, guard, tuple(operands.items()))


@lru_cache(maxsize=1 << 16)  # a search prints the same compares over and over
def _printed(v: Variant, guard: Guard | None, operands: tuple[tuple[str, Operand], ...]) -> str:
    ins = Instruction(v, dict(operands), guard)
    text = format_instruction(ins)
    _remember(text, (ins,))
    return text


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
