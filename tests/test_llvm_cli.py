"""`ptxsmt tv FILE.ll` and `ptxsmt equiv F.ll F.ptx`: verdicts, exit codes, JSON,
counterexamples, and one-line errors on bad input."""

from __future__ import annotations

import io
import json
import math
import shlex
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("llvmlite")

from ptxsmt.cli import interrupts, main  # noqa: E402
from ptxsmt.report import progress  # noqa: E402

# a cycle entered at two blocks (l and m): refused
IRREDUCIBLE = (Path(__file__).parent / "ptx" / "llvm" / "irreducible.ll").read_text()

IR = """define i32 @smin(i32 %a, i32 %b) {
  %r = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  ret i32 %r
}
define zeroext i1 @une(float %a, float %b) {
  %r = fcmp une float %a, %b
  ret i1 %r
}
""" + IRREDUCIBLE + """declare i32 @llvm.smin.i32(i32, i32)
"""


def _tv(tmp_path, *args, text=IR):
    f = tmp_path / "k.ll"
    f.write_text(text)
    return CliRunner().invoke(main, ["tv", str(f), *args])


def test_every_function_gets_a_verdict_in_the_file_order(tmp_path):
    r = _tv(tmp_path)
    assert r.exit_code == 3, r.output  # the loop (entered at two blocks) is refused
    verdicts, summary = r.stdout.splitlines()[:-1], r.stdout.splitlines()[-1]
    assert [v.split(":")[0] for v in verdicts] == ["@smin", "@une", "@loop"]  # not sorted
    assert verdicts[:2] == ["@smin: refines", "@une: refines"]
    assert verdicts[2].startswith("@loop: refused (unsupported loop")
    assert summary == "2 refines, 1 refused"


def test_json_is_one_line_per_function_then_a_summary(tmp_path):
    r = _tv(tmp_path, "--json")
    assert r.exit_code == 3, r.output
    *rows, last = map(json.loads, r.stdout.splitlines())
    assert [(x["function"], x["verdict"]) for x in rows] == [
        ("smin", "refines"), ("une", "refines"), ("loop", "refused")]
    assert rows[2]["reason"] == "loop"
    assert last == {"summary": {"functions": 3, "decided": 3, "interrupted": False,
                                "verdicts": {"refines": 2, "refused": 1}}}
    r = _tv(tmp_path, "--function", "une", "--json", "-O", "0")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.splitlines()[0]) == {
        "function": "une", "verdict": "refines", "nan": "payload-free",
        "up_to_nan_payloads": False}
    r = _tv(tmp_path, "--function", "une", "--json", "-O", "0", "--nan", "exact")
    assert (r.exit_code, json.loads(r.stdout.splitlines()[0])["nan"]) == (0, "exact")


def test_progress_shows_on_a_terminal_only(tmp_path, monkeypatch):
    """The verdict lines are a log's progress: off a terminal stderr stays empty."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    r = _tv(tmp_path, "--function", "smin")
    assert r.exit_code == 0 and r.stderr == "", r.output
    monkeypatch.setattr(progress.time, "monotonic", lambda: 1000.0)
    term = _Terminal()
    bar = progress.Progress("tv", total=2, unit="functions", stream=term, terminal_only=True)
    bar.update()
    assert term.getvalue() == "\r\x1b[2Ktv: [############------------] 1/2 functions (50%), " \
                              "0 s elapsed, about 0 s left"
    bar.clear()  # a verdict line goes to the same screen next: the bar is wiped first
    assert term.getvalue().endswith("left\r\x1b[2K")
    bar.update()
    assert term.getvalue().endswith("tv: [########################] 2/2 functions (100%), "
                                    "0 s elapsed")
    log = io.StringIO()
    quiet = progress.Progress("tv", total=2, stream=log, terminal_only=True)
    quiet.update(2)
    quiet.close()
    assert log.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# a quick function, one z3 takes minutes on (64-bit division by constants, as
# multiply-high), and one after it that is never reached
SLOW = """define i32 @quick(i32 %a, i32 %b) {
  %r = add i32 %a, %b
  ret i32 %r
}
define i64 @slow(i64 %a, i64 %b) {
  %q = udiv i64 %a, 7
  %r = udiv i64 %b, 1000003
  %s = add i64 %q, %r
  ret i64 %s
}
define i32 @after(i32 %a) {
  ret i32 %a
}
"""


def _first_line_then(signum: int, ll: Path, *args: str) -> tuple[str, str, str, int]:
    """Run `tv` in its own process with stdout a pipe (so block-buffered unless each
    verdict is flushed), wait for its first verdict line, signal it, and return that
    line, the rest of stdout, stderr and the exit code."""
    proc = subprocess.Popen([sys.executable, "-m", "ptxsmt", "tv", str(ll), "--timeout", "600",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(120)  # only a guard against a hang: a streaming tv prints within seconds
    if not got:
        proc.kill()
        proc.communicate()
        pytest.fail("no verdict line before the end: the output is held back")
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # never leave it running: it would load every later test
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"tv still running 120 s after signal {signum}; stderr: {err[-500:]}")
    return got[0], out, err, proc.returncode


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_keeps_the_verdicts_it_printed(tmp_path, signum):
    ll = tmp_path / "slow.ll"
    ll.write_text(SLOW)
    first, rest, err, code = _first_line_then(signum, ll)
    assert first == "@quick: refines\n"
    assert rest == "1 refines; interrupted after 1 of 3 functions\n"
    assert (err, code) == ("interrupted\n", 130)


def test_an_interrupted_json_run_ends_with_its_summary(tmp_path):
    ll = tmp_path / "slow.ll"
    ll.write_text(SLOW)
    first, rest, err, code = _first_line_then(signal.SIGINT, ll, "--json")
    assert json.loads(first) == {"function": "quick", "verdict": "refines",
                                 "nan": "payload-free", "up_to_nan_payloads": False}
    assert json.loads(rest) == {"summary": {"functions": 3, "decided": 1, "interrupted": True,
                                            "verdicts": {"refines": 1}}}
    assert (err, code) == ("interrupted\n", 130)


def test_a_signal_while_a_verdict_is_printed_waits_for_it_to_be_counted(monkeypatch):
    """`tv` prints a verdict and counts it inside `interrupts.held()`: the summary of an
    interrupted run counts exactly the lines printed."""
    monkeypatch.setattr(interrupts, "_seen", threading.Event())
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts.held():
        interrupts._raise_interrupt(signal.SIGINT, None)  # what the handler does on Ctrl-C
        done += ["printed", "counted"]
    assert done == ["printed", "counted"] and interrupts.seen()
    with interrupts.held():  # nothing left pending
        pass


def test_a_verdict_reached_after_a_ctrl_c_is_not_printed(monkeypatch, capsys):
    """z3 stopped by a Ctrl-C answers "canceled": what comes of it is no verdict."""
    from ptxsmt.cli.tv import _stream
    from ptxsmt.smt.queries.refinement import Refinement, Validated
    monkeypatch.setattr(interrupts, "_seen", threading.Event())

    def verdicts():
        yield Validated("f", Refinement("refines"))
        interrupts._seen.set()  # the Ctrl-C, its KeyboardInterrupt not raised yet
        yield Validated("g", Refinement("unknown", "solver: canceled"))
    with pytest.raises(KeyboardInterrupt):
        _stream(["f", "g"], verdicts(), as_json=False)
    assert capsys.readouterr().out == "@f: refines\n1 refines; interrupted after 1 of 2 " \
                                      "functions\n"


@pytest.mark.parametrize("args,text,message", [
    ((), "define i32 @f( {", "error: LLVM IR: 1:17: error: expected type"),
    (("--function", "nope"), IR, "error: no function @nope in the IR"),
    ((), "", "error: the IR defines no function: nothing to check"),
    ((), "declare i32 @g(i32)\n@x = global i32 0\n",
     "error: the IR defines no function: nothing to check"),
    (("--json",), "; only a comment\n", "error: the IR defines no function: nothing to check"),
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
    (("A", "B", "--function", "une", "--solver", "z3"),
     "error: --solver does not apply to SOURCE.ll against TARGET.ptx"),
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


# A signext i8 return (tests/ptx/llvm/signext_i8.ll): llc-14's PTX sign-extends it to 32
# bits with cvt.s32.s8; planted, a zero extension (and.b32 255) differs in bits 8..31 only
SIGNEXT = ("cvt.s32.s8 \t%r2, %r1;", "and.b32 \t%r2, %r1, 255;")


def _zero_extended(tmp_path) -> Path:
    text = (PAIR / "signext_i8_llc14_O2.ptx").read_text()
    assert text.count(SIGNEXT[0]) == 1
    bad = tmp_path / "neg8_bad.ptx"
    bad.write_text(text.replace(*SIGNEXT))
    return bad


def test_signext_return_compared_and_shown_at_32_bits(tmp_path):
    ll = PAIR / "signext_i8.ll"
    assert _equiv(ll, PAIR / "signext_i8_llc14_O2.ptx", "--function", "neg8").exit_code == 0
    bad = _zero_extended(tmp_path)
    r = _equiv(ll, bad, "--function", "neg8", "--json")
    assert r.exit_code == 1, r.output
    cex = json.loads(r.stdout)["counterexample"]
    low = -int(cex["inputs"]["a"], 16) & 0xFF  # the i8 result, in plain Python
    assert low >= 0x80  # only a negative i8 tells the two extensions apart
    assert int(cex["ir"], 16) == low - 0x100 & 0xFFFFFFFF  # signext to the .b32 slot
    assert int(cex["ptx"], 16) == low != int(cex["ir"], 16)
    run = subprocess.run([sys.executable, "-m", "ptxsmt", *shlex.split(
        cex["reproduce"]["ptx"])[1:], "--json"], capture_output=True, text=True)
    assert int(json.loads(run.stdout)["outputs"]["func_retval0"], 16) == low
    r = _equiv(ll, bad, "--function", "neg8")
    assert f"; IR {low - 0x100 & 0xFFFFFFFF:#x} (signext i8 {low:#x}); PTX {low:#x})" \
        in r.stdout.splitlines()[0]


@pytest.mark.parametrize("function,verdict", [
    ("neg8", "refines"),  # bits 32..63 of a .b64 return slot: free (the sign is in 8..31)
    ("sign8", "different"),  # bits 32..63 of a .b64 parameter: not the caller's extension
])
def test_extension_bits_stop_at_32(function, verdict):
    r = _equiv(PAIR / "signext_i8.ll", PAIR / "signext_i8_wide.ptx", "--function", function)
    assert r.exit_code == {"refines": 0, "different": 1}[verdict], r.output
    assert r.stdout.startswith(f"@{function}: {verdict}")


# `--mattr`: llc's target features. LLVM 22.1 writes PTX 8.0's packed forms at sm_90 only
# with +ptx80 (its default there is PTX 7.8, where it splits the lanes)
RELU2 = """define <2 x i16> @relu(<2 x i16> %a, <2 x i16> %b) {
  %m = call <2 x i16> @llvm.smin.v2i16(<2 x i16> %a, <2 x i16> %b)
  %r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %m, <2 x i16> splat (i16 CLAMP))
  ret <2 x i16> %r
}
declare <2 x i16> @llvm.smin.v2i16(<2 x i16>, <2 x i16>)
declare <2 x i16> @llvm.smax.v2i16(<2 x i16>, <2 x i16>)
"""


def _clamped_min(a: int, b: int, clamp: int) -> int:
    """max(min(a, b), clamp) on each signed 16-bit lane, lane 0 the low one (LangRef)."""
    def lane(x: int, i: int) -> int:
        x = (x >> 16 * i) & 0xFFFF
        return x - (x >> 15 << 16)
    return sum((max(min(lane(a, i), lane(b, i)), clamp) & 0xFFFF) << 16 * i for i in (0, 1))


@pytest.mark.parametrize("mattr, packed", [(("--mattr", "+ptx80"), True), ((), False)])
def test_mattr_reaches_the_compiler_and_both_lowerings_refine(tmp_path, monkeypatch, mattr,
                                                              packed):
    from ptxsmt.llvm import module
    compiled = []
    compile_to_ptx = module.compile_to_ptx
    monkeypatch.setattr(module, "compile_to_ptx",
                        lambda *a, **k: compiled.append(compile_to_ptx(*a, **k)) or compiled[-1])
    r = _tv(tmp_path, "--mcpu", "sm_90", *mattr, text=RELU2.replace("CLAMP", "0"))
    assert (r.exit_code, r.stdout) == (0, "@relu: refines\n1 refines\n"), r.output
    (ptx,) = compiled
    assert ("\tmin.relu.s16x2 \t" in ptx) == packed  # else min.s16 and max.s16 per lane
    assert ("\tmin.s16 \t" in ptx) == (not packed)


def test_ptx80_relu_against_a_planted_ir_change_is_different_by_plain_python(tmp_path):
    from ptxsmt.llvm.module import compile_to_ptx
    ptx = tmp_path / "relu.ptx"
    ptx.write_text(compile_to_ptx(RELU2.replace("CLAMP", "0"), "sm_90", 2, "+ptx80"))
    assert "\tmin.relu.s16x2 \t" in ptx.read_text()
    ll = tmp_path / "relu1.ll"
    ll.write_text(RELU2.replace("CLAMP", "1"))  # planted: clamped at 1, not 0
    r = CliRunner().invoke(main, ["equiv", str(ll), str(ptx), "--json"])
    assert r.exit_code == 1, r.output
    row = json.loads(r.stdout)
    cx = row["counterexample"]
    a, b = (int(cx["inputs"][k], 0) for k in ("a", "b"))
    assert int(cx["ir"], 0) == _clamped_min(a, b, 1)
    assert int(cx["ptx"], 0) == _clamped_min(a, b, 0) != _clamped_min(a, b, 1)


@pytest.mark.parametrize("mattr, message", [
    ("ptx80", 'target feature "ptx80" is not like +ptx80'),
    ("+ptx80,,+sm_90", 'target feature "" is not like +ptx80'),
    ("+ptx99", '"+ptx99" is not a target feature of LLVM'),
    ("+help", '"+help" is not a target feature of LLVM'),
])
def test_a_bad_mattr_is_one_line_and_exit_2(tmp_path, mattr, message):
    r = _tv(tmp_path, "--mattr", mattr)
    assert r.exit_code == 2 and r.stdout == "", r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: Invalid value for '--mattr': " + message), line


def test_a_fatal_llvm_error_is_one_line_and_exit_2_not_different(tmp_path):
    """LLVM ends its process on a PTX version below the target's (exit status 1, the
    exit status of "different"): compiled apart, its message is the error."""
    r = _tv(tmp_path, "--mcpu", "sm_80", "--mattr", "+ptx63")
    assert r.exit_code == 2 and r.stdout == "", r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: NVPTX backend: PTX version 6.3 does not support target "
                           "'sm_80'"), line
