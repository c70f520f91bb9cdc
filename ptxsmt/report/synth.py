"""`synth`: the synthesized rules as an identity file, the near misses and the inversion
table as Markdown and JSON, and the run's summary."""

from __future__ import annotations

import re

from ..eval.values import to_json
from ..isa.literals import describe
from ..isa.types import PRED, PtxType
from ..synth.grammar import Pool
from ..synth.inversions import Inversion
from ..synth.nearmiss import NearMiss
from ..synth.search import Rule, Stats, Synthesis


def _type(pool: Pool, register: str) -> PtxType:
    return pool.inputs.get(register) or (pool.result if register == "d" else PRED)


def _values(pool: Pool, values: dict) -> dict:
    return {k: "unspecified" if v is None else to_json(v, _type(pool, k))
            for k, v in values.items()}


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rules_toml(rules: list[Rule], title: str) -> str:
    """The rules in the identity-library format: `ptxsmt prove identities` re-proves them."""
    lines = [f"# {title}", "# Written by `ptxsmt synth`; each rule was proved, and none of them",
             "# follows from the ones before it (see docs/synth.md).", ""]
    for i, rule in enumerate(rules, 1):
        name = f"synth-{rule.pool.name.replace('/', '-').replace('.', '-')}-{i:04d}"
        lines += ["[[identity]]", f"name = {_toml(name)}",
                  f"description = {_toml(f'{rule.pool.name}: found by ptxsmt synth')}",
                  f"lhs = {_toml(rule.lhs)}", f"rhs = {_toml(rule.rhs)}",
                  f"outputs = [{', '.join(_toml(o) for o in rule.pool.outputs)}]",
                  'expect = "holds"', ""]
    return "\n".join(lines)


def _types(pool: Pool, *texts: str) -> list[str]:
    """The domain's types the snippets name (s32 and u32 for a rule of the i32 domain
    between them), in the domain's order."""
    named = [m.name for m in pool.domain.members
             if any(re.search(rf"\.{m.name}\b", t) for t in texts)]
    return named or [pool.type.name]


def rule_json(rule: Rule) -> dict:
    return {"lhs": rule.lhs, "rhs": rule.rhs, "types": _types(rule.pool, rule.lhs, rule.rhs),
            "pool": rule.pool.name, "outputs": list(rule.pool.outputs), "verdict": "proved"}


def near_miss_json(n: NearMiss) -> dict:
    cex = n.counterexample
    return {"lhs": n.lhs, "rhs": n.rhs, "types": _types(n.pool, n.lhs, n.rhs), "pool": n.pool.name,
            "outputs": list(n.pool.outputs),
            "counterexample": {side: _values(n.pool, cex[side])
                               for side in ("inputs", "lhs", "rhs")},
            "breaking_classes": {"only_when": n.classes["breaking"], "axes": n.classes["axes"],
                                 "failing": n.classes["failing"],
                                 "complete": n.classes["complete"]}}


def stats_json(s: Stats) -> dict:
    return {"enumerated": s.enumerated, "groups": s.groups, "candidates": s.candidates,
            "proved": s.proved, "refuted": s.refuted, "unknown": s.unknown,
            "derived": s.derived, "unsupported": s.unsupported,
            "cache_hits": s.cache_hits, "cache_lookups": s.cache_lookups,
            "cache_hit_rate": round(s.hit_rate, 4), "seconds": round(s.seconds, 2)}


def inversion_json(row: Inversion) -> dict:
    return {"type": row.type, "ftz": row.ftz, "cmp": row.cmp, "invert": row.invert,
            "swap": row.swap, "selp_swap": row.selp_swap, "naive_invert": row.naive,
            "naive_safe": row.naive_safe, "naive_breaks": row.naive_breaks or None}


def synthesis_json(result: Synthesis, inversions: list[Inversion] | None = None) -> dict:
    out = {"rules": [rule_json(r) for r in result.rules],
           "near_misses": [near_miss_json(n) for n in result.near_misses],
           "stats": stats_json(result.stats)}
    if inversions is not None:
        out["inversions"] = [inversion_json(r) for r in inversions]
    return out


def near_misses_md(misses: list[NearMiss]) -> str:
    lines = ["# Near misses", "",
             "Rewrites that hold on every operand class but a few, found by `ptxsmt synth`:",
             "each is refuted by the counterexample shown, and the classes listed are all",
             "the class combinations that break it (the solver's complete class report;",
             "for packed halves and vset lanes, where that search cannot finish, what the",
             "characteristic operands show). In the iN pools (s, u and b compares on the",
             "same operands) and vset, `negative` is the sign bit set (lane by lane).", ""]
    for pool in dict.fromkeys(n.pool.name for n in misses):
        lines += [f"## {pool}", ""]
        for n in (m for m in misses if m.pool.name == pool):
            cex = n.counterexample
            inputs = ", ".join(f"{k} = {describe(v, _type(n.pool, k))}"
                               for k, v in cex["inputs"].items())
            outs = "; ".join(f"{o}: {_shown(n.pool, o, cex['lhs'][o])} vs "
                             f"{_shown(n.pool, o, cex['rhs'][o])}" for o in n.pool.outputs
                             if cex["lhs"][o] != cex["rhs"][o])
            lines += [f"- `{n.lhs}` vs `{n.rhs}`",
                      f"  - differs only when {n.classes['breaking']}",
                      f"  - counterexample: {inputs} ({outs})", ""]
    return "\n".join(lines)


def _shown(pool: Pool, register: str, value) -> str:
    return "unspecified" if value is None else describe(value, _type(pool, register))


def inversions_md(rows: list[Inversion]) -> str:
    lines = ["# Predicate inversions and operand swaps", "",
             "Proved by `ptxsmt synth` for each type and `.ftz`: `invert` is the CmpOp Y",
             "with `!(a X b)` = `a Y b`; `swap` the Y with `a X b` = `b Y a`; `selp swap`",
             "the Y with `selp x, y, (a X b)` = `selp y, x, (a Y b)`. `naive` is the",
             "textbook complement and where it breaks (on floats, NaN: `!(a < b)` is",
             "`a geu b`, not `a ge b`).", ""]
    for t in dict.fromkeys((r.type, r.ftz) for r in rows):
        lines += [f"## {t[0]}{' .ftz' if t[1] else ''}", "",
                  "| X | invert | swap | selp swap | naive | naive breaks when |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for r in (r for r in rows if (r.type, r.ftz) == t):
            lines.append(f"| {r.cmp} | {r.invert or '-'} | {r.swap or '-'} | "
                         f"{r.selp_swap or '-'} | {r.naive} | "
                         f"{'never (safe)' if r.naive_safe else r.naive_breaks} |")
        lines.append("")
    return "\n".join(lines)


def results_text(result: Synthesis) -> str:
    """The rules and near misses, one a line (stdout)."""
    lines = [f"{r.pool.name}: {r.lhs}  ==  {r.rhs}" for r in result.rules]
    lines += [f"near miss {n.pool.name}: {n.lhs}  vs  {n.rhs}  (differs only when "
              f"{n.classes['breaking']})" for n in result.near_misses]
    return "\n".join(lines)


def summary_text(result: Synthesis) -> str:
    """The run in one line (stderr, so stdout stays the results)."""
    s = result.stats
    return (f"{len(result.rules)} rules ({s.proved} proved, {s.derived} implied by the "
            f"rules kept), {len(result.near_misses)} near misses; {s.enumerated} snippets "
            f"in {s.groups} groups, {s.candidates} pairs for the solver ({s.refuted} "
            f"refuted, {s.unknown} unknown), cache {s.cache_hits}/{s.cache_lookups}, "
            f"{s.seconds:.1f} s")
