"""`ptxsmt equiv --batch`: many pairs, one JSON line each in input order. Verdicts are
known by construction (u32 addition commutes; a + b and a - b differ exactly when
2b != 0 mod 2^32, checked in plain Python on the counterexample)."""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

from ptxsmt import pairs
from ptxsmt.batch import cache
from ptxsmt.cli import main

FUNCTION = """.version 8.4
.target sm_90
.address_size 64

.visible .func  (.param .b32 func_retval0) {name}(
	.param .b32 {name}_param_0,
	.param .b32 {name}_param_1
)
{{
	.reg .b32 	%r<4>;
	ld.param.u32 	%r1, [{name}_param_0];
	ld.param.u32 	%r2, [{name}_param_1];
	{body}
	st.param.b32 	[func_retval0], %r3;
	ret;
}}
"""
BODIES = {"add": "add.u32 %r3, %r1, %r2;", "add_swapped": "add.u32 %r3, %r2, %r1;",
          "sub": "sub.u32 %r3, %r1, %r2;"}
MASK = 0xFFFFFFFF


@pytest.fixture
def work(tmp_path, monkeypatch):
    for stem, body in BODIES.items():
        name = "g" if stem == "add_swapped" else "f"  # function_b names the other's function
        (tmp_path / f"{stem}.ptx").write_text(FUNCTION.format(name=name, body=body))
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


LINES = [
    {"a": "add.ptx", "b": "add_swapped.ptx", "function": "f", "function_b": "g"},
    {"a": "add.ptx", "b": "sub.ptx", "function": "f"},
    {"lhs": "setp.lo.u32 p, a, b;", "rhs": "setp.gt.u32 p, b, a;"},
    {"lhs": "setp.lo.u32 p, a, b;", "rhs": "setp.le.u32 p, a, b;", "options": {"timeout": 20}},
]
EXPECTED = ["equivalent", "different", "equivalent", "different"]


def _batch(work, lines, *options):
    path = work / "pairs.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line)
                              for line in lines) + "\n")
    r = CliRunner().invoke(main, ["equiv", "--batch", str(path), *options])
    return r.exit_code, [json.loads(x) for x in r.stdout.splitlines()], r


def _check_counterexamples(out):
    cex = out[1]["counterexample"]
    a, b = (int(cex["inputs"][f"f_param_{i}"], 16) for i in (0, 1))
    assert (a + b) & MASK != (a - b) & MASK
    assert int(cex["lhs"]["func_retval0"], 16) == (a + b) & MASK
    assert int(cex["rhs"]["func_retval0"], 16) == (a - b) & MASK
    snippet = out[3]["counterexample"]["inputs"]
    assert snippet["a"] == snippet["b"]  # lo and le differ only there


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_pairs_in_order_with_known_verdicts(work, jobs):
    code, out, _ = _batch(work, LINES, "--jobs", jobs)
    assert [r["line"] for r in out] == [1, 2, 3, 4]
    assert [r["verdict"] for r in out] == EXPECTED
    assert all(isinstance(r["seconds"], float) for r in out)
    _check_counterexamples(out)
    assert code == 1


def test_the_second_run_comes_from_the_cache(work, monkeypatch):
    first = _batch(work, LINES)[1]
    assert not any(r.get("cached") for r in first)
    code, second, _ = _batch(work, LINES)
    assert [r.get("cached") for r in second] == [True] * 4
    assert [{k: v for k, v in r.items() if k != "cached"} for r in second] == first
    # a changed file is a new pair
    (work / "add_swapped.ptx").write_text(FUNCTION.format(name="g", body=BODIES["add"]))
    third = _batch(work, LINES)[1]
    assert [r.get("cached") for r in third] == [None, True, True, True]
    assert third[0]["verdict"] == "equivalent"
    # and --no-cache reads nothing (in this process only for this test)
    monkeypatch.setattr(cache, "_ENABLED", True)
    assert not any(r.get("cached") for r in _batch(work, LINES, "--no-cache")[1])


def test_bad_and_blank_lines_cost_only_themselves(work):
    lines = [LINES[0], "", "not json", '["a list"]', {"a": "missing.ptx", "b": "add.ptx"},
             {"lhs": "setp.lo.u32 p, a, b;", "rhs": "frob.u32 p, a, b;"},
             {"lhs": "x", "rhs": "y", "options": {"timeout": -1}},
             {"lhs": "x", "rhs": "y", "colour": "red"}, LINES[2]]
    code, out, _ = _batch(work, lines)
    assert [r["line"] for r in out] == list(range(1, 10))
    assert [r["verdict"] for r in out] == ["equivalent", "skipped"] + ["error"] * 6 + [
        "equivalent"]
    assert "missing.ptx: no such file" in out[4]["error"]
    assert "frob" in out[5]["error"]
    assert "timeout" in out[6]["error"] and "colour" in out[7]["error"]
    assert code == 2


def test_all_equivalent_exits_0(work):
    assert _batch(work, [LINES[0], LINES[2], ""])[0] == 0


def test_exit_code_precedence():
    def rs(*verdicts):
        return [{"verdict": v} for v in verdicts]
    assert pairs.exit_code(rs("equivalent", "skipped")) == 0
    assert pairs.exit_code(rs("unknown", "equivalent")) == 3
    assert pairs.exit_code(rs("unknown", "error")) == 2
    assert pairs.exit_code(rs("error", "different", "unknown")) == 1
    assert pairs.exit_code([*rs("different"), {"verdict": "error", "bug": True}]) == 4


def _crash_or_hang(pair):
    if pair.line == 1:
        os._exit(3)
    if pair.line == 2:
        time.sleep(600)
    return REAL_DECIDE(pair)


REAL_DECIDE = pairs._decide


def test_a_crash_or_a_hang_costs_only_its_own_line(work, monkeypatch):
    monkeypatch.setattr(pairs, "_decide", _crash_or_hang)
    monkeypatch.setattr(pairs, "STOP_MARGIN", 0.2)
    code, out, _ = _batch(work, [LINES[0], LINES[1], LINES[2]], "--timeout", "0.1")
    assert [r["verdict"] for r in out] == ["error", "unknown", "equivalent"]
    assert "died" in out[0]["error"] and "stopped" in out[1]["reason"]
    assert code == 4
    with pytest.raises(ChildProcessError):  # every pair's process was reaped
        os.waitpid(-1, os.WNOHANG)


def test_batch_refuses_single_pair_options(work):
    code, _, r = _batch(work, LINES, "--function", "f")
    assert code == 2 and "--batch" in r.stderr
    r = CliRunner().invoke(main, ["equiv", "a;", "b;", "--jobs", "2"])
    assert r.exit_code == 2 and "without --batch" in r.stderr


@pytest.mark.skipif(os.environ.get("PTXSMT_PROFILE") != "thorough",
                    reason="starts a dask cluster (PTXSMT_PROFILE=thorough)")
def test_dask_executor(work):
    code, out, _ = _batch(work, LINES, "--executor", "dask", "--jobs", "2")
    assert [r["verdict"] for r in out] == EXPECTED and code == 1


def _tell_limit(pair):
    return {"verdict": "unknown", "reason": f"limit {pair.options['timeout']:g}"}


def test_each_line_has_its_own_timeout(work, monkeypatch):
    """A line's options.timeout reaches its decision; the others keep --timeout."""
    monkeypatch.setattr(pairs, "_decide", _tell_limit)
    lines = [LINES[2], {**LINES[3], "options": {"timeout": 7}}]
    _, out, _ = _batch(work, lines, "--timeout", "3")
    assert [r["reason"] for r in out] == ["limit 3", "limit 7"]


def test_a_line_past_its_own_timeout_is_stopped_alone(work, monkeypatch):
    """Its own 0.1 s, not the command line's hour: the hanging line 2 is stopped, and
    only it (line 1 crashes, line 3 is decided)."""
    monkeypatch.setattr(pairs, "_decide", _crash_or_hang)
    monkeypatch.setattr(pairs, "STOP_MARGIN", 0.2)
    hanging = {**LINES[1], "options": {"timeout": 0.1}}
    _, out, _ = _batch(work, [LINES[2], hanging, LINES[2]], "--timeout", "3600")
    assert [r["verdict"] for r in out] == ["error", "unknown", "equivalent"]
    assert out[1]["reason"] == "stopped after 0.4 s"  # twice its timeout and the margin


def test_progress_counts_pairs_on_stderr_and_never_on_stdout(work, monkeypatch):
    from ptxsmt.report import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY_LINE", 0.0)
    code, out, r = _batch(work, LINES)
    assert code == 1 and len(out) == 4  # stdout: the four JSON lines alone
    shown = r.stderr.splitlines()
    assert shown and all(line.startswith("equiv --batch: ") for line in shown), shown
    counts = [line.split()[2] for line in shown]  # a line at each pair, and a last one
    assert counts == ["0/4", "1/4", "2/4", "3/4", "4/4", "4/4"], shown
    assert shown[-1].startswith("equiv --batch: 4/4 pairs done in "), shown
