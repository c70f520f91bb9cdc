"""Text and JSON rendering. Nothing else in the package formats output for people."""

from __future__ import annotations

import json

from .isa.literals import describe
from .isa.variants import Catalogue
from .smt.evaluate import Evaluation, to_json


def evaluation_json(ptx: str, ev: Evaluation) -> dict:
    return {
        "ptx": ptx,
        "inputs": {k: to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
        "outputs": {k: to_json(v, ev.types[k]) for k, v in ev.outputs.items()},
    }


def evaluation_text(ptx: str, ev: Evaluation) -> str:
    lines = [" ".join(ptx.split())]
    width = max((len(k) for k in (*ev.inputs, *ev.outputs)), default=1)
    lines += [f"  in   {k:<{width}} = {describe(v, ev.types[k])}" for k, v in ev.inputs.items()]
    lines += [f"  out  {k:<{width}} = {describe(v, ev.types[k])}" for k, v in ev.outputs.items()]
    return "\n".join(lines)


def variants_rows(cat: Catalogue, family: str | None) -> list[dict]:
    return [
        {
            "variant": str(v),
            "family": v.family,
            "ptx": f"{r.ptx[0]}.{r.ptx[1]}",
            "sm": r.sm,
        }
        for v, r in cat.requirements.items()
        if family is None or v.family == family
    ]


def variants_text(rows: list[dict]) -> str:
    width = max((len(r["variant"]) for r in rows), default=10)
    out = [f"{r['variant']:<{width}}  PTX {r['ptx']:<4}  sm_{r['sm']}" for r in rows]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["family"]] = counts.get(r["family"], 0) + 1
    out.append("")
    out.append("  ".join(f"{f}: {n}" for f, n in counts.items()) + f"  total: {len(rows)}")
    return "\n".join(out)


def dumps(obj: object) -> str:
    return json.dumps(obj, separators=(", ", ": "))
