"""What an H200 returned (models/hw/, README there), replayed through ptxsmt: each line
equal, or marked with the named reason it differs (a ptxas defect documented in
docs/ptxas-diff.md, or a reading silicon rejects, such as `vset_merge: b`); where ptxsmt
calls an output open, silicon's value must be one the open set allows (a solver's sat
of "output = silicon's bits"). models_hw is replayed whole (the batch's compiled fast
path); the arithmetic file, mostly on the slow path, whole in the thorough tier and a
fixed sample (every marked line, and every form) otherwise."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
from functools import cache
from pathlib import Path

import pytest
from tier import THOROUGH, sample

from ptxsmt.sem.options import Options

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("hw_differs", ROOT / "scripts" / "hw_differs.py")
hw_differs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hw_differs)
HW = ROOT / "models" / "hw"
FINDING = re.compile(r"\((docs/[\w.-]+\.md) finding (\d+)\)$")
READING = re.compile(r"^(\w+): (\w+)$")  # an option's value silicon rejects


@cache
def lines(name: str) -> tuple[dict, ...]:
    with gzip.open(HW / name, "rt") as f:
        return tuple(json.loads(x) for x in f)


def _check(chosen: list[dict]) -> dict[str, int]:
    counts = {"equal": 0, "differs": 0}
    for line, got in zip(chosen, hw_differs.replayed(chosen)):
        if got == line["hw_outputs"]:
            assert "differs" not in line, ("marked, but ptxsmt agrees", line)
            counts["equal"] += 1
        else:
            assert "differs" in line, ("unexplained", line, got)
            counts["differs"] += 1
    return counts


def test_every_reason_names_a_documented_entry():
    reasons = {x["differs"] for name in ("models_hw.jsonl.gz", "arith_hw_half.jsonl.gz")
               for x in lines(name) if "differs" in x}
    assert len(reasons) == 4, reasons
    for reason in reasons:
        if m := FINDING.search(reason):
            assert re.search(f"^#+ Finding {m[2]}:", (ROOT / m[1]).read_text(), re.M), reason
        else:
            m = READING.match(reason)
            assert m, reason
            Options.from_json({m[1]: m[2]})  # an option ptxsmt offers
            marked = [x for x in lines("models_hw.jsonl.gz") if x.get("differs") == reason]
            assert all(x["options"] == {m[1]: m[2]} for x in marked)


def _chosen(every: tuple[dict, ...], k: int, per_form: bool) -> list[dict]:
    """Every line in the thorough tier; else every marked line, a fixed sample of k, and
    (`per_form`) the first line of each instruction text, in the file's order."""
    if THOROUGH:
        return list(every)
    keep = {id(x) for x in sample(every, k, "hw")}
    firsts = {x["ptx"]: id(x) for x in reversed(every)} if per_form else {}
    keep |= set(firsts.values())
    return [x for x in every if id(x) in keep or "differs" in x]


def test_models_agree_with_silicon_but_for_named_reasons():
    every = lines("models_hw.jsonl.gz")
    counts = _check(_chosen(every, 1500, per_form=False))
    # docs/silicon.md: 366 guarded set (finding 1), 120 vset_merge b; 8,628 texts
    assert counts["differs"] == sum("differs" in x for x in every) == 486, counts
    if THOROUGH:
        assert counts["equal"] == 14_671, counts


def test_arithmetic_agrees_with_silicon_but_for_named_reasons():
    every = lines("arith_hw_half.jsonl.gz")
    counts = _check(_chosen(every, 1500, per_form=True))
    # docs/silicon.md: 1 abs.f64 (finding 9), 81 fma.{rz,rp}.bf16 (finding 4)
    assert counts["differs"] == sum("differs" in x for x in every) == 82, counts


@pytest.mark.parametrize("name", ["models_hw.jsonl.gz", "arith_hw_half.jsonl.gz"])
def test_the_copies_are_the_shared_results(name):
    """models/hw holds the shared files' lines, only a "differs" added."""
    shared = ROOT.parent / "shared" / "silicon" / name
    if not shared.exists():
        pytest.skip(f"no silicon results at {shared.parent}")
    with gzip.open(shared, "rt") as f:
        original = [json.loads(x) for x in f]
    assert [{k: v for k, v in x.items() if k != "differs"} for x in lines(name)] == original
