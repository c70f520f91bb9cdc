"""Z3 terms evaluated on many inputs at once, node by node: the simulation that
equivalence sweeping (`fraig.py`) groups values by.

This interprets Z3's operators (SMT-LIB's meaning), not PTX: every value derives from
the terms. A value is a list, one entry per input vector: an int for a bit-vector (its
unsigned value), a bool, a Python float for a floating-point number (exactly its value
in its format), or a rounding-mode name. What it does not interpret (arrays, free
functions, rounding it cannot do exactly) is None, and so is every node above it: a
guess is never made, since sweeping only proves what simulation suggests, and a node
without a value is simply not a candidate.
"""

from __future__ import annotations

import hashlib
import math
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import z3

from ...terms import ops
from ...terms.floats import bits_of_float as _bits_of_float
from ...terms.floats import float_of_bits as _float_of_bits
from ...terms.floats import from_int, to_format, to_int
from ...terms.ops import signed

Values = list | None

# the operator table's rows, by how their values read their operands
_BV_BINARY = ops.values("arith", "bitwise")
_DIVISION = ops.values("division")
_U_COMPARE, _S_COMPARE = ops.values("unsigned"), ops.values("signed")
_LOGIC = ops.values("logic")
_FP_COMPARE, _FP_TEST, _FP = ops.values("fp compare"), ops.values("fp test"), ops.values("fp")


def _format(s: z3.FPSortRef) -> tuple[int, int]:
    return s.ebits(), s.sbits()


_RM = {z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN: "RNE", z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_AWAY: "RNA",
       z3.Z3_OP_FPA_RM_TOWARD_ZERO: "RTZ", z3.Z3_OP_FPA_RM_TOWARD_POSITIVE: "RTP",
       z3.Z3_OP_FPA_RM_TOWARD_NEGATIVE: "RTN"}


def _map(f: Callable, args: Sequence[list]) -> list | None:
    out = [f(*xs) for xs in zip(*args, strict=True)]
    return None if any(v is None for v in out) else out


@dataclass(frozen=True)
class Sort:
    """What evaluation needs of a sort: "bv" of `width` bits, "bool", "fp" of `fmt`
    (ebits, sbits), "rm" (a rounding mode) or "other"."""

    kind: str
    width: int = 0
    fmt: tuple[int, int] = (0, 0)


def sort_of(s: z3.SortRef) -> Sort:
    if isinstance(s, z3.FPSortRef):
        return Sort("fp", s.ebits() + s.sbits(), _format(s))
    if isinstance(s, z3.BitVecSortRef):
        return Sort("bv", s.size())
    if s.kind() == z3.Z3_BOOL_SORT:
        return Sort("bool", 1)
    return Sort("rm" if isinstance(s, z3.FPRMSortRef) else "other")


@dataclass(frozen=True)
class Node:
    """One node of a term DAG, read from Z3 once (its Python API costs more than the
    evaluation): the operator, its sort and its children's, parameters, a constant."""

    kind: int
    sort: Sort
    kids: tuple[Sort, ...]
    params: tuple = ()
    name: str = ""  # a function symbol's
    const: object = None  # a numeral's value (an int, a float), a rounding mode's name
    leaf: bool = False


def read_node(n: z3.ExprRef, children: Sequence[z3.ExprRef]) -> Node:
    k = n.decl().kind() if z3.is_app(n) else -1
    sort = sort_of(n.sort())
    const = None
    if z3.is_bv_value(n):
        const = n.as_long()
    elif k in _RM:
        const = _RM[k]
    elif k == z3.Z3_OP_FPA_NAN:
        const = math.nan
    elif sort.kind == "fp" and not children:
        bits = z3.simplify(z3.fpToIEEEBV(n))
        const = _float_of_bits(bits.as_long(), sort.fmt) if z3.is_bv_value(bits) else None
    return Node(k, sort, tuple(sort_of(c.sort()) for c in children),
                tuple(n.params()) if z3.is_app(n) else (),
                n.decl().name() if k == z3.Z3_OP_UNINTERPRETED else "", const,
                z3.is_app(n) and not children)


def evaluate_node(n: Node, args: list[list], given: list | None, count: int,
                  open_zero: bool = False) -> Values:
    """The node's `count` values, from its children's (`args`, in order, none None);
    `given`: an input's. `open_zero`: a free function is 0 (false, +0.0) everywhere,
    not a hash (`_free_function`): then a NaN the ISA leaves open is the canonical one
    (`sem.sorts.free_nan`) on both sides, and a difference is one of values, not of a
    NaN's bits that the simulation chose."""
    k = n.kind
    if k == z3.Z3_OP_UNINTERPRETED and not n.leaf and open_zero:
        return [{"bool": False, "fp": 0.0}.get(n.sort.kind, 0)] * count
    if k == z3.Z3_OP_UNINTERPRETED:
        return given if n.leaf else _free_function(n, args)
    if n.const is not None:
        return [n.const] * count
    if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE) or (k in (z3.Z3_OP_AND, z3.Z3_OP_OR) and not args):
        return [k in (z3.Z3_OP_TRUE, z3.Z3_OP_AND)] * count  # and of nothing is true
    kind = n.sort.kind
    if kind == "bv":
        return _bit_vector(n, k, args)
    if kind == "bool":
        return _boolean(n, k, args)
    return _floating(n, k, args) if kind == "fp" else None


def _free_function(n: Node, args: list[list]) -> Values:
    """A function symbol (an uninterpreted instruction, a NaN the ISA leaves open) as one
    fixed function: a hash of its name and arguments, so that equal arguments give equal
    results, as congruence says. Bit-vector results are often special (`_free_bits`)."""
    sort = n.sort

    def value(xs: tuple) -> object:
        h = int.from_bytes(hashlib.blake2b(repr((n.name, xs)).encode(), digest_size=16).digest())
        if sort.kind == "fp":
            return _float_of_bits(h & ((1 << sort.width) - 1), sort.fmt)
        if sort.kind == "bool":
            return bool(h & 1)
        return _free_bits(h, sort.width) if sort.kind == "bv" else None

    out = [value(tuple(_hashable(x) for x in xs)) for xs in zip(*args, strict=True)]
    return None if any(v is None for v in out) else out


def _free_bits(h: int, w: int) -> int:
    """A free value's bits from a 64-bit hash: a quarter of them special (`_specials`:
    infinities, zeros, the extremes), a quarter a NaN with a hashed payload, the rest
    uniform. Uniform bits are almost never a NaN or an infinity, so the values the
    semantics tells apart by them (an open NaN taken or the canonical one; `fp.isNaN`
    against "exponent all ones") would look alike on every input, and each such pair
    would cost a solver query that the counterexample, whose free functions simulation
    cannot take, does not stop from being asked again."""
    mask = (1 << w) - 1
    pick, rest = h & 3, h >> 2  # h: 128 bits
    if pick == 0:
        special = _specials(w)
        return special[rest % len(special)]
    fmt = _FLOAT_WIDTHS.get(w)
    if pick == 1 and fmt is not None:
        man = fmt[1] - 1  # a NaN: exponent all ones, fraction not zero, either sign
        fraction = (rest % ((1 << man) - 1)) + 1
        sign = (rest >> man) & 1
        return (sign << (w - 1)) | (((1 << fmt[0]) - 1) << man) | fraction
    return rest & mask


def _hashable(x: object) -> object:
    return struct.pack("d", x) if isinstance(x, float) else x


def _bit_vector(n: Node, k: int, args: list[list]) -> Values:
    w = n.sort.width
    mask = (1 << w) - 1
    c = n.kids
    if k in _BV_BINARY:
        op = _BV_BINARY[k]
        out = args[0]
        for a in args[1:]:
            out = [op(x, y) & mask for x, y in zip(out, a, strict=True)]
        return out
    if k == z3.Z3_OP_BNOT:
        return [~x & mask for x in args[0]]
    if k == z3.Z3_OP_BNEG:
        return [-x & mask for x in args[0]]
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k == z3.Z3_OP_EXTRACT:
        lo = n.params[1]
        return [(x >> lo) & mask for x in args[0]]
    if k == z3.Z3_OP_CONCAT:
        out = args[0]
        for child, a in zip(c[1:], args[1:], strict=True):
            out = [x << child.width | y for x, y in zip(out, a, strict=True)]
        return out
    if k == z3.Z3_OP_ZERO_EXT:
        return args[0]
    if k == z3.Z3_OP_SIGN_EXT:
        cw = c[0].width
        return [signed(x, cw) & mask for x in args[0]]
    if k == z3.Z3_OP_BSHL:
        return [(x << y) & mask if y < w else 0 for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_BLSHR:
        return [x >> y if y < w else 0 for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_BASHR:
        return [(signed(x, w) >> min(y, w)) & mask for x, y in zip(*args, strict=True)]
    if k in _DIVISION:
        f = _DIVISION[k]
        return [f(x, y, w) for x, y in zip(*args, strict=True)]
    if k in (z3.Z3_OP_ROTATE_LEFT, z3.Z3_OP_ROTATE_RIGHT):
        r = n.params[0] % w
        r = r if k == z3.Z3_OP_ROTATE_LEFT else (w - r) % w
        return [((x << r) | (x >> (w - r))) & mask for x in args[0]]
    if k == z3.Z3_OP_FPA_TO_IEEE_BV:
        fmt = c[0].fmt
        return [_bits_of_float(x, fmt) for x in args[0]]
    if k in (z3.Z3_OP_FPA_TO_UBV, z3.Z3_OP_FPA_TO_SBV):
        is_signed = k == z3.Z3_OP_FPA_TO_SBV
        return _map(lambda m, x: to_int(m, x, w, is_signed), args)
    return None


def _boolean(n: Node, k: int, args: list[list]) -> Values:
    c = n.kids
    if k in _LOGIC:
        op = _LOGIC[k]
        return [op(xs) for xs in zip(*args, strict=True)]
    if k == z3.Z3_OP_NOT:
        return [not x for x in args[0]]
    if k == z3.Z3_OP_IMPLIES:
        return [(not x) or y for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_IFF):
        if c[0].kind == "fp":  # SMT-LIB `=` on floats: the same datum (NaN = NaN, -0 != +0)
            fmt = c[0].fmt
            args = [[_bits_of_float(x, fmt) for x in a] for a in args]
        if k == z3.Z3_OP_DISTINCT:
            return [len(set(xs)) == len(xs) for xs in zip(*args, strict=True)]
        return [all(x == xs[0] for x in xs) for xs in zip(*args, strict=True)]
    if k in _U_COMPARE:
        op = _U_COMPARE[k]
        return [op(x, y) for x, y in zip(*args, strict=True)]
    if k in _S_COMPARE:
        op, w = _S_COMPARE[k], c[0].width
        return [op(signed(x, w), signed(y, w)) for x, y in zip(*args, strict=True)]
    if k in _FP_COMPARE:
        op = _FP_COMPARE[k]
        return [op(x, y) for x, y in zip(*args, strict=True)]
    if k in _FP_TEST:
        test, fmt = _FP_TEST[k], c[0].fmt
        return [bool(test(x, fmt)) for x in args[0]]
    return None


def _floating(n: Node, k: int, args: list[list]) -> Values:
    fmt = n.sort.fmt
    c = n.kids
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_FP:
        exp, sig = c[1].width, c[2].width
        return [_float_of_bits(s << (exp + sig) | e << sig | f, fmt)
                for s, e, f in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_TO_FP:
        if len(c) == 1:
            return [_float_of_bits(x, fmt) for x in args[0]]
        if len(c) == 2 and c[1].kind == "fp":
            return [to_format(x, fmt, m) for m, x in zip(*args, strict=True)]
        if len(c) == 2 and c[1].kind == "bv":
            w = c[1].width
            return [from_int(signed(x, w), fmt, m) for m, x in zip(*args, strict=True)]
        return None
    if k == z3.Z3_OP_FPA_TO_FP_UNSIGNED:
        return [from_int(x, fmt, m) for m, x in zip(*args, strict=True)]
    if k in _FP:  # IEEE operations, with the rounding mode first where they have one
        f = _FP[k]
        out = [f(fmt, *xs) for xs in zip(*args, strict=True)]
        return None if None in out else out
    return None


# What a node's value on one vector costs, in bit-vector operations (measured on one
# core: a bit-vector sum 0.05 us; an f16, f32 or f64 sum or product, a float read from
# its bits or compared as bits, 0.3 to 1 us; a bf16 sum or product 15 us, rounded
# through fractions, `terms.floats.round_real`): what simulating many vectors costs
# (`fraig.EDGE_WORK`) is counted in these, the same on every machine
FLOAT_COST, SLOW_ROUNDING_COST = 16, 256
HOST_ROUNDED = {(5, 11), (8, 24), (11, 53)}  # the formats the host rounds to
_ROUNDING = {*_FP, z3.Z3_OP_FPA_TO_FP, z3.Z3_OP_FPA_TO_FP_UNSIGNED}


def cost(n: Node) -> int:
    """What node `n`'s value on one vector costs (FLOAT_COST's unit)."""
    if n.sort.kind == "fp" and n.kind in _ROUNDING and n.sort.fmt not in HOST_ROUNDED:
        return SLOW_ROUNDING_COST
    if n.sort.kind == "fp" or n.kind in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and n.kids \
            and n.kids[0].kind == "fp":
        return FLOAT_COST
    return 1


# ---- inputs ----

_FLOAT_WIDTHS = {16: (5, 11), 32: (8, 24), 64: (11, 53)}  # bits -> (exponent, precision)


@cache
def _specials(w: int) -> list[int]:
    mask = (1 << w) - 1
    out = [0, 1, 2, mask, mask - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 3, 7]
    if w in _FLOAT_WIDTHS:
        fmt = _FLOAT_WIDTHS[w]
        p = fmt[1]
        out += [_bits_of_float(v, fmt) for v in
                (1.0, -1.0, -0.0, math.inf, -math.inf, math.nan, 0.5, 2.0, -2.0)]
        out += [1, (1 << (p - 1)) - 1]  # the smallest and the largest subnormal
    return [x & mask for x in out]


def input_vectors(inputs: Sequence[Sort], count: int, seed: int = 0) -> list[list | None]:
    """`count` values for each input (of these sorts; None for a sort without values):
    special values first, in turns, then random ones (uniform bits, small integers,
    floats of ordinary size)."""
    rng = random.Random(seed)
    out: list[list | None] = []
    for i, sort in enumerate(inputs):
        if sort.kind == "bool":
            out.append([rng.random() < 0.5 for _ in range(count)])
            continue
        if sort.kind != "bv":
            out.append(None)
            continue
        w = sort.width
        special = _specials(w)
        values = []
        for j in range(count):
            if j < 2 * len(special):
                values.append(special[(j + i * 5) % len(special)] if j % 2 == 0
                              else rng.choice(special))
            elif j % 3 == 0:
                values.append(rng.getrandbits(w))
            elif j % 3 == 1:
                values.append(rng.randint(-16, 16) & ((1 << w) - 1))
            else:
                values.append(_ordinary_float(rng, w))
        out.append(values)
    return out


# The flavours of `edge_vectors`, each drawn for a whole vector: the chance that an input
# is an infinity, a finite value near overflow, a small edge value (zeros, ones, twos, a
# half) or a NaN; the rest are ordinary floats. A NaN at an input reaches every output
# of both functions alike, so the flavours rarely give one: the NaNs that tell an ordered
# compare from an unordered one arise inside (inf - inf, 0 * inf, an overflow), where
# the values beside them stay numbers
EDGE_FLAVOURS = ((0.08, 0.0, 0.27, 0.05), (0.30, 0.0, 0.15, 0.0), (0.20, 0.25, 0.15, 0.0))


def edge_vectors(inputs: Sequence[Sort], count: int, seed: int = 0) -> list[list | None]:
    """`count` values for each input, aimed at the edges of the float operations the
    inputs reach (`EDGE_FLAVOURS`), for finding a difference that only a NaN, an
    infinity or a signed zero shows (an ordered compare made unordered). An input not
    of a float's width gets uniform bits or a small integer."""
    rng = random.Random(seed)
    flavours = [EDGE_FLAVOURS[j % len(EDGE_FLAVOURS)] for j in range(count)]
    out: list[list | None] = []
    for sort in inputs:
        if sort.kind == "bool":
            out.append([rng.random() < 0.5 for _ in range(count)])
        elif sort.kind != "bv":
            out.append(None)
        else:
            out.append([_edge_value(rng, sort.width, f) for f in flavours])
    return out


def _edge_value(rng: random.Random, w: int, flavour: tuple[float, ...]) -> int:
    fmt = _FLOAT_WIDTHS.get(w)
    if fmt is None:
        return rng.getrandbits(w) if rng.random() < 0.5 else rng.randint(-16, 16) & ((1 << w) - 1)
    r = rng.random()
    for chance, values in zip(flavour, _edges(w), strict=True):
        if r < chance:
            return rng.choice(values)
        r -= chance
    return _ordinary_float(rng, w)


@cache
def _edges(w: int) -> tuple[list[int], ...]:
    """The bits of a float format's edge values, by kind (as EDGE_FLAVOURS lists them)."""
    fmt = _FLOAT_WIDTHS[w]
    top = (1 << (fmt[0] - 1)) - 1  # the largest exponent
    large = [(2 - 2.0 ** (1 - fmt[1])) * 2.0 ** top, 2.0 ** top, 2.0 ** (top // 2)]
    kinds = ([math.inf], large, [0.0, 1.0, 2.0, 0.5], [math.nan])
    return tuple([_bits_of_float(s * v, fmt) for v in values for s in (1, -1)]
                 for values in kinds)


def _ordinary_float(rng: random.Random, w: int) -> int:
    fmt = _FLOAT_WIDTHS.get(w)
    if fmt is None:
        return rng.getrandbits(w)
    value = rng.choice((-1, 1)) * rng.uniform(0.25, 4) * 2.0 ** rng.randint(-4, 4)
    return _bits_of_float(to_format(value, fmt), fmt)


def as_key(values: list, sort: Sort) -> tuple:
    """Values as a hashable signature (floats by their bits: NaN equals NaN, -0 is not
    +0, as for SMT-LIB `=`)."""
    if sort.kind == "fp":
        return tuple(_bits_of_float(x, sort.fmt) for x in values)
    return tuple(values)


__all__ = ["Node", "Sort", "as_key", "cost", "edge_vectors", "evaluate_node", "input_vectors",
           "read_node", "sort_of"]
