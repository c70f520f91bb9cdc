"""The checked-in corpus (models/*.jsonl): replayed by the evaluator and by the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference import run as reference

from ptxsmt.cli import main
from ptxsmt.isa.literals import parse_value
from ptxsmt.isa.variants import FAMILIES
from ptxsmt.program import Program
from ptxsmt.sem.options import Options

MODELS = Path(__file__).resolve().parent.parent / "models"
SLICES = ("guards", "sm_1x", "vset-merge-b")  # the last two carry "options" on every line
CORPUS = {f: MODELS / f"{f}.jsonl" for f in (*FAMILIES, *SLICES)}


def test_option_slices_carry_their_options():
    for name, want in (("sm_1x", {"target": "sm_13"}), ("vset-merge-b", {"vset_merge": "b"})):
        lines = [json.loads(x) for x in CORPUS[name].read_text().splitlines()]
        assert len(lines) >= 300 and all(x["options"] == want for x in lines), name


def test_corpus_size():
    counts = {f: len(p.read_text().splitlines()) for f, p in CORPUS.items()}
    assert all(n >= 100 for n in counts.values()), counts
    assert sum(counts.values()) >= 10_000


@pytest.mark.parametrize("family", CORPUS)
def test_corpus_replays_through_the_evaluator(family):
    r = CliRunner().invoke(main, ["eval", "--batch", str(CORPUS[family]), "--check"])
    assert r.exit_code == 0, r.output[:2000]


@pytest.mark.parametrize("family", CORPUS)
def test_corpus_agrees_with_the_oracle(family):
    for line in CORPUS[family].read_text().splitlines():
        vec = json.loads(line)
        types = Program.parse(vec["ptx"]).types
        inputs = {k: parse_value(v, types[k]) if isinstance(v, str) else v
                  for k, v in vec["inputs"].items()}
        opts = Options.from_json(vec.get("options", {}))
        regs = reference(vec["ptx"], inputs, opts.target, opts.vset_merge)
        for name, want in vec["outputs"].items():
            got = regs[name]
            got = got if isinstance(got, bool) else f"0x{got:0{types[name].width // 4}x}"
            assert got == want, (vec, name)
