"""The snippets a search enumerates, per domain: a grammar kept as tables.

Every instruction form comes from the variant catalogue (which compares a type takes,
whether it has `.ftz`, which `set` destinations and `slct` selectors exist, which
vset atype/btype pairs), so a snippet is legal PTX by construction. A *domain* is what
`--types` names: one PTX type, or `iN` (LLVM's name for an integer without a
signedness), the N-bit integers as every setp type of that width reads them, so
`setp.lt.s32` and `setp.lo.u32` meet on the same a and b. Snippets are grouped in
pools: one pool per domain and output signature (a predicate `p`, or `p|q` for a
packed type; a selected value `d`; a `set` mask `d` of each destination type; a
vset2 or vset4 result `d`). Only snippets of one pool are ever compared, and every
snippet of a pool is read over the pool's inputs (one that ignores an input simply
does not depend on it).

Size counts grammar steps: a compare, a `set`, a `slct`, a glue op on the compare's
result, or a `selp` of it. On a packed type the glue op runs once per lane's
predicate (`not.pred p, p; not.pred q, q;`) and counts as one step.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from ..isa.errors import PtxError
from ..isa.modifiers import LaneSpec, parse_lane_spec
from ..isa.opcodes import SYNTAX
from ..isa.types import PRED, TYPES, Kind, PtxType
from ..isa.variants import Variant, catalogue
from .text import printed, register

FAMILIES = ("setp", "glue", "chain", "selp", "slct", "set", "vset")
DEFAULT_FAMILIES = FAMILIES
FAMILY_HELP = {
    "setp": "setp with every CmpOp, .ftz and BoolOp (c or !c), operands (a, b) and (b, a)",
    "glue": "not/and/or/xor.pred on a setp's result (size 2)",
    "chain": "a second setp whose BoolOp reads the first one's p or !p (size 2)",
    "selp": "selp choosing x/y, y/x, a/b or b/a by a setp's result (size 2)",
    "slct": "slct choosing x/y or y/x by the sign of a or b",
    "set": "set with every CmpOp, .ftz and BoolOp, to each destination type",
    "vset": "vset2/vset4 with every CmpOp and atype/btype, operands (a, b) and (b, a); "
            "default and bank-swapped selectors, and a lane-0 mask",
}
DEFAULT_TYPES = ("f32", "f16x2", "s32", "i32")

OPERAND_ORDERS = (("a", "b"), ("b", "a"))
BOOL_SOURCES = (("c", False), ("c", True))  # a BoolOp's source: c and !c
CHAIN_SOURCES = (("p", False), ("p", True))  # a chained setp's: the first one's p and !p
GLUE_OPS = ("not", "and", "or", "xor")  # on the compare's result r, with the pool's c
SELP_CHOICES = (("x", "y"), ("y", "x"), ("a", "b"), ("b", "a"))
SLCT_CHOICES = (("x", "y"), ("y", "x"))

# vset lines, for operands x, y in that order (9.7.18.2): the defaults (every lane, x's
# lanes against y's); the registers swapped, each with the selector of the other's
# default (a selector indexes the bank second:first, so this reads the same lanes);
# only lane 0 written, the others merged from c. (The defaults spelled out are the
# identity library's: proofs/vset.toml.) Lanes, masks and selectors are the ISA's
# defaults (`ptxsmt.isa.opcodes`).
VSET_DEFAULTS = {op: {k: parse_lane_spec(v) for k, v in SYNTAX[op].lane_defaults.items()}
                 for op in SYNTAX if SYNTAX[op].lane_defaults}
VSET_LANES = {op: len(d["mask"].digits) for op, d in VSET_DEFAULTS.items()}
U32 = TYPES["u32"]


@dataclass(frozen=True)
class Domain:
    """What `--types NAME` searches: one PTX type, or `iN`, the N-bit integers as the
    sN, uN and bN instructions read them (compares of all three on the same a, b)."""

    name: str
    type: PtxType  # a and b's register type: shown, and read for classes, as this
    members: tuple[PtxType, ...]  # the types whose instructions snippets use

    @property
    def mixed(self) -> bool:
        """Signed and unsigned readings meet: the sign of an operand is then a class
        that can break a rewrite (`lt.s32` vs `lo.u32`), not an ordinary value."""
        return len({m.kind for m in self.members} - {Kind.BIT}) > 1

    @staticmethod
    def of(t: PtxType) -> Domain:
        return Domain(t.name, t, (t,))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Pool:
    """Snippets compared with each other: one domain, one output signature."""

    domain: Domain
    kind: str  # "pred" | "select" | "set" | "vset2" | "vset4"
    result: PtxType  # the output register's type
    outputs: tuple[str, ...]

    @property
    def type(self) -> PtxType:
        """The compared operands a, b (vset: the 32-bit registers holding the lanes)."""
        return U32 if self.kind in VSET_LANES else self.domain.type

    @property
    def name(self) -> str:
        suffix = {"pred": "", "set": f"/set.{self.result.name}"}.get(self.kind, f"/{self.kind}")
        return self.domain.name + suffix

    @property
    def inputs(self) -> dict[str, PtxType]:
        regs = {"a": self.type, "b": self.type, "c": PRED}
        if self.kind == "select":
            regs |= {"x": self.result, "y": self.result}
        if self.kind in VSET_LANES:
            regs["c"] = U32  # the spec's third operand: merged or accumulated lanes
        return regs

    @property
    def reading(self) -> tuple[PtxType, int]:
        """How a and b are classed: (the type of one lane, lanes). A vset lane is a byte
        or half-word, signed where the domain's compares are (i32 reads signed, so its
        sign bit is the class `negative`)."""
        if self.kind in VSET_LANES:
            lanes = VSET_LANES[self.kind]
            return TYPES[f"{self.domain.type.name[0]}{32 // lanes}"], lanes
        return self.type.lane, self.type.lanes

    @property
    def lanes(self) -> int:
        """Lanes of the output (vset's d): a near miss is judged lane by lane."""
        return VSET_LANES.get(self.kind, 1)


@dataclass(frozen=True, order=True)
class Snippet:
    size: int
    text: str
    pool: Pool


def _domains() -> dict[str, Domain]:
    """Every type with a setp, and iN where sN, uN and bN all have one."""
    out = {n: Domain.of(t) for n, t in TYPES.items() if compares(t)}
    for w in sorted({t.width for t in TYPES.values() if not t.is_float}):
        members = tuple(TYPES.get(f"{k}{w}") for k in "sub")
        if all(m is not None and compares(m) for m in members):
            out[f"i{w}"] = Domain(f"i{w}", members[0], members)
    return out


def parse_types(spec: str) -> tuple[Domain, ...]:
    """`f32,f16x2,s32,i32` as the domains a search covers: types with a setp, and iN."""
    names = [s.strip().lstrip(".") for s in spec.split(",") if s.strip()]
    if not names:
        raise PtxError("give at least one type, e.g. --types f32,s32")
    known = _domains()
    out = []
    for name in names:
        if name not in known:
            raise PtxError(f"no setp on type {name!r} (types: {', '.join(sorted(known))})")
        out.append(known[name])
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


def _operands(v: Variant, order: tuple[str, str], dests: tuple[str, ...],
              source: tuple[str, bool] | None) -> str:
    """A set or setp writing `dests` from the operands in `order` (and the source, with
    a BoolOp)."""
    ops = {k: register(k) for k in dests} | {"a": register(order[0]), "b": register(order[1])}
    if v.boolop:
        ops["c"] = register(*source)
    return printed(v, **ops)


def _glue(op: str, r: str) -> str:
    """One glue op on the compare's result r (and c)."""
    ops = {"d": register(r), "a": register(r)} | ({} if op == "not" else {"b": register("c")})
    return printed(Variant.of(op, {"type": PRED}), **ops)


def _compare_texts(d: Domain, dest: tuple[str, ...], sources=BOOL_SOURCES,
                   boolop_only: bool = False) -> Iterator[str]:
    """Every setp of the domain writing dest: each variant, operand order and BoolOp
    source."""
    for v in (v for t in d.members for v in _with_boolops(t)):
        if boolop_only and not v.boolop:
            continue
        for order in OPERAND_ORDERS:
            for source in (sources if v.boolop else (None,)):
                yield _operands(v, order, dest, source)


def pools(d: Domain, families: tuple[str, ...]) -> list[Pool]:
    t = d.type
    out = [Pool(d, "pred", PRED, ("p", "q") if t.is_packed else ("p",))]
    if {"selp", "slct"} & set(families) and selects(t):
        out.append(Pool(d, "select", t, ("d",)))
    if "set" in families:
        out += [Pool(d, "set", r, ("d",)) for r in _set_destinations(d)]
    if "vset" in families:
        out += [Pool(d, op, U32, ("d",)) for op in VSET_LANES if _vsets(d, op)]
    return out


def selects(t: PtxType) -> bool:
    return any(v.opcode == "selp" and v.type is t for v in catalogue())


@cache
def _set_destinations(d: Domain) -> tuple[PtxType, ...]:
    return tuple(dict.fromkeys(v.dtype for v in catalogue()
                               if v.opcode == "set" and v.stype in d.members))


@cache
def _vsets(d: Domain, op: str) -> tuple[Variant, ...]:
    """The plain vset variants (no .add) whose atype and btype are both the domain's."""
    return tuple(v for v in catalogue() if v.opcode == op and not v.add
                 and v.atype in d.members and v.btype in d.members)


def enumerate_snippets(d: Domain, size: int, families: tuple[str, ...]) -> list[Snippet]:
    """Every snippet of the domain of at most `size` steps from the families, smallest
    first."""
    out: list[Snippet] = []
    for pool in pools(d, families):
        out += POOL_SNIPPETS.get(pool.kind, _vset_snippets)(pool, size, families)
    return sorted(set(out))


def _pred_snippets(pool: Pool, size: int, families: tuple[str, ...]) -> Iterator[Snippet]:
    d, t = pool.domain, pool.type
    dest = pool.outputs  # p, or p and q (a packed type's lanes)
    if "setp" in families:
        yield from (Snippet(1, s, pool) for s in _compare_texts(d, dest))
    if size >= 2 and "glue" in families:
        for first in _compare_texts(d, dest):
            for op in GLUE_OPS:
                glue = " ".join(_glue(op, r) for r in pool.outputs)
                yield Snippet(2, f"{first} {glue}", pool)
    if size >= 2 and "chain" in families and not t.is_packed:
        firsts = (_operands(v, o, ("p",), None) for m in d.members for v in compares(m)
                  for o in OPERAND_ORDERS)
        for first in firsts:
            for second in _compare_texts(d, ("p",), CHAIN_SOURCES, boolop_only=True):
                yield Snippet(2, f"{first} {second}", pool)


def _select_snippets(pool: Pool, size: int, families: tuple[str, ...]) -> Iterator[Snippet]:
    t = pool.type  # one selp and slct type per pool: the domain's register type
    selp = Variant.of("selp", {"type": t})

    def choose(v: Variant, x: str, y: str, by: str) -> str:
        return printed(v, d=register("d"), a=register(x), b=register(y), c=register(by))

    if "selp" in families:
        yield from (Snippet(1, choose(selp, x, y, "c"), pool) for x, y in SLCT_CHOICES)
    if size >= 2 and "selp" in families:
        for first in _compare_texts(pool.domain, ("p",)):
            for x, y in SELP_CHOICES:
                yield Snippet(2, f"{first} {choose(selp, x, y, 'p')}", pool)
    if "slct" in families:
        for v in catalogue():
            if v.opcode == "slct" and v.dtype is t and v.ctype is t:
                for (x, y), sign in ((c, s) for c in SLCT_CHOICES for s in "ab"):
                    yield Snippet(1, choose(v, x, y, sign), pool)


def _set_snippets(pool: Pool, size: int, families: tuple[str, ...]) -> Iterator[Snippet]:
    for v in catalogue():
        if v.opcode == "set" and v.stype in pool.domain.members and v.dtype is pool.result:
            for order in OPERAND_ORDERS:
                for source in (BOOL_SOURCES if v.boolop else (None,)):
                    yield Snippet(1, _operands(v, order, ("d",), source), pool)


def _vset_snippets(pool: Pool, size: int, families: tuple[str, ...]) -> Iterator[Snippet]:
    lanes = VSET_DEFAULTS[pool.kind]
    lane0 = LaneSpec(lanes["mask"].prefix, (0,))
    for v in _vsets(pool.domain, pool.kind):
        for x, y in OPERAND_ORDERS:
            forms = ((register("d"), register(x), register(y)),
                     (register("d"), register(y, lane_spec=lanes["bsel"]),
                      register(x, lane_spec=lanes["asel"])),
                     (register("d", lane_spec=lane0), register(x), register(y)))
            for d, a, b in forms:
                yield Snippet(1, printed(v, d=d, a=a, b=b, c=register("c")), pool)


POOL_SNIPPETS = {"pred": _pred_snippets, "select": _select_snippets, "set": _set_snippets}
