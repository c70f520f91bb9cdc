"""Symbolic execution of one function body: every path to a `ret`/`exit` (or the end),
merged into one final state whose memory and return values are terms over the inputs.

Inputs: the parameters (`ld.param`), special registers (`%tid.x` as `tid.x`), a
register read before any write (by its name), the initial memory of each state space,
and, in `eval`, the destination of each opaque instruction (by its register).

Control flow: `@p bra L` splits the path, a label joins the paths that reach it
(`state.merge`), `ret`/`exit` end one. `brx.idx i, T` (a switch's jump table, `T:
.branchtargets L0, L1, ...`) is the branch to L<i>; an index past the table is undefined
in the ISA, and `trap` ends the kernel: both are recorded (`Undefined`) where a path
meets them, so no verdict rests on them. A branch to a label above it is a loop:
refused, or unrolled K times (`unroll.py`). A call of a function of the same module is inlined
(recursion and indirect calls are refused).
"""

from __future__ import annotations

from dataclasses import replace

import z3

from ..isa.body import (
    Checked,
    Directive,
    Generic,
    Item,
    Label,
    Rejected,
    as_generic,
    read_call,
    relaxed_cvt,
)
from ..isa.errors import PtxError, quote
from ..isa.module import Function
from ..isa.types import TYPES, PtxType
from ..isa.variants import operand_types
from ..program import Program, execute
from ..sem.options import DEFAULT, Options
from .effects import Access, Assumption, Decision, Execution, FunctionEncoding, Undefined
from .instructions import CONTROL, HANDLERS, cvt, opaque
from .state import State, merge
from .unroll import LIMIT, unroll

__all__ = ["Access", "FunctionEncoding", "encode_function"]


def encode_function(fn: Function, opts: Options = DEFAULT, unmodelled: str = "function",
                    rename: dict[str, str] | None = None, unroll: int = 0,
                    widths: dict[str, int] | None = None) -> FunctionEncoding:
    """The function's effect as terms, each loop unrolled `unroll` times (`unroll.py`):
    raise `PtxError` naming the first thing ptxsmt cannot follow (a loop without
    `unroll`, recursion, an instruction ptxas refuses). `widths`: parameters read as
    inputs of more bits than declared (`Execution.parameter`)."""
    ex = Execution(fn, opts, unmodelled, rename or {}, unroll=unroll, widths=widths)
    end = _run(ex)
    ex.enc.final = {space: end.memory.get(space, m) for space, m in ex.enc.memory.items()}
    ex.enc.returns = {k: v for k, v in end.returns.items()
                      if k in {ex.rename.get(p.name, p.name) for p in fn.returns}}
    ex.enc.reached = end.live
    _type_halves(ex.enc)
    _read_only(ex.enc)
    return ex.enc


def _read_only(enc: FunctionEncoding) -> None:
    """`ld.global.nc` reads memory that is read-only for the kernel's lifetime (PTX ISA,
    ld.global.nc): assumed, no store of the function writes a byte such a load reads."""
    for a in enc.read_only:
        for s in (s for s in enc.stores if s.space == a.space):
            la, sa = (z3.ZeroExt(1, x.address) for x in (a, s))  # no wrap at the top
            overlap = z3.And(z3.ULT(la, sa + s.type.width // 8),
                             z3.ULT(sa, la + a.type.width // 8))
            enc.assumed.append(Assumption(z3.Not(z3.And(a.when, s.when, overlap)), a.line,
                                          " ".join(a.text.split()),
                                          f"no store (line {s.line}) writes what an "
                                          ".nc load reads"))


def _type_halves(enc: FunctionEncoding) -> None:
    """Inputs, loaded and stored locations and return values that hold half values
    (a register some instruction uses as .f16, .bf16, .f16x2 ...) take that type, so
    that they read and print as floats (`0x3c00 (1.0)`; `-0.0` as an input)."""
    def half(register: str, width: int) -> PtxType | None:
        t = enc.halves.get(register.split("@")[0])
        return t if t is not None and t.width == width else None

    for name in enc.inputs:
        if (t := half(name, enc.types[name].width)) is not None:
            enc.types[name] = t
    for accesses in (enc.loads, enc.stores):
        accesses[:] = [replace(a, type=t) if (t := half(a.register, a.type.width)) else a
                       for a in accesses]
    for key, register in enc.return_registers.items():
        if (t := half(register, enc.types[key].width)) is not None:
            enc.types[key] = t


def _run(ex: Execution) -> State:
    """The paths through `ex`'s function body, merged where they end."""
    fn = ex.fn
    if fn.body is None:
        raise PtxError(f"{fn.name} is a declaration without a body", fn.line, fn.col)
    items = unroll(fn.body.items, ex.unroll)
    tables = _check_control(items)
    seen: set[str] = set()
    waiting: dict[str, list[State]] = {}  # label -> the paths that branch to it
    exits: list[State] = []
    for item in items:
        if isinstance(item, Label):
            seen.add(item.name)
            paths = ([ex.state] if ex.state is not None else []) + waiting.pop(item.name, [])
            ex.state = merge(paths) if paths else None
        elif isinstance(item, Rejected):
            raise PtxError(f"ptxas refuses {quote(item.text)}: {item.error}")
        elif isinstance(item, Directive):
            ex.declare(item)
        elif ex.state is None or not isinstance(item, (Checked, Generic)):
            continue  # a directive, or code no path reaches
        elif isinstance(item, Checked):
            _checked(ex, item)
        elif item.opcode == "call":
            _call(ex, item)
        elif item.opcode in CONTROL:
            _control(ex, item, seen, waiting, exits, tables)
        else:
            HANDLERS.get(item.opcode, opaque)(ex, item)
    if ex.state is not None:
        exits.append(ex.state)
    return merge(exits, registers=False) if exits else State(z3.BoolVal(False), {}, {}, {})


def _call(ex: Execution, g: Generic) -> None:
    """`call (r), f, (a, b)` of a function of the same module: f's body inlined, its
    parameters the bytes the caller stored to a and b, its return value stored to r."""
    text = g.spelled
    results, name, arguments, prototype = read_call(g)
    callee = ex.fn.module.get(name)
    if prototype is not None or name.lstrip("%") in ex.declared:
        raise PtxError(f"{quote(text)}: an indirect call; ptxsmt follows calls of functions "
                       "of the same module by name only", g.line, g.col)
    if callee is None:
        raise PtxError(f"{quote(text)}: {name} has no body in this module (ptxsmt follows "
                       "calls into functions it can read)", g.line, g.col)
    if name in ex.stack:
        raise PtxError(f"{quote(text)}: recursion ({' -> '.join((*ex.stack, name))}); "
                       "ptxsmt unrolls no calls", g.line, g.col)
    if g.guard is not None:
        raise PtxError(f"{quote(text)}: a guarded call; ptxsmt follows unguarded calls "
                       "only", g.line, g.col)
    if len(arguments) != len(callee.params) or len(results) != len(callee.returns):
        raise PtxError(f"{quote(text)} passes {len(arguments)} arguments and {len(results)} "
                       f"results to {name}, which takes {len(callee.params)} and "
                       f"{len(callee.returns)}", g.line, g.col)
    bound = {p.name: ex.argument(a, p, g) for a, p in zip(arguments, callee.params)}
    inner = Execution(callee, ex.opts, ex.mode, {}, caller=ex, bound=bound, site=g.line,
                      unroll=ex.unroll)
    if any(i.opcode == "exit" for i in callee.body.generic if isinstance(i, Generic)):
        raise PtxError(f"{quote(text)}: {name} holds an exit; ptxsmt inlines callees that "
                       "return", g.line, g.col)
    end = _run(inner)
    returned = {r: ex.result(r, p, end.returns.get(p.name), g)
                for r, p in zip(results, callee.returns)}
    ex.state = State(end.live, ex.state.registers, end.memory,
                     {**ex.state.returns, **returned})


def _checked(ex: Execution, item: Checked) -> None:
    """An instruction of ptxsmt's families, by its one semantics (`program.execute`); its
    registers keep their declared types (Program refuses a width it does not model)."""
    if relaxed_cvt(item):  # a register wider than its type: the ISA's relaxed rules
        return cvt(ex, as_generic(item))
    ins = item.instruction
    Program([ins], {k: r.type for k, r in item.registers.items()})
    types = operand_types(ins.variant)
    for slot, o in ins.operands.items():
        if types[slot].is_half:
            ex.enc.halves.update(dict.fromkeys((ex.prefix + r for r in o.registers),
                                               types[slot]))
    written = execute(ins, ex.register, ex.opts, ex.products)
    ex._update(registers=written)
    if ins.variant.opcode == "setp":
        predicates = {r: written[r] for o in ins.destinations.values() for r in o.registers}
        ex.enc.decisions.append(Decision(ins.line, ins.text, ex.state.live, predicates))


def _control(ex: Execution, g: Generic, seen: set[str], waiting: dict[str, list[State]],
             exits: list[State], tables: dict[str, tuple[str, ...]]) -> None:
    guard = ex.guard(g)
    taken = ex.state if guard is None else ex.state.when(guard)
    text = g.spelled
    if g.opcode == "bra" and g.operands[-1].strip() == LIMIT:
        ex.enc.bounded.append(Undefined(taken.live, g.line, text, f"its loop runs more than "
                                        f"{ex.unroll} times (--unroll {ex.unroll})"))
    elif g.opcode == "bra":
        _jump(g, g.operands[-1].strip(), taken, seen, waiting)
    elif g.opcode == "brx":
        index, targets = _index(ex, g), tables[g.operands[1].strip()]
        for k, target in enumerate(targets):
            _jump(g, target, taken.when(index == k), seen, waiting)
        past = z3.And(taken.live, z3.UGE(index, len(targets)))
        ex.enc.undefined.append(Undefined(past, g.line, text, f"its index is past the "
                                          f"{len(targets)} targets (undefined in the ISA)"))
    elif g.opcode == "trap":
        ex.enc.undefined.append(Undefined(taken.live, g.line, text, "it stops the kernel"))
    else:
        exits.append(taken)
    ex.state = None if guard is None else ex.state.when(z3.Not(guard))


def _jump(g: Generic, target: str, path: State, seen: set[str],
          waiting: dict[str, list[State]]) -> None:
    if target in seen:
        raise PtxError(f"loop: {quote(g.spelled)} branches back to "
                       f"{target}; ptxsmt follows forward branches only", g.line, g.col)
    waiting.setdefault(target, []).append(path)


def _index(ex: Execution, g: Generic) -> z3.BitVecRef:
    if len(g.operands) != 2 or g.modifiers not in (("idx",), ("uni", "idx"), ("idx", "uni")):
        raise PtxError(f"{quote(g.spelled)}: ptxsmt follows `brx.idx index, "
                       "table` only", g.line, g.col)
    return ex.value(g.operands[0], TYPES["u32"], g)


def _check_control(items: list[Item]) -> dict[str, tuple[str, ...]]:
    """The jump tables (`T: .branchtargets L0, L1;` -> {"T": ("L0", "L1")}), after
    checking that every branch names a label of the function."""
    labels = {i.name for i in items if isinstance(i, Label)} | {LIMIT}
    tables: dict[str, tuple[str, ...]] = {}
    for before, item in zip(items, items[1:]):
        if isinstance(item, Directive) and item.name == ".branchtargets":
            if not isinstance(before, Label):
                raise PtxError(".branchtargets without a label", item.line, item.col)
            tables[before.name] = item.operands
    for g in (i for i in items if isinstance(i, Generic)):
        if g.opcode == "brx" and (len(g.operands) < 2 or g.operands[1].strip() not in tables):
            raise PtxError(f"{quote(g.spelled)}: its table is no "
                           ".branchtargets of this function", g.line, g.col)
        targets = [g.operands[-1].strip()] if g.opcode == "bra" else \
            list(tables[g.operands[1].strip()]) if g.opcode == "brx" else []
        for target in targets:
            if target not in labels:
                raise PtxError(f"{quote(g.spelled)} branches to {target}, "
                               "which is not a label of this function", g.line, g.col)
    return tables
