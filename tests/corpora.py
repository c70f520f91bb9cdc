"""The generated corpora (scripts/sweep_corpus.py, scripts/heldout_corpus.py) as their
tests read them: a folder's bytes, and its manifest's labels against its batch lines."""

from __future__ import annotations

import json
from pathlib import Path

from ptxsmt import pairs

BATCH_DEFAULTS = {"timeout": 1, "target": "sm_90", "vset_merge": "c", "solver": "auto",
                  "unroll": 0}


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def labels(folder: Path) -> list[dict]:
    """The manifest's labels, each checked against its line of pairs.jsonl: a pair of
    functions `f` that `equiv --batch` reads, labelled as planted_pairs.py labels (a
    planted twin ptxas kept is "different", every other pair "equivalent")."""
    rows = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    lines = (folder / "pairs.jsonl").read_text().splitlines()
    for k, (label, line) in enumerate(zip(rows, lines, strict=True), 1):
        pair = pairs.parse_line(k, line, BATCH_DEFAULTS, folder)
        assert (pair.kind, pair.function) == ("functions", "f")
        assert label["expect"] == ("different" if label["planted"] and not label["masked"]
                                   else "equivalent")
    return rows
