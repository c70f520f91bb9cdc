"""The instructions of a function body outside ptxsmt's families: what each one does to
the path's registers, memory and return values.

    ld.param.T  d, [p+off]   the parameter p (an offset into it is an input of its own, p+8)
    ld.SPACE.T  d, [a+off]   memory (`memory.py`); .nc/.ca/.volatile... change nothing here
    st.SPACE.T  [a+off], v   memory; st.param to a return parameter is a return value
    cvta[.to].SPACE.T d, a   the identity on the address (generic addresses are global ones)
    mov.T d, %tid.x          special registers (%tid.x, %ctaid.x, %laneid...) are inputs
    bar, membar, fence       no effect on one thread's registers and memory

Every other instruction is opaque: in `equiv` its destination is an uninterpreted
function of its opcode with modifiers and its source values (the same instruction on
the same values gives the same result on both sides, which is sound for equivalence);
in `eval` it is an input named by its destination register (`%r5=7`). An opaque
instruction that touches memory (`atom`, `tex`, `call`...) is refused: no function of
its register operands can stand for it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..isa.errors import PtxError, quote
from ..isa.types import PRED, TYPES, Kind, PtxType
from .execution import Execution, resize
from .memory import SPACES

if TYPE_CHECKING:
    from ..isa.body import Generic

_ADDRESS = re.compile(r"\[\s*([^\]+\s]+)\s*(?:\+\s*([-+]?\s*\w+))?\s*\]")
NO_EFFECT = ("bar", "barrier", "membar", "fence")
CONTROL = ("bra", "ret", "exit")  # the paths themselves: execute.py


def instruction_type(g: Generic) -> PtxType:
    """The type an instruction's modifiers name last (`ld.global.nc.u32` -> .u32)."""
    types = [TYPES[m] for m in g.modifiers if m in TYPES]
    if not types:
        raise PtxError(f"{quote(g.text)} names no type", g.line, g.col)
    return types[-1]


def address(g: Generic, operand: str) -> tuple[str, int]:
    """`[%rd1+8]` -> ("%rd1", 8)."""
    m = _ADDRESS.fullmatch(operand.strip())
    if not m:
        raise PtxError(f"cannot read the address {quote(operand)} of {quote(g.text)}",
                       g.line, g.col)
    try:
        return m.group(1), int((m.group(2) or "0").replace(" ", ""), 0)
    except ValueError:
        raise PtxError(f"cannot read the offset in {quote(operand)}", g.line, g.col) from None


def elements(operand: str) -> list[str]:
    """`{%r1, %r2}` -> its registers; a plain operand -> itself."""
    text = operand.strip()
    if text.startswith("{") and text.endswith("}"):
        return [e.strip() for e in text[1:-1].split(",")]
    return [text]


def _space(g: Generic) -> str:
    if "param" in g.modifiers:
        return "param"
    found = [m for m in g.modifiers if m in SPACES]
    return SPACES[found[0] if found else ""]


def _vector(g: Generic) -> int:
    return next((int(m[1:]) for m in g.modifiers if m in ("v2", "v4", "v8")), 1)


def ld(ex: Execution, g: Generic) -> None:
    t, space = instruction_type(g), _space(g)
    base, offset = address(g, g.operands[1])
    for k, dest in enumerate(elements(g.operands[0])):
        at = offset + k * t.width // 8
        if space == "param":
            value = ex.parameter(base, at, t, g)
        else:
            value = ex.load(space, ex.value(base, TYPES["u64"], g), at, t, g)
        ex.write(dest, resize(value, ex.width(dest, g), t.kind is Kind.SIGNED), g)


def st(ex: Execution, g: Generic) -> None:
    t, space = instruction_type(g), _space(g)
    base, offset = address(g, g.operands[0])
    for k, src in enumerate(elements(g.operands[1])):
        at = offset + k * t.width // 8
        value = resize(ex.value(src, t, g), t.width, False)
        if space == "param":
            ex.set_return(base, at, t, value, g)
        else:
            ex.store(space, ex.value(base, TYPES["u64"], g), at, t, value, g)


def cvta(ex: Execution, g: Generic) -> None:
    d, a = g.operands
    ex.write(d, resize(ex.value(a, instruction_type(g), g), ex.width(d, g), False), g)


def mov(ex: Execution, g: Generic) -> None:
    """The forms ptxsmt's glue does not take: a special register (`mov.u32 %r1, %tid.x`)
    or a variable's address (`mov.u64 %rd1, buf`) as source; a vector form is opaque."""
    if len(g.operands) != 2 or "{" in "".join(g.operands):
        return opaque(ex, g)
    d, a = g.operands
    t = instruction_type(g)
    ex.write(d, resize(ex.value(a, t, g), ex.width(d, g), t.kind is Kind.SIGNED), g)


def no_effect(ex: Execution, g: Generic) -> None:
    """A barrier or fence: one thread's registers and memory are as they were."""


def opaque(ex: Execution, g: Generic) -> None:
    if any("[" in o for o in g.operands) or not g.operands:
        raise PtxError(f"{quote(g.text)} is not modelled: ptxsmt reads and writes memory only "
                       "through ld and st, and models no calls", g.line, g.col)
    t = next((TYPES[m] for m in g.modifiers if m in TYPES), TYPES["b32"])
    dests = [d for part in g.operands[0].split("|") for d in elements(part)]
    args = [ex.value(o.lstrip("!"), PRED if o.startswith("!") else t, g, negated=o.startswith("!"))
            for o in g.operands[1:]]
    for k, dest in enumerate(dests):
        if dest != "_":
            ex.write(dest, ex.opaque_value(g, k, dest, args), g)


HANDLERS = {"ld": ld, "ldu": ld, "st": st, "cvta": cvta, "mov": mov,
            **dict.fromkeys(NO_EFFECT, no_effect)}
