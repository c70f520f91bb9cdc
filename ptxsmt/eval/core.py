"""A one-instruction shape's program, composed from its core's program and its decorations.

An instruction's *core* is the instruction with no guard, no `!`, and every operand slot
its own register, a sink `_` included: `@!r0 setp.lt.and.f32 r1|_, r2, r2, !r1` has the
core `setp.lt.and.f32 r0|r1, r2, r3, r4`. The catalogue has a few thousand cores, where
guards, negations, sinks and repeated registers make many more shapes; the cores'
programs ship with ptxsmt (`shipped.py`), and a shape's program is its core's program
with the decorations written as a few more lines in the same vocabulary: no Z3.

Why the composition computes exactly the shape's terms (`Program.encode`):
- A repeated register: the core's terms are built over one free constant per operand
  slot, and `execute` reads every operand before it writes any destination, so the
  shape's term is the core's term with the register's constant substituted into each
  slot it fills (a destination that is also a source gives its value before the
  instruction). Feeding the register's input to each of those core parameters computes
  that substitution.
- `!c`: `sem.families.semantics` builds the term with `Not(c)` in place of c, and so does
  feeding `lnot(c)` to the core's c parameter (vset has no `!`: such a shape is compiled
  whole).
- A guard: `execute` writes `If(g, new, old)` to each destination, old being the
  register's value before the instruction (an input): the line `where(g, new, old)`,
  and `where(g, old, new)` for `@!g`.
- A sink: the core writes a destination the shape does not; its value is dropped.
Anything else (several instructions, a `{a, b}` vector, `%r1+1`) is compiled whole, as
is a shape whose core the fast path cannot take.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import count

from ..isa.syntax import Instruction, Operand, format_instruction
from ..program import Program
from .fast import LOCAL, FastProgram, Line

_WRITTEN_ORDER = ("p", "q", "d", "a", "b", "c")  # as format_instruction writes the slots


def core_of(program: Program) -> str | None:
    """The text of the program's core, or None where its program is not composed."""
    if len(program.instructions) != 1:
        return None
    (ins,) = program.instructions
    if not all(_plain(ins, slot, o) for slot, o in ins.operands.items()):
        return None
    names = _core_registers(ins)
    operands = {slot: Operand("reg", names[slot], lane_spec=o.lane_spec)
                for slot, o in ins.operands.items()}
    return format_instruction(replace(ins, operands=operands, guard=None))


def _plain(ins: Instruction, slot: str, o: Operand) -> bool:
    """A register (negated only where the semantics negates it) or a sink."""
    if o.kind == "sink":
        return True
    negation_read = slot == "c" and not ins.variant.syntax.lane_prefix
    return o.kind == "reg" and not o.offset and (not o.negated or negation_read)


def _core_registers(ins: Instruction) -> dict[str, str]:
    """Each operand slot's register in the core: r0, r1, ... in the order it is written."""
    slots = [slot for slot in _WRITTEN_ORDER if slot in ins.operands]
    return {slot: f"r{i}" for i, slot in enumerate(slots)}


def compose(core: FastProgram, program: Program) -> FastProgram:
    """The program of a one-instruction shape (`core_of(program)` not None) from the
    program of its core."""
    (ins,) = program.instructions
    inputs = _inputs(ins)
    slot_of = {register: f"s{i}" for i, register in enumerate(inputs)}
    deps = {f"s{i}": frozenset([i]) for i in range(len(inputs))}
    fresh = (f"t{i}" for i in count(_first_free_local(core)))
    lines: list[Line] = []

    def emit(expr: str) -> str:
        target = next(fresh)
        deps[target] = frozenset().union(*(deps[r] for r in LOCAL.findall(expr)))
        lines.append(Line(target, expr, deps[target]))
        return target

    names = _core_registers(ins)
    core_slot = {register: slot for slot, register in names.items()}
    feed = {}  # the core's parameter -> what the shape passes it
    for j, register in enumerate(core.slots):
        o = ins.operands[core_slot[register]]
        feed[f"s{j}"] = emit(f"lnot({slot_of[o.text]})") if o.negated else slot_of[o.text]

    def fed(expr: str) -> str:
        return LOCAL.sub(lambda m: feed.get(m[0], m[0]), expr)

    for line in core.lines:  # the core's own locals t<j> keep their names
        deps[line.target] = frozenset().union(*(deps[feed[f"s{j}"]] for j in line.deps))
        lines.append(Line(line.target, fed(line.expr), deps[line.target]))
    new = {register: fed(result) for register, result in zip(core.outputs, core.results)}
    results = []
    for slot, o in ins.destinations.items():
        value = new[names[slot]]
        if ins.guard:
            guard, old = slot_of[ins.guard.register], slot_of[o.text]
            arms = (old, value) if ins.guard.negated else (value, old)
            value = emit(f"where({guard}, {arms[0]}, {arms[1]})")
        results.append(value)
    return FastProgram(inputs, program.written, dict(program.types), tuple(lines),
                       tuple(results))


def _inputs(ins: Instruction) -> tuple[str, ...]:
    """The registers the instruction reads, in the order `execute` reads them: its
    sources, then a guard and (where it is false) the destinations' old values."""
    read = [o.text for o in ins.sources.values()]
    if ins.guard:
        read += [ins.guard.register, *(o.text for o in ins.destinations.values())]
    return tuple(dict.fromkeys(read))


def _first_free_local(core: FastProgram) -> int:
    return 1 + max((int(line.target[1:]) for line in core.lines), default=-1)
