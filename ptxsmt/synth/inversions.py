"""The predicate inversions and operand swaps a backend needs, each proved.

Per type and `.ftz`, for each CmpOp X of the type:

- invert: the Y with `!(a X b)` = `a Y b` (setp then not.pred is one setp);
- swap: the Y with `a X b` = `b Y a`;
- selp swap: the Y with `selp x, y, (a X b)` = `selp y, x, (a Y b)` (the inversion,
  seen through a select; types with a selp only);
- the naive inversion (lt <-> ge, le <-> gt, eq <-> ne, num <-> nan, on the same
  ordered-ness) with the operand classes where it breaks: on floats `!(a < b)` is
  `a geu b`, not `a ge b`, whenever a or b is NaN.

Candidates are filtered on the characteristic operands and the one left is proved.
An iN domain gives the table of each of its types (sN, uN, bN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa.types import PRED, PtxType
from .grammar import Domain, Pool, compares, selects
from .nearmiss import breaking_literals, breaking_text, literals
from .operands import characteristic, row_classes
from .work import outputs_on

NAIVE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le",
         "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls", "num": "nan", "nan": "num"}
NAIVE |= {k + "u": v + "u" for k, v in NAIVE.items() if len(k) == 2 and k not in
          ("lo", "hs", "ls", "hi")}


@dataclass(frozen=True)
class Inversion:
    type: str
    ftz: bool
    cmp: str
    invert: str | None  # None: no CmpOp of the type is the inversion
    swap: str | None
    selp_swap: str | None  # None also where the type has no selp
    naive: str
    naive_safe: bool
    naive_breaks: str  # "a is NaN or b is NaN"; "" when safe


def _setp(t: PtxType, cmp: str, ftz: bool, order: str = "a, b") -> str:
    dest = "p|q" if t.is_packed else "p"
    return f"setp.{cmp}{'.ftz' * ftz}.{t} {dest}, {order};"


def _not(t: PtxType) -> str:
    return "not.pred p, p; not.pred q, q;" if t.is_packed else "not.pred p, p;"


def table(domains: tuple[Domain, ...], prover, seed: int = 0) -> list[Inversion]:
    out = []
    for t in dict.fromkeys(m for d in domains for m in d.members):
        cmps = list(dict.fromkeys(str(v.cmp) for v in compares(t)))
        for ftz in sorted({v.ftz for v in compares(t)}):
            out += [_row(t, ftz, x, cmps, prover, seed) for x in cmps]
    return out


def _row(t: PtxType, ftz: bool, x: str, cmps: list[str], prover, seed: int) -> Inversion:
    pred = Pool(Domain.of(t), "pred", PRED, ("p", "q") if t.is_packed else ("p",))
    select = Pool(Domain.of(t), "select", t, ("d",))
    setp = _setp(t, x, ftz)
    invert = _first_proved(pred, f"{setp} {_not(t)}",
                           {y: _setp(t, y, ftz) for y in cmps}, prover, seed)
    swap = _first_proved(pred, setp, {y: _setp(t, y, ftz, "b, a") for y in cmps}, prover, seed)
    selp = None
    if selects(t):
        selp = _first_proved(select, f"{setp} selp.{t} d, x, y, p;",
                             {y: f"{_setp(t, y, ftz)} selp.{t} d, y, x, p;" for y in cmps},
                             prover, seed)
    naive = NAIVE[x]
    lhs, rhs = f"{setp} {_not(t)}", _setp(t, naive, ftz)
    [r] = prover.run([(lhs, rhs)], pred.outputs, with_classes=True)
    safe = r["verdict"] == "equivalent"
    return Inversion(t.name, ftz, x, invert, swap, selp, naive, safe,
                     "" if safe else breaking_text(r["classes"]) or
                     _sampled_breaking(pred, lhs, rhs, seed))


def _sampled_breaking(pool: Pool, lhs: str, rhs: str, seed: int) -> str:
    """Where the solver's class search stopped at its limit (a packed type's lanes):
    the classes the characteristic operands show break it."""
    rows = characteristic(pool, seed)
    columns = rows.arrays()
    differ = (outputs_on(lhs, columns, pool.outputs) !=
              outputs_on(rhs, columns, pool.outputs)).any(axis=1)
    found = breaking_literals(differ, *literals(row_classes(rows)))
    return " or ".join(f"{a} is {c}" for a, c in sorted(found or []))


def _first_proved(pool: Pool, lhs: str, candidates: dict[str, str], prover,
                  seed: int) -> str | None:
    """The first candidate whose outputs agree with lhs on the characteristic operands
    and that the solver proves equal to it."""
    rows = characteristic(pool, seed)
    columns = rows.arrays()
    want = outputs_on(lhs, columns, pool.outputs)
    agree = [y for y, rhs in candidates.items()
             if np.array_equal(outputs_on(rhs, columns, pool.outputs), want)]
    results = prover.run([(lhs, candidates[y]) for y in agree], pool.outputs)
    return next((y for y, r in zip(agree, results) if r["verdict"] == "equivalent"), None)
