"""Characteristic operands: the rows every snippet of a pool is evaluated on.

Every special value of the type (both zeros, the smallest and largest subnormals, the
smallest normal, one, the largest finite value, both infinities, quiet and signalling
NaNs with payloads; integer extremes) for a against every one for b, c false and
true, plus random rows. Packed types take the specials in each lane, and so do vset's
registers: each byte (vset4) or half-word (vset2) 0, 1, 2, the signed extremes 0x7f
and 0x80 with their neighbours, and all ones. A counterexample the solver finds later
joins the rows, so the next fingerprints split on it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import product

import numpy as np

from ..fast import word_dtype
from ..isa.literals import fp_class
from ..isa.types import PtxType
from ..smt.queries.classes import value_class
from .grammar import Pool

RANDOM_ROWS = 256
SELECT_VALUES = ((0x5A5A5A5A5A5A5A5A, 0x3C3C3C3C3C3C3C3C), (0x1234567890ABCDEF, 0x0F1E2D3C4B5A6978))
# c: a predicate, or vset's merged lanes (lanes of both signs, so a merge shows)
C_VALUES = {1: (False, True), 32: (0, 0x01FF7F80)}


def specials(t: PtxType) -> list[int]:
    """The special values of a scalar type, as register bits."""
    w = t.width
    if t.is_float:
        f = t.fmt
        m = f.sbits - 1  # stored significand bits
        sign, inf = 1 << (w - 1), ((1 << f.ebits) - 1) << m
        one = ((1 << (f.ebits - 1)) - 1) << m
        quiet = inf | (1 << (m - 1))
        positive = [0, 1, (1 << m) - 1, 1 << m, one, one + 1, inf - 1, inf]
        nans = [quiet, quiet | sign, inf | 1, quiet | 5, inf | sign | 3, (1 << w) - 1]
        return [*positive, *(sign | v for v in positive), *nans]
    ones = (1 << w) - 1
    top = 1 << (w - 1)
    return sorted({0, 1, 2, ones, ones - 1, top, top - 1, top + 1, 0x7F})


def register_specials(t: PtxType) -> list[int]:
    """Specials of a register: per lane for a packed type (each lane special with the
    other lane one and with the same special, so lanes can differ in outcome)."""
    if not t.is_packed:
        return specials(t)
    w = t.lane_width
    one = next(v for v in specials(t.lane) if fp_class(v, t.fmt) == "+normal" and v >> (w - 2))
    return lane_specials(t.lane, t.lanes, one)


def lane_specials(lane: PtxType, lanes: int, one: int = 1) -> list[int]:
    """Words whose lanes are specials of `lane`: every lane the same special, then each
    lane special with the others `one`."""
    w, values = lane.width, specials(lane)
    words = [sum(v << (w * i) for i in range(lanes)) for v in values]
    for k in range(lanes):
        words += [sum((v if i == k else one) << (w * i) for i in range(lanes)) for v in values]
    return list(dict.fromkeys(words))


def pool_specials(pool: Pool) -> list[int]:
    """The special values of a and b in a pool: per lane as the pool reads them."""
    lane, lanes = pool.reading
    return lane_specials(lane, lanes) if pool.lanes > 1 else register_specials(pool.type)


@dataclass
class Rows:
    """Input columns of one pool, row by row."""

    pool: Pool
    columns: dict[str, list[int | bool]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(next(iter(self.columns.values())))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: np.asarray(values, dtype=word_dtype(self.pool.inputs[name].width))
                for name, values in self.columns.items()}

    def add(self, row: dict[str, int | bool]) -> None:
        """One more row (a counterexample's inputs; an input it does not name is 0)."""
        for name in self.columns:
            self.columns[name].append(row.get(name, 0))

    def row(self, i: int) -> dict[str, int | bool]:
        return {name: values[i] for name, values in self.columns.items()}


def characteristic(pool: Pool, seed: int = 0) -> Rows:
    rng = random.Random(f"{seed} {pool.name}")
    t, inputs = pool.type, pool.inputs
    values = pool_specials(pool)
    ones = (1 << t.width) - 1
    pairs = [*product(values, values),
             *((rng.getrandbits(t.width), rng.getrandbits(t.width)) for _ in range(RANDOM_ROWS))]
    pairs += [(v, v) for v in (rng.getrandbits(t.width) for _ in range(RANDOM_ROWS // 8))]
    choices = SELECT_VALUES if "x" in inputs else ((0, 0),)
    mask = (1 << (inputs["x"].width if "x" in inputs else 1)) - 1
    rows = Rows(pool, {name: [] for name in inputs})
    for (a, b), c, (x, y) in product(pairs, C_VALUES[inputs["c"].width], choices):
        rows.add({"a": a & ones, "b": b & ones, "c": c, "x": x & mask, "y": y & mask})
    return rows


def row_classes(rows: Rows) -> list[tuple[tuple[str, str], ...]]:
    """Per row, the class of each compared operand (a lane at a time as the pool reads
    them): ((axis, class), ...), classes and axes as `ptxsmt.smt.queries.classes` names them."""
    lane, lanes = rows.pool.reading
    w = lane.width
    out = []
    for a, b in zip(rows.columns["a"], rows.columns["b"]):
        found = []
        for name, v in (("a", a), ("b", b)):
            if lanes > 1:
                found += [(f"{name}[{i}]", value_class((v >> (w * i)) & ((1 << w) - 1), lane))
                          for i in range(lanes)]
            else:
                found.append((name, value_class(v, lane)))
        out.append(tuple(found))
    return out
