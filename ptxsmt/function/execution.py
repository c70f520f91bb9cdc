"""The state of one pass over a function body (`execute.py` drives it): the inputs it
has met, the path it is on, and what reading and writing registers, parameters and
memory do to that path. The instructions (`instructions.py`) act through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import z3

from ..isa.body import Generic
from ..isa.errors import PtxError, quote
from ..isa.literals import LiteralError, parse_immediate
from ..isa.module import Function
from ..isa.types import PRED, TYPES, PtxType
from ..sem.options import Options
from ..sem.sorts import register
from . import memory
from .state import State


def resize(term: z3.ExprRef, width: int, signed: bool) -> z3.ExprRef:
    """A value of an instruction's type in a register of `width` bits (ld.u8 into a .b16
    register extends; st.u8 of a .b16 register keeps the low byte)."""
    if z3.is_bool(term) or term.size() == width:
        return term
    if term.size() > width:
        return z3.Extract(width - 1, 0, term)
    extend = z3.SignExt if signed else z3.ZeroExt
    return extend(width - term.size(), term)


@dataclass(frozen=True)
class Access:
    """One ld or st of memory, with the condition under which it runs."""

    space: str
    address: z3.BitVecRef  # 64-bit, the offset included
    type: PtxType
    when: z3.BoolRef
    line: int
    text: str


@dataclass(frozen=True)
class Decision:
    """A compare on a path: its predicates' terms and the condition that the path runs
    (the cases `ptxsmt vectors FILE.ptx` covers)."""

    line: int
    text: str
    when: z3.BoolRef
    predicates: dict[str, z3.BoolRef]  # register (without `%`) -> its value after the compare


@dataclass
class FunctionEncoding:
    function: str
    inputs: dict[str, z3.ExprRef] = field(default_factory=dict)  # scalar inputs by name
    types: dict[str, PtxType] = field(default_factory=dict)  # of inputs and returns
    origins: dict[str, str] = field(default_factory=dict)  # input -> what it is
    memory: dict[str, z3.ArrayRef] = field(default_factory=dict)  # initial, per space used
    final: dict[str, z3.ArrayRef] = field(default_factory=dict)  # at the function's end
    returns: dict[str, z3.ExprRef] = field(default_factory=dict)
    loads: list[Access] = field(default_factory=list)
    stores: list[Access] = field(default_factory=list)
    uninterpreted: dict[str, int] = field(default_factory=dict)  # instruction text -> line
    opaque: dict[str, z3.ExprRef] = field(default_factory=dict)  # register -> its last
    # opaque value (equiv: an uninterpreted application), to replay a counterexample
    reached: z3.BoolRef | None = None  # some path reaches the end
    decisions: list[Decision] = field(default_factory=list)  # each setp met, in order


class Execution:
    """One pass over the body. `unmodelled="function"` (equiv) or `"input"` (eval) says what
    an instruction ptxsmt does not model gives (see `instructions.py`); `rename` names
    parameters and return parameters after another function's (equiv of two names)."""

    def __init__(self, fn: Function, opts: Options, unmodelled: str, rename: dict[str, str]):
        self.fn, self.opts, self.mode, self.rename = fn, opts, unmodelled, rename
        self.declared = {r.key: r.type for r in fn.body.registers}
        self.params = {p.name: p for p in (*fn.params, *fn.returns)}
        self.returns = {p.name for p in fn.returns}
        self.enc = FunctionEncoding(fn.name)
        self.state: State | None = State(z3.BoolVal(True), {}, {}, {})

    # ---- inputs -------------------------------------------------------------------------

    def input(self, name: str, t: PtxType, origin: str) -> z3.ExprRef:
        if name not in self.enc.inputs:
            self.enc.inputs[name] = register(name, t)
            self.enc.types[name], self.enc.origins[name] = t, origin
        return self.enc.inputs[name]

    def parameter(self, name: str, offset: int, t: PtxType, g: Generic) -> z3.ExprRef:
        if name not in self.params:
            raise PtxError(f"{quote(name)} in {quote(g.text)} is not a parameter of "
                           f"{self.fn.name}", g.line, g.col)
        key = self.rename.get(name, name) + (f"+{offset}" if offset else "")
        if key in self.state.returns:  # a return parameter read back
            return resize(self.state.returns[key], t.width, False)
        return resize(self.input(key, t, f"parameter .{t.name}"), t.width, False)

    def width(self, operand: str, g: Generic) -> int:
        key = operand.strip().lstrip("%")
        if key not in self.declared:
            raise PtxError(f"{quote(operand)} in {quote(g.text)} is not a declared register",
                           g.line, g.col)
        return self.declared[key].width

    def value(self, text: str, t: PtxType, g: Generic, negated: bool = False) -> z3.ExprRef:
        """A source operand: a register, a special register, a variable's address or an
        immediate, as a value of `t`."""
        text = text.strip()
        key = text.lstrip("%")
        if key in self.declared:
            v = self.register(key)
            return z3.Not(v) if negated else v if z3.is_bool(v) else \
                resize(v, t.width, False)
        if text.startswith("%"):
            special = self.input(key, t, "special register")
            return resize(special, t.width, False)
        if text[:1].isalpha() or text[:1] in "_$":
            return self.input(text, TYPES["u64"], "the address of a variable")
        try:
            bits = parse_immediate(text, t)
        except LiteralError as e:
            raise PtxError(f"{quote(text)} in {quote(g.text)}: {e}", g.line, g.col) from None
        return z3.BoolVal(bits) if t is PRED else z3.BitVecVal(bits, t.width)

    def register(self, key: str) -> z3.ExprRef:
        if key not in self.state.registers:  # read before written: an input
            value = self.input(key, self.declared[key], "register read before it is written")
            self._update(registers={key: value})
        return self.state.registers[key]

    def opaque_value(self, g: Generic, k: int, dest: str, args: list) -> z3.ExprRef:
        key = dest.lstrip("%")
        t = self.declared[key]
        self.enc.uninterpreted.setdefault(" ".join(g.text.split()), g.line)
        if self.mode == "input":
            return self.input(key, t, f"written by {quote(' '.join(g.text.split()))} (line "
                              f"{g.line}), which ptxsmt does not model")
        name = ".".join((g.opcode, *g.modifiers)) + (f"#{k}" if k else "")
        sort = z3.BoolSort() if t is PRED else z3.BitVecSort(t.width)
        value = z3.Function(name, *(a.sort() for a in args), sort)(*args) if args else \
            z3.Const(name, sort)
        self.enc.opaque[key] = value
        return value

    # ---- effects ------------------------------------------------------------------------

    def guard(self, g: Generic) -> z3.BoolRef | None:
        if g.guard is None:
            return None
        p = self.register(g.guard.register)
        return z3.Not(p) if g.guard.negated else p

    def write(self, dest: str, value: z3.ExprRef, g: Generic) -> None:
        key = dest.strip().lstrip("%")
        self.width(dest, g)
        if (guard := self.guard(g)) is not None:
            value = z3.If(guard, value, self.register(key))
        self._update(registers={key: value})

    def load(self, space: str, base: z3.BitVecRef, offset: int, t: PtxType,
             g: Generic) -> z3.BitVecRef:
        at = memory.address(base) + offset
        self.enc.loads.append(Access(space, at, t, self._when(g), g.line, g.text))
        return memory.load(self.memory(space), at, t.width)

    def store(self, space: str, base: z3.BitVecRef, offset: int, t: PtxType,
              value: z3.BitVecRef, g: Generic) -> None:
        at = memory.address(base) + offset
        self.enc.stores.append(Access(space, at, t, self._when(g), g.line, g.text))
        stored = memory.store(self.memory(space), at, value)
        if (guard := self.guard(g)) is not None:
            stored = z3.If(guard, stored, self.memory(space))
        self._update(memory={space: stored})

    def set_return(self, name: str, offset: int, t: PtxType, value: z3.ExprRef,
                   g: Generic) -> None:
        if name not in self.returns:
            raise PtxError(f"{quote(g.text)} stores to {quote(name)}, which is not a return "
                           f"parameter of {self.fn.name}", g.line, g.col)
        key = self.rename.get(name, name) + (f"+{offset}" if offset else "")
        self.enc.types[key] = t
        if (guard := self.guard(g)) is not None:
            value = z3.If(guard, value, self.state.returns.get(key, value))
        self._update(returns={key: value})

    def memory(self, space: str) -> z3.ArrayRef:
        if space not in self.enc.memory:
            self.enc.memory[space] = memory.initial(space)
        return self.state.memory.get(space, self.enc.memory[space])

    def _when(self, g: Generic) -> z3.BoolRef:
        guard = self.guard(g)
        return self.state.live if guard is None else z3.And(self.state.live, guard)

    def _update(self, **parts: dict) -> None:
        self.state = replace(self.state, **{k: {**getattr(self.state, k), **v}
                                            for k, v in parts.items()})


