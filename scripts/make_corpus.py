"""Regenerate the checked-in vector corpus models/<family>.jsonl (and models/guards.jsonl),
deterministically.

    python scripts/make_corpus.py [--jobs 2] [--only NAME ...]

Every variant of every family, each of its instruction forms (`!c`, vset masks
and selectors), a fixed number of solver-found vectors per form, cases visited
in a seeded random order. Same ptxsmt + same z3 => same files. Two slices read
the ISA under other options, which each line carries as "options": sm_1x
(models/sm_1x.jsonl: f32/f64 set, setp and slct on sm_13) and the prose's vset
merge (models/vset-merge-b.jsonl).
"""

from __future__ import annotations

import argparse
import json
import time
from multiprocessing import Pool
from pathlib import Path

from ptxsmt.isa.variants import FAMILIES, catalogue
from ptxsmt.sem.options import Options
from ptxsmt.smt.queries.vectors import instruction_forms, vectors_for

MODELS = Path(__file__).resolve().parent.parent / "models"
# vectors per instruction form: families with few variants get more per form
PER_FORM = {"set": 1, "setp": 3, "selp": 15, "slct": 12, "half-set": 1, "half-setp": 3,
            "vset2": 4, "vset4": 4}


def family_vectors(family: str) -> list[str]:
    if family in SLICES:
        return SLICES[family]()
    lines = []
    for v in sorted(catalogue().family(family), key=str):
        for text in instruction_forms(v):
            for vec in vectors_for(text, limit=PER_FORM[family], seed=0):
                lines.append(json.dumps(vec))
    return lines


def guard_vectors() -> list[str]:
    """Guarded forms (@g, @!g) of every 8th variant of the scalar families: the prior
    value of each destination is an input, and the guard's cases cover both outcomes."""
    lines = []
    for family in ("set", "setp", "selp", "slct", "half-set", "half-setp"):
        for v in sorted(catalogue().family(family), key=str)[::8]:
            text = instruction_forms(v)[0]
            for guard in ("@g", "@!g"):
                for vec in vectors_for(f"{guard} {text}", limit=2, seed=0):
                    lines.append(json.dumps(vec))
    return lines


def sm_1x_vectors() -> list[str]:
    """f32 and f64 set/setp/slct on sm_13: f32 flushes without .ftz, f64 never does."""
    opts = Options(target=13)
    lines = []
    for family in ("set", "setp", "slct"):
        chosen = [v for v in sorted(catalogue().family(family), key=str)
                  if v.compared_type.name in ("f32", "f64")]
        for v in chosen[::4]:
            for vec in vectors_for(instruction_forms(v)[0], limit=3, opts=opts, seed=0):
                lines.append(json.dumps(vec))
    return lines


def vset_merge_b_vectors() -> list[str]:
    """Merge forms of vset2/vset4 under the prose's reading (unmasked lanes from b)."""
    opts = Options(vset_merge="b")
    lines = []
    for family in ("vset2", "vset4"):
        for v in sorted(catalogue().family(family), key=str):
            if v.add:
                continue
            for text in instruction_forms(v):
                for vec in vectors_for(text, limit=2, opts=opts, seed=0):
                    lines.append(json.dumps(vec))
    return lines


SLICES = {"guards": guard_vectors, "sm_1x": sm_1x_vectors, "vset-merge-b": vset_merge_b_vectors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="Only these files (family or slice).")
    args = ap.parse_args()
    start = time.perf_counter()
    names = tuple(args.only or (*FAMILIES, *SLICES))
    with Pool(args.jobs, maxtasksperchild=1) as pool:  # a fresh z3 per file: same bytes
        for family, lines in zip(names, pool.map(family_vectors, names, chunksize=1)):
            (MODELS / f"{family}.jsonl").write_text("\n".join(lines) + "\n")
            print(f"{family:<10} {len(lines):>6} vectors")
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
