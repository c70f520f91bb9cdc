"""The snippets a search enumerates, per type: a grammar kept as tables.

Every instruction form comes from the variant catalogue (which compares a type takes,
whether it has `.ftz`, which `set` destinations and `slct` selectors exist), so a
snippet is legal PTX by construction. Snippets are grouped in pools: one pool per
type and output signature (a predicate `p`, or `p|q` for a packed type; a selected
value `d`; a `set` mask `d` of each destination type). Only snippets of one pool are
ever compared, and every snippet of a pool is read over the pool's inputs (one that
ignores an input simply does not depend on it).

Size counts grammar steps: a compare, a `set`, a `slct`, a glue op on the compare's
result, or a `selp` of it. On a packed type the glue op runs once per lane's
predicate (`not.pred p, p; not.pred q, q;`) and counts as one step.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from ..isa.errors import PtxError
from ..isa.types import PRED, TYPES, PtxType
from ..isa.variants import Variant, catalogue

FAMILIES = ("setp", "glue", "chain", "selp", "slct", "set")
DEFAULT_FAMILIES = FAMILIES
FAMILY_HELP = {
    "setp": "setp with every CmpOp, .ftz and BoolOp (c or !c), operands (a, b) and (b, a)",
    "glue": "not/and/or/xor.pred on a setp's result (size 2)",
    "chain": "a second setp whose BoolOp reads the first one's p or !p (size 2)",
    "selp": "selp choosing x/y, y/x, a/b or b/a by a setp's result (size 2)",
    "slct": "slct choosing x/y or y/x by the sign of a or b",
    "set": "set with every CmpOp, .ftz and BoolOp, to each destination type",
}
DEFAULT_TYPES = ("f32", "f16x2", "s32")

OPERAND_ORDERS = (("a", "b"), ("b", "a"))
BOOL_SOURCES = ("c", "!c")
CHAIN_SOURCES = ("p", "!p")
GLUE_STEPS = {  # on the compare's result r; c is the pool's predicate input
    "not": "not.pred {r}, {r};",
    "and": "and.pred {r}, {r}, c;",
    "or": "or.pred {r}, {r}, c;",
    "xor": "xor.pred {r}, {r}, c;",
}
SELP_CHOICES = (("x", "y"), ("y", "x"), ("a", "b"), ("b", "a"))
SLCT_CHOICES = (("x", "y"), ("y", "x"))


@dataclass(frozen=True)
class Pool:
    """Snippets compared with each other: one type, one output signature."""

    type: PtxType  # the compared operands a, b
    kind: str  # "pred" | "select" | "set"
    result: PtxType  # the output register's type
    outputs: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.type.name if self.kind == "pred" else \
            f"{self.type.name}/{self.kind}" + (f".{self.result.name}" if self.kind == "set" else "")

    @property
    def inputs(self) -> dict[str, PtxType]:
        regs = {"a": self.type, "b": self.type, "c": PRED}
        if self.kind == "select":
            regs |= {"x": self.result, "y": self.result}
        return regs


@dataclass(frozen=True, order=True)
class Snippet:
    size: int
    text: str
    pool: Pool

    @property
    def lines(self) -> list[str]:
        return [s.strip() + ";" for s in self.text.split(";") if s.strip()]


def parse_types(spec: str) -> tuple[PtxType, ...]:
    """`f32,f16x2,s32` as types a search covers (those with a setp)."""
    names = [s.strip().lstrip(".") for s in spec.split(",") if s.strip()]
    if not names:
        raise PtxError("give at least one type, e.g. --types f32,s32")
    out = []
    for name in names:
        t = TYPES.get(name)
        if t is None or not compares(t):
            known = ", ".join(sorted(n for n, t in TYPES.items() if compares(t)))
            raise PtxError(f"no setp on type {name!r} (types: {known})")
        out.append(t)
    return tuple(dict.fromkeys(out))


def parse_families(spec: str | None) -> tuple[str, ...]:
    if not spec:
        return DEFAULT_FAMILIES
    names = tuple(dict.fromkeys(s.strip() for s in spec.split(",") if s.strip()))
    bad = [n for n in names if n not in FAMILIES]
    if bad or not names:
        raise PtxError(f"unknown family {bad[0] if bad else spec!r} "
                       f"(families: {', '.join(FAMILIES)})")
    return names


@cache
def compares(t: PtxType) -> tuple[Variant, ...]:
    """The setp variants on t, without a BoolOp, in catalogue order."""
    return tuple(v for v in catalogue() if v.opcode == "setp" and v.type is t
                 and v.boolop is None)


@cache
def _with_boolops(t: PtxType) -> tuple[Variant, ...]:
    return tuple(v for v in catalogue() if v.opcode == "setp" and v.type is t)


def _operands(v: Variant, order: tuple[str, str], dest: str, source: str | None) -> str:
    return f"{v} {dest}, {order[0]}, {order[1]}" + (f", {source}" if v.boolop else "") + ";"


def _compare_texts(t: PtxType, dest: str, sources=BOOL_SOURCES,
                   boolop_only: bool = False) -> Iterator[str]:
    """Every setp on t writing dest: each variant, operand order and BoolOp source."""
    for v in _with_boolops(t):
        if boolop_only and not v.boolop:
            continue
        for order in OPERAND_ORDERS:
            for source in (sources if v.boolop else (None,)):
                yield _operands(v, order, dest, source)


def pools(t: PtxType, families: tuple[str, ...]) -> list[Pool]:
    out = [Pool(t, "pred", PRED, ("p", "q") if t.is_packed else ("p",))]
    if {"selp", "slct"} & set(families) and selects(t):
        out.append(Pool(t, "select", t, ("d",)))
    if "set" in families:
        out += [Pool(t, "set", d, ("d",)) for d in _set_destinations(t)]
    return out


def selects(t: PtxType) -> bool:
    return any(v.opcode == "selp" and v.type is t for v in catalogue())


@cache
def _set_destinations(t: PtxType) -> tuple[PtxType, ...]:
    return tuple(dict.fromkeys(v.dtype for v in catalogue()
                               if v.opcode == "set" and v.stype is t))


def enumerate_snippets(t: PtxType, size: int, families: tuple[str, ...]) -> list[Snippet]:
    """Every snippet on t of at most `size` steps from the families, smallest first."""
    out: list[Snippet] = []
    for pool in pools(t, families):
        out += _pool_snippets(pool, size, families)
    return sorted(set(out))


def _pool_snippets(pool: Pool, size: int, families: tuple[str, ...]) -> Iterator[Snippet]:
    t = pool.type
    if pool.kind == "pred":
        dest = "p|q" if t.is_packed else "p"
        if "setp" in families:
            yield from (Snippet(1, s, pool) for s in _compare_texts(t, dest))
        if size >= 2 and "glue" in families:
            for first in _compare_texts(t, dest):
                for step in GLUE_STEPS.values():
                    glue = " ".join(step.format(r=r) for r in pool.outputs)
                    yield Snippet(2, f"{first} {glue}", pool)
        if size >= 2 and "chain" in families and not t.is_packed:
            for first in (_operands(v, o, "p", None) for v in compares(t) for o in OPERAND_ORDERS):
                for second in _compare_texts(t, "p", CHAIN_SOURCES, boolop_only=True):
                    yield Snippet(2, f"{first} {second}", pool)
    elif pool.kind == "select":
        if "selp" in families:
            yield from (Snippet(1, f"selp.{t} d, {x}, {y}, c;", pool) for x, y in SLCT_CHOICES)
        if size >= 2 and "selp" in families:
            for first in _compare_texts(t, "p"):
                for x, y in SELP_CHOICES:
                    yield Snippet(2, f"{first} selp.{t} d, {x}, {y}, p;", pool)
        if "slct" in families:
            for v in catalogue():
                if v.opcode == "slct" and v.dtype is t and v.ctype is t:
                    for (x, y), sign in ((c, s) for c in SLCT_CHOICES for s in "ab"):
                        yield Snippet(1, f"{v} d, {x}, {y}, {sign};", pool)
    else:
        for v in catalogue():
            if v.opcode == "set" and v.stype is t and v.dtype is pool.result:
                for order in OPERAND_ORDERS:
                    for source in (BOOL_SOURCES if v.boolop else (None,)):
                        yield Snippet(1, _operands(v, order, "d", source), pool)
