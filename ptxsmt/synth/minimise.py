"""Which proved equalities a library needs: drop each one the others imply.

Equalities are kept in a union-find over snippet texts. A proved pair whose two sides
are already in one class follows from the pairs kept before it, by

- transitivity (the union-find itself: a group is a spanning tree around its
  representative, so n equal snippets need n - 1 rules, not n^2),
- congruence: a compare inside a bigger snippet may be replaced by an equal compare
  (`setp.gt p, b, a; not.pred p, p;` is `setp.lt p, a, b; not.pred p, p;` once the
  single compares are equal; a chained compare reading p is read with c for p), and
  a vset's plain form by an equal plain form under its mask,
- renaming: a rule with a and b (or x and y) swapped throughout is as true.

Pairs are taken smallest first, so the rules kept are the simplest ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from ..isa.modifiers import BoolOp, CmpOp
from ..isa.syntax import Instruction, Operand
from ..isa.types import PtxType
from ..isa.variants import Variant
from .text import instructions, printed, register, rename, text_of

RENAMINGS = ({"a": "b", "b": "a"}, {"x": "y", "y": "x"}, {"a": "b", "b": "a", "x": "y", "y": "x"})


class Literals:
    """Atoms up to equality and complement: union-find with parity."""

    def __init__(self):
        self.parent: dict[str, tuple[str, bool]] = {}

    def find(self, x: str) -> tuple[str, bool]:
        negated = False
        while x in self.parent:
            x, flip = self.parent[x]
            negated ^= flip
        return x, negated

    def relate(self, x: str, y: str, negated: bool) -> None:
        """x is y (negated: x is !y)."""
        (rx, px), (ry, py) = self.find(x), self.find(y)
        if rx != ry:
            first, second = sorted((rx, ry), key=lambda t: (len(t), t))
            self.parent[second] = (first, px ^ py ^ negated)


class Classes:
    """Union-find over snippet texts; the root of a class is its smallest member. Its
    `literals` relate compares that are equal or complementary (`ptxsmt.synth.boolean`)."""

    def __init__(self, order: dict[str, tuple]):
        self.parent: dict[str, str] = {}
        self.order = order  # text -> sort key (size, length, text)
        self.literals = Literals()
        self.anchors: dict[str, str] = {}  # outcome key -> its one single-compare snippet

    def find(self, x: str) -> str:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while x != root:
            self.parent[x], x = root, self.parent.get(x, x)
        return root

    def union(self, x: str, y: str) -> bool:
        rx, ry = self.find(x), self.find(y)
        if rx == ry:
            return False
        first, second = sorted((rx, ry), key=self._key)
        self.parent[second] = first
        return True

    def _key(self, text: str) -> tuple:
        return self.order.get(text, (99, len(text), 0, text))

    def same(self, x: str, y: str) -> bool:
        return self.find(x) == self.find(y)


@dataclass(frozen=True)
class Compare:
    """A set or setp instruction read as its parts: `set.lt.or.ftz.u32.f32 d, b, a, !c;`
    is the compare `setp.lt.ftz.f32 p, b, a;` (its core) around which set writes d and
    or-s !c."""

    ins: Instruction

    @staticmethod
    def of(ins: Instruction) -> Compare | None:
        return Compare(ins) if ins.variant.opcode in ("set", "setp") else None

    @staticmethod
    @lru_cache(maxsize=1 << 16)  # a search reads each line many times over
    def read(text: str) -> Compare | None:
        """A one-instruction snippet as a compare; None for anything else."""
        found = instructions(text)
        return Compare.of(found[0]) if len(found) == 1 else None

    @property
    def variant(self) -> Variant:
        return self.ins.variant

    @property
    def opcode(self) -> str:
        return self.variant.opcode

    @cached_property
    def type(self) -> PtxType:
        """The type compared (setp's type, set's stype)."""
        return self.variant.compared_type

    @property
    def ftz(self) -> bool:
        return self.variant.ftz

    @property
    def boolop(self) -> str | None:
        return str(self.variant.boolop) if self.variant.boolop else None

    @property
    def order(self) -> tuple[str, str]:
        return self.ins.operands["a"].text, self.ins.operands["b"].text

    @property
    def source(self) -> Operand | None:
        """The BoolOp's predicate operand (`c`, `!c`, `p`, `!p`)."""
        return self.ins.operands.get("c")

    def _setp(self, order: tuple[str, str], boolop: bool, source: Operand | None) -> str:
        return _setp(self.type, self.variant.cmp, self.ftz,
                     self.variant.boolop if boolop else None, order, source)

    @cached_property
    def core(self) -> str:
        """The plain compare inside: CmpOp, .ftz and operand order."""
        return self._setp(self.order, False, None)

    def core_on(self, order: tuple[str, str]) -> str:
        """The core on other operands (`a, b` for one on `b, a`)."""
        return self._setp(order, False, None)

    @cached_property
    def predicate(self) -> str:
        """The setp computing the same predicate (a BoolOp source reading p read as c)."""
        source = self.source and register("c", self.source.negated)
        return self._setp(self.order, True, source)

    def rebuilt(self, like: Compare, parts: str) -> str:
        """This instruction with `like`'s CmpOp, .ftz, operand order and, for parts "all",
        its BoolOp and source too (the source's register stays this one's)."""
        boolop, source = self.variant.boolop, self.source
        if parts == "all":
            boolop = like.variant.boolop
            source = like.source and register(self.source.text if self.source else "c",
                                              like.source.negated)
        dests = tuple((k, o) for k, o in self.ins.operands.items() if k not in ("a", "b", "c"))
        return _rebuilt(self.variant, dests, like.variant.cmp, like.ftz, boolop, like.order,
                        source)


@lru_cache(maxsize=1 << 16)
def _rebuilt(v: Variant, dests: tuple[tuple[str, Operand], ...], cmp: CmpOp, ftz: bool,
             boolop: BoolOp | None, order: tuple[str, str], source: Operand | None) -> str:
    ops = dict(dests) | {"a": register(order[0]), "b": register(order[1]),
                         **({"c": source} if source else {})}
    return printed(replace(v, cmp=cmp, ftz=ftz, boolop=boolop), **ops)


@lru_cache(maxsize=1 << 16)
def _setp(t: PtxType, cmp: CmpOp, ftz: bool, boolop: BoolOp | None, order: tuple[str, str],
          source: Operand | None) -> str:
    v = Variant.of("setp", {"type": t}, cmp=cmp, ftz=ftz, boolop=boolop)
    dests = ("p", "q") if t.is_packed else ("p",)
    ops = {**{k: register(k) for k in dests}, "a": register(order[0]),
           "b": register(order[1]), **({"c": source} if source else {})}
    return printed(v, **ops)


@lru_cache(maxsize=1 << 16)
def compares(text: str) -> tuple[tuple[Instruction, Compare | None], ...]:
    """Each instruction of the snippet, with its reading as a compare (None if it is not
    one)."""
    return tuple((ins, Compare.of(ins)) for ins in instructions(text))


def congruent(text: str, classes: Classes) -> str:
    """The snippet with each compare rewritten by what is proved of its parts: its core
    (CmpOp, .ftz and operand order) by the smallest plain setp equal to it, then its
    whole predicate by the smallest single setp equal to it. set and setp compute
    BoolOp(core, c) and set writes that predicate's value in its destination type, so
    equal parts make equal instructions whatever the BoolOp, source and destination."""
    out = []
    for ins, compare in compares(text):
        if compare is not None:
            like = Compare.read(classes.find(compare.core)) or compare
            compare = Compare.read(compare.rebuilt(like, "core"))
            root = Compare.read(classes.find(compare.predicate))
            out.append(compare.rebuilt(root or compare, "all" if root else "core"))
        elif ins.variant.opcode in ("vset2", "vset4"):
            out.append(text_of([_masked(ins, classes)]))
        else:
            out.append(text_of([ins]))
    return " ".join(out)


def _masked(ins: Instruction, classes: Classes) -> Instruction:
    """A vset with a mask (`d.b0`: the other lanes merged from c) rewritten by what is
    proved of its plain form: the masked result is the plain result merged with c, so
    equal plain forms make equal masked ones."""
    dest = ins.operands["d"]
    if dest.lane_spec is None:
        return ins
    plain = replace(ins, operands={**ins.operands, "d": replace(dest, lane_spec=None)})
    root = instructions(classes.find(text_of([plain])))
    if len(root) != 1 or root[0].operands["d"].lane_spec is not None or \
            root[0].variant.opcode != ins.variant.opcode:
        return ins
    return replace(root[0], operands={**root[0].operands, "d": dest})


def imply(classes: Classes, lhs: str, rhs: str) -> None:
    """Record lhs = rhs and what it gives by renaming."""
    classes.union(lhs, rhs)
    for mapping in RENAMINGS:
        classes.union(rename(lhs, mapping), rename(rhs, mapping))

