"""Golden vectors: hand-derived expectations (models/golden.jsonl) and every corpus
file in models/ replayed through the evaluator and through the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from oracle import evaluate as oracle_evaluate
from strategies import oracle_desc

from ptxsmt import parse_one
from ptxsmt.cli import main
from ptxsmt.isa.literals import parse_value
from ptxsmt.isa.syntax import operand_types

MODELS = Path(__file__).parent.parent / "models"
GOLDEN = MODELS / "golden.jsonl"


def test_golden_vectors_replay():
    r = CliRunner().invoke(main, ["eval", "--batch", str(GOLDEN), "--check"])
    assert r.exit_code == 0, r.output
    assert "51 passed, 0 failed" in r.output


def test_check_reports_a_changed_output(tmp_path):
    line = json.loads(GOLDEN.read_text().splitlines()[0])
    line["outputs"] = {"p": True, "q": True}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    r = CliRunner().invoke(main, ["eval", "--batch", str(bad), "--check"])
    assert r.exit_code == 1 and '"expected"' in r.output and "0 passed, 1 failed" in r.output


@pytest.mark.parametrize("line", GOLDEN.read_text().splitlines())
def test_golden_vectors_agree_with_oracle(line):
    case = json.loads(line)
    ins = parse_one(case["ptx"].split(" ", 1)[1] if case["ptx"].startswith("@") else case["ptx"])
    types = operand_types(ins.variant)
    inputs = {slot: parse_value(str(case["inputs"][o.text]).lower(), types[slot])
              for slot, o in ins.sources.items()}
    if case["ptx"].startswith("@"):
        pytest.skip("guards are covered in test_semantics")
    want = oracle_evaluate(oracle_desc(ins), inputs)
    for slot, o in ins.destinations.items():
        expected = case["outputs"][o.text]
        value = want[slot]
        assert expected == (value if isinstance(value, bool)
                            else f"0x{value:0{types[slot].width // 4}x}"), case["note"]
