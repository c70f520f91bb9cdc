"""Near misses: rewrites that hold on every operand class but a few.

Among the simplest groups of a pool (a single instruction, or a compare and a `not`),
two whose outputs differ only on rows where some operand is in one of at most two
sign-free classes that are not the ordinary ones (NaN, an infinity, a zero, a
subnormal; an integer's min or max): "differs only when a is NaN", "only on -0 vs +0",
"only on subnormals without .ftz". Where signed and unsigned readings meet (the iN
domains, vset lanes of both types) the sign is not ordinary either: an integer with
its sign bit set is `negative` (min folded in), so `setp.lt.s32` vs `setp.lo.u32`
"differs only when a is negative or b is negative". The solver then finds a
counterexample and the exact class combinations that break the pair. A pair and its
renaming (a and b, or x and y, swapped) are one near miss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa.modifiers import parse_lane_spec
from ..isa.syntax import Instruction
from .grammar import Pool
from .minimise import RENAMINGS
from .operands import Rows, row_classes
from .text import instructions, rename
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
# Where signedness is compared, ordinary is one sign only, and the sign bit is the class
# (min is the sign bit with nothing else set: read as negative there).
MIXED_ORDINARY = ORDINARY - {"negative"}
MIXED_FOLD = {"min": "negative"}


def ordinary(pool: Pool) -> set[str]:
    return MIXED_ORDINARY if pool.domain.mixed else ORDINARY


def fold(pool: Pool) -> dict[str, str]:
    """Classes read as one in the pool's summaries."""
    return MIXED_FOLD if pool.domain.mixed else {}


def _sign_free(cls: str, folded: dict[str, str]) -> str:
    cls = cls.lstrip("+-")
    return folded.get(cls, cls)


def reads_c(ins: Instruction) -> bool:
    """Whether the instruction's result depends on c: a BoolOp, glue or selp source, or
    a vset merging lanes from c (a mask short of every lane; the plain form ignores c)."""
    defaults = ins.variant.syntax.lane_defaults
    if defaults:
        return ins.lane_spec("d") != parse_lane_spec(defaults["mask"])
    return any("c" in o.registers for o in ins.sources.values())


def simple(text: str) -> bool:
    """A snippet near misses are looked for among: one that does not read c, and is one
    instruction, or a compare and a `not`, or a compare and a `selp`."""
    found = instructions(text)
    if any(reads_c(ins) for ins in found):
        return False
    return len(found) == 1 or found[0].variant.opcode == "setp" and \
        all(ins.variant.opcode in ("not", "selp") for ins in found[1:])


def _register(axis: str) -> str:
    """The register an axis classes: `a` for `a` and for its lanes `a[0]`, `a[1]`..."""
    return axis[0]


def literals(classes: list[tuple], unusual: set[str] | None = None,
             folded: dict[str, str] | None = None) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The unusual (operand, sign-free class) literals, and which rows have each."""
    usual, folded = ORDINARY if unusual is None else unusual, folded or {}
    rows = [{(_register(axis), _sign_free(cls, folded)) for axis, cls in row}
            for row in classes]
    names = sorted({lit for row in rows for lit in row if lit[1] not in usual})
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
    reps = sorted((g[0] for g in groups if simple(g[0])),
                  key=lambda t: (len(instructions(t)), len(t), t))
    if len(reps) < 2:
        return []
    columns = rows.arrays()
    table = _lanes(np.stack([outputs_on(t, columns, pool.outputs) for t in reps]), pool)
    names, table_of_literals = literals(row_classes(rows), ordinary(pool), fold(pool))
    found, seen = [], set()
    for i in range(len(reps)):
        cells = table[i + 1:] != table[i]  # later reps x rows x output lanes
        differ = cells.any(axis=2)
        # vset's lanes are independent: a row differs in some lane most of the time even
        # where each lane rarely does, so there "mostly equal" is said of lanes
        share = cells.mean(axis=(1, 2)) if pool.lanes > 1 else differ.mean(axis=1)
        for k in np.flatnonzero(differ.any(axis=1) & (share < 0.5)):
            j = i + 1 + k
            key = frozenset((reps[i], reps[j]))
            lits = None if key in seen else breaking_literals(differ[k], names, table_of_literals)
            if lits is None:
                continue
            seen |= {key, *(frozenset((rename(reps[i], m), rename(reps[j], m)))
                            for m in RENAMINGS)}
            found.append((reps[j], reps[i], " or ".join(f"{a} is {c}" for a, c in sorted(lits))))
    found.sort(key=lambda p: (len(instructions(p[0])) + len(instructions(p[1])),
                              len(p[0]) + len(p[1]), p))
    return found[:limit]


def _lanes(table: np.ndarray, pool: Pool) -> np.ndarray:
    """rep x row x output, with each output split into the pool's lanes."""
    if pool.lanes == 1:
        return table
    w = pool.result.width // pool.lanes
    shifts = np.arange(pool.lanes, dtype=np.uint64) * np.uint64(w)
    split = (table[..., None] >> shifts) & np.uint64((1 << w) - 1)
    return split.reshape(*table.shape[:2], -1)


def find(pool: Pool, groups: list[list[str]], rows: Rows, prover, limit: int) -> list[NearMiss]:
    """The pool's near misses (none for a set pool: its compares are the predicate
    pool's, only written as a value)."""
    if pool.kind == "set":
        return []
    found = candidates(pool, groups, rows, limit)
    lane, lanes = pool.reading
    reading = tuple((reg, lane.name, lanes) for reg in "ab")
    # A vset's eight lane operands have 5^8 class combinations: the solver's class search
    # cannot finish, so there the classes are the characteristic operands' (lane by lane)
    searched = pool.lanes == 1
    results = prover.run([(lhs, rhs) for lhs, rhs, _ in found], pool.outputs,
                         with_classes=searched, reading=reading if searched else ())
    return [NearMiss(lhs, rhs, pool, r["counterexample"], _classes(r, pool, sampled))
            for (lhs, rhs, sampled), r in zip(found, results) if r["verdict"] == "different"]


def _classes(result: dict, pool: Pool, sampled: str) -> dict:
    """The solver's class report with its summary, or where none was searched, the
    summary the characteristic operands give (marked incomplete)."""
    lane, lanes = pool.reading
    axes = [f"{reg}[{i}]" if lanes > 1 else reg for reg in "ab" for i in range(lanes)]
    report = result.get("classes") or {"axes": axes, "failing": [], "only_when": sampled,
                                       "complete": False}
    return {**report, "breaking": breaking_text(report, fold(pool)) or sampled}


def _all_of(rows: list[set[tuple[str, str]]], axes: list[str], fold_map: dict[str, str]
            ) -> str:
    """"a is 0 and b is 0, with opposite signs" where every failing combination has
    every compared operand in one sign-free class; "" otherwise."""
    folded = {axis: {_sign_free(cls, fold_map) for r in rows for a, cls in r if a == axis}
              for axis in axes}
    if any(len(f) != 1 or not all(any(a == axis for a, _ in r) for r in rows)
           for axis, f in folded.items()):
        return ""
    text = " and ".join(f"{axis} is {next(iter(f))}" for axis, f in folded.items())
    if all(len({cls[0] for _, cls in r if cls[0] in "+-"}) == 2 for r in rows):
        text += ", with opposite signs"
    return text


def breaking_text(classes: dict, folded: dict[str, str] | None = None) -> str:
    """The classes that break a pair, said of the compared operands without sign where
    the sign does not matter: "a is NaN or b is NaN", "a is subnormal or b is 0". From
    the solver's failing class combinations; its own summary where these do not do,
    and "" where its search stopped at the limit (a packed type's lanes)."""
    compared = [i for i, axis in enumerate(classes["axes"]) if axis[0] in "ab"]
    rows = [{(classes["axes"][i], row[i]) for i in compared if row[i] != "*"}
            for row in classes["failing"]]
    whole = [[row[i] for i in compared] for row in classes["failing"]]
    if not classes["complete"]:
        return ""  # the caller says what the characteristic operands show
    if any(not r for r in rows):
        return classes["only_when"]
    folded = folded or {}
    both = _all_of(rows, [classes["axes"][i] for i in compared], folded)
    if both:
        return both
    chosen: list[tuple[str, str]] = []
    while rows:
        counts: dict[tuple[str, str], int] = {}
        for r in rows:
            for lit in {(axis, _sign_free(cls, folded)) for axis, cls in r}:
                counts[lit] = counts.get(lit, 0) + 1
        best = max(sorted(counts), key=counts.get)
        chosen.append(best)
        rows = [r for r in rows if not any(a == best[0] and _sign_free(c, folded) == best[1]
                                           for a, c in r)]
    if len(compared) == len(chosen) == 2 == len({cls for _, cls in chosen}) * 2 and \
            all(sum(c != "*" and _sign_free(c, folded) == chosen[0][1] for c in r) == 1
                and "*" not in r for r in whole):
        return f"exactly one of a and b is {chosen[0][1]}"  # they differ in it: signs
    return " or ".join(f"{axis} is {cls}" for axis, cls in chosen)
