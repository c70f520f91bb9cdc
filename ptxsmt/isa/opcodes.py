"""What each opcode's syntax line says: its modifiers in print order, the ISA's name
for each instruction type, the type of each operand slot, and its operand forms.

One table, read by the variants (which type is which, how a variant is spelled) and
by the grammar (parsing and printing instructions). It sits below both, so neither
imports the other to learn an opcode's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .types import PRED, TYPES, PtxType, bit_type

# The ISA's names for instruction types ("set.CmpOp.dtype.stype", "slct.dtype.s32" whose
# second type is c's, "vset2.atype.btype", "cvt.dtype.atype", "setp.type").
TYPE_ROLES = ("dtype", "stype", "type", "ctype", "atype", "btype")
# Written `.ftz`, `.add`, `.sat`, `.NaN`, `.relu`, or absent: the spelling -> the Variant field.
FLAG_MODIFIERS = {"ftz": "ftz", "add": "add", "sat": "sat", "NaN": "nan", "relu": "relu"}
MUL_MODES = ("hi", "lo")  # mul's `.mode` on mul.hi/.lo (`.wide`: WIDE_MODES)
WIDE_MODES = ("hi", "lo", "wide")  # mul/mad: `.wide` makes d (and mad's c) twice as wide
# 9.7.3 "Floating-point rounding": the IEEE-754 directions; 9.7.9.21 cvt's integer rounding
FLOAT_ROUNDINGS = ("rn", "rz", "rm", "rp")
INT_ROUNDINGS = ("rni", "rzi", "rmi", "rpi")
ROUNDINGS = (*FLOAT_ROUNDINGS, *INT_ROUNDINGS)
SHIFT_DIRECTIONS = ("l", "r")  # shf.l / shf.r
# An operand slot of this role has `type`, twice as wide under `.wide` (mul.wide's d,
# mad.wide's d and c).
WIDE = "wide"


@dataclass(frozen=True)
class Syntax:
    """One opcode's syntax: instruction modifiers and operand slots."""

    # In print order: "cmp", "boolop", a FLAG_MODIFIERS field, "mode" (mul), or a type role
    # from TYPE_ROLES.
    modifiers: tuple[str, ...]
    # The operand slots as written (d or p first), each with its type: a type role of
    # `modifiers`, or a fixed register type.
    operands: dict[str, str | PtxType]
    optional_c: bool = False  # c is there exactly when a BoolOp is
    pair_dest: bool = False  # setp's p[|q]: q, when written, has p's type
    compared: str = ""  # the type role a comparison reads (or abs/neg flush): .ftz and the
    # CmpOps depend on it
    selects: bool = False  # d is a or b, chosen by c (selp, slct)
    half_family: bool = False  # 9.7.7 gives it half-precision forms, a family of their own
    glue: bool = False  # not a seed instruction: what rewrites put around them
    family: str = ""  # a family of its own, named here ("arith")
    float_family: str = ""  # the family of its float forms, where it differs (add.f32)
    modes: tuple[str, ...] = ()  # the values of its `mode` modifier (mul: .hi/.lo/.wide)
    # slots whose immediate ptxas 13.0 takes only in [0..255] (bfe/bfi's position and
    # length: "value '256' out of range, expected to be in range [0..255]")
    byte_immediates: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        """ptxsmt models some of this opcode's forms only (glue, arithmetic): in a file, a
        form outside them is an ordinary instruction, not an illegal one."""
        return self.glue or bool(self.family)
    vector_operands: bool = False  # d or a may be `{lo, hi}`: narrower registers (mov)
    lane_prefix: str = ""  # vset: "h"/"b" lane specs on d, a, b
    lanes: int = 1  # vset: lanes per 32-bit register
    # vset (9.7.18.2): mask all lanes; asel = a's lanes; bsel = b's lanes.
    lane_defaults: dict[str, str] = field(default_factory=dict)

    @property
    def type_roles(self) -> tuple[str, ...]:
        """The instruction types in the order written."""
        return tuple(m for m in self.modifiers if m in TYPE_ROLES)


_B32 = bit_type(32)
_U32 = TYPES["u32"]
_BINARY = {"d": "type", "a": "type", "b": "type"}
_SOURCES = {"a": "type", "b": "type"}
_VSET = (("atype", "btype", "cmp", "add"), dict.fromkeys("dabc", _B32))

SYNTAX: dict[str, Syntax] = {
    "set": Syntax(("cmp", "boolop", "ftz", "dtype", "stype"),
                  {"d": "dtype", "a": "stype", "b": "stype", "c": PRED},
                  optional_c=True, compared="stype", half_family=True),
    "setp": Syntax(("cmp", "boolop", "ftz", "type"), {"p": PRED, **_SOURCES, "c": PRED},
                   optional_c=True, pair_dest=True, compared="type", half_family=True),
    "selp": Syntax(("type",), {"d": "type", **_SOURCES, "c": PRED}, selects=True),
    "slct": Syntax(("ftz", "dtype", "ctype"), {"d": "dtype", "a": "dtype", "b": "dtype",
                                               "c": "ctype"}, compared="ctype", selects=True),
    "vset2": Syntax(*_VSET, lane_prefix="h", lanes=2,
                    lane_defaults={"mask": "h10", "asel": "h10", "bsel": "h32"}),
    "vset4": Syntax(*_VSET, lane_prefix="b", lanes=4,
                    lane_defaults={"mask": "b3210", "asel": "b3210", "bsel": "b7654"}),
    "mov": Syntax(("type",), {"d": "type", "a": "type"}, glue=True, vector_operands=True),
    "not": Syntax(("type",), {"d": "type", "a": "type"}, glue=True),
    **{op: Syntax(("type",), {"d": "type", **_SOURCES}, glue=True) for op in ("and", "or", "xor")},
    "cvt": Syntax(("rnd", "ftz", "sat", "dtype", "atype"), {"d": "dtype", "a": "atype"},
                  glue=True),
    # 9.7.1 integer and 9.7.3/9.7.4 floating-point arithmetic that compilers put next to
    # compares: one family, "arith". shl/shr's b is "a .u32 value" whatever the type.
    # add/sub/mul on floats (9.7.3.3-9.7.3.5, 9.7.4.1-9.7.4.3) are "float-arith".
    **{op: Syntax(("rnd", "ftz", "sat", "type"), _BINARY, compared="type", family="arith",
                  float_family="float-arith") for op in ("add", "sub")},
    "mul": Syntax(("mode", "rnd", "ftz", "sat", "type"), {"d": WIDE, **_SOURCES},
                  compared="type", family="arith", float_family="float-arith",
                  modes=WIDE_MODES),
    "mad": Syntax(("mode", "rnd", "ftz", "sat", "type"), {"d": WIDE, **_SOURCES, "c": WIDE},
                  compared="type", family="arith", float_family="float-arith",
                  modes=WIDE_MODES),
    "rem": Syntax(("type",), _BINARY, family="arith"),
    "fma": Syntax(("rnd", "ftz", "sat", "type"), {**_BINARY, "c": "type"}, compared="type",
                  family="float-arith"),
    **{op: Syntax(("rnd", "ftz", "type"), _BINARY if op == "div" else
                  {"d": "type", "a": "type"}, compared="type", family="arith",
                  float_family="float-arith") for op in ("div", "sqrt", "rcp")},
    "copysign": Syntax(("type",), _BINARY, family="float-arith"),
    "testp": Syntax(("mode", "type"), {"p": PRED, "a": "type"}, family="float-arith",
                    modes=("finite", "infinite", "number", "notanumber", "normal",
                           "subnormal")),
    # 9.7.1.14-9.7.1.20, 9.7.8.7, 9.7.9.5: bit manipulation, the "bits" family
    **{op: Syntax(("type",), {"d": _U32, "a": "type"}, family="bits") for op in ("popc", "clz")},
    "brev": Syntax(("type",), {"d": "type", "a": "type"}, family="bits"),
    "bfe": Syntax(("type",), {"d": "type", "a": "type", "b": _U32, "c": _U32}, family="bits",
                  byte_immediates=("b", "c")),
    # `bfi.type f, a, b, c, d;`: the text's f is slot d (every destination is) and its
    # fourth source, d, is slot e
    "bfi": Syntax(("type",), {"d": "type", "a": "type", "b": "type", "c": _U32, "e": _U32},
                  family="bits", byte_immediates=("c", "e")),
    "prmt": Syntax(("type", "mode"), {"d": "type", "a": "type", "b": "type", "c": "type"},
                   family="bits", modes=("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")),
    "shf": Syntax(("dir", "mode", "type"), {"d": "type", "a": "type", "b": "type", "c": _U32},
                  family="bits", modes=("wrap", "clamp")),
    **{op: Syntax(("relu", "ftz", "nan", "type"), _BINARY, compared="type", family="arith")
       for op in ("min", "max")},
    **{op: Syntax(("ftz", "type"), {"d": "type", "a": "type"}, compared="type",
                  family="arith") for op in ("abs", "neg")},
    **{op: Syntax(("type",), {"d": "type", "a": "type", "b": _U32}, family="arith")
       for op in ("shl", "shr")},
}
