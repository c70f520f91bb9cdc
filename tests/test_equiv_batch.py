"""`ptxsmt equiv --batch`: many pairs, one JSON line each in input order. Verdicts are
known by construction (u32 addition commutes; a + b and a - b differ exactly when
2b != 0 mod 2^32, checked in plain Python on the counterexample; an ordered compare for
fcmp une differs exactly on NaN operands, checked with Python's unordered !=)."""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from processes import children
from tier import THOROUGH

from ptxsmt import pairs
from ptxsmt.batch import cache
from ptxsmt.cli import main
from ptxsmt.smt.solving import budget

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
    # a served verdict ran nothing: no run record
    assert [{k: v for k, v in r.items() if k != "cached"} for r in second] == \
        [{k: v for k, v in r.items() if k != "run"} for r in first]
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


def test_a_line_that_is_not_utf8_costs_only_itself(work):
    """Also with a byte-order mark before the first line and CRLF line ends."""
    good = [json.dumps(LINES[n]).encode() for n in (0, 2)]
    bad = json.dumps(LINES[2]).encode().replace(b"setp.gt", b"setp.\xffgt")
    (work / "pairs.jsonl").write_bytes(b"\xef\xbb\xbf" + b"\r\n".join([good[0], bad, good[1]]))
    r = CliRunner().invoke(main, ["equiv", "--batch", str(work / "pairs.jsonl")])
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["verdict"] for x in out] == ["equivalent", "error", "equivalent"]
    column = bad.index(0xFF) + 1
    assert out[1]["error"] == f"not UTF-8 text (byte 0xff at column {column})"
    assert out[1]["bad_input"] and r.exit_code == 2 and r.stderr == ""
    # as eval --batch answers it
    lines = [json.dumps({"ptx": "add.u32 d, a, b;", "inputs": {"a": 1, "b": n}}).encode()
             for n in (2, 3)]
    r = CliRunner().invoke(main, ["eval", "--batch", "-"],
                           input=b"\n".join([lines[0], lines[1].replace(b"add", b"a\xffdd"),
                                             lines[1]]))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x.get("outputs", {}).get("d") for x in out] == ["0x00000003", None, "0x00000004"]
    assert out[1]["error"].startswith("line 2: not UTF-8 text (byte 0xff")
    assert r.exit_code == 1


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
    before = children()
    # only the hanging line has a short limit: line 3's proof has all the time it takes
    hanging = {**LINES[1], "options": {"timeout": 0.1}}
    code, out, _ = _batch(work, [LINES[0], hanging, LINES[2]], "--timeout", "3600")
    assert [r["verdict"] for r in out] == ["error", "unknown", "equivalent"]
    assert "died" in out[0]["error"] and "stopped" in out[1]["reason"]
    assert code == 4
    # the stopped line's process was reaped: its CPU time counted, its memory unknown
    assert out[1]["run"]["memory"] is None and out[1]["run"]["cputime"] >= 0
    assert not children() - before  # every pair's process was reaped


def test_batch_refuses_single_pair_options(work):
    code, _, r = _batch(work, LINES, "--function", "f")
    assert code == 2 and "--batch" in r.stderr
    r = CliRunner().invoke(main, ["equiv", "a;", "b;", "--jobs", "2"])
    assert r.exit_code == 2 and "without --batch" in r.stderr


@pytest.mark.skipif(not THOROUGH,
                    reason="starts a dask cluster (PTXSMT_PROFILE=thorough)")
def test_dask_executor(work):
    code, out, _ = _batch(work, LINES, "--executor", "dask", "--jobs", "2")
    assert [r["verdict"] for r in out] == EXPECTED and code == 1


def _check_runs(out, lines):
    """Each decided line's BenchExec-style record: what it cost, where, under what."""
    for r, line in zip(out, lines, strict=True):
        run = r["run"]
        assert set(run) == {"cputime", "walltime", "memory", "solver", "limit", "host",
                            "merges"}
        assert run["cputime"] >= 0 and run["walltime"] > 0 and run["memory"] > 1 << 20
        assert (run["solver"], run["limit"]) == ("z3", line.get("options", {}).get("timeout", 9))
        if "a" in line:  # a function pair: the sweep's merges (none: these are small)
            assert run["merges"] == {"proved": 0, "structural": 0, "by rule": 0}
        else:
            assert run["merges"] is None


def test_each_decided_line_has_a_run_record(work):
    options = ("--solver", "z3", "--timeout", "9")
    code, out, _ = _batch(work, LINES, *options)  # line 4 has a limit of its own
    assert [r["verdict"] for r in out] == EXPECTED
    _check_runs(out, LINES)
    again = _batch(work, LINES, *options)[1]  # served from the cache: nothing ran
    assert all(r["cached"] and "run" not in r for r in again)


def test_a_local_dask_cluster_of_one_process_decides_three_pairs(work):
    """`--executor dask` with no --scheduler: a LocalCluster of --jobs processes."""
    pytest.importorskip("distributed")
    code, out, _ = _batch(work, LINES[:3], "--executor", "dask", "--jobs", "1",
                          "--solver", "z3", "--timeout", "9", "--no-cache")
    assert [r["verdict"] for r in out] == EXPECTED[:3] and code == 1, out
    _check_runs(out, LINES[:3])


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
    hanging = {**LINES[1], "options": {"timeout": 0.1}}
    _, out, _ = _batch(work, [LINES[2], hanging, LINES[2]], "--timeout", "3600")
    assert [r["verdict"] for r in out] == ["error", "unknown", "equivalent"]
    assert out[1]["reason"].startswith(budget.OUT_OF_TIME)  # killed at its stop, 0.195 s
    assert "the wall cap came first: 0.0 of 0.1 CPU seconds" in out[1]["reason"]


def test_an_unknown_the_wall_cap_decided_says_so(monkeypatch):
    """The wall cap (2 x 60 s) came first with CPU seconds left: the reason says so, and
    how to raise the cap; CPU seconds spent, a verdict, or a raised cap add nothing."""
    unknown = {"verdict": "unknown", "reason": "z3: timeout"}

    def noted(result, cpu, wall):
        return pairs._load_noted(result, {"cputime": cpu, "walltime": wall, "limit": 60})

    assert noted(unknown, 16.6, 115.3)["reason"] == (
        "z3: timeout; the wall cap came first: 16.6 of 60 CPU seconds in 115.3 wall seconds "
        f"(on a loaded machine {budget.WALL_CAP_VARIABLE} raises the cap)")
    assert noted(unknown, 60.4, 115.3) == unknown  # its CPU seconds spent
    assert noted(unknown, 16.6, 100.0) == unknown  # ended before 90% of the cap
    assert noted({"verdict": "equivalent"}, 16.6, 115.3) == {"verdict": "equivalent"}
    monkeypatch.setenv(budget.WALL_CAP_VARIABLE, "20")
    assert noted(unknown, 16.6, 115.3) == unknown


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


# IR against PTX: the pair llc-14 -O2 wrote (tests/ptx/llvm/une.ll); the planted bug is
# the ordered setp.ne for fcmp une, which differs from it exactly when an operand is NaN.
LLVM_PAIR = Path(__file__).parent / "ptx" / "llvm"
LOOP_IR = (LLVM_PAIR / "irreducible.ll").read_text()  # a cycle entered at two blocks


@pytest.fixture
def ir_work(work):
    pytest.importorskip("llvmlite")
    for name in ("une.ll", "une_llc14_O2.ptx"):
        shutil.copy(LLVM_PAIR / name, work / name)
    text = (work / "une_llc14_O2.ptx").read_text()
    assert text.count("setp.neu.f32") == 1
    (work / "une_bad.ptx").write_text(text.replace("setp.neu.f32", "setp.ne.f32"))
    (work / "loop.ll").write_text(LOOP_IR)
    return work


IR_LINES = [
    {"a": "une.ll", "b": "une_llc14_O2.ptx", "function": "une"},
    {"a": "une.ll", "b": "une_bad.ptx", "function": "une"},
    {"a": "une.ll", "b": "une_llc14_O2.ptx", "function": "add", "options": {"timeout": 20}},
    {"a": "loop.ll", "b": "une_llc14_O2.ptx", "function": "loop", "function_b": "add"},
]
IR_EXPECTED = ["refines", "different", "refines", "refused"]


def _f32(bits: str) -> float:
    return struct.unpack("<f", struct.pack("<I", int(bits, 16)))[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ir_against_ptx_pairs(ir_work, jobs):
    code, out, _ = _batch(ir_work, [*IR_LINES, LINES[0]], "--jobs", jobs)
    assert [r["verdict"] for r in out] == [*IR_EXPECTED, "equivalent"]
    assert code == 1
    cex = out[1]["counterexample"]
    a, b = (_f32(cex["inputs"][k]) for k in ("a", "b"))
    assert math.isnan(a) or math.isnan(b)  # the only inputs where une and ne part
    assert int(cex["ir"], 16) == int(a != b) == 1  # Python's != is unordered, as une is
    assert int(cex["ptx"], 16) & 1 == 0
    assert cex["reproduce"]["ptx"].startswith(f"ptxsmt eval {ir_work / 'une_bad.ptx'} ")
    assert out[3]["reason"] == "loop" and "loop" in out[3]["detail"]


def test_ir_verdicts_and_refusals_are_cached(ir_work):
    """All but a "different": no evaluator of IR could replay its counterexample."""
    first = _batch(ir_work, IR_LINES)[1]
    code, second, _ = _batch(ir_work, IR_LINES)
    assert [r.get("cached") for r in second] == [True, None, True, True]
    assert [{k: v for k, v in r.items() if k not in ("cached", "seconds", "run")}
            for r in second] == \
        [{k: v for k, v in r.items() if k not in ("seconds", "run")} for r in first]
    (ir_work / "une_llc14_O2.ptx").write_text((ir_work / "une_bad.ptx").read_text())
    third = _batch(ir_work, IR_LINES[:1])[1]
    assert third[0]["verdict"] == "different" and not third[0].get("cached")


def test_refused_ir_alone_exits_3(ir_work):
    assert _batch(ir_work, [IR_LINES[3], IR_LINES[0]])[0] == 3


def test_bad_ir_lines_cost_only_themselves(ir_work):
    lines = [{"a": "une_llc14_O2.ptx", "b": "une.ll", "function": "une"},
             {"a": "une.ll", "b": "une_llc14_O2.ptx", "function": "une",
              "options": {"target": "sm_90"}},
             {"a": "une.ll", "b": "une_llc14_O2.ptx"},
             {"a": "une.ll", "b": "une_llc14_O2.ptx", "function": "nope"},
             IR_LINES[0]]
    code, out, _ = _batch(ir_work, lines)
    assert [r["verdict"] for r in out] == ["error"] * 4 + ["refines"]
    assert "SOURCE.ll as a and a TARGET.ptx as b" in out[0]["error"]
    assert "target does not apply to IR against PTX" in out[1]["error"]
    assert "defines 2 functions" in out[2]["error"] and "@nope" in out[3]["error"]
    assert code == 2


def test_a_garbage_ll_is_bad_input_of_its_line(ir_work):
    """Bytes that are not UTF-8, text that is not IR, an empty file: each its own line's
    error naming the file, bad input (exit 2), never "ptxsmt failed" (exit 4)."""
    garbage = {"bytes.ll": bytes(range(256)) * 4, "text.ll": b"garbage, not IR\n",
               "empty.ll": b""}
    for name, data in garbage.items():
        (ir_work / name).write_bytes(data)
    lines = [{"a": name, "b": "une_llc14_O2.ptx", "function": "une"} for name in garbage]
    code, out, r = _batch(ir_work, [*lines, IR_LINES[0]])
    assert [x["verdict"] for x in out] == ["error"] * 3 + ["refines"]
    for name, x in zip(garbage, out):
        assert name in x["error"] and x["bad_input"] and "bug" not in x, x
    assert "not UTF-8 text (byte 0x80)" in out[0]["error"]
    assert code == 2 and "Traceback" not in r.output


def test_a_module_the_reader_refuses_is_refused_not_an_error(ir_work):
    (ir_work / "struct.ll").write_text(  # a packed struct: outside the model
        "%S = type <{ i16, i16 }>\n"
        "define %S @pack(i16 %a) {\n  %s = insertvalue %S poison, i16 %a, 0\n  ret %S %s\n}\n")
    code, out, _ = _batch(ir_work, [{"a": "struct.ll", "b": "une_llc14_O2.ptx",
                                     "function": "pack", "function_b": "add"}])
    assert [r["verdict"] for r in out] == ["refused"] and out[0]["reason"] == "type"
    assert code == 3


def test_an_ir_pair_with_a_loop_takes_unroll(ir_work):
    from ptxsmt.llvm.module import compile_to_ptx
    ir = """define i32 @loop(i32 %n) {
entry:
  br label %l
l:
  %i = phi i32 [ 0, %entry ], [ %j, %l ]
  %j = add i32 %i, 1
  %c = icmp ult i32 %j, %n
  br i1 %c, label %l, label %e
e:
  ret i32 %j
}
"""
    (ir_work / "counted.ll").write_text(ir)
    (ir_work / "counted.ptx").write_text(compile_to_ptx(ir, opt=0))
    line = {"a": "counted.ll", "b": "counted.ptx", "function": "loop"}
    code, out, _ = _batch(ir_work, [line, {**line, "options": {"unroll": 3}}])
    assert [(r["verdict"], r.get("unroll")) for r in out] == [("unknown", None),
                                                             ("bounded", 3)], out
    assert out[0]["reason"].startswith("refines up to 4 iterations") and code == 3
