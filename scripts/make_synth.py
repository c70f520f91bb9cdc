"""Regenerate the synthesized library and its catalogues:

    python scripts/make_synth.py

writes proofs/synth/<type>.toml (the rules `ptxsmt synth` keeps at size 2, re-proved by
`ptxsmt prove identities`), docs/synth-near-misses.md and docs/synth-inversions.md,
for the main types (i32: s32, u32 and b32 compares on the same operands, and vset).
The same ptxsmt and Z3 give the same rules: a fixed seed, sorted output, and every
proof made afresh in this one process, in one order (the solver's free choices in a
counterexample depend on what it solved before; the cache and worker processes would
change that).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ptxsmt.batch import cache
from ptxsmt.report import synth as rendering
from ptxsmt.synth import search
from ptxsmt.synth.executor import executor
from ptxsmt.synth.grammar import DEFAULT_FAMILIES, DEFAULT_TYPES, Domain, parse_types
from ptxsmt.synth.inversions import table

ROOT = Path(__file__).resolve().parent.parent
TYPES = ",".join(DEFAULT_TYPES)
SIZE = 2
GENERATED = "_Written by `python scripts/make_synth.py`; regenerate, do not edit by hand._"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    cache.enable(False)
    runner = executor("processes", 1)
    misses, inversions, done = [], [], set()
    try:
        for t in parse_types(TYPES):
            start = time.perf_counter()
            config = search.Config((t,), SIZE, DEFAULT_FAMILIES)
            result = search.synthesize(config, runner)
            title = f"Rules on {t} synthesized at size {SIZE} by scripts/make_synth.py"
            (ROOT / "proofs" / "synth" / f"{t}.toml").write_text(
                rendering.rules_toml(result.rules, title) + "\n")
            misses += result.near_misses
            fresh = tuple(Domain.of(m) for m in t.members if m not in done)  # i32: u32, b32
            done |= set(t.members)
            inversions += table(fresh, search.Prover(runner, search.Stats(), config.timeout))
            print(f"{t}: {len(result.rules)} rules, {len(result.near_misses)} near misses, "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    finally:
        runner.close()
    docs = ROOT / "docs"
    (docs / "synth-near-misses.md").write_text(_generated(rendering.near_misses_md(misses)))
    (docs / "synth-inversions.md").write_text(_generated(rendering.inversions_md(inversions)))


def _generated(markdown: str) -> str:
    """The page with a line under its title naming this script (a reader edits it here)."""
    title, _, rest = markdown.partition("\n")
    return f"{title}\n\n{GENERATED}\n{rest}\n"


if __name__ == "__main__":
    main()
