"""List the division-by-a-constant shapes of a corpus's PTX and whether the sweep reads
each back as a division (`ptxsmt/smt/sweeping/division.py`).

    python scripts/division_shapes.py MANIFEST [--kinds div wide-int] [--level O2]

Per equal pair (its -O0 and -O2 PTX beside MANIFEST), each product by a numeral that a
right shift or an extract above the low bits reads (a multiply-high, a magic multiply
in a wider type), and each sign spread (`x >>s (w-1)`) of anything else, with the
division found over it, or `NOT READ` and the term. One line per shape not read, one
count per file, then the total.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.function.encode import encode_function
from ptxsmt.sem.options import DEFAULT
from ptxsmt.smt.sweeping import fraig
from ptxsmt.smt.sweeping.division import _closed, _cone, divisions

_SHIFTS = (z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR)


def shapes(dag: fraig._Dag) -> dict[int, str]:
    """The nodes that begin a division sequence: a product by a numeral read shifted
    right (an extract above bit 0, a right shift by a numeral: "product"), and sign
    spreads of anything else ("spread": often no division, an IR `ashr` or a compare)."""
    closed = _closed(dag.nodes, dag.kids)
    out = {}
    for i, (n, ks) in enumerate(zip(dag.nodes, dag.kids, strict=True)):
        if closed[i] or n.sort.kind != "bv":
            continue
        shifted = n.kind == z3.Z3_OP_EXTRACT and n.params[1] > 0 or \
            n.kind in _SHIFTS and closed[ks[1]]
        if shifted and dag.nodes[ks[0]].kind == z3.Z3_OP_BMUL and \
                any(closed[k] for k in dag.kids[ks[0]]):
            out[i] = "product"
        elif n.kind == z3.Z3_OP_BASHR and closed[ks[1]] and z3.simplify(
                dag.terms[ks[1]]).as_long() == n.sort.width - 1:
            out[i] = "spread"
    return out


def brief(t: z3.ExprRef, depth: int = 4) -> str:
    """t's operators `depth` levels down, deeper subterms `..`, numerals in hex."""
    if z3.is_bv_value(s := z3.simplify(t)) and z3.is_bv(t):
        return hex(s.as_long())
    if depth == 0 or not t.num_args():
        return ".." if t.num_args() else str(t)
    name = t.decl().name() + "".join(f"[{p}]" for p in t.params())
    return f"({name} {' '.join(brief(c, depth - 1) for c in t.children())})"


def report(path: Path) -> Counter:
    encoded = encode_function(read_function_file(str(path), "f"), DEFAULT)
    dag = fraig._Dag()
    dag.add_roots([t for t in encoded.returns.values() if z3.is_expr(t)])
    found = divisions(dag.terms, dag.nodes, dag.kids).found
    closed = _closed(dag.nodes, dag.kids)
    inside: dict[int, tuple[int, int]] = {}  # node -> (the largest cone's size, its top)
    for i, f in found.items():
        cone = _cone(i, f.operand, dag.nodes, dag.kids, closed) or []
        for j in cone:
            inside[j] = max(inside.get(j, (0, 0)), (len(cone), i))
    count: Counter = Counter()
    for s, kind in shapes(dag).items():
        by = inside.get(s, (0, None))[1]
        if by is None:
            count[f"{kind} not read"] += 1
            print(f"  {path.name}: NOT READ {kind} {brief(dag.terms[s])}")
        else:
            f = found[by]
            count[f"{f.division.name}{dag.nodes[by].sort.width} {f.divisor}"] += 1
    return count


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("manifest", type=Path)
    p.add_argument("--kinds", nargs="+", default=["div", "wide-int"])
    p.add_argument("--level", nargs="+", default=["O0", "O2"])
    p.add_argument("--only", nargs="*", default=None)
    a = p.parse_args(argv)
    total: Counter = Counter()
    sys.setrecursionlimit(100000)
    for line in a.manifest.read_text().splitlines():
        m = json.loads(line)
        if m["kind"] not in a.kinds or m["planted"] or a.only and m["name"] not in a.only:
            continue
        for level in a.level:
            c = report(a.manifest.parent / f"{m['name']}.{level}.ptx")
            print(f"{m['name']}.{level}: {dict(sorted(c.items()))}", flush=True)
            total += c
    print(f"total: {dict(sorted(total.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
