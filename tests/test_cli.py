"""The command line: contracts from DESIGN.md, exit codes, errors without tracebacks."""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.report import progress


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_eval_json_contract():
    r = run("eval", "--json", "setp.ltu.f32 p|q, a, b;", "a=nan", "b=1.0")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {
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
    assert json.loads(r.stdout)["outputs"] == {"d": "0x3c00"}


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
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(out) == 5
    assert out[0]["outputs"] == {"p": True}
    assert 'unknown modifier ".bogus"' in out[1]["error"]
    assert "invalid JSON" in out[2]["error"]
    assert out[3]["outputs"] == {"d": "0x7fc00001"}  # NaN payload kept
    assert "does not fit" in out[4]["error"]


def test_batch_all_good_exits_zero():
    r = run("eval", "--batch", "-", stdin='{"ptx": "slct.b32.s32 d, a, b, c;", '
            '"inputs": {"a": "1", "b": "2", "c": "-1"}}\n')
    assert r.exit_code == 0 and json.loads(r.stdout)["outputs"] == {"d": "0x00000002"}


def test_check_json_and_exit_code():
    src = "setp.lt.ftz.f32 p, a, b;\nset.lt.bf16.f32 d, a, b;\n"
    r = run("check", "--target", "sm_80", "--ptx-version", "7.0", "--json", "-", stdin=src)
    assert r.exit_code == 1
    a, b = (json.loads(x) for x in r.stdout.splitlines())
    assert a == {"line": 1, "ptx": "setp.lt.ftz.f32 p, a, b;", "legal": True, "error": None}
    assert b["line"] == 2 and b["legal"] is False and "needs PTX ISA 7.8" in b["error"]


def test_variants_json_lists_catalogue():
    r = run("variants", "--family", "vset2", "--json")
    rows = json.loads(r.stdout)
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
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
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
    out = [json.loads(x)["outputs"] for x in r.stdout.splitlines()]
    assert out == [{"%p1": True}, {"%p1": True}, {"%d": "0x00000007"}]
    r = run("eval", "--json", "setp.lt.f32 %p|q, %a, b;", "a=1.0", "%b=2.0")
    assert json.loads(r.stdout)["outputs"] == {"%p": True, "q": False}


def test_batch_chunks_keep_order_and_errors(monkeypatch):
    from ptxsmt.batch import run
    from ptxsmt.sem.options import Options

    lines = [json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": hex(i), "b": "0x4"}})
             for i in range(8)]
    lines[5] = "{oops"
    monkeypatch.setattr(run, "WINDOW", 3)  # lines read and answered at a time
    out = list(run.run_jsonl(lines, Options()))
    assert [o.get("outputs", {}).get("p") for o, _ in out] == \
        [True, True, True, True, False, None, False, False]
    assert out[5][1] is not None and "line 6" in out[5][0]["error"]


def test_batch_past_the_first_chunk_answers_every_line_in_order():
    """Bad lines after line 65,536 (the first chunk) cost only themselves."""
    n = 70_000
    lines = [json.dumps({"ptx": "setp.lt.u32 p, a, b;",
                         "inputs": {"a": f"0x{i:08x}", "b": "0x00008000"}}).encode()
             for i in range(n)]
    bad = {100: b"\xff\xfe not UTF-8", 65_537: b"\xff", 66_000: b'{"a": ' + b"9" * 5000 + b"}",
           67_000: b"[" * 5000 + b"]" * 5000, 69_000: bytes(range(256)).replace(b"\n", b"")}
    free = {68_000: b'{"ptx": "setp.eq.u32 %p0, 0, 0;", "inputs": {}}',
            68_001: b'{"ptx": "slct.s32.s32 %r0, 1, 12, 2142016040;", "inputs": {}}',
            68_002: b'{"ptx": "setp.eq.u32 %p0, 0, 0;", "inputs": {}}'}
    for number, raw in {**bad, **free}.items():
        lines[number - 1] = raw
    r = run("eval", "--batch", "-", stdin=b"\n".join(lines) + b"\n")
    assert r.exit_code == 1
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(out) == n
    for number, obj in enumerate(out, 1):
        if number in bad:
            assert obj["error"].startswith(f"line {number}: "), obj
        elif number in free:
            assert obj["outputs"] == ({"%r0": "0x00000001"} if number == 68_001 else {"%p0": True})
        else:
            assert obj["outputs"] == {"p": number - 1 < 0x8000}, (number, obj)


def test_batch_lines_carry_their_options():
    sub = {"a": "0x00000001", "b": "0x00000002"}  # two positive subnormals: a < b
    lines = [{"ptx": "setp.lt.f32 p, a, b;", "inputs": sub},
             {"ptx": "setp.lt.f32 p, a, b;", "inputs": sub, "options": {"target": "sm_13"}},
             {"ptx": "slct.f32.f32 d, a, b, c;", "inputs": {**sub, "c": "0x80000001"},
              "options": {"target": "sm_13"}},  # -subnormal flushes to -0 >= 0: a
             {"ptx": "slct.f32.f32 d, a, b, c;", "inputs": {**sub, "c": "0x80000001"}},
             {"ptx": "vset2.u32.u32.lt d.h1, a, b, c;", "options": {"vset_merge": "b"},
              "inputs": {"a": "0x00010002", "b": "0x00020001", "c": "0xaaaabbbb"}},
             {"ptx": "vset2.u32.u32.lt d.h1, a, b, c;",
              "inputs": {"a": "0x00010002", "b": "0x00020001", "c": "0xaaaabbbb"}},
             {"ptx": "setp.lt.f32 p, a, b;", "inputs": sub, "options": {"target": "sm_13x"}},
             {"ptx": "setp.lt.f32 p, a, b;", "inputs": sub, "options": {"ftz": True}},
             {"ptx": "setp.lt.f32 p, a, b;", "inputs": sub, "options": ["sm_13"]}]
    r = run("eval", "--batch", "-", stdin="\n".join(map(json.dumps, lines)))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [o.get("outputs") for o in out[:6]] == [
        {"p": True}, {"p": False}, {"d": "0x00000001"}, {"d": "0x00000002"},
        {"d": "0x00010001"}, {"d": "0x0001bbbb"}]
    assert all(o["options"] == x["options"] for o, x in zip(out, lines) if "options" in x)
    assert "line 7: " in out[6]["error"] and "sm_13x" in out[6]["error"]
    assert 'line 8: unknown option "ftz"' in out[7]["error"]
    assert "line 9: " in out[8]["error"] and r.exit_code == 1
    # the command line's options are the base a line's options go over
    r = run("eval", "--batch", "-", "--target", "sm_13", stdin=json.dumps(
        {"ptx": "setp.lt.f32 p, a, b;", "inputs": sub, "options": {"vset_merge": "b"}}))
    assert json.loads(r.stdout)["outputs"] == {"p": False}


def test_batch_check_honours_options_and_reports_them():
    line = {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "0x00000001", "b": "0x00000002"},
            "options": {"target": "sm_13"}}
    good, bad = {**line, "outputs": {"p": False}}, {**line, "outputs": {"p": True}}
    r = run("eval", "--batch", "-", "--check", stdin=f"{json.dumps(good)}\n{json.dumps(bad)}\n")
    assert r.exit_code == 1 and "check: 1 passed, 1 failed" in r.stderr
    assert json.loads(r.stdout) == {"line": 2, "ptx": line["ptx"], "inputs": line["inputs"],
                                    "options": {"target": "sm_13"}, "expected": {"p": True},
                                    "got": {"p": False}}


def test_check_names_the_input_line_and_column():
    src = ("// kernels\n\nsetp.lt.f32 p, a, b;\n  setp.lt.foo.f32 p, a, b;\n"
           "set.lt.bf16.f32 d, a, b;\n")
    r = run("check", "--target", "sm_80", "--ptx-version", "7.8", "-", stdin=src)
    lines = r.stdout.splitlines()
    assert r.exit_code == 1 and lines[0].startswith("ok ")
    assert lines[1].endswith('-- line 4, col 11: unknown modifier ".foo" for setp')
    assert lines[2].endswith("-- line 5, col 1: 'set.lt.bf16.f32' needs sm_90 or higher "
                             "(target is sm_80)")


# ---- Ctrl-C: exit 130 at once, never a verdict ------------------------------------------

def _max_of(order: list[int]) -> str:
    """m = the largest u64 x_i, folded in this order: equal for every order, and slow to prove
    (a minute and more for 12 values), so a SIGINT lands inside z3's check()."""
    lines = [f"mov.b64 m, x{order[0]};"]
    for i in order[1:]:
        lines += [f"setp.gt.u64 p, x{i}, m;", f"selp.b64 m, x{i}, m, p;"]
    return " ".join(lines)


SLOW = (_max_of(list(range(12))), _max_of([7, 11, 0, 8, 5, 6, 3, 10, 4, 1, 9, 2]))


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux: the 4th field of /proc/N/stat)."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError):  # a process that just ended
            if int(Path(stat).read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.split("/")[2]))
    return found


def _interrupt(args: list[str], tmp_path, group: bool = False) -> subprocess.CompletedProcess:
    """Run ptxsmt, wait until it is deep in its work, send SIGINT and time the exit. With
    `group` (a terminal's Ctrl-C reaches the whole process group), the workers get it
    first, alone: they must ignore it, and only the parent's SIGINT stops the run."""
    proc = subprocess.Popen([sys.executable, "-m", "ptxsmt", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(1.5)  # well inside the sweep (about 8 s of work) and the slow proofs
    deadline = time.monotonic() + 30  # a loaded machine may take a while to start the pool
    while group and len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    if group:
        workers = _children(proc.pid)
        assert len(workers) == 2
        time.sleep(0.5)  # into their work
        for pid in workers:
            os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    # no bound on how soon (a loaded machine is slow to schedule it): the work left runs
    # for minutes, so an end within this limit, with exit 130 and nothing on stdout (the
    # callers' checks), is the interruption's; the limit only keeps a hang from hanging
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def test_ctrl_c_during_a_proof_is_not_unknown(tmp_path):
    r = _interrupt(["equiv", *SLOW, "--outputs", "m", "--timeout", "600", "--json"], tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "interrupted\n")


def test_ctrl_c_stops_worker_pools_without_tracebacks(tmp_path):
    """A terminal's Ctrl-C reaches the workers too: they leave it to the parent."""
    (tmp_path / "slow.toml").write_text(
        f'[[identity]]\nname = "slow"\nlhs = "{SLOW[0]}"\nrhs = "{SLOW[1]}"\n'
        f'expect = "holds"\noutputs = ["m"]\ngrid = {{ k = ["1", "2", "3"] }}\n')
    for args in (["prove", "identities", "--library", str(tmp_path), "--timeout", "600"],
                 ["sweep", "setp.lt.and.f16 p, a, b, c;"]):  # 2^33 pairs: several seconds
        r = _interrupt([*args, "--jobs", "2"], tmp_path, group=True)
        *progress_lines, last = r.stderr.splitlines()
        assert (r.returncode, r.stdout, last) == (130, "", "interrupted"), r.stderr
        assert all(x.startswith(("proving: ", "sweeping: ")) for x in progress_lines), r.stderr


# ---- progress on stderr ---------------------------------------------------------------

class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_quiet_at_first_then_a_plain_line_every_ten_seconds(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    log = io.StringIO()
    with progress.Progress("proving", total=100, unit="instances", stream=log) as bar:
        for step in range(100):  # one instance every 0.5 s: 50 s in all
            clock.now += 0.5
            bar.update()
            if step == 4:
                assert log.getvalue() == ""  # 2.5 s: nothing yet
    lines = log.getvalue().splitlines()
    assert lines[0] == "proving: 6/100 instances (6%), 3 s elapsed, about 47 s left"
    assert len(lines) == 6 and lines[1].startswith("proving: 26/100 instances (26%), 13 s")
    assert lines[-1] == "proving: 100/100 instances done in 50 s"


def test_progress_draws_a_bar_on_a_terminal_and_wipes_it_when_interrupted(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    term = _Terminal()
    bar = progress.Progress("sweeping", total=4, unit="blocks", stream=term)
    clock.now += 5
    bar.update(2)
    assert term.getvalue().endswith("sweeping: [############------------] 2/4 blocks (50%), "
                                    "5 s elapsed, about 5 s left")
    bar.close(finished=False)
    assert term.getvalue().endswith("\r\x1b[2K") and "\n" not in term.getvalue()
    quick = progress.Progress("sweeping", total=4, stream=term)
    quick.update(4)
    quick.close()  # under the delay: never drawn
    assert term.getvalue().endswith("\r\x1b[2K")


def test_long_runs_report_progress_on_stderr_only(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    r = run("prove", "identities", "-k", "unsigned-aliases", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]
    lines = r.stderr.splitlines()
    # seconds are whatever the machine's load makes them: the shape is what is checked
    assert lines[0].startswith("proving: 1/") and re.fullmatch(r".* done in \d+ s", lines[-1])
    r = run("eval", "--batch", "-", stdin='{"ptx": "setp.eq.u32 p, 0, 0;"}\n' * 3)
    first, last = r.stderr.splitlines()  # a block at a time
    assert re.fullmatch(r"eval --batch: 3 lines, \d+ s elapsed", first)
    assert re.fullmatch(r"eval --batch: 3 lines done in \d+ s", last)


def test_vectors_stop_at_the_cap_with_a_clear_message():
    r = run("vectors", "setp.lt.f32", "--max-vectors", "3")
    assert r.exit_code == 1 and len(r.stdout.splitlines()) == 3
    assert r.stderr.startswith("error: stopped after 3 vectors (--max-vectors 3), at form 1 of 1")


def test_a_family_gets_a_per_form_limit_by_default(monkeypatch):
    from ptxsmt.cli import vectors

    monkeypatch.setattr(vectors, "FAMILY_LIMIT", 1)
    r = run("vectors", "--family", "selp")
    assert r.exit_code == 0 and r.stderr == "22 vectors from 22 instruction forms\n"
    assert len(r.stdout.splitlines()) == 22


def test_one_evaluation_imports_neither_numpy_nor_the_prover():
    """Start-up: `ptxsmt eval` of one instruction loads only what evaluation needs."""
    code = ("import sys; from ptxsmt.cli import main\n"
            "try: main(['eval', 'setp.lt.f32 p, a, b;', 'a=1', 'b=2'])\n"
            "except SystemExit: pass\n"
            "print(sorted(m for m in ('numpy', 'ptxsmt.smt.queries.snippets', 'ptxsmt.proofs',"
            " 'ptxsmt.ptxasdiff') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]", out.stdout


# ---- options that do not apply are refused, never silently ignored ----------------------

FUNC = str(Path(__file__).parent / "ptx" / "func_sm90_O3.ptx")


@pytest.mark.parametrize("args,fragment", [
    (["equiv", FUNC, FUNC, "--all-classes"], "--all-classes does not apply to two .ptx"),
    (["equiv", FUNC, FUNC, "--outputs", "d"], "--outputs does not apply"),
    (["equiv", FUNC, "setp.lt.f32 p, a, b;"], "is a .ptx file and the other argument is not"),
    (["equiv", "setp.lt.f32 p, a, b;", FUNC], "is a .ptx file and the other argument is not"),
    (["equiv", FUNC, "nothere.ptx"], '"nothere.ptx": no such file'),
    (["equiv", "-a", "/dev/null", "-b", "/dev/null"], "-a /dev/null: the snippet is empty"),
    (["equiv", "-a", "/dev/null"], "give the other snippet too (-b FILE)"),
    (["equiv", "setp.lt.f32 p, a, b;", "setp.lt.f32 p, a, b;", "--function", "f"],
     "is not a .ptx file"),
    (["eval", "--batch", "-", "--function", "f"], "--function does not apply to --batch"),
    (["vectors", FUNC, "--limit", "3"], "--limit does not apply to a .ptx file's function"),
    (["vectors", FUNC, "--seed", "1", "--per-case", "2"], "--per-case, --seed do not apply"),
    (["vectors", "setp.lt.f32", "--function", "f"], '"setp.lt.f32" is not one'),
    (["synth", "--scheduler", "tcp://x:1"], "--scheduler does not apply without --executor dask"),
])
def test_an_option_that_does_not_apply_is_refused(args, fragment, tmp_path):
    r = run(*[a.format(tmp=tmp_path) for a in args])
    assert r.exit_code == 2, r.output
    assert fragment in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == ""


def test_a_harmless_unused_option_is_one_warning():
    r = run("eval", "setp.lt.f32 p, a, b;", "a=1", "b=2", "--jobs", "3")
    assert r.exit_code == 0 and r.stderr == "warning: --jobs has no effect without --batch\n"
    assert "out  p = true" in r.stdout
    line = '{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1", "b": "2"}}\n'
    r = run("eval", "--batch", "-", "--json", stdin=line)
    assert r.exit_code == 0 and "--json has no effect with --batch" in r.stderr
    assert json.loads(r.stdout)["outputs"] == {"p": True}
    assert run("eval", "setp.lt.f32 p, a, b;", "a=1", "b=2").stderr == ""  # defaults: silent
    r = run("prove", "identities", "-k", "unsigned-aliases", "--json", "-v")
    assert r.exit_code == 0 and r.stderr.startswith("warning: -v has no effect with --json")
    assert len(json.loads(r.stdout)["results"]) == 24


# ---- messages ---------------------------------------------------------------------------

TRAP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry f(.param .u32 f_param_0)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [f_param_0];
  trap;
  ret;
}
"""


def test_a_function_error_names_its_file_and_trap_its_own_message(tmp_path):
    trap = tmp_path / "trap.ptx"
    trap.write_text(TRAP)
    plain = tmp_path / "plain.ptx"
    plain.write_text(TRAP.replace("  trap;\n", ""))
    r = run("eval", str(trap), "f_param_0=1")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    assert r.stderr.startswith(f"error: {trap}: f: line 8 (trap) is reached with these inputs, "
                               "where it stops the kernel")
    for args in (["equiv", str(trap), str(plain)], ["equiv", str(plain), str(trap)]):
        r = run(*args)  # a trap reached is no verdict either way: unknown, naming it
        assert r.exit_code == 3 and "line 8 (trap) is reached" in r.stdout, r.output
    assert run("equiv", str(plain), str(plain)).exit_code == 0
    bad = tmp_path / "bad.ptx"
    bad.write_text(TRAP.replace("  trap;\n", "  bra NOWHERE;\n"))
    r = run("equiv", str(plain), str(bad))
    assert r.exit_code == 2 and r.stderr.startswith(f"error: {bad}: "), r.stderr


def test_vectors_of_a_function_without_setp_says_so(tmp_path):
    plain = tmp_path / "plain.ptx"
    plain.write_text(TRAP.replace("  trap;\n", ""))
    r = run("vectors", str(plain))
    assert r.exit_code == 0 and r.stdout == ""  # no vectors is an answer, said once
    assert r.stderr == f"warning: {plain}: function f has no setp: no vectors (they drive " \
                       "each setp's predicates both ways)\n"


def test_a_library_without_identity_tables_says_so(tmp_path):
    (tmp_path / "notes.toml").write_text('title = "no identities here"\n')
    r = run("prove", "identities", "--library", str(tmp_path))
    assert r.exit_code == 2 and "no [[identity]] table in" in r.stderr, r.stderr
    assert "None" not in r.stderr
    (tmp_path / "notes.toml").write_text("identity = 3\n")
    r = run("prove", "identities", "--library", str(tmp_path))
    assert r.exit_code == 2 and "must be tables ([[identity]])" in r.stderr, r.stderr


def test_prove_identities_prints_no_empty_table():
    r = run("prove", "identities", "-k", "unsigned-aliases")
    assert r.exit_code == 0 and r.stdout.startswith("24 of 24 instances"), r.stdout
    r = run("prove", "identities", "-k", "unsigned-aliases", "-v")
    assert r.stdout.startswith("name ") and r.stdout.count(" ok\n") == 24


def test_synth_progress_shows_a_total_and_time_left(monkeypatch, capsys):
    from ptxsmt.cli.synth import _Bars
    from ptxsmt.report import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY_LINE", 0.0)
    bars = _Bars()
    bars.update("evaluate", 5, 20)
    bars.close()
    line = capsys.readouterr().err.splitlines()[0]
    assert line.startswith("synth evaluate: 5/20 steps (25%)") and "left" in line, line


# what each command's --help says, before its options: examples, --json, every exit code
HELP_EXITS = {
    "equiv": ("Exit 0", "1 different", "2 bad input", "3 unknown", "4 a ptxsmt bug", "130"),
    "tv": ("Exit 0", "1 when", "3 when", "2 on bad input", "4 on a ptxsmt bug", "130"),
    "eval": ("Exit 0", "1 a batch line's error", "2 bad input", "130"),
}


@pytest.mark.parametrize("command", sorted(HELP_EXITS))
def test_help_shows_examples_json_and_exit_codes(command):
    r = run(command, "--help")
    prose, _, examples = r.stdout.partition("Options:")[0].partition("Examples:")
    assert r.exit_code == 0 and f"ptxsmt {command} " in examples
    assert "--json" in prose and "--json" in examples
    assert all(code in " ".join(prose.split()) for code in HELP_EXITS[command])
