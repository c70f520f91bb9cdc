"""`variants` and `check`: the catalogue and the legality of lines."""

from __future__ import annotations

from ..isa.errors import quote
from ..isa.variants import Catalogue


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


def check_json(number: int, text: str, error: str | None) -> dict:
    return {"line": number, "ptx": text, "legal": error is None, "error": error}


def check_text(text: str, error: str | None) -> str:
    shown = text if text.isprintable() and len(text) <= 200 else quote(text, 200)
    return f"ok       {shown}" if error is None else f"illegal  {shown}  -- {error}"
