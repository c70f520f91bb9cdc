"""`check` never calls a module legal that ptxas refuses (issue 40).

tests/ptx/rejected/ holds modules as nvcc writes them, each with one line ptxas 13.0
refuses, marked `// illegal | legal: LINE` or `// not judged | legal: LINE`: ptxsmt's
verdict on it and a line ptxas takes in its place (the legal counterpart). A module's
verdict is illegal if a line is, else not judged if ptxsmt cannot judge a line (every
module here has `ld`, `st`, `ret`), else legal; exit 1, 5, 0. The same line given alone
(line mode) gets the same verdict: one reading of a line (`body._instruction`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt.check import ILLEGAL, NOT_JUDGED, check_module
from ptxsmt.cli import main
from ptxsmt.isa.module import read_module

CORPUS = sorted((Path(__file__).parent / "ptx" / "rejected").glob("*.ptx"))
MARK = re.compile(r"^\t(?P<bad>.*;)\t// (?P<verdict>illegal|not judged) \| legal: (?P<legal>.*;)$",
                  re.M)
EXIT = {ILLEGAL: 1, NOT_JUDGED: 5}
ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


def _case(path: Path) -> tuple[str, int, str, str, str]:
    """(module text, the marked line's number, its statement, ptxsmt's verdict, the module
    with the legal line in its place)."""
    text = path.read_text()
    m = MARK.search(text)
    assert m, f"{path.name} has no marked line"
    line = text.count("\n", 0, m.start()) + 1
    return text, line, m["bad"], m["verdict"], text.replace(m[0], "\t" + m["legal"])


def _check(*args: str, stdin: str | None = None):
    run = CliRunner().invoke(main, ["check", *args], input=stdin)
    assert "Traceback" not in run.output, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit), run.output
    return run


def test_the_corpus_has_each_kind():
    verdicts = [_case(p)[3] for p in CORPUS]
    assert len(CORPUS) >= 16 and {ILLEGAL, NOT_JUDGED} == set(verdicts)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_a_module_ptxas_refuses_is_never_legal(path):
    _, line, _, verdict, _ = _case(path)
    run = _check(str(path))
    assert run.exit_code == EXIT[verdict], run.output
    illegal = [s for s in run.stdout.splitlines() if s.startswith("illegal ")]
    summary = run.stdout.splitlines()[-1]
    assert summary.startswith(f"{verdict}: "), summary
    if verdict == ILLEGAL:  # one line, naming the file, the function, the line
        assert len(illegal) == 1 and f"-- {path}: in k: line {line}, col " in illegal[0], illegal
    else:
        assert illegal == []
    report = json.loads(_check("--json", str(path)).stdout)
    assert (report["verdict"], report["legal"]) == (verdict, False)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_the_legal_counterpart_is_not_illegal(path):
    _, _, _, _, fixed = _case(path)
    run = _check("-", stdin=fixed)
    assert run.exit_code == EXIT[NOT_JUDGED] and "illegal " not in run.stdout, run.output
    result = check_module(read_module(fixed))
    assert (result.illegal, result.verdict, result.legal) == (0, NOT_JUDGED, False)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_the_line_alone_gets_the_modules_verdict(path):
    _, _, bad, verdict, fixed = _case(path)
    assert _check("--target", "sm_90", stdin=bad + "\n").exit_code == EXIT[verdict]
    legal = MARK.search(path.read_text())["legal"]
    assert _check("--target", "sm_90", stdin=legal + "\n").exit_code in (0, EXIT[NOT_JUDGED])


def _ptxas(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    src = tmp_path / "k.ptx"
    src.write_text(text)
    return subprocess.run(["ptxas", "-arch", "sm_90", str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)


@ptxas
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_ptxas_refuses_the_marked_line_and_takes_the_counterpart(path, tmp_path):
    text, line, _, _, fixed = _case(path)
    refused = _ptxas(text, tmp_path)
    assert refused.returncode != 0 and f"k.ptx, line {line}; error" in refused.stderr, \
        refused.stderr
    taken = _ptxas(fixed, tmp_path)
    assert taken.returncode == 0, taken.stderr


# ---- verdicts of modules and lines --------------------------------------------------------

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
JUDGED = HEADER + ".visible .func f()\n{\n.reg .b32 %r<3>;\nadd.s32 %r1, %r2, %r2;\n}\n"


def test_a_module_of_judged_lines_only_is_legal():
    run = _check("-", stdin=JUDGED)
    assert run.exit_code == 0 and run.stdout.splitlines()[-1].startswith("legal: "), run.output
    assert check_module(read_module(JUDGED)).legal


def test_a_module_with_a_line_not_judged_is_not_legal():
    text = JUDGED.replace("add.s32 %r1", "add.cc.s32 %r1")  # ptxas takes it; ptxsmt has no .cc
    run = _check("-", stdin=text)
    assert run.exit_code == 5 and run.stdout.startswith("not judged: 0 instructions checked")
    assert not check_module(read_module(text)).legal


# ptxas 13.0 takes each of these on sm_100a (sm_90 but for max of three sources); ptxsmt does
# not model them, so it says so rather than call them illegal
TAKEN = ["max.xorsign.abs.f32 %f1, %f2, %f2;", "min.xorsign.abs.bf16 %rs1, %rs2, %rs2;",
         "add.cc.u32 %r1, %r2, %r2;", "addc.u32 %r1, %r2, %r2;", "mov.b32 %r1, {%rs1, 3};",
         "cvt.rn.f16x2.f32 %r1, %f1, %f2;", "cvt.s32.s8 %r1, %rs1;", "rcp.rn.ftz.f64 %fd1, %fd2;",
         "max.f32 %f1, %f2, %f2, %f2;"]
DECLARED = (".reg .b16 %rs<3>;\n.reg .b32 %r<3>;\n.reg .f32 %f<3>;\n.reg .f64 %fd<3>;\n")


@pytest.mark.parametrize("line", TAKEN)
def test_what_ptxas_takes_and_ptxsmt_does_not_model_is_not_judged(line):
    run = _check("--json", "--target", "sm_90", stdin=line + "\n")
    row = json.loads(run.stdout)
    assert run.exit_code == 5 and row["legal"] is None and row["not_judged"], run.output
    module = HEADER + f".visible .func f()\n{{\n{DECLARED}{line}\n}}\n"
    result = check_module(read_module(module))
    assert (result.verdicts, result.unjudged) == ([], 1)


@ptxas
def test_ptxas_takes_what_is_not_judged(tmp_path):
    module = (".version 8.8\n.target sm_100a\n.address_size 64\n.visible .func f()\n{\n"
              + DECLARED + "\n".join(TAKEN) + "\n}\n")
    src = tmp_path / "k.ptx"
    src.write_text(module)
    done = subprocess.run(["ptxas", "-arch", "sm_100a", str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_exit_code_of_not_judged_is_documented():
    assert "5 if none is illegal but one is not judged" in " ".join(
        _check("--help").stdout.split())
    cli = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    assert "| 5 | `check`: no line is illegal, but some line ptxsmt cannot judge" in cli
