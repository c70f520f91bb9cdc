"""The command line: contracts from DESIGN.md, exit codes, errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ptxsmt.cli import main


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_eval_json_contract():
    r = run("eval", "--json", "setp.ltu.f32 p|q, a, b;", "a=nan", "b=1.0")
    assert r.exit_code == 0
    assert json.loads(r.output) == {
        "ptx": "setp.ltu.f32 p|q, a, b;",
        "inputs": {"a": "0x7fc00000", "b": "0x3f800000"},
        "outputs": {"p": True, "q": False},
    }


def test_eval_text_shows_hex_and_value():
    r = run("eval", "set.gtu.u32.f16x2 d, a, b;", "a=0x7e000000", "b=0x00003c00")
    assert r.exit_code == 0
    assert "0x7e000000 (qNaN, 0.0)" in r.output and "d = 0xffff0000" in r.output


def test_eval_16_bit_hex_width():
    r = run("eval", "--json", "set.lt.f16.f16 d, a, b;", "a=-1", "b=0x0")
    assert json.loads(r.output)["outputs"] == {"d": "0x3c00"}


def test_batch_keeps_order_and_answers_bad_lines_in_place():
    lines = [
        {"ptx": "setp.lt.s32 p, a, b;", "inputs": {"a": "-1", "b": "0x0"}},
        {"ptx": "setp.lt.bogus.s32 p, a, b;", "inputs": {}},
        "not json",
        {"ptx": "selp.f32 d, a, b, c;", "inputs": {"a": "0x7fc00001", "b": "1.0", "c": True}},
        {"ptx": "setp.lt.u16 p, a, b;", "inputs": {"a": "0x10000", "b": "0"}},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    r = run("eval", "--batch", "-", stdin=text)
    assert r.exit_code == 1
    out = [json.loads(line) for line in r.output.splitlines()]
    assert len(out) == 5
    assert out[0]["outputs"] == {"p": True}
    assert "unknown modifier '.bogus'" in out[1]["error"]
    assert "invalid JSON" in out[2]["error"]
    assert out[3]["outputs"] == {"d": "0x7fc00001"}  # NaN payload kept
    assert "does not fit" in out[4]["error"]


def test_batch_all_good_exits_zero():
    r = run("eval", "--batch", "-", stdin='{"ptx": "slct.b32.s32 d, a, b, c;", '
            '"inputs": {"a": "1", "b": "2", "c": "-1"}}\n')
    assert r.exit_code == 0 and json.loads(r.output)["outputs"] == {"d": "0x00000002"}


def test_check_json_and_exit_code():
    src = "setp.lt.ftz.f32 p, a, b;\nset.lt.bf16.f32 d, a, b;\n"
    r = run("check", "--target", "sm_80", "--ptx-version", "7.0", "--json", "-", stdin=src)
    assert r.exit_code == 1
    a, b = (json.loads(x) for x in r.output.splitlines())
    assert a == {"ptx": "setp.lt.ftz.f32 p, a, b;", "legal": True, "error": None}
    assert b["legal"] is False and "needs PTX ISA 7.8" in b["error"]


def test_variants_json_lists_catalogue():
    r = run("variants", "--family", "vset2", "--json")
    rows = json.loads(r.output)
    assert r.exit_code == 0 and len(rows) == 48
    assert {"variant": "vset2.u32.u32.eq", "family": "vset2", "ptx": "3.0", "sm": 30} in rows


@pytest.mark.parametrize("args", [
    ["eval", "setp.lt.f32 p, a, b;", "a=1", "b=frog"],
    ["eval", "setp.lt.f32 p, a, b;", "a=1", "x=2"],
    ["eval", "setp.lt.f32 p, a, b;", "a=1"],
    ["eval", "setp.lt.f32 p, a, b;", "a1"],
    ["eval", "setp.lt.quux.f32 p, a, b;"],
    ["eval", "setp.lt.f32 p, a, b, c, d;"],
    ["eval", "set.lt.f16x2.f32 d, a, b;"],
    ["eval", "--target", "banana", "setp.lt.f32 p, a, b;"],
    ["check", "--ptx-version", "x", "-"],
])
def test_bad_input_is_one_line_exit_2(args):
    r = run(*args, stdin="")
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and r.output.startswith("error: ")
    assert "Traceback" not in r.output


def test_entry_point_has_no_traceback():
    r = subprocess.run([sys.executable, "-m", "ptxsmt", "eval", "setp.lt.f32 p, a, 0fXYZ;"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: line 1, col ")


def test_percent_names_are_kept_in_outputs():
    lines = ['{"ptx": "setp.lt.s32 %p1, %r1, %r2;", "inputs": {"%r1": "0x1", "%r2": "0x2"}}',
             '{"ptx": "setp.lt.s32 %p1, %r1, %r2;", "inputs": {"r1": "-1", "r2": "0x2"}}',
             '{"ptx": "@%g selp.b32 %d, a, 7, %c;", "inputs": {"a": "1", "%c": false, '
             '"g": true, "%d": "0x0"}}']
    r = run("eval", "--batch", "-", stdin="\n".join(lines))
    out = [json.loads(x)["outputs"] for x in r.output.splitlines()]
    assert out == [{"%p1": True}, {"%p1": True}, {"%d": "0x00000007"}]
    r = run("eval", "--json", "setp.lt.f32 %p|q, %a, b;", "a=1.0", "%b=2.0")
    assert json.loads(r.output)["outputs"] == {"%p": True, "q": False}


def test_batch_chunks_keep_order_and_errors():
    from ptxsmt.cli import _batch
    from ptxsmt.sem.options import Options

    lines = [json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": hex(i), "b": "0x4"}})
             for i in range(8)]
    lines[5] = "{oops"
    out = list(_batch(lines, Options(), chunk=3))
    assert [o.get("outputs", {}).get("p") for o, _ in out] == \
        [True, True, True, True, False, None, False, False]
    assert out[5][1] is not None and "line 6" in out[5][0]["error"]
