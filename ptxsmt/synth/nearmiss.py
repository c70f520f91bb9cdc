"""Near misses: rewrites that hold on every operand class but a few.

Among the simplest groups of a pool (a single instruction, or a compare and a `not`),
two whose outputs differ only on rows where some operand is in one of at most two
sign-free classes that are not the ordinary ones (NaN, an infinity, a zero, a
subnormal; an integer's min or max): "differs only when a is NaN", "only on -0 vs +0",
"only on subnormals without .ftz". The solver then finds a counterexample and the
exact class combinations that break the pair. A pair and its renaming (a and b, or x
and y, swapped) are one near miss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grammar import Pool
from .minimise import RENAMINGS, rename
from .operands import Rows, row_classes
from .work import outputs_on


@dataclass(frozen=True)
class NearMiss:
    lhs: str
    rhs: str
    pool: Pool
    counterexample: dict  # {"inputs", "lhs", "rhs"}: register -> bits
    classes: dict  # {"axes", "failing", "only_when", "complete"}


ORDINARY = {"normal", "positive", "negative"}
MAX_CLASSES = 2


def simple(text: str) -> bool:
    """A snippet near misses are looked for among: one that does not read c, and is one
    instruction, or a compare and a `not`, or a compare and a `selp`."""
    lines = [s.strip() for s in text.split(";") if s.strip()]
    if any(line.endswith(("c", "!c")) for line in lines):
        return False
    return len(lines) == 1 or lines[0].startswith("setp.") and \
        all(line.startswith(("not.pred", "selp.")) for line in lines[1:])


def literals(classes: list[tuple]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The unusual (operand, sign-free class) literals, and which rows have each."""
    rows = [{(axis.split("[")[0], cls.lstrip("+-")) for axis, cls in row} for row in classes]
    names = sorted({lit for row in rows for lit in row if lit[1] not in ORDINARY})
    index = {lit: k for k, lit in enumerate(names)}
    table = np.zeros((len(rows), len(names)), dtype=bool)
    for i, row in enumerate(rows):
        for lit in row:
            if lit in index:
                table[i, index[lit]] = True
    return names, table


def breaking_literals(differ: np.ndarray, names: list[tuple[str, str]], table: np.ndarray
                      ) -> list[tuple[str, str]] | None:
    """At most MAX_CLASSES literals such that every differing row has one (greedy), or
    None when there are none such."""
    left = table[differ]
    chosen = []
    while len(left):
        if len(chosen) == MAX_CLASSES or not left.any(axis=1).all():
            return None
        best = int(np.argmax(left.sum(axis=0)))
        chosen.append(names[best])
        left = left[~left[:, best]]
    return chosen


def candidates(pool: Pool, groups: list[list[str]], rows: Rows, limit: int
               ) -> list[tuple[str, str, str]]:
    """(lhs, rhs, the classes the characteristic operands say break it), simplest first."""
    reps = sorted((g[0] for g in groups if simple(g[0])), key=lambda t: (t.count(";"), len(t), t))
    if len(reps) < 2:
        return []
    columns = rows.arrays()
    table = np.stack([outputs_on(t, columns, pool.outputs) for t in reps])  # rep, row, out
    names, table_of_literals = literals(row_classes(rows))
    found, seen = [], set()
    for i in range(len(reps)):
        differ = (table[i + 1:] != table[i]).any(axis=2)  # later reps x rows
        for k in np.flatnonzero(differ.any(axis=1) & (differ.mean(axis=1) < 0.5)):
            j = i + 1 + k
            key = frozenset((reps[i], reps[j]))
            lits = None if key in seen else breaking_literals(differ[k], names, table_of_literals)
            if lits is None:
                continue
            seen |= {key, *(frozenset((rename(reps[i], m), rename(reps[j], m)))
                            for m in RENAMINGS)}
            found.append((reps[j], reps[i], " or ".join(f"{a} is {c}" for a, c in sorted(lits))))
    found.sort(key=lambda p: (p[0].count(";") + p[1].count(";"), len(p[0]) + len(p[1]), p))
    return found[:limit]


def find(pool: Pool, groups: list[list[str]], rows: Rows, prover, limit: int) -> list[NearMiss]:
    """The pool's near misses (none for a set pool: its compares are the predicate
    pool's, only written as a value)."""
    if pool.kind == "set":
        return []
    found = candidates(pool, groups, rows, limit)
    results = prover.run([(lhs, rhs) for lhs, rhs, _ in found], pool.outputs, with_classes=True)
    return [NearMiss(lhs, rhs, pool, r["counterexample"],
                     {**r["classes"], "breaking": breaking_text(r["classes"]) or sampled})
            for (lhs, rhs, sampled), r in zip(found, results) if r["verdict"] == "different"]


def _all_of(rows: list[set[tuple[str, str]]], axes: list[str]) -> str:
    """"a is 0 and b is 0, with opposite signs" where every failing combination has
    every compared operand in one sign-free class; "" otherwise."""
    folded = {axis: {cls.lstrip("+-") for r in rows for a, cls in r if a == axis}
              for axis in axes}
    if any(len(f) != 1 or not all(any(a == axis for a, _ in r) for r in rows)
           for axis, f in folded.items()):
        return ""
    text = " and ".join(f"{axis} is {next(iter(f))}" for axis, f in folded.items())
    if all(len({cls[0] for _, cls in r if cls[0] in "+-"}) == 2 for r in rows):
        text += ", with opposite signs"
    return text


def breaking_text(classes: dict) -> str:
    """The classes that break a pair, said of the compared operands without sign where
    the sign does not matter: "a is NaN or b is NaN", "a is subnormal or b is 0". From
    the solver's failing class combinations; its own summary where these do not do,
    and "" where its search stopped at the limit (a packed type's lanes)."""
    compared = [i for i, axis in enumerate(classes["axes"]) if axis[0] in "ab"]
    rows = [{(classes["axes"][i], row[i]) for i in compared if row[i] != "*"}
            for row in classes["failing"]]
    if not classes["complete"]:
        return ""  # the caller says what the characteristic operands show
    if any(not r for r in rows):
        return classes["only_when"]
    both = _all_of(rows, [classes["axes"][i] for i in compared])
    if both:
        return both
    chosen: list[tuple[str, str]] = []
    while rows:
        counts: dict[tuple[str, str], int] = {}
        for r in rows:
            for axis, cls in r:
                counts[axis, cls.lstrip("+-")] = counts.get((axis, cls.lstrip("+-")), 0) + 1
        best = max(sorted(counts), key=counts.get)
        chosen.append(best)
        rows = [r for r in rows if not any(a == best[0] and c.lstrip("+-") == best[1]
                                           for a, c in r)]
    return " or ".join(f"{axis} is {cls}" for axis, cls in chosen)
