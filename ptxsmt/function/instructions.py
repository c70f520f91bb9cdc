"""The instructions of a function body outside ptxsmt's families: what each one does to
the path's registers, memory and return values.

    ld.param.T  d, [p+off]   the parameter p (an offset into it is an input of its own, p+8)
    ld.SPACE.T  d, [a+off]   memory (`memory.py`); .nc/.ca/.volatile... change nothing here
    st.SPACE.T  [a+off], v   memory; st.param to a return parameter is a return value
    cvta[.to].SPACE.T d, a   into or out of the generic space (`memory.py`: its windows)
    atom.op.T d, [a], b      read-modify-write of memory, as one thread sees it (red alike)
    mov.T d, %tid.x          special registers (%tid.x, %ctaid.x, %laneid...) are inputs
    bar, membar, fence       no effect on one thread's registers and memory

Every other instruction is opaque: in `equiv` its destination is an uninterpreted
function of its opcode with modifiers and its source values (the same instruction on
the same values gives the same result on both sides, which is sound for equivalence);
in `eval` it is an input named by its destination register (`%r5=7`). An opaque
instruction that touches memory (`tex`, `call`...) is refused: no function of
its register operands can stand for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from ..isa.body import read_address
from ..isa.body import vector_elements as elements
from ..isa.errors import PtxError, quote
from ..isa.types import TYPES, Kind, PtxType
from ..sem.convert import sm80_form
from ..sem.glue import integer_cvt
from . import memory
from .effects import Execution, resize
from .memory import SPACES

if TYPE_CHECKING:
    from ..isa.body import Generic

NO_EFFECT = ("bar", "barrier", "membar", "fence")
CONTROL = ("bra", "brx", "ret", "exit", "trap")  # the paths themselves: encode.py
# Never data: an instruction that may move control or leave the function is followed
# (CONTROL, calls inlined by encode.py) or refused, never uninterpreted.
MOVES_CONTROL = (*CONTROL, "call", "brkpt", "jmp", "jmpx")


def instruction_type(g: Generic) -> PtxType:
    """The type an instruction's modifiers name last (`ld.global.nc.u32` -> .u32)."""
    types = [TYPES[m] for m in g.modifiers if m in TYPES]
    if not types:
        raise PtxError(f"{quote(g.text)} names no type", g.line, g.col)
    return types[-1]


def address(g: Generic, operand: str) -> tuple[str, int]:
    """`[%rd1+8]` -> ("%rd1", 8)."""
    found = read_address(operand)
    if found is None:
        raise PtxError(f"cannot read the address {quote(operand)} of {quote(g.text)}",
                       g.line, g.col)
    return found


def _space(g: Generic) -> str:
    if "param" in g.modifiers:
        return "param"
    found = [m for m in g.modifiers if m in SPACES]
    return SPACES[found[0] if found else ""]


def ld(ex: Execution, g: Generic) -> None:
    t, space = instruction_type(g), _space(g)
    base, offset = address(g, g.operands[1])
    for k, dest in enumerate(elements(g.operands[0])):
        at = offset + k * t.width // 8
        if space == "param" and base.lstrip("%") in ex.declared:  # a parameter's address
            value = ex.parameter_at(ex.value(base, TYPES["u64"], g) + at, t, g)
        elif space == "param":
            value = ex.parameter(base, at, t, g)
        else:
            value = ex.load(space, ex.value(base, TYPES["u64"], g), at, t, g, dest)
        ex.write(dest, resize(value, ex.width(dest, g), t.kind is Kind.SIGNED), g)


def st(ex: Execution, g: Generic) -> None:
    t, space = instruction_type(g), _space(g)
    base, offset = address(g, g.operands[0])
    for k, src in enumerate(elements(g.operands[1])):
        at = offset + k * t.width // 8
        value = resize(ex.value(src, t, g), t.width, False)
        if space == "param":
            ex.set_return(base, at, t, value, g, src)
        else:
            ex.store(space, ex.value(base, TYPES["u64"], g), at, t, value, g, src)


def cvta(ex: Execution, g: Generic) -> None:
    """`cvta.SPACE d, a` (to a generic address) and `cvta.to.SPACE d, a` (from one), by
    the windows of `memory.py`; global addresses are generic ones."""
    d, a = g.operands
    t = instruction_type(g)
    value = memory.address(resize(ex.value(a, t, g), t.width, False))
    if "param" in g.modifiers:
        raise PtxError(f"{quote(g.spelled)} is not modelled: ptxsmt's generic space holds "
                       "global, shared, local and const memory only", g.line, g.col)
    space = next((m for m in g.modifiers if m in memory.WINDOWED), "global")
    to = "to" in g.modifiers
    if space == "global":
        if memory.windows_in(value):
            ex.assume(ex.outside_windows(value), g, "a global address is in no window")
    elif to:
        ex.assume(memory.in_window(value, ex.window(space)), g,
                  f"the address is in the {space} window")
        value = value - ex.window(space)
    else:
        ex.assume(z3.ULT(value, memory.WINDOW_BYTES), g, f"a {space} address is below 2^32")
        value = value + ex.window(space)
    ex.write(d, resize(value, ex.width(d, g), False), g)


def mov(ex: Execution, g: Generic) -> None:
    """The forms ptxsmt's glue does not take: a special register (`mov.u32 %r1, %tid.x`)
    or a variable's address (`mov.u64 %rd1, buf`) as source, and the vector forms that
    pack and unpack (`mov.b32 %r1, {%h1, %h2}` puts %h1 in the low half; an immediate
    element is taken at the element's width, as ptxas takes it)."""
    if len(g.operands) != 2:
        return opaque(ex, g)
    d, a = g.operands
    t = instruction_type(g)
    if a.strip().startswith("{"):  # pack
        parts = elements(a)
        w = t.width // len(parts)
        lanes = [resize(ex.value(e, TYPES[f"b{w}"], g), w, False) for e in parts]
        ex.write(d, z3.Concat(*reversed(lanes)) if len(lanes) > 1 else lanes[0], g)
    elif d.strip().startswith("{"):  # unpack
        parts = elements(d)
        w = t.width // len(parts)
        whole = resize(ex.value(a, t, g), t.width, False)
        for k, e in enumerate(parts):
            if e != "_":
                ex.write(e, resize(z3.Extract(w * k + w - 1, w * k, whole), ex.width(e, g),
                                   False), g)
    else:
        ex.write(d, resize(ex.value(a, t, g), ex.width(d, g), t.kind is Kind.SIGNED), g)


# atom/red (PTX ISA 9.7.13.5, 9.7.13.6) as one thread sees it: "atomically loads the
# original value at location a ..., performs a reduction operation with operand b and the
# value in location a, and stores the result ... back to location a"; atom writes the
# original value to d. op(old, b, c) -> the new value at a.
ATOMIC = {
    "add": lambda old, b, c, signed: old + b,
    "and": lambda old, b, c, signed: old & b,
    "or": lambda old, b, c, signed: old | b,
    "xor": lambda old, b, c, signed: old ^ b,
    "exch": lambda old, b, c, signed: b,
    "cas": lambda old, b, c, signed: z3.If(old == b, c, old),
    "inc": lambda old, b, c, signed: z3.If(z3.UGE(old, b), z3.BitVecVal(0, old.size()),
                                           old + 1),  # .u32 only
    "dec": lambda old, b, c, signed: z3.If(z3.Or(old == 0, z3.UGT(old, b)), b, old - 1),
    "min": lambda old, b, c, signed: z3.If((old < b) if signed else z3.ULT(old, b), old, b),
    "max": lambda old, b, c, signed: z3.If((old > b) if signed else z3.UGT(old, b), old, b),
}


def atom(ex: Execution, g: Generic) -> None:
    """`atom.op.T d, [a], b{, c}` and `red.op.T [a], b`: a read-modify-write of memory, as
    the one thread ptxsmt follows sees it (what other threads do in between is not
    modelled: an atomic and a plain load, operation and store are the same here). Integer
    and bit types only; a float or vector one is refused."""
    t = instruction_type(g)
    ops = [m for m in g.modifiers if m in ATOMIC]
    if len(ops) != 1 or t.is_float or t.is_half or any(m.startswith("v") and m[1:].isdigit()
                                                       for m in g.modifiers):
        raise PtxError(f"{quote(g.spelled)} is not modelled: ptxsmt follows atom and red of "
                       "integer and bit types only", g.line, g.col)
    operands = g.operands if g.opcode == "atom" else ("_", *g.operands)
    if len(operands) != (4 if ops[0] == "cas" else 3):
        raise PtxError(f"{quote(g.spelled)}: expected {'d, ' if g.opcode == 'atom' else ''}"
                       "[a], b" + (", c" if ops[0] == "cas" else ""), g.line, g.col)
    space = _space(g)
    if space == "param":
        raise PtxError(f"{quote(g.spelled)}: no atomic on .param", g.line, g.col)
    base, offset = address(g, operands[1])
    where = ex.value(base, TYPES["u64"], g)
    b, c = (resize(ex.value(o, t, g), t.width, False) if o else None
            for o in (operands[2], operands[3] if len(operands) == 4 else None))
    old = ex.load(space, where, offset, t, g)
    new = ATOMIC[ops[0]](old, b, c, t.kind is Kind.SIGNED)
    ex.store(space, where, offset, t, new, g)
    if operands[0] != "_":
        ex.write(operands[0], resize(old, ex.width(operands[0], g), False), g)


def no_effect(ex: Execution, g: Generic) -> None:
    """A barrier or fence: one thread's registers and memory are as they were."""


def opaque(ex: Execution, g: Generic) -> None:
    """An instruction ptxsmt does not model: its destinations are a function of its
    source registers' values, keyed by its text with the registers left out (immediates,
    special registers and variables stay in the key: they are the same on both sides)."""
    if g.opcode == "brkpt":
        raise PtxError(f"{quote(g.text)} stops the kernel for a debugger: ptxsmt models no "
                       "path that ends this way", g.line, g.col)
    if g.opcode in MOVES_CONTROL:
        raise PtxError(f"{quote(g.spelled)} moves control in a way ptxsmt "
                       "does not model", g.line, g.col)
    if any("[" in o for o in g.operands) or not g.operands:
        raise PtxError(f"{quote(g.text)} is not modelled: ptxsmt reads and writes memory only "
                       "through ld and st, and models no calls", g.line, g.col)
    dests = g.destinations()
    args: list[z3.ExprRef] = []
    shape = []  # each operand with its registers as `_`
    for operand in g.operands[1:]:
        parts = []
        for e in elements(operand):
            negated = e.startswith("!")
            key = e.lstrip("!").lstrip("%")
            if key in ex.declared:
                args.append(ex.register(key))
                parts.append("!_" if negated else "_")
            else:
                parts.append(e)
        shape.append("{" + ", ".join(parts) + "}" if operand.strip().startswith("{")
                     else parts[0])
    head = ".".join((g.opcode, *g.modifiers))
    for t in (TYPES[m] for m in g.modifiers if m in TYPES and TYPES[m].is_half):
        ex.enc.halves.update({ex.prefix + key: t for o in g.operands for e in elements(o)
                              if (key := e.lstrip("!%")) in ex.declared
                              and ex.declared[key].width == t.width})
    for k, dest in enumerate(dests):
        if dest == "_":
            continue
        ex.width(dest, g)
        key = f"{head} {', '.join(['_', *shape])}" + (f" #{k}" if len(dests) > 1 else "")
        ex.write(dest, ex.opaque_value(g, key, dest, args), g)


def cvt(ex: Execution, g: Generic) -> None:
    """The cvt forms outside the variant catalogue that ptxsmt models: between integers
    (`integer_cvt`) and sem/convert.py's `sm80_form` (.f16x2/.bf16x2 from two .f32,
    .relu, .tf32); any other is opaque."""
    types = [TYPES[m] for m in g.modifiers if m in TYPES]
    if len(types) == 2 and all(t.kind in (Kind.SIGNED, Kind.UNSIGNED) for t in types):
        return integer_cvt_form(ex, g)
    sources = [ex.value(o, TYPES["f32"], g) for o in g.operands[1:]]
    value = sm80_form(".".join((g.opcode, *g.modifiers)), sources) \
        if len(g.destinations()) == 1 else None
    if value is None:
        return opaque(ex, g)
    dest = g.operands[0]
    ex.write(dest, resize(value, ex.width(dest, g), False), g)


def integer_cvt_form(ex: Execution, g: Generic) -> None:
    """`cvt[.sat].dtype.atype d, a` between integers in the forms ptxsmt's catalogue does
    not hold: the 8-bit types (`cvt.s32.s8`), and registers wider than the types, which
    "ld, st, and cvt instructions permit" (PTX ISA 6.4.4.1): a wider source "is truncated
    ("chopped") to the instruction-type size"; a wider destination is "sign-extended to the
    destination register width for signed integer instruction types, and ... zero-extended
    ... otherwise" (as `ld` writes it). The conversion is sem.glue's. Other cvt forms
    that arrive here are opaque."""
    types = [TYPES[m] for m in g.modifiers if m in TYPES]
    rest = [m for m in g.modifiers if m not in TYPES]
    if len(g.operands) != 2 or len(types) != 2 or rest not in ([], ["sat"]) or \
            any(t.kind not in (Kind.SIGNED, Kind.UNSIGNED) for t in types):
        return opaque(ex, g)
    (d, a), (dtype, atype) = g.operands, types
    for operand, t in ((d, dtype), (a, atype)):
        key = operand.strip().lstrip("%")
        if key in ex.declared and ex.width(operand, g) < t.width:
            raise PtxError(f"{quote(operand)} in {quote(g.text)} is narrower than .{t.name}",
                           g.line, g.col)
    value = integer_cvt(ex.value(a, atype, g), atype, dtype, rest == ["sat"])
    ex.write(d, resize(value, ex.width(d, g), dtype.kind is Kind.SIGNED), g)


HANDLERS = {"ld": ld, "ldu": ld, "st": st, "cvta": cvta, "mov": mov, "atom": atom, "red": atom,
            "cvt": cvt, **dict.fromkeys(NO_EFFECT, no_effect)}
