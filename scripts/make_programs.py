"""Build ptxsmt/eval/programs.jsonl.xz: the core program of every catalogue variant.

A core (ptxsmt/eval/core.py) is an instruction with every operand slot its own
register, no guard and no `!`; setp and half-setp get both the `p` and the `p|q` core,
vset its default selectors and mask. Each program is compiled from the Z3 terms under
the default options, as a first run would compile it. Rerun after any edit to the
semantics (tests/test_cache.py fails until then); the same sources give the same bytes.

    python scripts/make_programs.py          # a few seconds, two processes
"""

from __future__ import annotations

import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptxsmt.eval import shipped  # noqa: E402
from ptxsmt.eval.core import core_of  # noqa: E402
from ptxsmt.eval.programs import core_record  # noqa: E402
from ptxsmt.isa.errors import PtxError  # noqa: E402
from ptxsmt.isa.variants import Variant, catalogue, operand_slots  # noqa: E402
from ptxsmt.program import Program  # noqa: E402
from ptxsmt.sem.options import DEFAULT  # noqa: E402


def core_texts() -> list[str]:
    """The cores of every catalogue variant's instruction forms."""
    texts = set()
    for v in catalogue():
        for form in _forms(v):
            try:
                core = core_of(Program.parse(form))
            except PtxError:  # `p|q` where the variant writes only p
                continue
            texts.add(core)
    return sorted(texts)


def _forms(v: Variant) -> list[str]:
    slots = list(operand_slots(v))
    forms = [slots]
    if v.syntax.pair_dest:
        forms.append(["p|q", *slots[1:]])
    return [f"{v} {', '.join(form)};" for form in forms]


def _records(texts: list[str]) -> dict[str, str]:
    return {f"core {DEFAULT!r} {text}": core_record(text, DEFAULT) for text in texts}


def main() -> None:
    start = time.perf_counter()
    texts = core_texts()
    # Z3 orders a commutative term's arguments by when they were made: each half of the
    # cores is compiled in order by a fresh process, so a rebuild writes the same bytes
    halves = [texts[: len(texts) // 2], texts[len(texts) // 2:]]
    with Pool(2, maxtasksperchild=1) as pool:
        records = {k: r for half in pool.map(_records, halves, chunksize=1)
                   for k, r in half.items()}
    data = shipped.encode(records)
    shipped.PATH.write_bytes(data)
    unsupported = sum(r.startswith("unsupported: ") for r in records.values())
    print(f"{shipped.PATH.name}: {len(records)} cores ({unsupported} the fast path does not "
          f"take), {len(data):,} bytes, {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
