"""Regenerate the checked-in vector corpus models/<family>.jsonl (and models/guards.jsonl),
deterministically.

    python scripts/make_corpus.py [--jobs 2]

Every variant of every family, each of its instruction forms (`!c`, vset masks
and selectors), a fixed number of solver-found vectors per form, cases visited
in a seeded random order. Same ptxsmt + same z3 => same files.
"""

from __future__ import annotations

import argparse
import json
import time
from multiprocessing import Pool
from pathlib import Path

from ptxsmt.isa.variants import FAMILIES, catalogue
from ptxsmt.smt.vectors import instruction_forms, vectors_for

MODELS = Path(__file__).resolve().parent.parent / "models"
# vectors per instruction form: families with few variants get more per form
PER_FORM = {"set": 1, "setp": 3, "selp": 15, "slct": 12, "half-set": 1, "half-setp": 3,
            "vset2": 4, "vset4": 4}


def family_vectors(family: str) -> list[str]:
    if family == "guards":
        return guard_vectors()
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    start = time.perf_counter()
    names = (*FAMILIES, "guards")
    with Pool(args.jobs) as pool:
        for family, lines in zip(names, pool.map(family_vectors, names)):
            (MODELS / f"{family}.jsonl").write_text("\n".join(lines) + "\n")
            print(f"{family:<10} {len(lines):>6} vectors")
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
