"""Division by a constant, read back from the multiply-high a compiler writes for it.

llc divides by a constant with no divide (at -O0 too): `x udiv 7` is
`((x - hi(x*M)) >> 1 + hi(x*M)) >> 2`, M a "magic" number, `hi` the upper half of the
wide product (`mul.hi`); `x sdiv 8` is `(x + ((x >>s 31) >> 29)) >>s 3`; a remainder is
`x - c * (x / c)`. Opt reassociates the arithmetic around them, and a bit-blasting
solver cannot prove such a sequence equal to another spelling of the same division
(bitwuzla and z3 both time out at 60 s on `udiv x, 7` alone). Equivalence sweeping
(`fraig.py`) rewrites each one as the division it computes, so that the two functions'
divisions meet as one term:

1. A candidate is a value of one operand x alone, over the high bits of x times a
   constant (`mul.hi`, its top bits, a product in x's width shifted right) or x's
   sign spread (`x >>s (w-1)`), through the operators of INTEGER.
2. Simulated on a few hundred values of x's domain (`simulate.evaluate_node`), its
   divisor is guessed (the least x where the quotient is 1, or where the remainder is
   not x; over the domain, then over every x) and checked on every value: a guess only.
3. The guess is proved for every x by z3 in linear integer arithmetic: the candidate
   written over the integers (INTEGER: each operator's meaning on the unsigned value
   of its bits, wrap-around as `mod 2^w`; tests/test_division.py proves each row
   against the bit-vector operator) differs from the division nowhere in x's domain:
   [0, 2^w), or less where x's known bits or its range bound it (`known.Ranges`:
   through selects, mins and maxes, masks, guards a range decides) or x is a quotient
   or remainder read back (llc divides it by a multiplier exact only there, `_domain`).
   A candidate narrower than x is read as the low bits of x's quotient or remainder
   (`Found.width`).
   There the magic multiply is a product by a numeral and the shifts divisions by
   powers of two: decided in milliseconds, where bit-blasting does not finish.
   Proved, the node is written `bvudiv x c` (`bvsdiv`, `bvurem`, `bvsrem`; opt's
   `x - (x / c)*c` is `bvurem` too, `rewrite._remainder`); anything else is left as it is.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import z3

from ..solving import budget as budgets
from ..solving.budget import Budget
from .known import Range, Ranges, known_zeros, sign_bits, trailing_zeros
from .simulate import Node, evaluate_node

CONE = 64  # nodes a candidate may hold above its operand (llc's sequences hold < 30)
ABOVE = 8  # levels above a multiply-high or sign spread a candidate may lie
PROOF_SECONDS = 5.0  # one lemma in integer arithmetic (CPU; milliseconds, when it holds)
SAMPLES = 256


def _signed(v, w: int):
    """The signed value of w bits held as unsigned `v` (an int or the operand, a z3
    Int in [0, 2^w)), or as any integer congruent to it (a z3 Int)."""
    top = 1 << (w - 1)
    if not isinstance(v, z3.ArithRef):
        return (v + top) % (1 << w) - top
    if v.eq(_variable(w)):
        return z3.If(v >= top, v - (1 << w), v)
    return v - (1 << w) * ((v + top) / (1 << w))


def _floor_div(a, n: int):
    """a divided by n > 0, rounded down (z3's `div` by a positive numeral is so)."""
    return a / n if isinstance(a, z3.ArithRef) else a // n


def _mod(a, n: int):
    return a % n  # n > 0: in [0, n) for ints and z3 Ints alike


def _shift(n: int, w: int) -> int:
    return min(n, w)


def _and(a: list, w: int):
    """An and of one value and a mask of one run of ones, bits k to j: the value's bits
    below j + 1 less those below k (a mod 2^(j+1) - a mod 2^k; opt folds the shifts of
    `(x udiv c) << k` into `hi(x * M) & mask`); None for any other."""
    symbolic = [isinstance(x, z3.ArithRef) for x in a]
    if len(a) != 2 or all(symbolic):
        return None
    if not any(symbolic):
        return a[0] & a[1]
    x, m = a if isinstance(a[0], z3.ArithRef) else a[::-1]
    m %= 1 << w  # a numeral comes signed (`_integer`)
    low = m & -m  # 2^k
    top = m + low  # 2^(j+1)
    if m == 0 or top & (top - 1):
        return None  # no run, or more than one
    below = x if top == 1 << w else _mod(x, top)  # congruent mod 2^w: no mod needed
    return below - _mod(x, low) if low > 1 else below


def _product(args: list):
    """A product with at most one operand not a numeral (linear arithmetic)."""
    if sum(isinstance(a, z3.ArithRef) for a in args) > 1:
        return None
    out = 1
    for a in args:
        out = out * a
    return out


def _exact(a, w: int):
    """The unsigned value of w bits held as any integer congruent to it mod 2^w (the
    operand itself is exact: `_variable`)."""
    return a if isinstance(a, z3.ArithRef) and a.eq(_variable(w)) else _mod(a, 1 << w)


def _variable(w: int) -> z3.ArithRef:
    """The operand of w bits, over the integers: in [0, 2^w) (`_lemma`)."""
    return z3.Int(f" x{w}")


# Each bit-vector operator's value, given its operands' (`a`), as an integer congruent
# to the unsigned value of its bits mod 2^w (`w` its width, `kid` its first operand's,
# `n` the node: its parameters): sums and products are left unreduced, and `_exact`
# taken only where the value itself is read (a right shift, an extension), which keeps
# the arithmetic small for the solver. None where the operator is not linear there.
INTEGER: dict[int, Callable] = {
    z3.Z3_OP_BADD: lambda n, a, w, kid: sum(a[1:], a[0]),
    z3.Z3_OP_BSUB: lambda n, a, w, kid: a[0] - sum(a[1:], 0),
    z3.Z3_OP_BNEG: lambda n, a, w, kid: -a[0],
    z3.Z3_OP_BMUL: lambda n, a, w, kid: _product(a),
    z3.Z3_OP_BSHL: lambda n, a, w, kid: None if isinstance(a[1], z3.ArithRef) else
    a[0] * (1 << a[1]) if a[1] < w else 0,
    z3.Z3_OP_BLSHR: lambda n, a, w, kid: None if isinstance(a[1], z3.ArithRef) else
    _floor_div(_exact(a[0], w), 1 << _shift(a[1], w)),
    z3.Z3_OP_BASHR: lambda n, a, w, kid: None if isinstance(a[1], z3.ArithRef) else
    _floor_div(_signed(a[0], w), 1 << _shift(a[1], w - 1)),
    z3.Z3_OP_EXTRACT: lambda n, a, w, kid: _floor_div(a[0], 1 << n.params[1]),
    z3.Z3_OP_ZERO_EXT: lambda n, a, w, kid: _exact(a[0], kid),
    z3.Z3_OP_SIGN_EXT: lambda n, a, w, kid: _signed(a[0], kid),
    z3.Z3_OP_CONCAT: lambda n, a, w, kid: a[0] * (1 << (w - kid)) + _exact(a[1], w - kid)
    if len(a) == 2 else None,
    z3.Z3_OP_BAND: lambda n, a, w, kid: _and(a, w),
}


def _trunc_div(a, c: int):
    """C's a / c (toward zero) of a signed int or z3 Int, c a nonzero numeral."""
    q = z3.If(a >= 0, a / abs(c), -((-a) / abs(c))) if isinstance(a, z3.ArithRef) else \
        abs(a) // abs(c) * (1 if a >= 0 else -1)
    return -q if c < 0 else q


def _trunc_rem(a, c: int):
    return a - c * _trunc_div(a, c)


@dataclass(frozen=True)
class Division:
    """One operator a candidate may be: its value on the unsigned value of x's bits
    (ints or z3 Ints), the least divisor to try given the candidate as a function,
    and its term."""

    name: str
    value: Callable  # (x, c, w) -> the result, congruent to its unsigned value mod 2^w
    divisor: Callable[[Callable[[int], int], Domain], int | None]
    term: Callable[[z3.BitVecRef, int, Callable], z3.BitVecRef]


@dataclass(frozen=True)
class Domain:
    """The unsigned values of `width` bits an operand may take: those up to `most`
    that are the sign extension of their low `bits` bits (`_domain`)."""

    width: int
    most: int
    bits: int

    @classmethod
    def every(cls, w: int) -> Domain:
        return cls(w, (1 << w) - 1, w)

    def intervals(self) -> list[tuple[int, int]]:
        """Its values as intervals (bounds included), each within one half of [0, 2^w)
        (below 2^(w-1) a signed value is its unsigned one, from there on that less 2^w)."""
        half = 1 << (self.bits - 1)
        pairs = ((0, min(half - 1, self.most)), ((1 << self.width) - half, self.most))
        return [(lo, hi) for lo, hi in pairs if lo <= hi]

    def positive(self) -> int:
        """Its greatest value below 2^(w-1)."""
        return self.intervals()[0][1]

    def of(self, v: int) -> int:
        """A value of it, for any v of `width` bits (its negative ones where v's top bit is
        set)."""
        spans = self.intervals()
        lo, hi = spans[-1] if v >> (self.width - 1) else spans[0]
        return lo + v % (hi - lo + 1)


def _least(f: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The least v in [lo, hi] where f holds, f false below it and true from it on."""
    if not f(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if f(mid) else (mid + 1, hi)
    return lo


def _quotient_divisor(f: Callable[[int], int], domain: Domain, signed: bool) -> int | None:
    w = domain.width
    top = domain.positive() if signed else domain.most
    at_top = _signed(f(top), w) if signed else f(top)
    if at_top == 0:
        return None
    if at_top > 0:
        return _least(lambda v: (_signed(f(v), w) if signed else f(v)) >= 1, 1, top)
    c = _least(lambda v: _signed(f(v), w) <= -1, 1, top)
    return None if c is None else -c


def _remainder_divisor(f: Callable[[int], int], domain: Domain) -> int | None:
    return _least(lambda v: f(v) != v, 1, domain.positive())


def _udiv(x: z3.BitVecRef, c: int) -> z3.BitVecRef:
    return z3.LShR(x, c.bit_length() - 1) if c & (c - 1) == 0 else \
        z3.UDiv(x, z3.BitVecVal(c, x.size()))


def _sdiv(x: z3.BitVecRef, c: int) -> z3.BitVecRef:
    return x / z3.BitVecVal(c, x.size())


# `term`: the division over x, a quotient written by `write` (the sweep's normal form,
# where `(y udiv a) udiv b` is `y udiv (a*b)`), a remainder as `bvurem` (`bvsrem`), as
# `rewrite._remainder` writes opt's `x - (x / c)*c`: the quotient's normal form may
# divide another value (`(y udiv 7) - 3*((y udiv 7) udiv 3)` would be no remainder)
DIVISIONS = (
    Division("udiv", lambda x, c, w: _floor_div(x, c),
             lambda f, domain: _quotient_divisor(f, domain, False),
             lambda x, c, write: write(_udiv(x, c))),
    Division("sdiv", lambda x, c, w: _trunc_div(_signed(x, w), c),
             lambda f, domain: _quotient_divisor(f, domain, True),
             lambda x, c, write: write(_sdiv(x, c))),
    Division("urem", lambda x, c, w: _mod(x, c), _remainder_divisor,
             lambda x, c, write: z3.URem(x, z3.BitVecVal(c, x.size()))),
    Division("srem", lambda x, c, w: _trunc_rem(_signed(x, w), c),
             _remainder_divisor,
             lambda x, c, write: z3.SRem(x, z3.BitVecVal(c, x.size()))),
)


@dataclass(frozen=True)
class Found:
    """Node `node` is `division` of node `operand` by `divisor`, or its low `width`
    bits where the node is narrower than the operand (0: as wide), times 2^`scale`
    (opt's `(x udiv c) << k` is `hi(x * M) & mask`, the shifts folded into the mask)."""

    division: Division
    operand: int
    divisor: int
    width: int = 0
    scale: int = 0

    def over(self, x: z3.BitVecRef,
             write: Callable[[z3.ExprRef], z3.ExprRef] = lambda t: t) -> z3.BitVecRef:
        """The division over x (a term equal to the operand), its quotient `write`n."""
        term = self.division.term(x, self.divisor, write)
        term = z3.Extract(self.width - 1, 0, term) if self.width else term
        return term * (1 << self.scale) if self.scale else term


@dataclass(frozen=True)
class Divisions:
    """The nodes of a DAG that are a division (`found`), and the nodes only their
    sequences read (`hidden`: no term above reads them once the divisions are written
    as divisions, so a sweep need not ask about them)."""

    found: dict[int, Found]
    hidden: frozenset[int]

    def get(self, i: int) -> Found | None:
        return self.found.get(i)


def divisions(terms: Sequence[z3.ExprRef], nodes: Sequence[Node],
              kids: Sequence[tuple[int, ...]]) -> Divisions:
    """The nodes of a DAG (children first, as `fraig._Dag` holds it) that are a
    division of one operand by a constant, each proved so."""
    closed = _closed(nodes, kids)
    parents: dict[int, list[int]] = {}
    for i, ks in enumerate(kids):
        for k in set(ks):
            parents.setdefault(k, []).append(i)
    out: dict[int, Found] = {}
    hidden: set[int] = set()
    tried: set[tuple[int, int]] = set()
    domains: dict[int, Domain] = {}  # x's, once x is read (it is below its anchor)
    ranges = Ranges(nodes, kids, _read_back(out, nodes))  # each node's once asked: the
    # divisions below it are read by then (their anchors come first)
    for a in range(len(nodes)):
        for x in _operands(a, nodes, kids, closed):
            level = [a]
            for _ in range(ABOVE + 1):  # up from the anchor while the nodes read x alone
                up = []
                for i in level:
                    if (i, x) in tried:
                        continue
                    tried.add((i, x))
                    cone = _cone(i, x, nodes, kids, closed)
                    if cone is None:
                        continue
                    up.extend(parents.get(i, ()))
                    if i in out:
                        continue
                    if x not in domains:
                        domains[x] = _domain(x, terms, nodes, ranges, out)
                    if found := _read(i, x, cone, terms, nodes, kids, domains[x]):
                        out[i] = found
                        inside = set(cone) | {i}
                        hidden.update(j for j in cone if j != i and not closed[j] and all(
                            p in inside for p in parents.get(j, ())))
                level = sorted(set(up))
    return Divisions(out, frozenset(hidden))


def _domain(x: int, terms: Sequence[z3.ExprRef], nodes: Sequence[Node],
            ranges: Ranges, out: dict[int, Found]) -> Domain:
    """The values node x may take: up to the greatest its known bits and its range allow
    (`known.py`: through selects, mins and maxes, masks, extensions, and the divisions
    read back below it, `_read_back`), and a signed remainder's sign-extended range. llc
    divides such a value by a multiplier exact only there (the sign extension of an
    8-bit value by 3 in 16 bits, `(x*86) >> 8`; `(x udiv 7) urem 3` by (2^32 + 2)/3,
    exact below 2^31; `(x urem 25) udiv 25` by 2^32/25 rounded up): read over x alone,
    as if x took every value, it is no division."""
    w = nodes[x].sort.width
    bits = w - sign_bits(terms[x]) + 1
    found = out.get(x)
    if found is not None and found.division.name == "srem":  # in (-|c|, |c|)
        bits = min(bits, (abs(found.divisor) - 1).bit_length() + 1)
    most = min(~known_zeros(terms[x]) & ((1 << w) - 1), ranges(x)[1])
    return Domain(w, most, bits)


def _read_back(out: dict[int, Found], nodes: Sequence[Node]):
    """The range of a node read back as a division (`known.Ranges`' hint): a quotient's
    by c > 0 is its operand's divided by c, a remainder's below c (a signed one's where
    the operand is not negative)."""

    def hint(i: int, ranges: Ranges) -> Range | None:
        found = out.get(i)
        if found is None or found.divisor < 0:
            return None
        c, (lo, hi) = found.divisor, ranges(found.operand)
        if found.division.name[0] == "s" and hi >> (nodes[found.operand].sort.width - 1):
            return None
        out_range = (lo // c, hi // c) if found.division.name[1:] == "div" else (0, min(hi, c - 1))
        return out_range if out_range[1] >> nodes[i].sort.width == 0 else None

    return hint


def _operands(a: int, nodes: Sequence[Node], kids: Sequence[tuple[int, ...]],
              closed: list[bool]) -> list[int]:
    """The values node a may be the anchor of a division of: its operand x (`_anchor`),
    y where x is `y >> k` (llc shifts an even divisor's dividend first: `x udiv 54`
    is `hi((x >> 1) * M) >> 3`), and y where x is y's low bits or extension, or
    those of such a value, and so on (opt narrows `srem i32` of a value it knows
    small to an 8-bit one, which llc multiplies in 16 bits: `(x*86) >> 8` of
    `cvt.s16.s8`, extended back to 32 bits)."""
    x = _anchor(a, nodes, kids, closed)
    if x is None:
        return []
    if nodes[x].kind == z3.Z3_OP_BLSHR and closed[kids[x][1]] and not closed[kids[x][0]]:
        return [kids[x][0], x]  # the dividend before the shift first: the IR's division
    y = x
    while nodes[y].kind in _EXTENSIONS or nodes[y].kind == z3.Z3_OP_EXTRACT \
            and nodes[y].params[1] == 0:
        y = kids[y][0]
    return [x] if y == x else [y, x]  # the narrow value first: the IR's division of it


def _closed(nodes: Sequence[Node], kids: Sequence[tuple[int, ...]]) -> list[bool]:
    """Per node: it holds no free value (a numeral, or an operator over numerals)."""
    out: list[bool] = []
    for n, ks in zip(nodes, kids, strict=True):
        free = n.kind == z3.Z3_OP_UNINTERPRETED or (n.leaf and n.kind == -1)
        out.append(not free and all(out[k] for k in ks))
    return out


_EXTENSIONS = (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT)
_SHIFTS = (z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR)


def _anchor(a: int, nodes: Sequence[Node], kids: Sequence[tuple[int, ...]],
            closed: list[bool]) -> int | None:
    """x where node a is x's sign spread (`x >>s (w-1)`, or any right shift of x by a
    numeral), or bits above the lowest of x times a numeral: the upper half of the
    wide product (`mul.hi`), its top bits (`hi(x * M) >> 16`, which z3 writes as one
    extract), or a right shift of the product in x's own width (llc's magic multiply
    of an 8-bit value in 16 bits)."""
    n = nodes[a]
    if n.sort.kind != "bv" or closed[a]:
        return None
    if n.kind == z3.Z3_OP_BASHR and closed[kids[a][1]]:
        return kids[a][0]
    high = n.kind == z3.Z3_OP_EXTRACT and n.params[1] > 0 or \
        n.kind in _SHIFTS and closed[kids[a][1]]
    if not high:
        return None
    product = kids[a][0]
    if nodes[product].kind != z3.Z3_OP_BMUL or len(kids[product]) != 2:
        return None
    free = [k for k in kids[product] if not closed[k]]
    if len(free) != 1:
        return None
    x = free[0]  # a wide product's operand extended, a shifted one as it is
    return kids[x][0] if n.kind == z3.Z3_OP_EXTRACT and nodes[x].kind in _EXTENSIONS else x


def _cone(i: int, x: int, nodes: Sequence[Node], kids: Sequence[tuple[int, ...]],
          closed: list[bool]) -> list[int] | None:
    """The nodes between node i and operand x, children first; None where one is
    neither closed nor of INTEGER (another free value is reached), or they are more
    than CONE."""
    order: list[int] = []
    seen = {x}
    todo = [(i, False)]
    while todo:
        j, done = todo.pop()
        if done:
            order.append(j)
            continue
        if j in seen:
            continue
        seen.add(j)
        if not closed[j] and nodes[j].kind not in INTEGER or len(seen) > CONE:
            return None
        todo.append((j, True))
        todo.extend((k, False) for k in kids[j])
    return order


def _read(i: int, x: int, cone: list[int], terms: Sequence[z3.ExprRef],
          nodes: Sequence[Node], kids: Sequence[tuple[int, ...]],
          domain: Domain) -> Found | None:
    """Node i (`cone` the nodes between it and x) as a division of x by a constant, for
    x in `domain`, guessed from its values and proved (`_proved`); None where it is
    none."""
    n, w = nodes[i], nodes[x].sort.width
    if i == x or n.sort.kind != "bv" or nodes[x].sort.kind != "bv" or n.sort.width > w:
        return None
    # narrower: its low bits (opt's `div.u16` of the 16 bits of `udiv x, 65537` that
    # llc keeps as `mov.b32 {lo, hi}` of the multiply-high; llc's `trunc i8 (srem i32
    # s, 10)`, whose quotient's shift is logical, the high bits dropped)
    m = n.sort.width

    def values(xs: Sequence[int]) -> list[int]:
        held: dict[int, list] = {x: list(xs)}
        for j in cone:
            held[j] = evaluate_node(nodes[j], [held[k] for k in kids[j]], None, len(xs))
        return held[i]

    ends = {v for span in domain.intervals() for v in span}
    # guessed over x's domain, then over every x (where the candidate is 0 on all of
    # x's domain: `(x urem 25) udiv 25`); as it is, then over its bits above those
    # known zero (a division shifted left)
    domains = list(dict.fromkeys((domain, Domain.every(w))))
    scales = [k for k in dict.fromkeys((0, trailing_zeros(known_zeros(terms[i])))) if k < m]
    for scale, division in ((k, d) for k in scales for d in DIVISIONS):
        tried: set[int | None] = {None}
        for d in domains:
            c = division.divisor(lambda v, k=scale: values([v])[0] >> k, d)
            if c in tried or abs(c) < 2:
                continue
            tried.add(c)
            xs = tuple({domain.of(v) for v in _samples(w, c)} | ends)
            if values(xs) == [_mod(division.value(v, c, w) << scale, 1 << m) for v in xs] \
                    and _proved(terms[i], terms[x], division, c, domain, scale):
                return Found(division, x, c, 0 if m == w else m, scale)
    return None


@cache
def _samples(w: int, c: int) -> tuple[int, ...]:
    rng = random.Random(w * 1000003 + c)
    mask = (1 << w) - 1
    edges = [0, 1, 2, mask, mask - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1]
    near = [(k * c + d) & mask for k in (1, 2, 3, -1, -2, 1 << (w // 2)) for d in (-1, 0, 1)]
    return tuple(edges + near + [rng.getrandbits(w) for _ in range(SAMPLES - len(edges)
                                                                     - len(near))])


_PROVED: dict[tuple[str, str, int, Domain, int], bool] = {}


def _proved(t: z3.BitVecRef, x: z3.BitVecRef, division: Division, c: int,
            domain: Domain | None = None, scale: int = 0) -> bool:
    """z3's unsat in linear integer arithmetic: t, a function of x alone, is `division`
    of x by c, times 2^`scale`, for every x in `domain` (None: every x; cached by the
    candidate's text over a variable)."""
    w = x.size()
    v = z3.BitVec(" x", w)  # no input has this name
    g = z3.substitute(t, (x, v))
    domain = domain or Domain.every(w)
    key = (g.sexpr(), division.name, c, domain, scale)
    if key not in _PROVED:
        _PROVED[key] = _lemma(g, v, division, c, domain, scale)
    return _PROVED[key]


def _lemma(g: z3.BitVecRef, v: z3.BitVecRef, division: Division, c: int,
           domain: Domain, scale: int = 0) -> bool:
    """Unsat on each interval of `domain` (each in one half of [0, 2^w), where the
    signed operators are each one linear case); g's low bits only where it is narrower
    than v."""
    w = v.size()
    n = _variable(w)
    value = _integer(g, v, n)
    if value is None:
        return False
    for low, high in domain.intervals():
        solver = z3.Solver()
        solver.add(n >= low, n <= high,
                   _mod(value - division.value(n, c, w) * (1 << scale), 1 << g.size()) != 0)
        if budgets.check(solver, Budget(PROOF_SECONDS)) != z3.unsat:
            return False
    return True


def _integer(g: z3.ExprRef, v: z3.BitVecRef, n: z3.ArithRef):
    """g's value over the integers (INTEGER: congruent to its unsigned value mod 2^w),
    v read as n; a numeral (a
    closed subterm, folded by z3) as a Python int; None where some operator is not
    linear there."""
    memo: dict[int, object] = {}

    def walk(t: z3.ExprRef):
        key = t.get_id()  # a memo within this one term
        if key in memo:
            return memo[key]
        if t.eq(v):
            out = n
        elif z3.is_bv_value(s := z3.simplify(t)):
            out = _signed(s.as_long(), s.size())  # the smaller of the two: small products
        else:
            kind = t.decl().kind()
            rule = INTEGER.get(kind)
            args = [walk(c) for c in t.children()]
            kid = t.arg(0).size() if t.num_args() else 0
            out = None if rule is None or any(a is None for a in args) else \
                rule(_Params(t), args, t.size(), kid)
        memo[key] = out
        return out

    return walk(g)


class _Params:
    """What INTEGER reads of a node (its parameters), from a term."""

    def __init__(self, t: z3.ExprRef):
        self.params = tuple(t.params())


def _quotient(t: z3.ExprRef) -> tuple[z3.BitVecRef, int] | None:
    """(y, d) where t is `y udiv d` or `y >> k` (d = 2^k), d a numeral."""
    if t.num_args() != 2 or not z3.is_bv_value(t.arg(1)):
        return None
    d = t.arg(1).as_long()
    if z3.is_app_of(t, z3.Z3_OP_BUDIV) and d:
        return t.arg(0), d
    if z3.is_app_of(t, z3.Z3_OP_BLSHR):
        return t.arg(0), 1 << d
    return None


def nested(t: z3.ExprRef) -> z3.ExprRef | None:
    """`(y udiv a) udiv b` is `y udiv (a*b)` (0 where a*b is 2^w or more), a shift where
    a*b is a power of two: -O0 divides by 96 and then by 100 where opt divides once by
    9600 (a right shift by a constant is a division by its power of two)."""
    outer = _quotient(t)
    inner = None if outer is None or not z3.is_app(outer[0]) else _quotient(outer[0])
    if inner is None:
        return None
    (y, a), b, w = inner, outer[1], t.size()
    d = a * b
    if d >= 1 << w:
        return z3.BitVecVal(0, w)
    return z3.LShR(y, d.bit_length() - 1) if d & (d - 1) == 0 else \
        z3.UDiv(y, z3.BitVecVal(d, w))


def small_signed_dividend(t: z3.ExprRef) -> z3.ExprRef | None:
    """A signed division by a numeral c of a dividend known in (-|c|, |c|) (its sign
    bits: the sign extension of its low k bits, |a| <= 2^(k-1) < |c|) is 0, its
    remainder the dividend: opt drops -O0's `srem 65537` of a xor of two remainders
    by divisors below 2^16 (div-300-llc14-1)."""
    a, c = t.children()
    if not z3.is_bv_value(c):
        return None
    w = t.size()
    magnitude = abs(_signed(c.as_long(), w))
    if 1 << (w - sign_bits(a)) >= magnitude:
        return None
    return z3.BitVecVal(0, w) if z3.is_app_of(t, z3.Z3_OP_BSDIV) else a


RULES = {z3.Z3_OP_BUDIV: (nested,), z3.Z3_OP_BLSHR: (nested,),
         z3.Z3_OP_BSDIV: (small_signed_dividend,), z3.Z3_OP_BSREM: (small_signed_dividend,)}
