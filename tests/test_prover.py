"""The prover and the identity library, checked against the independent reference.

Every refuted instance's counterexample must make the two sides differ in
tests/reference.py; every proved instance is sampled there on special and random
operands. The reference never touches the Z3 terms.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner
from reference import run as reference
from strategies import _SPECIAL

from ptxsmt import proofs
from ptxsmt.cli import main
from ptxsmt.smt.queries.snippets import build_query, check_equivalence

LIBRARY = proofs.load(Path(__file__).resolve().parent.parent / "proofs")


@functools.cache
def _results() -> dict:
    """The whole library proved once, on first use (not at import: collection stays cheap)."""
    return {r.instance.id: r for r in proofs.run(LIBRARY, jobs=1, timeout=60)}


def test_library_size():
    assert len({i.name for i in LIBRARY}) >= 40
    assert len(LIBRARY) >= 500


@pytest.mark.parametrize("inst", LIBRARY, ids=lambda i: i.id)
def test_every_instance_has_its_expected_verdict(inst):
    r = _results()[inst.id]
    assert r.verdict == inst.expect, r.error or r.counterexample
    assert r.witness_ok is not False, r.counterexample


def _outputs(inst):
    q = build_query(inst.lhs, inst.rhs, inst.outputs, inst.lhs_options, inst.rhs_options)
    return q


def _both(inst, inputs):
    lhs = reference(inst.lhs, inputs, inst.lhs_options.target, inst.lhs_options.vset_merge)
    rhs = reference(inst.rhs, inputs, inst.rhs_options.target, inst.rhs_options.vset_merge)
    return lhs, rhs


@pytest.mark.parametrize("inst", [i for i in LIBRARY if i.expect == "fails"], ids=lambda i: i.id)
def test_counterexamples_differ_in_the_reference(inst):
    q = _outputs(inst)
    cex = _results()[inst.id].counterexample
    inputs = dict(cex.inputs)
    lhs, rhs = _both(inst, inputs)
    assert any(lhs[o] != rhs[o] for o in q.outputs), (inputs, lhs, rhs)


def _random_inputs(q, rng):
    out = {}
    for name, t in q.types.items():
        if name not in q.inputs:
            continue
        if t.width == 1:
            out[name] = rng.random() < 0.5
        elif rng.random() < 0.6:
            lane = t.lane_width
            pool = _SPECIAL.get(lane, [0, 1])
            out[name] = sum(rng.choice(pool) << (lane * i) for i in range(t.width // lane))
        else:
            out[name] = rng.getrandbits(t.width)
    return out


@pytest.mark.parametrize("inst", [i for i in LIBRARY if i.expect == "holds"], ids=lambda i: i.id)
def test_proved_instances_agree_in_the_reference(inst):
    q = _outputs(inst)
    rng = random.Random(inst.id)
    for _ in range(25):
        inputs = _random_inputs(q, rng)
        lhs, rhs = _both(inst, inputs)
        assert all(lhs[o] == rhs[o] for o in q.outputs), (inputs, lhs, rhs)


def test_minimised_counterexample_is_readable():
    v = check_equivalence("setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;")
    assert v.verdict == "different"
    values = sorted(v.counterexample.inputs.values())
    assert values == [0, 0x7FC00000]  # +0 and the canonical NaN


def test_unknown_is_its_own_verdict(monkeypatch):
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    r = CliRunner().invoke(main, ["equiv", "--json", "--solver", "z3", "setp.lt.f32 p, a, b;",
                                  "setp.gt.f32 p, b, a;"])  # z3 alone: no racer to answer
    assert r.exit_code == 3
    assert json.loads(r.stdout)["verdict"] == "unknown"


def test_equiv_json_contract():
    r = CliRunner().invoke(main, ["equiv", "--json", "slct.ftz.b32.f32 d, a, b, c;",
                                  "setp.ge.f32 p, c, 0f00000000; selp.b32 d, a, b, p;"])
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["verdict"] == "different"
    cex = out["counterexample"]
    assert set(cex) == {"inputs", "lhs", "rhs", "differ"}
    assert cex["differ"] == ["d"] and out["nan"] == "payload-free"
    assert out["only_nan_payloads"] is False
    assert cex["inputs"]["c"] in ("0x80000001", "0x807fffff") or \
        int(cex["inputs"]["c"], 16) >> 23 == 0x100  # a negative subnormal
    assert cex["lhs"]["d"] != cex["rhs"]["d"]


def test_equiv_text_has_reproduce_lines():
    r = CliRunner().invoke(main, ["equiv", "setp.lt.s32 p, a, b;", "setp.lt.u32 p, a, b;"])
    assert r.exit_code == 1
    assert "ptxsmt eval 'setp.lt.s32 p, a, b;' a=0x" in r.output


def test_all_classes_names_the_culprit():
    r = CliRunner().invoke(main, ["equiv", "--all-classes", "--json",
                                  "setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;"])
    classes = json.loads(r.stdout)["classes"]
    assert classes["complete"] and classes["only_when"] == "a is NaN or b is NaN"
    assert sorted(classes["failing"]) == [["*", "NaN"], ["NaN", "*"]]


def test_equivalent_exit_zero():
    r = CliRunner().invoke(main, ["equiv", "setp.lo.u32 p, a, b;", "setp.lt.u32 p, a, b;"])
    assert r.exit_code == 0 and r.stdout.startswith("equivalent")


@pytest.mark.parametrize("args", [
    ["equiv", "setp.lt.f32 p, a, b;"],
    ["equiv", "setp.lt.f32 p, a, b;", "setp.lt.f32 q, a, b;"],
    ["equiv", "setp.lt.f32 p, a, b;", "setp.lt.f16 p, a, b;"],
    ["equiv", "setp.lt.f32 p, a, b;", "setp.lt.f32 p, a, b;", "--outputs", "z"],
    ["equiv", "setp.lt.zz.f32 p, a, b;", "setp.lt.f32 p, a, b;"],
])
def test_equiv_bad_input_exit_2(args):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1


def test_prove_identities_json_and_filter():
    r = CliRunner().invoke(main, ["prove", "identities", "-k", "unsigned-aliases", "--json"])
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    first = out["results"][0]
    assert set(first) >= {"name", "instance", "lhs", "rhs", "expect", "verdict",
                          "counterexample", "seconds"}
    assert out["summary"]["mismatched"] == 0 and out["summary"]["instances"] == 24


def test_prove_identities_reports_a_wrong_expectation(tmp_path):
    (tmp_path / "x.toml").write_text(
        '[[identity]]\nname = "wrong"\nlhs = "setp.lt.f32 p, a, b;"\n'
        'rhs = "setp.le.f32 p, a, b;"\nexpect = "holds"\n')
    r = CliRunner().invoke(main, ["prove", "identities", "--dir", str(tmp_path)])
    assert r.exit_code == 1 and "MISMATCH" in r.output


@pytest.mark.parametrize("body,fragment", [
    ('name = "x"\nlhs = "setp.lt.f32 p, a, b;"\nexpect = "holds"\n', "missing ['rhs']"),
    ('name = "x"\nlhs = "a"\nrhs = "b"\nexpect = "maybe"\n', "expect must be"),
    ('name = "x"\nlhs = "setp.${c}.f32 p, a, b;"\nrhs = "b"\nexpect = "holds"\n', "placeholder"),
    ('name = "x"\nlhs = "a"\nrhs = "b"\nexpect = "holds"\ngrid = 5\n', "grid must be a table"),
    ('name = "x"\nlhs = "a"\nrhs = "b"\nexpect = "fails"\nwitness = { some = "NaN" }\n',
     "witness.some must be a list"),
])
def test_bad_identity_files(tmp_path, body, fragment):
    (tmp_path / "x.toml").write_text("[[identity]]\n" + body)
    r = CliRunner().invoke(main, ["prove", "identities", "--dir", str(tmp_path)])
    assert r.exit_code == 2 and fragment in r.output


