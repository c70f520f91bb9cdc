"""Golden vectors: hand-derived expectations (models/golden.jsonl) and every corpus
file in models/ replayed through the evaluator and through the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference import run as reference

from ptxsmt.cli import main
from ptxsmt.isa.literals import parse_value
from ptxsmt.program import Program

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
def test_golden_vectors_agree_with_the_reference(line):
    case = json.loads(line)
    types = Program.parse(case["ptx"]).types
    inputs = {k: parse_value(str(v).lower(), types[k]) for k, v in case["inputs"].items()}
    regs = reference(case["ptx"], inputs)
    for name, expected in case["outputs"].items():
        value = regs[name]
        assert expected == (value if isinstance(value, bool)
                            else f"0x{value:0{types[name].width // 4}x}"), case["note"]
