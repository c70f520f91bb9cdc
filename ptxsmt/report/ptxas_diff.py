"""`ptxas-diff`: per-family counts, what ptxas left to run time, and each mismatch."""

from __future__ import annotations

import shlex
from collections import Counter

from ..isa.literals import describe
from ..ptxasdiff import DiffReport
from ..ptxasdiff.lowering import Broken


def text(r: DiffReport) -> str:
    out = [f"ptxas: {r.ptxas} (-O3, {r.target})", ""]
    rows = r.families()
    head = ("family", "cases", "folded", "not folded", "mismatches", "rejected", "skipped")
    width = max([len(head[0]), *map(len, rows)])
    out.append(f"{head[0]:<{width}}  " + "  ".join(f"{h:>10}" for h in head[1:]))
    total = dict.fromkeys(head[1:], 0)
    for fam, row in rows.items():
        values = (row["cases"], row["folded"], row["not_folded"], row["mismatches"],
                  row["rejected"], row["skipped"])
        out.append(f"{fam:<{width}}  " + "  ".join(f"{v:>10}" for v in values))
        for h, v in zip(head[1:], values):
            total[h] += v
    out.append(f"{'total':<{width}}  " + "  ".join(f"{v:>10}" for v in total.values()))
    if total["skipped"]:
        why = Counter(o.skipped for o in r.outcomes if o.skipped is not None)
        out.append("skipped: " + "; ".join(f"{n} x {msg}" for msg, n in why.most_common(3))
                   + ("; ..." if len(why) > 3 else ""))
    not_folded = r.not_folded()
    if not_folded:
        out += ["", "not folded (ptxas leaves these to run time; nothing to compare):"]
        out += [f"  {fam:<{width}}  {e['cases']} cases, {e['reason']}"
                for fam, e in not_folded.items()]
    rejected = r.rejected()
    if rejected:
        why = Counter(x["error"] for x in rejected)
        out += ["", f"rejected by ptxas: {len(rejected)} ("
                + "; ".join(f"{n} x {msg}" for msg, n in why.most_common(3)) + ")"]
        out += [f"  {x['ptx']}  -- {x['error']}" for x in rejected[:10]]
        if len(rejected) > 10:
            out.append(f"  ... and {len(rejected) - 10} more (--json lists all)")
    out.append("")
    if not r.mismatches:
        out.append(f"mismatches: none ({sum(o.folded for o in r.outcomes)} folded cases agree, "
                   f"{r.seconds:.1f} s)")
    else:
        out.append(f"mismatches: {len(r.mismatches)}")
    for m in r.mismatches:
        out.append("")
        out += mismatch_text(m, r)
    return "\n".join(out)


def _show(value: str | bool, t) -> str:
    """A JSON output value for people: hex and decoded value."""
    return describe(value if isinstance(value, bool) else int(value, 16), t)


def mismatch_text(m: dict, r: DiffReport) -> list[str]:
    case = r.outcomes[m["case"]].case
    lines = [f"MISMATCH  {m['ptx']}  ({m['family']}, case {m['case']})"]
    for k, v in case.values.items():
        lines.append(f"  in     {k} = {describe(v, case.types[k])}")
    for k in m["ptxsmt"]:
        got = "not folded" if m["ptxas"][k] is None else _show(m["ptxas"][k], case.types[k])
        mark = ""
        if k in m["differ"]:
            mark = "  <-- differs" + ("" if m["confirmed_alone"] else " (not reproduced alone)")
        lines.append(f"  ptxsmt         {k} = {_show(m['ptxsmt'][k], case.types[k])}")
        lines.append(f"  ptxas -O3      {k} = {got}{mark}")
        if "O0" in m and k in m["O0"]:
            lines.append(f"  ptxas -O0      {k} = {_show(m['O0'][k], case.types[k])}")
    if "O0_note" in m:
        lines.append(f"  ptxas -O0      {m['O0_note']}")
    args = " ".join(f"{k}={str(v).lower()}" for k, v in m["inputs"].items())
    lines.append(f"  reproduce: ptxsmt eval {shlex.quote(m['ptx'])} {args}")
    lines.append("  kernel (ptxas -O3 -arch " + r.target + "):")
    lines += ["    " + line for line in m["kernel"].splitlines()]
    return lines


def lowering_text(broken: list[Broken]) -> str:
    """One block a broken rule: the variant, the rule, the SASS line and the kernel."""
    lines = []
    for b in broken:
        lines += [f"{b.variant}: {b.rule.name} (docs/ptxas-diff.md {b.rule.finding})",
                  f"  SASS: {b.line}", "  kernel:", *("    " + k for k in b.kernel.splitlines())]
    covered = len({b.variant for b in broken})
    lines.append(f"{len(broken)} broken lowering rules in {covered} variants" if broken
                 else "every covered variant's SASS carries its modifiers")
    lines.append("values (a lowering that keeps its modifiers but computes the wrong thing) "
                 "need a GPU: scripts/gpu_replay.py")
    return "\n".join(lines)


def lowering_json(broken: list[Broken]) -> dict:
    return {"broken": [{"variant": str(b.variant), "rule": b.rule.name,
                        "finding": b.rule.finding, "sass": b.line, "kernel": b.kernel}
                       for b in broken]}
