"""`ptxsmt tv FILE.ll`: verdicts, exit codes, JSON, and one-line errors on bad input."""

from __future__ import annotations

import json

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
