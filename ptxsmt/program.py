"""Straight-line snippets: register typing and symbolic execution.

Registers are read before they are written within an instruction (so
`setp.lt.and.f32 p, a, b, p` uses the old p); a guard `@p`/`@!p` keeps a
destination's prior value when false, which makes that prior value an input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .isa.body import Snippet, parse_snippet
from .isa.literals import parse_immediate
from .isa.syntax import Instruction, PtxError, offset_value, require_legal
from .isa.types import PRED, PtxType, bit_type
from .isa.variants import operand_types
from .sem.options import DEFAULT, Options

if TYPE_CHECKING:
    import z3

    from .sem.contraction import Products


@dataclass(frozen=True)
class Encoding:
    inputs: dict[str, z3.ExprRef]  # registers read before written: name -> free constant
    outputs: dict[str, z3.ExprRef]  # registers written: name -> final value


class Program:
    """A parsed snippet with its register types; `encode()` gives Z3 terms. A register
    named by a `.reg` has its declared type; any other is typed by its use."""

    def __init__(self, instructions: list[Instruction], declared: Mapping[str, PtxType] = {}):
        self.instructions = instructions
        for ins in instructions:
            require_legal(ins)
        self.types = _register_types(instructions, declared)
        self.spelling = _spelling(instructions)  # register -> as first written ("%r1")
        self.written = _written(instructions)

    @classmethod
    def parse(cls, text: str) -> Program:
        return cls.of(parse_snippet(text))

    @classmethod
    def of(cls, snippet: Snippet) -> Program:
        return cls(snippet.instructions, {k: r.type for k, r in snippet.declared.items()})

    def encode(self, opts: Options = DEFAULT) -> Encoding:
        """The final registers as terms over free constants named after the inputs."""
        from .sem.contraction import Products  # the solver only where terms are wanted
        from .sem.sorts import register

        state: dict[str, z3.ExprRef] = {}
        inputs: dict[str, z3.ExprRef] = {}
        products = Products()

        def read(name: str) -> z3.ExprRef:
            if name not in state:
                state[name] = inputs[name] = register(name, self.types[name])
            return state[name]

        for ins in self.instructions:
            state.update(execute(ins, read, opts, products))
        return Encoding(inputs, {name: state[name] for name in self.written})


def execute(ins: Instruction, read: Callable[[str], z3.ExprRef],
            opts: Options = DEFAULT, products: Products | None = None) -> dict[str, z3.ExprRef]:
    """One instruction's destinations: register name -> new value (a false guard keeps
    the value `read` gives). Snippets and functions (`ptxsmt.function`) both run it.
    `products`: the encoding's plain mul results, which an add without a rounding
    modifier may be fused with (`sem.contraction`)."""

    from .sem.families import semantics
    from .sem.prims import guard_holds, guarded, lanes

    types = operand_types(ins.variant)
    src = {k: _source(o, types[k], read) for k, o in ins.sources.items()}
    out = semantics(ins, src.get("a"), src.get("b"), src.get("c"), opts, src.get("e"))
    if products is not None:
        out = products.contract(ins, src, out, opts)
        products.record(ins, src, out)
    holds = guard_holds(read(ins.guard.register), ins.guard.negated) if ins.guard else None
    new = {}
    for slot, o in ins.destinations.items():
        values = lanes(out[slot], out[slot].size() // len(o.elements)) if o.elements \
            else [out[slot]]
        for name, value in zip(o.registers, values):
            new[name] = guarded(holds, value, lambda name=name: read(name))
    return new


def _source(o, t: PtxType, read) -> z3.ExprRef:
    from .sem.prims import pack
    from .sem.sorts import register_value

    if o.kind == "imm":
        return register_value(parse_immediate(o.text, t), t)
    if o.kind == "vec":
        return pack([read(name) for name in o.elements])
    if o.offset:  # `%r1+1`: the sum, wrapping at the operand's width
        return read(o.text) + register_value(offset_value(o.offset, t), t)
    return read(o.text)


def _written(instructions: list[Instruction]) -> tuple[str, ...]:
    """The registers written, each once, in the order first written."""
    return tuple(dict.fromkeys(
        r for ins in instructions for o in ins.destinations.values() for r in o.registers))


def _spelling(instructions: list[Instruction]) -> dict[str, str]:
    """Registers are one whether written `%r1` or `r1`; outputs use the first spelling."""
    out: dict[str, str] = {}
    for ins in instructions:
        if ins.guard:
            out.setdefault(ins.guard.register, ins.guard.spelled or ins.guard.register)
        for o in ins.operands.values():
            for name, spelled in zip(o.registers, o.spelled or o.registers):
                out.setdefault(name, spelled)
    return out


def _register_types(instructions: list[Instruction],
                    declared: Mapping[str, PtxType]) -> dict[str, PtxType]:
    """Declared registers keep their type (the reader checked each use against it); the
    others take the type of their first use, and a later use must agree in width."""
    types: dict[str, PtxType] = dict(declared)
    seen: dict[str, str] = dict.fromkeys(declared, "its declaration")
    for ins in instructions:
        dests = [r for o in ins.destinations.values() for r in o.registers]
        if len(set(dests)) < len(dests):
            raise PtxError(f"the instruction writes {dests[0]} twice; which write wins is "
                           "not specified", ins.line, ins.col)
        uses = [(ins.guard.register, PRED, ins.col)] if ins.guard else []
        slot_types = operand_types(ins.variant)
        for k, o in ins.operands.items():
            t = slot_types[k]
            if o.kind == "vec":
                t = bit_type(t.width // len(o.elements))
            uses += [(name, t, o.col) for name in o.registers]
        for name, t, col in uses:
            if name not in types:
                types[name], seen[name] = t, f"line {ins.line}"
            elif (types[name].width, types[name] is PRED) == (t.width, t is PRED):
                continue
            elif name in declared:  # legal where ptxas allows it (`cvt` of a wider register)
                raise PtxError(f"register {name} is declared .{types[name].name}; ptxsmt "
                               f"evaluates this operand only on a register of .{t.name}'s "
                               "width (ptxas also takes this one; what it means here is not "
                               "modelled)", ins.line, col)
            else:
                raise PtxError(f"register {name} is used as .{t.name} here but as "
                               f".{types[name].name} on {seen[name]}", ins.line, col)
    return types


@lru_cache(maxsize=512)
def compiled(text: str, opts: Options = DEFAULT) -> tuple[Program, Encoding]:
    """Parse and encode once per distinct snippet text."""
    program = Program.parse(text)
    return program, program.encode(opts)
