"""`ptxsmt tv FILE.ll` and `ptxsmt equiv F.ll F.ptx`: verdicts, exit codes, JSON,
counterexamples, and one-line errors on bad input."""

from __future__ import annotations

import json
import math
import shlex
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("llvmlite")

from ptxsmt.cli import main  # noqa: E402

IR = """define i32 @smin(i32 %a, i32 %b) {
  %r = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  ret i32 %r
}
define zeroext i1 @une(float %a, float %b) {
  %r = fcmp une float %a, %b
  ret i1 %r
}
define i32 @loop(i32 %n) {
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
declare i32 @llvm.smin.i32(i32, i32)
"""


def _tv(tmp_path, *args, text=IR):
    f = tmp_path / "k.ll"
    f.write_text(text)
    return CliRunner().invoke(main, ["tv", str(f), *args])


def test_every_function_gets_a_verdict(tmp_path):
    r = _tv(tmp_path)
    assert r.exit_code == 3, r.output  # the loop is refused
    assert "@smin: refines" in r.stdout and "@une: refines" in r.stdout
    assert "@loop: refused (unsupported loop" in r.stdout


def test_one_function_as_json(tmp_path):
    r = _tv(tmp_path, "--function", "une", "--json", "-O", "0")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"results": [{"function": "une", "verdict": "refines"}]}


@pytest.mark.parametrize("args,text,message", [
    ((), "define i32 @f( {", "error: LLVM IR: 1:17: error: expected type"),
    (("--function", "nope"), IR, "error: no function @nope in the IR"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, text, message):
    r = _tv(tmp_path, *args, text=text)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(message) and len(r.stderr.splitlines()) == 1


# `ptxsmt equiv SOURCE.ll TARGET.ptx`: the pair llc-14 -O2 wrote (tests/ptx/llvm/une.ll)
PAIR = Path(__file__).parent / "ptx" / "llvm"
ORDERED = ("setp.neu.f32", "setp.ne.f32")  # fcmp une lowered as the ordered compare


def _equiv(*args):
    return CliRunner().invoke(main, ["equiv", *map(str, args)])


def _planted(tmp_path):
    text = (PAIR / "une_llc14_O2.ptx").read_text()
    assert text.count(ORDERED[0]) == 1
    bad = tmp_path / "une_bad.ptx"
    bad.write_text(text.replace(*ORDERED))
    return bad


@pytest.mark.parametrize("function", ["une", "add"])
def test_llc_output_refines_its_ir(function):
    r = _equiv(PAIR / "une.ll", PAIR / "une_llc14_O2.ptx", "--function", function)
    assert r.exit_code == 0, r.output
    assert r.stdout == f"@{function}: refines\n"


def test_ordered_compare_for_une_is_different_and_reproduces(tmp_path):
    bad = _planted(tmp_path)
    r = _equiv(PAIR / "une.ll", bad, "--function", "une", "--json")
    assert r.exit_code == 1, r.output
    cex = json.loads(r.stdout)["counterexample"]
    a, b = (struct.unpack("<f", struct.pack("<I", int(cex["inputs"][k], 16)))[0]
            for k in ("a", "b"))
    assert math.isnan(a) or math.isnan(b)  # the only inputs where une and ne part
    assert int(cex["ir"], 16) == int(a != b) == 1  # Python's != is unordered, as une
    assert int(cex["ptx"], 16) & 1 == 0  # setp.ne: false on NaN
    # the PTX reproduce line runs as printed and shows the PTX's result
    line = shlex.split(cex["reproduce"]["ptx"])
    assert line[:2] == ["ptxsmt", "eval"]
    given = dict(arg.split("=") for arg in line[5:])  # IR parameter N is PTX's une_param_N
    assert {k: int(v, 16) for k, v in given.items()} == {
        "une_param_0": int(cex["inputs"]["a"], 16), "une_param_1": int(cex["inputs"]["b"], 16)}
    run = subprocess.run([sys.executable, "-m", "ptxsmt", *line[1:], "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert int(json.loads(run.stdout)["outputs"]["func_retval0"], 16) == int(cex["ptx"], 16)


def test_different_as_text_names_inputs_results_and_reproduce_line(tmp_path):
    bad = _planted(tmp_path)
    r = _equiv(PAIR / "une.ll", bad, "--function", "une")
    assert r.exit_code == 1, r.output
    first, label, line = r.stdout.splitlines()
    assert first.startswith("@une: different (inputs %a=") and "; IR 0x1; PTX 0x0)" in first
    assert label == "  reproduce (the PTX side):"
    assert line.startswith(f"    ptxsmt eval {bad} --function une une_param_0=")


def test_function_b_names_the_ptx_function(tmp_path):
    renamed = tmp_path / "renamed.ptx"
    text = (PAIR / "une_llc14_O2.ptx").read_text()
    renamed.write_text(text.replace(" add(", " plus(").replace("add_param", "plus_param"))
    r = _equiv(PAIR / "une.ll", renamed, "--function", "add", "--function-b", "plus")
    assert r.exit_code == 0, r.output
    assert r.stdout == "@add: refines\n"


def test_ir_outside_the_model_is_refused_with_exit_3(tmp_path):
    ll = tmp_path / "loop.ll"
    ll.write_text(IR)
    r = _equiv(ll, PAIR / "une_llc14_O2.ptx", "--function", "loop", "--function-b", "add")
    assert r.exit_code == 3, r.output
    assert r.stdout.startswith("@loop: refused (unsupported loop")


@pytest.mark.parametrize("args,message", [
    (("B", "A"), "error: IR against PTX takes SOURCE.ll first and TARGET.ptx second"),
    (("A", "A"), "error: IR against PTX takes SOURCE.ll first and TARGET.ptx second"),
    (("A", "B"), "defines 2 functions: name one with --function"),
    (("A", "B", "--function", "nope"), "error: no function @nope in"),
    (("A", "B", "--function", "une", "--function-b", "nope"), "error: "),
    (("A", "B", "--function", "une", "--unroll", "2"),
     "error: --unroll does not apply to SOURCE.ll against TARGET.ptx"),
    (("A", "B", "--function", "une", "--all-classes"), "error: --all-classes does not apply"),
    (("A", "B", "--function", "une", "--outputs", "d"), "error: --outputs does not apply"),
    (("missing.ll", "B", "--function", "une"), "error: \"missing.ll\": no such file"),
])
def test_bad_ir_against_ptx_input_is_one_line_and_exit_2(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    names = {"A": str(PAIR / "une.ll"), "B": str(PAIR / "une_llc14_O2.ptx"), "D": str(tmp_path)}
    r = _equiv(*(names.get(a, a) for a in args))
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert message in r.stderr and len(r.stderr.splitlines()) == 1


def test_without_llvmlite_ir_against_ptx_is_one_line_and_exit_2():
    code = ("import sys; sys.modules['llvmlite'] = None; sys.modules['llvmlite.binding'] = None\n"
            "from ptxsmt.cli import main\n"
            f"main(['equiv', {str(PAIR / 'une.ll')!r}, {str(PAIR / 'une_llc14_O2.ptx')!r}, "
            "'--function', 'une'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "error: reading LLVM IR needs llvmlite: pip install 'ptxsmt[llvm]'\n"
