"""The variant catalogue: every legal instruction form, derived from tables.

Each `Form` transcribes one syntax block of the ISA text (modifier domains,
PTX ISA version, `sm_` target). The legal variants are the union of the
products of those domains; where a variant arises from several blocks the
weakest requirement wins. Where ptxas 13.0 disagrees with the text, the
difference is a row in `PTXAS_FORMS` with the reason, so the catalogue
matches the assembler and the disagreement stays visible. Operand-level rules
(which operands may be immediates, setp's destinations) live with the grammar.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from itertools import product

from .modifiers import FLOAT_CMPS, ORDERED_CMPS, UNSIGNED_CMPS, BoolOp, CmpOp
from .types import Kind, PtxType, ptx_type

GLUE_OPCODES = ("mov", "not", "and", "or", "xor", "cvt")  # what rewrites put around them
# The families a user thinks in; half-precision set/setp are the same opcodes.
FAMILIES = ("set", "setp", "selp", "slct", "half-set", "half-setp", "vset2", "vset4")


@dataclass(frozen=True)
class Variant:
    """One instruction form: opcode, instruction modifiers and types.

    Operand modifiers (`!c`, vset masks and selectors) and operands are not
    part of the variant; see `ptxsmt.isa.syntax.Instruction`.
    `types` are in the order written: set (dtype, stype), setp/selp (type,),
    slct (dtype, ctype), vset (atype, btype).
    """

    opcode: str
    types: tuple[PtxType, ...]
    cmp: CmpOp | None = None
    boolop: BoolOp | None = None
    ftz: bool = False
    add: bool = False

    @property
    def family(self) -> str:
        if self.opcode in GLUE_OPCODES:
            return "glue"
        if self.opcode in ("set", "setp") and any(t.is_half for t in self.types):
            return "half-" + self.opcode
        return self.opcode

    @property
    def dtype(self) -> PtxType:
        """The type of the destination register `d` (not defined for setp)."""
        if self.opcode in ("vset2", "vset4"):
            return ptx_type("b32")
        return self.types[0]

    @property
    def stype(self) -> PtxType:
        """The type the comparison or selection reads (set/setp/slct source, selp type)."""
        return self.types[-1]

    @property
    def lanes(self) -> int:
        return {"vset2": 2, "vset4": 4}.get(self.opcode, self.stype.lanes)

    def __str__(self) -> str:
        from .syntax import format_variant  # printing lives with the grammar

        return format_variant(self)


@dataclass(frozen=True, order=True)
class Requirement:
    """The PTX ISA version and `sm_` target a variant needs."""

    ptx: tuple[int, int]
    sm: int

    def __str__(self) -> str:
        return f"PTX ISA {self.ptx[0]}.{self.ptx[1]}, sm_{self.sm}"


def _types(*names: str) -> tuple[PtxType, ...]:
    return tuple(ptx_type(n) for n in names)


INT_TYPES = _types("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64")
STYPES = (*INT_TYPES, *_types("f32", "f64"))  # 9.7.6's .stype/.type/.dtype list
HALF_STYPES = (*STYPES, ptx_type("f16"))  # 9.7.7's .stype list


def cmps_for(t: PtxType) -> tuple[CmpOp, ...]:
    """Comparison operators the ISA allows on a source type (Integer/Float Notes)."""
    if t.kind is Kind.FLOAT:
        return FLOAT_CMPS
    if t.kind is Kind.BIT:
        return (CmpOp.EQ, CmpOp.NE)  # "The untyped, bit-size comparisons"
    if t.kind is Kind.UNSIGNED:
        return (*ORDERED_CMPS, *UNSIGNED_CMPS)
    return ORDERED_CMPS


@dataclass(frozen=True)
class Form:
    """One syntax block: the product of its domains is a set of variants."""

    opcode: str
    types: tuple[tuple[PtxType, ...], ...]  # one domain per type slot
    requirement: Requirement
    boolop: bool = True  # whether the BoolOp line of the block exists
    ftz: bool = False  # whether {.ftz} is in the block
    cmps: tuple[CmpOp, ...] | None = None  # None: cmps_for(source type)
    add: bool = False  # vset: the .add line
    section: str = ""
    note: str = ""

    def expand(self) -> Iterator[Variant]:
        for types in product(*self.types):
            src = types[-1]
            cmps = self.cmps or (cmps_for(src) if self.opcode in ("set", "setp") else (None,))
            boolops = (None, *BoolOp) if self.boolop else (None,)
            ftzs = (False, True) if self.ftz and src.ftz else (False,)
            adds = (False, True) if self.add else (False,)
            for cmp, boolop, ftz, add in product(cmps, boolops, ftzs, adds):
                yield Variant(self.opcode, types, cmp, boolop, ftz, add)


def _req(ptx: str, sm: int) -> Requirement:
    major, minor = ptx.split(".")
    return Requirement((int(major), int(minor)), sm)


_F64 = _types("f64")
_NOT_F64 = tuple(t for t in STYPES if t.name != "f64")
_F16 = _types("f16")
_BF16 = _types("bf16")

SPEC_FORMS: tuple[Form, ...] = (
    # 9.7.6.1 set: "set with .f64 source type requires sm_13 or higher".
    Form("set", (_types("u32", "s32", "f32"), _NOT_F64), _req("1.0", 10), ftz=True,
         section="9.7.6.1"),
    Form("set", (_types("u32", "s32", "f32"), _F64), _req("1.0", 13), section="9.7.6.1"),
    # 9.7.6.2 setp
    Form("setp", (_NOT_F64,), _req("1.0", 10), ftz=True, section="9.7.6.2"),
    Form("setp", (_F64,), _req("1.0", 13), section="9.7.6.2"),
    # 9.7.6.3 selp
    Form("selp", (_NOT_F64,), _req("1.0", 10), boolop=False, section="9.7.6.3"),
    Form("selp", (_F64,), _req("1.0", 13), boolop=False, section="9.7.6.3"),
    # 9.7.6.4 slct: ".ftz applies only to .f32 comparisons"
    Form("slct", (_NOT_F64, _types("s32", "f32")), _req("1.0", 10), boolop=False, ftz=True,
         section="9.7.6.4"),
    Form("slct", (_F64, _types("s32", "f32")), _req("1.0", 13), boolop=False, ftz=True,
         section="9.7.6.4"),
    # 9.7.7.1 half-precision set
    Form("set", (_F16, HALF_STYPES), _req("4.2", 53), ftz=True, section="9.7.7.1"),
    Form("set", (_BF16, HALF_STYPES), _req("7.8", 90), section="9.7.7.1"),
    Form("set", (_types("u16", "s16", "u32", "s32"), _F16), _req("6.5", 53), ftz=True,
         section="9.7.7.1"),
    Form("set", (_types("u16", "s16", "u32", "s32"), _BF16), _req("7.8", 90),
         section="9.7.7.1"),
    Form("set", (_types("f16x2"), _types("f16x2")), _req("4.2", 53), ftz=True,
         section="9.7.7.1"),
    Form("set", (_types("u32", "s32"), _types("f16x2")), _req("6.5", 53), ftz=True,
         section="9.7.7.1"),
    Form("set", (_types("bf16x2", "u32", "s32"), _types("bf16x2")), _req("7.8", 90),
         section="9.7.7.1"),
    # 9.7.7.2 half-precision setp
    Form("setp", (_types("f16", "f16x2"),), _req("4.2", 53), ftz=True, section="9.7.7.2"),
    Form("setp", (_types("bf16", "bf16x2"),), _req("7.8", 90), section="9.7.7.2"),
    # 9.7.18.2 vset2 / vset4
    *(
        Form(op, (_types("u32", "s32"), _types("u32", "s32")), _req("3.0", 30), boolop=False,
             cmps=ORDERED_CMPS, add=True, section=sec)
        for op, sec in (("vset2", "9.7.18.2.2"), ("vset4", "9.7.18.2.4"))
    ),
)

# 9.7.9.1 mov and 9.7.8.x logic operations, as glue for rewrites (not seed instructions).
_LOGIC_TYPES = _types("pred", "b16", "b32", "b64")
GLUE_FORMS: tuple[Form, ...] = (
    # ptxas 13.0 refuses mov on f16/bf16/x2 ("Unexpected instruction types"): use .b16/.b32
    Form("mov", (_types("pred", *(t.name for t in STYPES)),), _req("1.0", 10), boolop=False,
         section="9.7.9.1"),
    *(Form(op, (_LOGIC_TYPES,), _req("1.0", 10), boolop=False, section="9.7.8")
      for op in ("not", "and", "or", "xor")),
    # 9.7.9.21 cvt: only the exact widenings, so a rewrite can compare in a wider format
    Form("cvt", (_types("f32"), _types("f16")), _req("1.0", 10), boolop=False, section="9.7.9.21"),
    # ptxas 13.0: "Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1", sm_80
    Form("cvt", (_types("f32"), _types("bf16")), _req("7.1", 80), boolop=False,
         section="9.7.9.21"),
    Form("cvt", (_types("f64"), _types("f32")), _req("1.0", 13), boolop=False, section="9.7.9.21"),
)

# Where ptxas 13.0 is the judge over the text (docs/ptxas-legality.md). Rows here only add:
# `build` keeps the weakest requirement of all rows that give a variant.
PTXAS_FORMS: tuple[Form, ...] = (
    Form("set", (_BF16, _BF16), _req("7.8", 90), section="9.7.7.1",
         note="set.bf16.bf16 assembles, though the text never lists it"),
    *(Form(op, types, _req("1.0", 10), boolop=op in ("set", "setp"), ftz=op == "slct",
           section="9.7.6", note="f64's 'requires sm_13' is not enforced by ptxas")
      for op, types in (("set", (_types("u32", "s32", "f32"), _F64)), ("setp", (_F64,)),
                        ("selp", (_F64,)), ("slct", (_F64, _types("s32", "f32"))))),
)
# "Feature '.ftz' requires PTX ISA .version 1.4", which the text does not say.
FTZ_REQUIREMENT = Requirement((1, 4), 10)


@dataclass(frozen=True)
class Catalogue:
    requirements: dict[Variant, Requirement] = field(default_factory=dict)

    def __contains__(self, v: object) -> bool:
        return v in self.requirements

    def __iter__(self) -> Iterator[Variant]:
        return iter(self.requirements)

    def __len__(self) -> int:
        return len(self.requirements)

    def requirement(self, v: Variant) -> Requirement | None:
        return self.requirements.get(v)

    def family(self, name: str) -> list[Variant]:
        return [v for v in self if v.family == name]


def build(forms: Iterable[Form], ftz_requirement: Requirement | None = None) -> Catalogue:
    reqs: dict[Variant, Requirement] = {}
    for form in forms:
        for v in form.expand():
            req = form.requirement
            if v.ftz and ftz_requirement:
                req = Requirement(max(req.ptx, ftz_requirement.ptx),
                                  max(req.sm, ftz_requirement.sm))
            reqs[v] = min(reqs.get(v, req), req)
    return Catalogue(reqs)


@cache
def catalogue() -> Catalogue:
    """The legal variants: what ptxas 13.0 accepts (the text plus PTXAS_FORMS)."""
    return build((*SPEC_FORMS, *PTXAS_FORMS, *GLUE_FORMS), FTZ_REQUIREMENT)


@cache
def spec_catalogue() -> Catalogue:
    """The variants the ISA text allows, read with its Integer/Float Notes."""
    return build(SPEC_FORMS)
