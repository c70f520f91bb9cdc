"""Verdicts against labels: the results of `ptxsmt equiv --batch DIR/pairs.jsonl` read
beside DIR/manifest.jsonl (as scripts/sweep_corpus.py, scripts/heldout_corpus.py or
scripts/planted_pairs.py wrote it).

    python scripts/check_results.py MANIFEST [RESULTS] [--masked RECORDS]

prints first every verdict against its label, grouped by what it may mean, most serious
first, each with the ptxas audit of its plant; then label against verdict by kind, and
the planted pairs by mutation (how many ptxas masked, and the verdicts on each). Without
RESULTS, the labels alone. A result is matched to its manifest row by its `line` (a
partial results file is fine). Exit status 1 if any verdict is against its label, 2 on
bad input, else 0.

`--masked RECORDS` (scripts/masked_plants.jsonl) relabels plants "masked by values":
each record names a plant, cites the run of scripts/oracle_check.py that checked
ptxsmt's `equivalent` on it (its output row, verbatim: no vector of at least
MASKED_VECTORS separates the sides) and says why by hand. A verdict alone never makes a
label: a record without such an oracle row is bad input. Records naming pairs of other
manifests are passed over.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import NoReturn

# What a label rests on (planted_pairs.py): the pair as compiled, or the audit of its plant;
# or a record of --masked: a proof of equivalence that an oracle run could not separate.
AS_COMPILED, MASKED, KEPT, UNAUDITED = "as compiled", "planted, masked", "planted, kept", \
    "planted, unaudited"
BY_VALUES = "planted, masked by values"
PLANTED = (MASKED, BY_VALUES, KEPT, UNAUDITED)
MASKED_VECTORS = 5000  # vectors (skipped ones not counted) a record's oracle run must hold
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
    (BY_VALUES, "different"): "different on a plant recorded as masked by values: the "
                              "record's oracle run missed the difference (replay the "
                              "counterexample) or a ptxsmt bug",
    (UNAUDITED, "equivalent"): "equivalent on a plant no ptxas audited: against the label "
                               "as planted",
}


def bad(message: str) -> NoReturn:
    print(message, file=sys.stderr)
    sys.exit(2)


def label(row: dict) -> str:
    if not row.get("planted"):
        return AS_COMPILED
    if row.get("masked") == "by values":  # set by masked_by_values() from a record
        return BY_VALUES
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


def record_problem(row: dict, record: dict) -> str | None:
    """What keeps a --masked record from relabelling its plant (None: nothing)."""
    run = record.get("oracle") if isinstance(record.get("oracle"), dict) else {}
    ran = run.get("vectors", 0) - run.get("skipped", 0)
    needs = (  # (holds, else the problem), in order
        (row.get("planted") and row.get("expect") == "different",
         "names no plant labelled different"),
        (str(record.get("why", "")).strip(), 'says nothing of why ("why")'),
        (str(record.get("oracle_run", "")).strip(),
         'cites no oracle run ("oracle_run": its command and commit)'),
        (run.get("name") == row["name"],
         'holds no scripts/oracle_check.py row of this pair ("oracle")'),
        (run.get("verdict") == "equivalent",
         f"its oracle row checked the verdict {run.get('verdict')!r}, not `equivalent`"),
        (run.get("separating") is None and run.get("wrong") is False and "error" not in run,
         "its oracle row separates the sides, is wrong or is an error"),
        (ran >= MASKED_VECTORS, f"its oracle row ran {ran} vectors, under {MASKED_VECTORS}"),
    )
    return next((problem for holds, problem in needs if not holds), None)


def masked_by_values(manifest: list[dict], records: list[dict], where: Path) -> int:
    """Relabel each plant a record names as masked by values (its `masked`: "by values")
    once the record holds; the number relabelled."""
    rows = {row["name"]: row for row in manifest}
    for k, record in enumerate(records, 1):
        if (row := rows.get(record.get("name"))) and (problem := record_problem(row, record)):
            bad(f"{where}, line {k}: {row['name']}: {problem}")
    named = [rows[r["name"]] for r in records if r.get("name") in rows]
    for row in named:
        row["masked"] = "by values"
    return len(named)


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
        for what in (AS_COMPILED, *PLANTED):
            n = sum(c for (k, w, _), c in counts.items() if (k, w) == (kind, what))
            if n:
                cells = [counts[kind, what, v] for v in (*VERDICTS, None)]
                wrong = sum(counts[kind, what, said] for (w, said) in AGAINST if w == what)
                rows.append(f"| {kind} | {what} | {n} | " + " | ".join(map(str, cells))
                            + f" | {wrong} |")
    return rows


def by_mutation(manifest: list[dict], results: list[dict | None]) -> list[str]:
    """Per mutation: how many ptxas masked, a record masked by values, ptxas kept, none
    audited; and the verdicts on the masked (either way) / on the kept."""
    planted = [(row, verdict(r)) for row, r in zip(manifest, results) if row.get("planted")]
    rows = ["| mutation | planted | masked | masked by values | kept | unaudited | verdicts on "
            "the masked (eq/diff/unk) | on the kept (eq/diff/unk) |",
            "|---|---:|---:|---:|---:|---:|---|---|"]
    for mutation, n in Counter(row["planted"] for row, _ in planted).most_common():
        of = Counter((label(row), v) for row, v in planted if row["planted"] == mutation)
        per = {w: sum(c for (x, _), c in of.items() if x == w) for w in PLANTED}
        on = {"masked": Counter({v: of[MASKED, v] + of[BY_VALUES, v] for v in VERDICTS}),
              "kept": Counter({v: of[KEPT, v] for v in VERDICTS})}
        rows.append(f"| {mutation} | {n} | " + " | ".join(str(per[w]) for w in PLANTED) + " | "
                    + " | ".join("/".join(str(c[v]) for v in VERDICTS[:3]) for c in on.values())
                    + " |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("results", type=Path, nargs="?")
    ap.add_argument("--masked", type=Path, metavar="RECORDS",
                    help="records of plants masked by values (scripts/masked_plants.jsonl)")
    args = ap.parse_args()
    manifest = read_jsonl(args.manifest)
    for k, row in enumerate(manifest, 1):
        if not {"name", "kind"} <= row.keys():
            bad(f"{args.manifest}, line {k}: a manifest row names its pair and kind")
    relabelled = masked_by_values(manifest, read_jsonl(args.masked), args.masked) \
        if args.masked else 0
    results = matched(manifest, read_jsonl(args.results), args.results) if args.results \
        else [None] * len(manifest)
    findings = against(manifest, results)
    wrong = sum(label(row) == w and verdict(r) == v
                for row, r in zip(manifest, results) for (w, v) in AGAINST)
    decided = sum(r is not None for r in results)
    print(f"{len(manifest)} pairs, {decided} with a result; {wrong} against the label"
          + (": each a ptxsmt bug until looked at" if wrong else "")
          + (f"; {relabelled} plant{'s' * (relabelled != 1)} relabelled masked by values "
             f"({args.masked})"
             if relabelled else "") + "\n")
    print("\n".join(findings + [""] * bool(findings) + by_kind(manifest, results) + [""]
                    + by_mutation(manifest, results)))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
