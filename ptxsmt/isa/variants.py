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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from itertools import product
from types import MappingProxyType

from .modifiers import FLOAT_CMPS, ORDERED_CMPS, UNSIGNED_CMPS, BoolOp, CmpOp
from .opcodes import FLAG_MODIFIERS, MUL_MODES, SYNTAX, WIDE, Syntax
from .types import TYPES, Kind, PtxType, ptx_type

# The families a user thinks in; half-precision set/setp are the same opcodes.
FAMILIES = ("set", "setp", "selp", "slct", "half-set", "half-setp", "vset2", "vset4")
# The families of the instructions around them (`variants --family`).
MODELLED_FAMILIES = ("glue", "arith", "float-arith", "convert", "bits")


@dataclass(frozen=True)
class Variant:
    """One instruction form: opcode, instruction modifiers and types.

    `types` are in the order written; each has the ISA's name from the opcode's syntax
    (`SYNTAX`), and is read by it: `v.dtype`, `v.stype`, `v.type`, `v.ctype`, `v.atype`,
    `v.btype`. Operand modifiers (`!c`, vset masks and selectors) and operands are not
    part of the variant; see `ptxsmt.isa.syntax.Instruction`.
    """

    opcode: str
    types: tuple[PtxType, ...]
    cmp: CmpOp | None = None
    boolop: BoolOp | None = None
    ftz: bool = False
    add: bool = False
    sat: bool = False
    nan: bool = False  # `.NaN` (min, max)
    relu: bool = False  # `.relu` (min, max): "clamps the result to 0 if negative"
    mode: str | None = None  # mul/mad .hi/.lo/.wide, testp's test, prmt's and shf's mode
    rnd: str | None = None  # rounding: .rn/.rz/.rm/.rp, cvt's .rni/.rzi/.rmi/.rpi
    dir: str | None = None  # shf.l / shf.r

    @classmethod
    def of(cls, opcode: str, roles: Mapping[str, PtxType], **modifiers) -> Variant:
        """A variant from its types by name: `Variant.of("slct", {"dtype": .., "ctype": ..})`."""
        names = SYNTAX[opcode].type_roles
        if set(roles) != set(names):
            raise ValueError(f"{opcode} has types {', '.join(names)}, not {', '.join(roles)}")
        return cls(opcode, tuple(roles[r] for r in names), **modifiers)

    @property
    def syntax(self) -> Syntax:
        return SYNTAX[self.opcode]

    @property
    def roles(self) -> dict[str, PtxType]:
        """The types by their ISA names, in the order written."""
        return dict(zip(self.syntax.type_roles, self.types))

    def role(self, name: str) -> PtxType:
        """One type by its ISA name; AttributeError if the opcode has no such type."""
        try:
            return self.roles[name]
        except KeyError:
            raise AttributeError(f"{self.opcode} has no .{name}") from None

    dtype = property(lambda self: self.role("dtype"), doc="The destination type (set, slct, cvt).")
    stype = property(lambda self: self.role("stype"), doc="set's source type.")
    type = property(lambda self: self.role("type"), doc="setp, selp and the logic ops' type.")
    ctype = property(lambda self: self.role("ctype"), doc="slct's c: .s32 or .f32.")
    atype = property(lambda self: self.role("atype"), doc="a's type (vset, cvt).")
    btype = property(lambda self: self.role("btype"), doc="b's type (vset).")

    @property
    def compared_type(self) -> PtxType | None:
        """The type the comparison reads (CmpOp's a and b; slct's c), if the opcode compares."""
        return self.roles.get(self.syntax.compared)

    @property
    def family(self) -> str:
        if self.opcode == "cvt" and _rounds(self):
            return "convert"
        if self.syntax.float_family and any(t.is_float for t in self.types):
            return self.syntax.float_family
        if self.syntax.family:
            return self.syntax.family
        if self.syntax.glue:
            return "glue"
        if self.syntax.half_family and any(t.is_half for t in self.types):
            return "half-" + self.opcode
        return self.opcode

    def __str__(self) -> str:
        """The spelling: opcode and modifiers in the order of the opcode's syntax line."""
        flags = {field: spelling for spelling, field in FLAG_MODIFIERS.items()
                 if getattr(self, field)}
        values = {"cmp": self.cmp, "boolop": self.boolop, "mode": self.mode, "rnd": self.rnd,
                  "dir": self.dir,
                  **dict.fromkeys(FLAG_MODIFIERS.values()), **flags, **self.roles}
        return ".".join([self.opcode, *(str(values[m]) for m in self.syntax.modifiers
                                        if values[m] is not None)])


def _rounds(v: Variant) -> bool:
    """A cvt of the "convert" family: rounding, flushing, clamping a float, or crossing
    between integers and floats; glue keeps the exact widenings and integer cvts."""
    a, d = v.atype, v.dtype
    inexact = a.is_float and d.is_float and (d.fmt.ebits < a.fmt.ebits
                                             or d.fmt.sbits < a.fmt.sbits)
    return bool(v.rnd or v.ftz or (v.sat and d.is_float) or a.is_float != d.is_float or inexact)


def widened(t: PtxType) -> PtxType:
    """The type twice as wide, of the same kind (.s32 -> .s64)."""
    return TYPES[f"{t.name[0]}{2 * t.width}"]


def operand_slots(v: Variant) -> tuple[str, ...]:
    """The operand slots of an instruction of `v` as written, in order (set/setp: c only
    with a BoolOp)."""
    syntax = v.syntax
    return tuple(s for s in syntax.operands if s != "c" or v.boolop or not syntax.optional_c)


@cache  # asked for every instruction parsed; a variant's answer never changes
def operand_types(v: Variant) -> Mapping[str, PtxType]:
    """The register type of each operand slot (the 'Operand x has type' sentences)."""
    types = {slot: _slot_type(v, t) for slot, t in v.syntax.operands.items()}
    if v.syntax.pair_dest:
        types["q"] = types["p"]
    return MappingProxyType(types)


def _slot_type(v: Variant, t: str | PtxType) -> PtxType:
    if t == WIDE:
        return widened(v.type) if v.mode == "wide" else v.type
    return v.role(t) if isinstance(t, str) else t


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
    """One syntax block: the product of its domains is a set of variants. A block has
    the BoolOp line wherever its opcode takes a BoolOp (every set and setp block does)."""

    opcode: str
    types: dict[str, tuple[PtxType, ...]]  # one domain per type role, e.g. {"dtype": ...}
    requirement: Requirement
    ftz: bool = False  # whether {.ftz} is in the block
    cmps: tuple[CmpOp, ...] | None = None  # None: cmps_for(the compared type)
    add: bool = False  # vset: the .add line
    sat: bool = False  # whether {.sat} is in the block
    nan: bool = False  # whether {.NaN} is in the block
    relu: bool = False  # whether {.relu} is in the block
    modes: tuple[str, ...] = (None,)  # mul: .hi, .lo
    rnds: tuple[str | None, ...] = (None,)  # the rounding modifiers of the block
    dirs: tuple[str | None, ...] = (None,)  # shf: .l, .r
    section: str = ""
    note: str = ""

    def expand(self) -> Iterator[Variant]:
        syntax = SYNTAX[self.opcode]
        for types in product(*self.types.values()):
            v = Variant.of(self.opcode, dict(zip(self.types, types)))
            compared = v.compared_type
            cmps = self.cmps or (cmps_for(compared) if "cmp" in syntax.modifiers else (None,))
            boolops = (None, *BoolOp) if "boolop" in syntax.modifiers else (None,)
            ftzs = (False, True) if self.ftz and (compared is None or compared.ftz) else (False,)
            adds = (False, True) if self.add else (False,)
            sats = (False, True) if self.sat else (False,)
            nans = (False, True) if self.nan else (False,)
            relus = (False, True) if self.relu else (False,)
            for cmp, boolop, ftz, add, sat, nan, relu, mode, rnd, dir_ in product(
                    cmps, boolops, ftzs, adds, sats, nans, relus, self.modes, self.rnds,
                    self.dirs):
                yield replace(v, cmp=cmp, boolop=boolop, ftz=ftz, add=add, sat=sat, nan=nan,
                              relu=relu, mode=mode, rnd=rnd, dir=dir_)


def _req(ptx: str, sm: int) -> Requirement:
    major, minor = ptx.split(".")
    return Requirement((int(major), int(minor)), sm)


_F64 = _types("f64")
_NOT_F64 = tuple(t for t in STYPES if t.name != "f64")
_F16 = _types("f16")
_BF16 = _types("bf16")

SPEC_FORMS: tuple[Form, ...] = (
    # 9.7.6.1 set: "set with .f64 source type requires sm_13 or higher".
    Form("set", dict(dtype=_types("u32", "s32", "f32"), stype=_NOT_F64), _req("1.0", 10),
         ftz=True, section="9.7.6.1"),
    Form("set", dict(dtype=_types("u32", "s32", "f32"), stype=_F64), _req("1.0", 13),
         section="9.7.6.1"),
    # 9.7.6.2 setp
    Form("setp", dict(type=_NOT_F64), _req("1.0", 10), ftz=True, section="9.7.6.2"),
    Form("setp", dict(type=_F64), _req("1.0", 13), section="9.7.6.2"),
    # 9.7.6.3 selp
    Form("selp", dict(type=_NOT_F64), _req("1.0", 10), section="9.7.6.3"),
    Form("selp", dict(type=_F64), _req("1.0", 13), section="9.7.6.3"),
    # 9.7.6.4 slct: ".ftz applies only to .f32 comparisons"
    Form("slct", dict(dtype=_NOT_F64, ctype=_types("s32", "f32")), _req("1.0", 10), ftz=True,
         section="9.7.6.4"),
    Form("slct", dict(dtype=_F64, ctype=_types("s32", "f32")), _req("1.0", 13), ftz=True,
         section="9.7.6.4"),
    # 9.7.7.1 half-precision set
    Form("set", dict(dtype=_F16, stype=HALF_STYPES), _req("4.2", 53), ftz=True,
         section="9.7.7.1"),
    Form("set", dict(dtype=_BF16, stype=HALF_STYPES), _req("7.8", 90), section="9.7.7.1"),
    Form("set", dict(dtype=_types("u16", "s16", "u32", "s32"), stype=_F16), _req("6.5", 53),
         ftz=True, section="9.7.7.1"),
    Form("set", dict(dtype=_types("u16", "s16", "u32", "s32"), stype=_BF16), _req("7.8", 90),
         section="9.7.7.1"),
    Form("set", dict(dtype=_types("f16x2"), stype=_types("f16x2")), _req("4.2", 53), ftz=True,
         section="9.7.7.1"),
    Form("set", dict(dtype=_types("u32", "s32"), stype=_types("f16x2")), _req("6.5", 53),
         ftz=True, section="9.7.7.1"),
    Form("set", dict(dtype=_types("bf16x2", "u32", "s32"), stype=_types("bf16x2")),
         _req("7.8", 90), section="9.7.7.1"),
    # 9.7.7.2 half-precision setp
    Form("setp", dict(type=_types("f16", "f16x2")), _req("4.2", 53), ftz=True,
         section="9.7.7.2"),
    Form("setp", dict(type=_types("bf16", "bf16x2")), _req("7.8", 90), section="9.7.7.2"),
    # 9.7.18.2 vset2 / vset4
    *(
        Form(op, dict(atype=_types("u32", "s32"), btype=_types("u32", "s32")), _req("3.0", 30),
             cmps=ORDERED_CMPS, add=True, section=sec)
        for op, sec in (("vset2", "9.7.18.2.2"), ("vset4", "9.7.18.2.4"))
    ),
)

# 9.7.9.1 mov and 9.7.8.x logic operations, as glue for rewrites (not seed instructions).
_LOGIC_TYPES = _types("pred", "b16", "b32", "b64")
GLUE_FORMS: tuple[Form, ...] = (
    # ptxas 13.0 refuses mov on f16/bf16/x2 ("Unexpected instruction types"): use .b16/.b32
    Form("mov", dict(type=_types("pred", *(t.name for t in STYPES))), _req("1.0", 10),
         section="9.7.9.1"),
    *(Form(op, dict(type=_LOGIC_TYPES), _req("1.0", 10), section="9.7.8")
      for op in ("not", "and", "or", "xor")),
    # 9.7.9.21 cvt.dtype.atype: only the exact widenings, so a rewrite can compare in a
    # wider format
    Form("cvt", dict(dtype=_types("f32"), atype=_types("f16")), _req("1.0", 10),
         section="9.7.9.21"),
    # ptxas 13.0: "Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1", sm_80
    Form("cvt", dict(dtype=_types("f32"), atype=_types("bf16")), _req("7.1", 80),
         section="9.7.9.21"),
    Form("cvt", dict(dtype=_types("f64"), atype=_types("f32")), _req("1.0", 13),
         section="9.7.9.21"),
)

# 9.7.9.21 cvt between integers: "sext = sign-extend; zext = zero-extend; chop = keep only
# low bits that fit". `.sat` only where the source's range does not fit the destination's
# (ptxas 13.0: "Illegal modifier '.sat' for instruction 'cvt'" on the others).
_CVT_INTS = _types("u16", "u32", "u64", "s16", "s32", "s64")


def _fits(d: PtxType, a: PtxType) -> bool:
    """Every value of `a` is a value of `d`."""
    if d.kind is a.kind:
        return d.width >= a.width
    return a.kind is Kind.UNSIGNED and d.width > a.width


CVT_INT_FORMS: tuple[Form, ...] = (
    Form("cvt", dict(dtype=_CVT_INTS, atype=_CVT_INTS), _req("1.0", 10), section="9.7.9.21"),
    *(Form("cvt", dict(dtype=(d,), atype=(a,)), _req("1.0", 10), sat=True, section="9.7.9.21")
      for d in _CVT_INTS for a in _CVT_INTS if not _fits(d, a)),
)

# 9.7.1 integer and 9.7.3/9.7.4 floating-point arithmetic (the "arith" family). Minimum
# versions and targets are the text's "PTX ISA Notes"/"Target ISA Notes", held against
# ptxas 13.0 by tests/test_arith.py; as for set, f64's "requires sm_13" is not enforced.
_ARITH_INTS = _types("u16", "u32", "u64", "s16", "s32", "s64")
_SIGNED = _types("s16", "s32", "s64")
_NARROW_INTS = _types("u16", "u32", "s16", "s32")
_HALF = _types("f16", "f16x2")
_BHALF = _types("bf16", "bf16x2")
_PACKED_INTS = _types("u16x2", "s16x2")
ARITH_FORMS: tuple[Form, ...] = (
    *(Form(op, dict(type=_ARITH_INTS), _req("1.0", 10), section=sec)
      for op, sec in (("add", "9.7.1.1"), ("sub", "9.7.1.2"), ("min", "9.7.1.12"),
                      ("max", "9.7.1.13"))),
    # "add.type ... .u16x2, .s16x2", "min{.relu}.btype ... .btype = { .s16x2, .s32 }"
    # (PTX 8.0, sm_90); sub, neg, abs have no packed form, and .sat no .s16x2 one
    *(Form(op, dict(type=_PACKED_INTS), _req("8.0", 90), section=sec)
      for op, sec in (("add", "9.7.1.1"), ("min", "9.7.1.12"), ("max", "9.7.1.13"))),
    *(Form(op, dict(type=_types("s16x2", "s32")), _req("8.0", 90), relu=True, section=sec)
      for op, sec in (("min", "9.7.1.12"), ("max", "9.7.1.13"))),
    # "add{.sat}.type2 ... .sat ... Applies only to .u32, .s32 ..." (add.sat.u32: PTX 9.2)
    *(Form(op, dict(type=_types("s32")), _req("1.0", 10), sat=True, section=sec)
      for op, sec in (("add", "9.7.1.1"), ("sub", "9.7.1.2"))),
    Form("mul", dict(type=_ARITH_INTS), _req("1.0", 10), modes=MUL_MODES, section="9.7.1.3"),
    # ".wide ... supported only for 16- and 32-bit integer types"
    Form("mul", dict(type=_NARROW_INTS), _req("1.0", 10), modes=("wide",), section="9.7.1.3"),
    Form("mad", dict(type=_ARITH_INTS), _req("1.0", 10), modes=MUL_MODES, section="9.7.1.4"),
    Form("mad", dict(type=_NARROW_INTS), _req("1.0", 10), modes=("wide",), section="9.7.1.4"),
    # "mad.hi.sat.s32": ".sat ... Applies only to .s32 type in .hi mode"
    Form("mad", dict(type=_types("s32")), _req("1.0", 10), modes=("hi",), sat=True,
         section="9.7.1.4"),
    Form("div", dict(type=_ARITH_INTS), _req("1.0", 10), section="9.7.1.8"),
    Form("rem", dict(type=_ARITH_INTS), _req("1.0", 10), section="9.7.1.9"),
    *(Form(op, dict(type=_SIGNED), _req("1.0", 10), section=sec)
      for op, sec in (("abs", "9.7.1.10"), ("neg", "9.7.1.11"))),
    Form("shl", dict(type=_types("b16", "b32", "b64")), _req("1.0", 10), section="9.7.8.8"),
    Form("shr", dict(type=INT_TYPES), _req("1.0", 10), section="9.7.8.9"),
    *(Form(op, dict(type=_types("f32", "f64")), _req("1.0", 10), ftz=True, section=sec)
      for op, sec in (("abs", "9.7.3.9"), ("neg", "9.7.3.10"), ("min", "9.7.3.11"),
                      ("max", "9.7.3.12"))),
    # "min.NaN introduced in PTX ISA version 7.0 ... requires sm_80"
    *(Form(op, dict(type=_types("f32")), _req("7.0", 80), ftz=True, nan=True, section=sec)
      for op, sec in (("min", "9.7.3.11"), ("max", "9.7.3.12"))),
    Form("neg", dict(type=_HALF), _req("6.0", 53), ftz=True, section="9.7.4.5"),
    Form("neg", dict(type=_HALF), _req("5.1", 53), ftz=True, section="9.7.4.5",
         note="ptxas 13.0 assembles neg.f16/.f16x2 from PTX 5.1 (at 5.0 its message says 6.0)"),
    Form("abs", dict(type=_HALF), _req("6.5", 53), ftz=True, section="9.7.4.6"),
    *(Form(op, dict(type=_BHALF), _req("7.0", 80), section=sec)
      for op, sec in (("neg", "9.7.4.5"), ("abs", "9.7.4.6"))),
    *(Form(op, dict(type=(*_HALF, *_BHALF)), _req("7.0", 80), ftz=True, nan=True, section=sec)
      for op, sec in (("min", "9.7.4.7"), ("max", "9.7.4.8"))),
)

_NO_SM_13 = "f64's 'requires sm_13' is not enforced by ptxas"

# 9.7.3 floating-point and 9.7.4 half-precision arithmetic with rounding (the "float-arith"
# family). Without a rounding modifier add/sub/mul/... round to nearest even ("the
# default"); ptxas may then contract mul+add into fma, which PTX leaves to ptxas.
_RN = (None, "rn")
_ALL_RND = ("rn", "rz", "rm", "rp")
_F32, _F64_ = _types("f32"), _types("f64")
FLOAT_FORMS: tuple[Form, ...] = (
    *(f for op, sec, hsec in (("add", "9.7.3.3", "9.7.4.1"), ("sub", "9.7.3.4", "9.7.4.2"),
                              ("mul", "9.7.3.5", "9.7.4.3")) for f in (
        # ".rn, .rz available for all targets; .rm, .rp for add.f32 require sm_20"
        Form(op, dict(type=_F32), _req("1.0", 10), ftz=True, sat=True, rnds=(None, "rn", "rz"),
             section=sec),
        Form(op, dict(type=_F32), _req("2.0", 20), ftz=True, sat=True, rnds=("rm", "rp"),
             section=sec),
        Form(op, dict(type=_F64_), _req("1.0", 10), rnds=(None, "rn", "rz"), section=sec,
             note=_NO_SM_13),
        Form(op, dict(type=_F64_), _req("1.0", 13), rnds=("rm", "rp"), section=sec),
        Form(op, dict(type=_HALF), _req("4.2", 53), ftz=True, sat=True, rnds=_RN, section=hsec),
        Form(op, dict(type=_BHALF), _req("7.8", 90), rnds=_RN, section=hsec))),
    Form("fma", dict(type=_F32), _req("2.0", 20), ftz=True, sat=True, rnds=_ALL_RND,
         section="9.7.3.6"),
    *(Form(op, dict(type=_F64_), _req(ptx, 10), rnds=("rn", "rz"), section=sec, note=_NO_SM_13)
      for op, sec, ptx in (("fma", "9.7.3.6", "1.4"), ("mad", "9.7.3.7", "1.0"))),
    *(Form(op, dict(type=_F64_), _req(ptx, 13), rnds=("rm", "rp"), section=sec)
      for op, sec, ptx in (("fma", "9.7.3.6", "1.4"), ("mad", "9.7.3.7", "1.0"))),
    Form("fma", dict(type=_HALF), _req("4.2", 53), ftz=True, sat=True, rnds=("rn",),
         section="9.7.4.4"),
    Form("fma", dict(type=_BHALF), _req("7.0", 80), rnds=_ALL_RND, section="9.7.4.4"),
    # "mad.rnd.f32 ... is identical to fma.rnd.f32" (sm_20 and later)
    Form("mad", dict(type=_F32), _req("2.0", 20), ftz=True, sat=True, rnds=_ALL_RND,
         section="9.7.3.7"),
    # the IEEE forms only: .approx and .full are not modelled (opaque in a function)
    *(f for op, sec, rn64 in (("div", "9.7.3.8", "1.0"), ("sqrt", "9.7.3.15", "1.0"),
                              ("rcp", "9.7.3.13", "1.4"))
      for f in (
        Form(op, dict(type=_F32), _req("2.0", 20), ftz=True, rnds=_ALL_RND, section=sec),
        Form(op, dict(type=_F64_), _req(rn64, 10), rnds=("rn",), section=sec, note=_NO_SM_13),
        Form(op, dict(type=_F64_), _req("2.0", 20), rnds=("rz", "rm", "rp"), section=sec))),
    Form("copysign", dict(type=_types("f32", "f64")), _req("2.0", 20), section="9.7.3.2"),
    Form("testp", dict(type=_types("f32", "f64")), _req("2.0", 20),
         modes=SYNTAX["testp"].modes, section="9.7.3.1"),
)

# 9.7.1.14-9.7.1.20, 9.7.8.7, 9.7.9.5: the "bits" family
_B3264 = _types("b32", "b64")
BITS_FORMS: tuple[Form, ...] = (
    Form("popc", dict(type=_B3264), _req("2.0", 20), section="9.7.1.14"),
    Form("clz", dict(type=_B3264), _req("2.0", 20), section="9.7.1.15"),
    Form("brev", dict(type=_B3264), _req("2.0", 20), section="9.7.1.18"),
    Form("bfe", dict(type=_types("u32", "u64", "s32", "s64")), _req("2.0", 20),
         section="9.7.1.19"),
    Form("bfi", dict(type=_B3264), _req("2.0", 20), section="9.7.1.20"),
    Form("prmt", dict(type=_types("b32")), _req("2.0", 20),
         modes=(None, *SYNTAX["prmt"].modes), section="9.7.9.5"),
    Form("shf", dict(type=_types("b32")), _req("3.1", 32), modes=SYNTAX["shf"].modes,
         dirs=("l", "r"), section="9.7.8.7"),
)

# 9.7.9.21 cvt that rounds (the "convert" family), as ptxas 13.0 takes it (the text's
# rules: "Floating-point rounding is required for float-to-float conversions that result
# in loss of precision, and for integer-to-float conversions"; "Integer rounding is
# required for float-to-integer conversions"; a float-to-float cvt of one type may round
# to an integral value). ptxas takes .ftz only where an f32 is involved and .sat only
# where no bf16 is; a bf16 source and bf16.f16 also without a rounding modifier (read as
# .rn). Without .ftz, .sat or rounding a cvt is glue's.
_CVT_FLOATS = _types("f16", "bf16", "f32", "f64")
_IRND, _FRND = ("rni", "rzi", "rmi", "rpi"), ("rn", "rz", "rm", "rp")


def _cvt_rounding(d: PtxType, a: PtxType) -> tuple[str | None, ...]:
    if not d.is_float:
        return _IRND
    if not a.is_float:
        return _FRND
    if d is a:
        return (None, *_IRND)
    if a.name == "bf16" or (d.name, a.name) == ("bf16", "f16"):
        return (None, *_FRND)
    wider = d.fmt.ebits >= a.fmt.ebits and d.fmt.sbits >= a.fmt.sbits
    return (None,) if wider else _FRND


def _cvt_requirement(d: PtxType, a: PtxType) -> Requirement:
    if (d.name, a.name) in (("bf16", "f32"),):
        return _req("7.0", 80)
    if (d.name, a.name) == ("f32", "bf16"):
        return _req("7.1", 80)
    if "bf16" in (d.name, a.name):
        return _req("7.8", 90)
    return _req("1.0", 10)


def _cvt_ftz_requirement(d: PtxType, a: PtxType) -> Requirement:
    """ptxas: "Modifier '.ftz' does not apply to this type of convert operation" below
    PTX 1.5 from an f32 to a 64-bit type; "'cvt with .f32.bf16.ftz' requires sm_90"."""
    base = _cvt_requirement(d, a)
    if (d.name, a.name) == ("f32", "bf16"):
        return _both(base, _req("7.8", 90))
    if a.name == "f32" and d.width == 64:
        return _both(base, _req("1.5", 10))
    return base


def _both(x: Requirement, y: Requirement) -> Requirement:
    return Requirement(max(x.ptx, y.ptx), max(x.sm, y.sm))


_CVT_PAIRS = [(d, a) for d in (*_CVT_INTS, *_CVT_FLOATS) for a in (*_CVT_INTS, *_CVT_FLOATS)
              if d.is_float or a.is_float]
CONVERT_FORMS: tuple[Form, ...] = tuple(
    Form("cvt", dict(dtype=(d,), atype=(a,)), req(d, a), ftz=ftz,
         sat="bf16" not in (d.name, a.name), rnds=_cvt_rounding(d, a), section="9.7.9.21")
    for d, a in _CVT_PAIRS
    for ftz, req in ((False, _cvt_requirement), (True, _cvt_ftz_requirement))
    if not ftz or "f32" in (d.name, a.name))

# Where ptxas 13.0 is the judge over the text (docs/ptxas-legality.md). Rows here only add:
# `build` keeps the weakest requirement of all rows that give a variant.
PTXAS_FORMS: tuple[Form, ...] = (
    Form("set", dict(dtype=_BF16, stype=_BF16), _req("7.8", 90), section="9.7.7.1",
         note="set.bf16.bf16 assembles, though the text never lists it"),
    Form("set", dict(dtype=_types("u32", "s32", "f32"), stype=_F64), _req("1.0", 10),
         section="9.7.6.1", note=_NO_SM_13),
    Form("setp", dict(type=_F64), _req("1.0", 10), section="9.7.6.2", note=_NO_SM_13),
    Form("selp", dict(type=_F64), _req("1.0", 10), section="9.7.6.3", note=_NO_SM_13),
    Form("slct", dict(dtype=_F64, ctype=_types("s32", "f32")), _req("1.0", 10), ftz=True,
         section="9.7.6.4", note=_NO_SM_13),
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
        return list(self._families.get(name, ()))

    @cached_property
    def _families(self) -> dict[str, list[Variant]]:
        """The variants by family, sorted once (the tests ask for families ~30 times)."""
        out: dict[str, list[Variant]] = {}
        for v in self:
            out.setdefault(v.family, []).append(v)
        return out


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


_FORMS = (*SPEC_FORMS, *PTXAS_FORMS, *GLUE_FORMS, *CVT_INT_FORMS, *ARITH_FORMS, *FLOAT_FORMS,
          *BITS_FORMS, *CONVERT_FORMS)


@cache
def catalogue() -> Catalogue:
    """The legal variants: what ptxas 13.0 accepts (the text plus PTXAS_FORMS)."""
    return build(_FORMS, FTZ_REQUIREMENT)


def requirement(v: Variant) -> Requirement | None:
    """What `v` needs, or None where it is not legal: `catalogue().requirement(v)`, from
    its own opcode's forms only (one `eval` need not build all 4,320 variants)."""
    return _opcode_catalogue(v.opcode).requirement(v)


@cache
def _opcode_catalogue(opcode: str) -> Catalogue:
    return build((f for f in _FORMS if f.opcode == opcode), FTZ_REQUIREMENT)


@cache
def spec_catalogue() -> Catalogue:
    """The variants the ISA text allows, read with its Integer/Float Notes."""
    return build(SPEC_FORMS)
