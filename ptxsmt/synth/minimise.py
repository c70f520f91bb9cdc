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

import re
from dataclasses import dataclass
from functools import lru_cache

RENAMINGS = ({"a": "b", "b": "a"}, {"x": "y", "y": "x"}, {"a": "b", "b": "a", "x": "y", "y": "x"})
BOOLOPS = ("and", "or", "xor")
_REGISTER = re.compile(r"(?<![\w.%])([abxy])\b")


def rename(text: str, mapping: dict[str, str]) -> str:
    return _renamed(text, tuple(sorted(mapping.items())))


@lru_cache(maxsize=1 << 16)
def _renamed(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    mapping = dict(pairs)
    return _REGISTER.sub(lambda m: mapping.get(m.group(1), m.group(1)), text)


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
    """A set or setp line read as its parts: `set.lt.ftz.or.u32.f32 d, b, a, !c;` is the
    compare `setp.lt.ftz.f32 p, b, a;` (its core) around which set writes d and or-s !c."""

    opcode: str
    cmp: str
    ftz: bool
    boolop: str | None
    types: tuple[str, ...]
    dest: str
    order: tuple[str, str]
    source: str | None

    @staticmethod
    @lru_cache(maxsize=1 << 16)  # a search reads each line many times over
    def read(line: str) -> Compare | None:
        head, _, operands = line.rstrip(";").partition(" ")
        words = head.split(".")
        if words[0] not in ("set", "setp"):
            return None
        regs = operands.split(", ")
        boolop = next((w for w in words[2:] if w in BOOLOPS), None)
        return Compare(words[0], words[1], "ftz" in words, boolop,
                   tuple(w for w in words[2:] if w != "ftz" and w not in BOOLOPS),
                   regs[0], (regs[1], regs[2]), regs[3] if len(regs) > 3 else None)

    @property
    def _dest(self) -> str:
        return "p|q" if self.types[-1].endswith("x2") else "p"

    @property
    def core(self) -> str:
        """The plain compare inside: CmpOp, .ftz and operand order."""
        return f"setp.{self.cmp}{'.ftz' * self.ftz}.{self.types[-1]} {self._dest}, " \
               f"{self.order[0]}, {self.order[1]};"

    @property
    def predicate(self) -> str:
        """The setp computing the same predicate (a BoolOp source reading p read as c)."""
        words = ["setp", self.cmp, *(["ftz"] if self.ftz else []),
                 *([self.boolop] if self.boolop else []), self.types[-1]]
        regs = [self._dest, *self.order, *([self._as_c(self.source)] if self.source else [])]
        return f"{'.'.join(words)} {', '.join(regs)};"

    @staticmethod
    def _as_c(source: str) -> str:
        return source[:-1] + "c"

    def rebuilt(self, like: Compare, parts: str) -> str:
        """This line with `like`'s CmpOp, .ftz, operand order and, for parts "all",
        its BoolOp and source too."""
        boolop, source = self.boolop, self.source
        if parts == "all":
            boolop = like.boolop
            source = like.source and like.source.replace("c", self.source.lstrip("!")
                                                         if self.source else "c")
        words = [self.opcode, like.cmp, *(["ftz"] if like.ftz else []),
                 *([boolop] if boolop else []), *self.types]
        regs = [self.dest, *like.order, *([source] if source else [])]
        return f"{'.'.join(words)} {', '.join(regs)};"


def congruent(text: str, classes: Classes) -> str:
    """The snippet with each compare rewritten by what is proved of its parts: its core
    (CmpOp, .ftz and operand order) by the smallest plain setp equal to it, then its
    whole predicate by the smallest single setp equal to it. set and setp compute
    BoolOp(core, c) and set writes that predicate's value in its destination type, so
    equal parts make equal instructions whatever the BoolOp, source and destination."""
    out = []
    for line in (s.strip() + ";" for s in text.split(";") if s.strip()):
        compare = Compare.read(line)
        if compare is not None:
            compare = Compare.read(compare.rebuilt(Compare.read(classes.find(compare.core)),
                                                   "core"))
            root = classes.find(compare.predicate)
            line = compare.rebuilt(Compare.read(root), "all") if root.count(";") == 1 \
                else compare.rebuilt(compare, "core")
        elif line.startswith(("vset2.", "vset4.")):
            line = _masked(line, classes)
        out.append(line)
    return " ".join(out)


def _masked(line: str, classes: Classes) -> str:
    """A vset with a mask (`d.b0`: the other lanes merged from c) rewritten by what is
    proved of its plain form: the masked result is the plain result merged with c, so
    equal plain forms make equal masked ones."""
    head, _, operands = line.rstrip(";").partition(" ")
    dest, _, sources = operands.partition(", ")
    if dest == "d":
        return line
    root = classes.find(f"{head} d, {sources};")
    root_head, _, root_operands = root.rstrip(";").partition(" ")
    root_dest, _, root_sources = root_operands.partition(", ")
    if root.count(";") != 1 or root_dest != "d" or \
            root_head.split(".")[0] != head.split(".")[0]:
        return line
    return f"{root_head} {dest}, {root_sources};"


def imply(classes: Classes, lhs: str, rhs: str) -> None:
    """Record lhs = rhs and what it gives by renaming."""
    classes.union(lhs, rhs)
    for mapping in RENAMINGS:
        classes.union(rename(lhs, mapping), rename(rhs, mapping))

