"""`variants` and `check`: the catalogue and the legality of lines and modules."""

from __future__ import annotations

from ..check import ModuleCheck, Verdict, verdict
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


def check_json(number: int, text: str, error: str | None, not_judged: str | None = None) -> dict:
    """`legal` is null and `not_judged` says why for a line ptxsmt does not judge."""
    if not_judged is not None:
        return {"line": number, "ptx": text, "legal": None, "error": None,
                "not_judged": not_judged}
    return {"line": number, "ptx": text, "legal": error is None, "error": error}


def check_text(text: str, error: str | None, not_judged: str | None = None) -> str:
    shown = text if text.isprintable() and len(text) <= 200 else quote(text, 200)
    if not_judged is not None:
        return f"not judged  {shown}  -- {not_judged}"
    return f"ok       {shown}" if error is None else f"illegal  {shown}  -- {error}"


def _statement(text: str) -> str:
    """A statement as one line: a multi-line instruction's whitespace folded."""
    return " ".join(text.split()) + ";"


def module_check_json(result: ModuleCheck) -> dict:
    return {
        "target": str(result.target),
        "ptx_version": f"{result.version[0]}.{result.version[1]}",
        "verdict": result.verdict,
        "legal": result.legal,
        "judged": len(result.verdicts),
        "illegal": result.illegal,
        "not_judged": result.unjudged,
        "instructions": [{"function": v.function, "line": v.line, "col": v.col,
                          "ptx": _statement(v.text), "legal": v.error is None,
                          "error": v.error} for v in result.verdicts],
    }


def module_check_text(result: ModuleCheck) -> str:
    out = [verdicts_text(result.verdicts)] if result.verdicts else []
    return "\n".join([*out, module_summary_text(result)])


def verdicts_text(verdicts: list[Verdict], place: str = "") -> str:
    """A module's verdicts, a line each (`check` prints them function by function); an
    error is preceded by `place` (the file)."""
    out = []
    for v in verdicts:
        if v.error is None:
            out.append(check_text(f"{_statement(v.text)}  ({v.function}, line {v.line})", None))
        else:
            out.append(check_text(_statement(v.text), f"{place}in {v.function}: {v.error}"))
    return "\n".join(out)


def module_summary_text(result: ModuleCheck, judged: int | None = None,
                        illegal: int | None = None) -> str:
    """The last line: the module's verdict, how many were judged (default: `result`'s
    verdicts) and how many were illegal."""
    if judged is None:
        judged, illegal = len(result.verdicts), result.illegal
    return (f"{verdict(illegal or 0, result.unjudged)}: "
            f"{judged} instructions checked for {result.target}, PTX ISA "
            f"{result.version[0]}.{result.version[1]}: {illegal} illegal; "
            f"{result.unjudged} other instructions not judged (ptxsmt models only "
            "set/setp/selp/slct/vset and the mov, logic, cvt and arithmetic forms "
            "around them)")
