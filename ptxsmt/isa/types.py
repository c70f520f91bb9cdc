"""PTX types: spelling, kind, register width, lane count and float format.

The one place that knows how wide a type is and which IEEE format a float
lane uses. Everything else asks here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(Enum):
    BIT = "bit"
    UNSIGNED = "unsigned"
    SIGNED = "signed"
    FLOAT = "float"
    PRED = "pred"


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-754 binary format; `sbits` counts the hidden bit, as Z3 does."""

    name: str
    ebits: int
    sbits: int

    @property
    def width(self) -> int:
        return self.ebits + self.sbits


F16 = FloatFormat("binary16", 5, 11)
BF16 = FloatFormat("bfloat16", 8, 8)
F32 = FloatFormat("binary32", 8, 24)
F64 = FloatFormat("binary64", 11, 53)


@dataclass(frozen=True)
class PtxType:
    name: str
    kind: Kind
    width: int
    lanes: int = 1
    fmt: FloatFormat | None = None
    # Facts ptxas 13.0 enforces (docs/ptxas-legality.md), kept with the type:
    literal: bool = True  # PTX has an immediate for it (none for f16/bf16 and the x2 types)
    ftz: bool = False  # compares on it take .ftz (9.7.6: f32 only; 9.7.7: f16, f16x2)
    predicate_pair: bool = True  # setp on it may write p|q ("Predicate output not allowed")
    predicate_literal: bool = True  # a set/setp on it takes c as 0/1 (bf16: "Arguments mismatch")
    declared_as: str = ""  # the register type a kernel declares for it, if not its own

    @property
    def lane_width(self) -> int:
        return self.width // self.lanes

    @property
    def spelling(self) -> str:
        return "." + self.name

    @property
    def is_float(self) -> bool:
        return self.kind is Kind.FLOAT

    @property
    def is_packed(self) -> bool:
        return self.lanes > 1

    @property
    def is_half(self) -> bool:
        """f16, bf16, f16x2, bf16x2: the types of 9.7.7 (half-precision set/setp)."""
        return self.fmt is not None and self.fmt.width == 16

    @property
    def register(self) -> str:
        """The `.reg` type that holds it: ptxas cannot declare .bf16 or .bf16x2."""
        return self.declared_as or self.name

    @property
    def lane(self) -> PtxType:
        """The type of one lane: f16 for f16x2, s16 for s16x2, ..., else itself."""
        return TYPES[self.name.removesuffix("x2")] if self.is_packed else self

    def __str__(self) -> str:
        return self.name


def _ints() -> list[PtxType]:
    kinds = (("b", Kind.BIT), ("u", Kind.UNSIGNED), ("s", Kind.SIGNED))
    return [PtxType(f"{p}{w}", k, w) for p, k in kinds for w in (8, 16, 32, 64)]


ALL_TYPES: tuple[PtxType, ...] = (
    *_ints(),
    PtxType("f16", Kind.FLOAT, 16, fmt=F16, literal=False, ftz=True, predicate_pair=False),
    PtxType("bf16", Kind.FLOAT, 16, fmt=BF16, literal=False, predicate_pair=False,
            predicate_literal=False, declared_as="b16"),
    PtxType("f32", Kind.FLOAT, 32, fmt=F32, ftz=True),
    PtxType("f64", Kind.FLOAT, 64, fmt=F64),
    PtxType("f16x2", Kind.FLOAT, 32, lanes=2, fmt=F16, literal=False, ftz=True),
    PtxType("bf16x2", Kind.FLOAT, 32, lanes=2, fmt=BF16, literal=False, predicate_literal=False,
            declared_as="b32"),
    # "For instruction types .u16x2, .s16x2, operands d, a and b have type .b32" (9.7.1):
    # ptxas: "Type .s16x2 may only be used as an instruction type"; no immediate
    PtxType("u16x2", Kind.UNSIGNED, 32, lanes=2, literal=False, declared_as="b32"),
    PtxType("s16x2", Kind.SIGNED, 32, lanes=2, literal=False, declared_as="b32"),
    PtxType("pred", Kind.PRED, 1),
)
TYPES: dict[str, PtxType] = {t.name: t for t in ALL_TYPES}
PRED = TYPES["pred"]


def ptx_type(name: str) -> PtxType:
    """Look a type up by its spelling, with or without the leading dot."""
    return TYPES[name.lstrip(".")]


def bit_type(width: int) -> PtxType:
    return TYPES[f"b{width}"]
