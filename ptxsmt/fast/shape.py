"""A snippet's shape: its text with registers renamed in order of appearance and each immediate made
an input, so texts that differ only in register names or immediates compile once.

An immediate operand is the constant `register_value(bits, t)` of its slot's type; a fresh register
of that type, given those bits, is the same term. So the shape's compiled program, fed the
immediates as inputs, computes exactly what the text does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..program import Program


@dataclass(frozen=True)
class Shape:
    text: str  # registers r0, r1, ... in order of appearance; immediates k0, k1, ...
    registers: dict[str, str]  # the text's register -> its name in the shape
    constants: dict[str, int | bool]  # the shape's immediate inputs -> their values
    spelling: dict[str, str]  # the text's register -> as first written ("%r1")


def shaped(program: Program) -> tuple[Shape, Program]:
    """The program's shape, and the shape's text as parsed (without parsing it again)."""
    # the parser's modules: only where a text is new (a warm batch reads shapes as JSON)
    from ..isa.literals import parse_immediate
    from ..isa.syntax import Operand, format_instruction, rename_registers
    from ..isa.variants import operand_types
    from ..program import Program

    # program.spelling lists the registers in order of first appearance
    names = {r: f"r{i}" for i, r in enumerate(program.spelling)}
    constants: dict[str, int | bool] = {}
    instructions = []
    for ins in program.instructions:
        ins = rename_registers(ins, names)  # every register is an r-name now: no clash
        types = operand_types(ins.variant)
        operands = dict(ins.operands)
        for slot, o in ins.operands.items():
            if o.kind == "imm":
                name = f"k{len(constants)}"
                constants[name] = parse_immediate(o.text, types[slot])
                operands[slot] = Operand("reg", name, o.negated)
        instructions.append(replace(ins, operands=operands))
    text = " ".join(format_instruction(ins) for ins in instructions)
    return Shape(text, names, constants, program.spelling), Program(instructions)
