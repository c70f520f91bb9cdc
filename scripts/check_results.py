"""Verdicts against labels: the results of `ptxsmt equiv --batch DIR/pairs.jsonl` read
beside DIR/manifest.jsonl (as scripts/sweep_corpus.py, scripts/heldout_corpus.py or
scripts/planted_pairs.py wrote it).

    python scripts/check_results.py MANIFEST [RESULTS]

prints first every verdict against its label, grouped by what it may mean, most serious
first, each with the ptxas audit of its plant; then label against verdict by kind, and
the planted pairs by mutation (how many ptxas masked, and the verdicts on each). Without
RESULTS, the labels alone. A result is matched to its manifest row by its `line` (a
partial results file is fine). Exit status 1 if any verdict is against its label, 2 on
bad input, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import NoReturn

# What a label rests on (planted_pairs.py): the pair as compiled, or the audit of its plant.
AS_COMPILED, MASKED, KEPT, UNAUDITED = "as compiled", "planted, masked", "planted, kept", \
    "planted, unaudited"
VERDICTS = ("equivalent", "different", "unknown", "error")
SAME = {"bounded": "equivalent", "refused": "unknown"}  # verdicts counted as another

# (label, verdict) against the label -> what it may mean; most serious first
AGAINST = {
    (KEPT, "equivalent"): "equivalent on a plant ptxas kept (the SASS differs): a ptxsmt "
                          "soundness bug, unless the values the mutation sees mask it",
    (AS_COMPILED, "different"): "different on a pair as compiled: a ptxsmt bug or a "
                                "compiler's miscompile",
    (MASKED, "different"): "different on a plant ptxas masked (identical SASS): a ptxsmt "
                           "bug or a ptxas miscompile",
    (UNAUDITED, "equivalent"): "equivalent on a plant no ptxas audited: against the label "
                               "as planted",
}


def bad(message: str) -> NoReturn:
    print(message, file=sys.stderr)
    sys.exit(2)


def label(row: dict) -> str:
    if not row.get("planted"):
        return AS_COMPILED
    return {True: MASKED, False: KEPT}.get(row.get("masked"), UNAUDITED)


def verdict(result: dict | None) -> str | None:
    if result is None:
        return None
    v = result.get("verdict", "error")
    return SAME.get(v, v if v in VERDICTS else "error")


def read_jsonl(path: Path) -> list[dict]:
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        bad(f"{path}: {e.strerror}")
    rows = []
    for k, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except ValueError as e:
            bad(f"{path}, line {k}: not JSON ({e})")
        if not isinstance(row, dict):
            bad(f"{path}, line {k}: not a JSON object")
        rows.append(row)
    return rows


def matched(manifest: list[dict], results: list[dict], where: Path) -> list[dict | None]:
    """The result of each manifest row (None where the results hold none)."""
    out: list[dict | None] = [None] * len(manifest)
    for k, result in enumerate(results, 1):
        line = result.get("line", k)
        if not isinstance(line, int) or not 1 <= line <= len(manifest):
            bad(f"{where}, line {k}: line {line} is not a line of the manifest "
                     f"({len(manifest)} rows)")
        out[line - 1] = result
    return out


def against(manifest: list[dict], results: list[dict | None]) -> list[str]:
    """The findings: each group of verdicts against the label, most serious first."""
    text = []
    for (what, said), meaning in AGAINST.items():
        found = [(row, r) for row, r in zip(manifest, results)
                 if label(row) == what and verdict(r) == said]
        if found:
            text.append(f"{meaning} ({len(found)}):")
            text += [f"  {row['name']}  {row.get('planted') or ''}  "
                     f"{row.get('audit') or ''}".rstrip() for row, _ in found]
    return text


def by_kind(manifest: list[dict], results: list[dict | None]) -> list[str]:
    counts = Counter((row["kind"], label(row), verdict(r)) for row, r in zip(manifest, results))
    rows = ["| kind | label | n | " + " | ".join(VERDICTS) + " | no result | against the "
            "label |", "|---|---|---:|" + "---:|" * (len(VERDICTS) + 2)]
    for kind in dict.fromkeys(row["kind"] for row in manifest):
        for what in (AS_COMPILED, MASKED, KEPT, UNAUDITED):
            n = sum(c for (k, w, _), c in counts.items() if (k, w) == (kind, what))
            if n:
                cells = [counts[kind, what, v] for v in (*VERDICTS, None)]
                wrong = sum(counts[kind, what, said] for (w, said) in AGAINST if w == what)
                rows.append(f"| {kind} | {what} | {n} | " + " | ".join(map(str, cells))
                            + f" | {wrong} |")
    return rows


def by_mutation(manifest: list[dict], results: list[dict | None]) -> list[str]:
    """Per mutation: how many ptxas masked, kept, did not audit; and the verdicts on the
    masked / on the kept."""
    planted = [(row, verdict(r)) for row, r in zip(manifest, results) if row.get("planted")]
    rows = ["| mutation | planted | masked | kept | unaudited | verdicts on the masked "
            "(eq/diff/unk) | on the kept (eq/diff/unk) |", "|---|---:|---:|---:|---:|---|---|"]
    for mutation, n in Counter(row["planted"] for row, _ in planted).most_common():
        of = Counter((label(row), v) for row, v in planted if row["planted"] == mutation)
        per = {w: sum(c for (x, _), c in of.items() if x == w) for w in (MASKED, KEPT, UNAUDITED)}
        rows.append(f"| {mutation} | {n} | {per[MASKED]} | {per[KEPT]} | {per[UNAUDITED]} | "
                    + " | ".join("/".join(str(of[w, v]) for v in VERDICTS[:3])
                                 for w in (MASKED, KEPT)) + " |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("results", type=Path, nargs="?")
    args = ap.parse_args()
    manifest = read_jsonl(args.manifest)
    for k, row in enumerate(manifest, 1):
        if not {"name", "kind"} <= row.keys():
            bad(f"{args.manifest}, line {k}: a manifest row names its pair and kind")
    results = matched(manifest, read_jsonl(args.results), args.results) if args.results \
        else [None] * len(manifest)
    findings = against(manifest, results)
    wrong = sum(label(row) == w and verdict(r) == v
                for row, r in zip(manifest, results) for (w, v) in AGAINST)
    decided = sum(r is not None for r in results)
    print(f"{len(manifest)} pairs, {decided} with a result; {wrong} against the label"
          + (": each a ptxsmt bug until looked at\n" if wrong else "\n"))
    print("\n".join(findings + [""] * bool(findings) + by_kind(manifest, results) + [""]
                    + by_mutation(manifest, results)))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
