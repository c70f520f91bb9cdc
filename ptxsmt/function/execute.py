"""Symbolic execution of one function body: every path to a `ret`/`exit` (or the end),
merged into one final state whose memory and return values are terms over the inputs.

Inputs: the parameters (`ld.param`), special registers (`%tid.x` as `tid.x`), a
register read before any write (by its name), the initial memory of each state space,
and, in `eval`, the destination of each opaque instruction (by its register).

Control flow: `@p bra L` splits the path, a label joins the paths that reach it
(`state.merge`), `ret`/`exit` end one. A branch to a label above it is a loop and is
refused; ptxsmt unrolls nothing.
"""

from __future__ import annotations

import z3

from ..isa.body import Body, Checked, Generic, Label, Rejected
from ..isa.errors import PtxError, quote
from ..isa.module import Function
from ..program import Program, execute
from ..sem.options import DEFAULT, Options
from .execution import Access, Decision, Execution, FunctionEncoding
from .instructions import CONTROL, HANDLERS, opaque
from .state import State, merge

__all__ = ["Access", "FunctionEncoding", "encode_function"]


def encode_function(fn: Function, opts: Options = DEFAULT, unmodelled: str = "function",
                    rename: dict[str, str] | None = None) -> FunctionEncoding:
    """The function's effect as terms: raise `PtxError` naming the first thing ptxsmt
    cannot follow (a loop, a call, an instruction ptxas refuses)."""
    if fn.body is None:
        raise PtxError(f"{fn.name} is a declaration without a body", fn.line, fn.col)
    ex = Execution(fn, opts, unmodelled, rename or {})
    _check_control(fn.body)
    seen: set[str] = set()
    waiting: dict[str, list[State]] = {}  # label -> the paths that branch to it
    exits: list[State] = []
    for item in fn.body.items:
        if isinstance(item, Label):
            seen.add(item.name)
            paths = ([ex.state] if ex.state is not None else []) + waiting.pop(item.name, [])
            ex.state = merge(paths) if paths else None
        elif isinstance(item, Rejected):
            raise PtxError(f"ptxas refuses {quote(item.text)}: {item.error}")
        elif ex.state is None or not isinstance(item, (Checked, Generic)):
            continue  # a directive, or code no path reaches
        elif isinstance(item, Checked):
            _checked(ex, item)
        elif item.opcode in CONTROL:
            _control(ex, item, seen, waiting, exits)
        else:
            HANDLERS.get(item.opcode, opaque)(ex, item)
    if ex.state is not None:
        exits.append(ex.state)
    end = merge(exits) if exits else State(z3.BoolVal(False), {}, {}, {})
    ex.enc.final = {space: end.memory.get(space, m) for space, m in ex.enc.memory.items()}
    ex.enc.returns = end.returns
    ex.enc.reached = end.live
    return ex.enc


def _checked(ex: Execution, item: Checked) -> None:
    """An instruction of ptxsmt's families, by its one semantics (`program.execute`); its
    registers keep their declared types (Program refuses a width it does not model)."""
    ins = item.instruction
    Program([ins], {k: r.type for k, r in item.registers.items()})
    written = execute(ins, ex.register, ex.opts)
    ex._update(registers=written)
    if ins.variant.opcode == "setp":
        predicates = {r: written[r] for o in ins.destinations.values() for r in o.registers}
        ex.enc.decisions.append(Decision(ins.line, ins.text, ex.state.live, predicates))


def _control(ex: Execution, g: Generic, seen: set[str], waiting: dict[str, list[State]],
             exits: list[State]) -> None:
    guard = ex.guard(g)
    taken = ex.state if guard is None else ex.state.when(guard)
    if g.opcode == "bra":
        target = g.operands[-1].strip()
        if target in seen:
            raise PtxError(f"loop: {quote(' '.join(g.text.split()))} branches back to "
                           f"{target}; ptxsmt follows forward branches only",
                           g.line, g.col)
        waiting.setdefault(target, []).append(taken)
    else:
        exits.append(taken)
    ex.state = None if guard is None else ex.state.when(z3.Not(guard))


def _check_control(body: Body) -> None:
    labels = {i.name for i in body.items if isinstance(i, Label)}
    for g in body.generic:
        if g.opcode == "call":
            raise PtxError(f"call on line {g.line}: ptxsmt does not follow calls (inline the "
                           "callee, e.g. __forceinline__, or compare the callee itself)",
                           g.line, g.col)
        if g.opcode == "bra" and g.operands[-1].strip() not in labels:
            raise PtxError(f"{quote(g.text)} branches to {g.operands[-1].strip()}, which is "
                           "not a label of this function", g.line, g.col)
