"""`.reg` declarations, the scopes they live in, and which declared register an
instruction's operand of a given type may name.

The fitting rule was measured on ptxas 13.0 (every register type against every operand
type of setp/selp/slct/set, `tests/test_module.py` asks ptxas again): the widths must be
equal; a bit-typed operand takes any register of its width; an integer operand takes
bit, integer and (quirk) `.f16x2` registers; a float operand takes bit registers and
its own type; `.pred` takes only `.pred`. `.bf16`/`.bf16x2` cannot be declared (ptxas:
syntax error), so their operands live in `.b16`/`.b32` registers; a `.s16x2`/`.u16x2`
operand (9.7.1: "have type .b32") takes `.b32` and (quirk) `.f16x2` registers only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .errors import PtxError, quote
from .types import TYPES, Kind, PtxType

# The register kinds an operand of each kind accepts, besides its own type, at equal width.
_FITS = {
    Kind.BIT: (Kind.BIT, Kind.UNSIGNED, Kind.SIGNED, Kind.FLOAT),
    Kind.UNSIGNED: (Kind.BIT, Kind.UNSIGNED, Kind.SIGNED),
    Kind.SIGNED: (Kind.BIT, Kind.UNSIGNED, Kind.SIGNED),
    Kind.FLOAT: (Kind.BIT,),
    Kind.PRED: (Kind.PRED,),
}
PACKED_AS_INTEGER = "f16x2"  # ptxas takes an .f16x2 register for a 32-bit integer operand


# "ld, st, and cvt instructions permit source and destination data operands to be wider
# than the instruction-type size" (PTX ISA 6.4.4.1, Operand Size Exceeding Instruction-Type
# Size); ptxas 13.0 takes them for cvt's operands (a float one: a wider bit register), but
# not for a cvt with a .bf16 type, either operand ("Arguments mismatch"; measured as above,
# every cvt against every register).
WIDER_ALLOWED = frozenset({"cvt"})
WIDER_REFUSED_TYPE = "bf16"

# Slots where ptxas 13.0 takes other registers than the rule says (measured the same way):
# (opcode, slot, operand type) -> the register types it takes there.
SLOT_FITS: dict[tuple[str, str, str], frozenset[str]] = {
    ("set", "d", "bf16"): frozenset({"b16", "u16", "s16"}),
    ("set", "d", "bf16x2"): frozenset({"b32", "u32", "s32", "f16x2", "f32", "pred"}),
    **{(op, slot, "b32"): frozenset({"b32", "u32", "s32", "f16x2"} if slot in "ab"
                                    else {"b32", "u32", "s32"})
       for op in ("vset2", "vset4") for slot in "abcd"},
    # the logic and mov glue on .pred take an .f16x2 register too; a shift amount does not
    **{(op, slot, "pred"): frozenset({"pred", "f16x2"})
       for op in ("mov", "not", "and", "or", "xor") for slot in "dab"},
    **{(op, "b", "u32"): frozenset({"b32", "u32", "s32"}) for op in ("shl", "shr")},
}
# ... and only without a BoolOp: a .pred register as b of every set/setp on .bf16x2
# (with a BoolOp ptxas refuses it, as the rule says).
SLOT_FITS_WITHOUT_BOOLOP: dict[tuple[str, str, str], frozenset[str]] = {
    (op, "b", "bf16x2"): frozenset({"b32", "pred"}) for op in ("set", "setp")
}


def fits(register: PtxType, operand: PtxType, opcode: str = "", slot: str = "",
         boolop: bool = True, variant: object = "") -> bool:
    """Whether ptxas lets a register declared `register` stand for an `operand`-typed one
    in `slot` of `opcode` (`boolop`: the instruction has one; `variant`: the variant or
    its spelling, spelled only where it matters)."""
    if not boolop and (opcode, slot, operand.name) in SLOT_FITS_WITHOUT_BOOLOP:
        return register.name in SLOT_FITS_WITHOUT_BOOLOP[opcode, slot, operand.name]
    if (opcode, slot, operand.name) in SLOT_FITS:
        return register.name in SLOT_FITS[opcode, slot, operand.name]
    if opcode in WIDER_ALLOWED and register.width > operand.width > 1 and \
            WIDER_REFUSED_TYPE not in str(variant).split("."):
        if operand.kind is Kind.FLOAT:  # a float operand: a wider bit register
            return register.kind is Kind.BIT
        # a `.b128` register is its own (and the only) 128-bit type
        return fits(register, TYPES.get(f"{operand.name[0]}{register.width}", register))
    if register.width != operand.width:
        return False
    if operand.is_packed and not operand.is_float:  # not .u32/.s32/.f32 ("Arguments mismatch")
        return register.kind is Kind.BIT or register.name == PACKED_AS_INTEGER
    if register is operand or register.kind in _FITS[operand.kind]:
        return True
    return operand.kind in (Kind.UNSIGNED, Kind.SIGNED) and register.name == PACKED_AS_INTEGER


class Register(NamedTuple):
    """One declared register: `.reg .b32 %r<5>` declares %r0 ... %r4."""

    name: str  # as written, with its `%` if any
    type: PtxType
    line: int
    col: int
    vector: int = 1  # `.v2`/`.v4`: elements named name.x, name.y, ...

    @property
    def elements(self) -> list[Register]:
        """A vector's elements, each a scalar register of its type: `%v.x`, `%v.y`, ..."""
        return [Register(f"{self.name}.{c}", self.type, self.line, self.col)
                for c in "xyzw"[:self.vector if self.vector > 1 else 0]]

    @property
    def key(self) -> str:
        """Registers are looked up without `%`, as the grammar names them."""
        return self.name.lstrip("%")

    @property
    def place(self) -> str:
        return f"line {self.line}, col {self.col}"


# ptxas 13.0 refuses `.reg .bf16` and `.reg .bf16x2` ("Parsing error near '.bf16'") and
# `.reg .s16x2`/`.u16x2` ("may only be used as an instruction type"): the declared_as types.
# `.b128` (PTX 8.3; LLVM keeps i128 in `.reg .b128 %rq<N>`) is a register type only: no
# instruction of ptxsmt's families has a 128-bit operand, so such a register fits none.
REGISTER_ONLY = {"b128": PtxType("b128", Kind.BIT, 128)}
DECLARABLE = tuple(name for name, t in TYPES.items() if not t.declared_as)
_DECLARED = {**{t: TYPES[t] for t in DECLARABLE}, **REGISTER_ONLY}
_NAME = r"%?[A-Za-z_$][A-Za-z0-9_$]*"
_DECL = re.compile(r"\.reg((?:\s+\.[A-Za-z0-9_]+)+)\s+(.*)", re.S)
_ITEM = re.compile(rf"({_NAME})\s*(?:<\s*([^>]*?)\s*>)?")
_RANGE_LIMIT = 1 << 20  # more registers than any kernel declares: refuse, do not allocate


def parse_reg(text: str, line: int, col: int) -> list[Register]:
    """`.reg .b32 %r<5>, x;` (without `;`) -> the registers it declares, in order.
    `%r<0>` declares none (ptxas accepts it)."""
    m = _DECL.fullmatch(text.strip())
    if not m:
        raise PtxError(f"expected a declaration like .reg .b32 %r<4>, found {quote(text)}",
                       line, col)
    *qualifiers, = m.group(1).split()
    vector = 1
    if qualifiers and qualifiers[0] in (".v2", ".v4"):
        vector = int(qualifiers.pop(0)[2])
    if len(qualifiers) != 1 or qualifiers[0][1:] not in _DECLARED:
        raise PtxError(f".reg needs one register type ({', '.join(_DECLARED)}), found "
                       f"{quote(' '.join(qualifiers))}", line, col)
    t = _DECLARED[qualifiers[0][1:]]
    out: list[Register] = []
    names_at = col + text.index(m.group(2))
    for raw in m.group(2).split(","):
        where = (line, names_at + len(raw) - len(raw.lstrip()))
        names_at += len(raw) + 1
        item = _ITEM.fullmatch(raw.strip())
        if not item:
            raise PtxError(f"expected a register name or name<N>, found {quote(raw.strip())}",
                           *where)
        name, count = item.groups()
        if count is None:
            out.append(Register(name, t, *where, vector))
            continue
        if not count.isdigit() or int(count) > _RANGE_LIMIT:
            raise PtxError(f"bad register range {quote(f'{name}<{count}>')}: N must be a "
                           f"count from 0 to {_RANGE_LIMIT}", *where)
        out += [Register(f"{name}{k}", t, *where, vector) for k in range(int(count))]
    return out


@dataclass
class Scope:
    """Nested `{ }` scopes: an inner declaration hides an outer one of the same name
    until its scope closes; one scope may not declare a name twice."""

    frames: list[dict[str, Register]] = field(default_factory=lambda: [{}])

    def open(self) -> None:
        self.frames.append({})

    def close(self) -> None:
        self.frames.pop()

    @property
    def depth(self) -> int:
        return len(self.frames) - 1

    def declare(self, reg: Register) -> None:
        if first := self.frames[-1].get(reg.key):
            raise PtxError(f"register {reg.name} is declared twice (first on {first.place})",
                           reg.line, reg.col)
        self.frames[-1][reg.key] = reg

    def lookup(self, key: str) -> Register | None:
        return next((f[key] for f in reversed(self.frames) if key in f), None)
