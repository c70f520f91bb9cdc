"""PTX as LLVM's NVPTX backend emits it today, read and judged as ptxas 13.0 does.

The constructs below are the ones `llvm/test/CodeGen/NVPTX/*.ll` (llvm/llvm-project) shows
in its CHECK lines and that ptxsmt could not read before: `.reg .b128 %rq<N>` for i128
values, `prototype_N : .callprototype ...` before an indirect call, a switch's
`$L_brx_0: .branchtargets ...` jump table, `.func f() .noreturn` and `.alias a, b;`.

Fixtures: tests/ptx/llvm14_*.ptx are LLVM 14's own output (`llc -march=nvptx64
-mcpu=sm_80 -mattr=+ptx75`, also -O0 and -mcpu=sm_53) of tests/ptx/llvm14*.ll, written
for this project (calls, a switch, inline asm, local, shared and global memory, f16 and
f16x2); tests/llvm_forms.txt lists single instructions in the forms LLVM's tests show
(registers named as LLVM names them), each judged on its own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ptxsmt import PtxError
from ptxsmt.check import check_module
from ptxsmt.isa.body import Directive
from ptxsmt.isa.module import read_module

ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


def _module(body: str, header: str = ".version 8.7\n.target sm_90\n.address_size 64\n",
            tail: str = "") -> str:
    return f"{header}\n.visible .entry k()\n{{\n{body}\n\tret;\n}}\n{tail}"


def _ptxas_errors(text: str, tmp_path: Path, arch: str = "sm_90") -> tuple[int, dict[int, str]]:
    src = tmp_path / "k.ptx"
    src.write_text(text)
    run = subprocess.run(["ptxas", "-c", "-arch", arch, str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    errors = {int(m.group(1)): m.group(2)
              for m in re.finditer(r"line (\d+); (?:error|fatal)\s*: (.*)", run.stderr)}
    return run.returncode, errors


# ---- constructs of LLVM's output the reader takes --------------------------------------

B128 = """\t.reg .b128 \t%rq<3>;
\t.reg .b64 \t%rd<3>;
\t.reg .b32 \t%r<3>;
\tmov.b128 \t%rq1, {%rd1, %rd2};
\tmov.b128 \t{%rd1, %rd2}, %rq1;
\tcvt.u32.u64 \t%r1, %rq1;
\tcvt.u64.u32 \t%rq2, %r1;
\tmov.b64 \t%rd1, %rq1;"""


def test_a_b128_register_is_read_and_fits_only_cvt_wider_operands():
    result = check_module(read_module(_module(B128)))
    verdicts = {v.text.split()[0] + " " + v.text.split()[1]: v.error for v in result.verdicts}
    assert verdicts["cvt.u32.u64 %r1,"] is None and verdicts["cvt.u64.u32 %rq2,"] is None
    assert "declared .b128" in verdicts["mov.b64 %rd1,"]
    assert result.unjudged == 3  # the two mov.b128 (not ptxsmt forms) and ret


@ptxas
def test_b128_registers_agree_with_ptxas(tmp_path):
    text = _module(B128)
    _, errors = _ptxas_errors(text, tmp_path)
    ours = {v.line: v.error for v in check_module(read_module(text)).verdicts}
    assert {n for n, e in ours.items() if e} == set(errors) == {14}


CALLS = """\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<2>;
\tmov.b64 \t%rd1, ext;
\t{ // callseq 0, 0
\t.param .b32 param0;
\tst.param.b32 \t[param0], %r1;
\t.param .b32 retval0;
\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
\tcall (retval0),
\t%rd1,
\t(
\tparam0
\t)
\t, prototype_0;
\tld.param.b32 \t%r2, [retval0];
\t} // callseq 0
\tsetp.gt.u32 \t%p1, %r2, 1;
\t@%p1 bra \t$L__BB0_3;
\t$L_brx_0: .branchtargets
\t\t$L__BB0_1,
\t\t$L__BB0_2;
\tbrx.idx \t%r2, $L_brx_0;
$L__BB0_1:
\tmov.b32 \t%r3, 1;
$L__BB0_2:
\tselp.b32 \t%r3, %r1, %r2, %p1;
$L__BB0_3:"""
PROTOTYPE = """.extern .func  (.param .b32 func_retval0) ext
(
\t.param .b32 ext_param_0
)
;
.func nr() .noreturn
{
\ttrap;
}
"""


def test_indirect_calls_jump_tables_and_noreturn_are_read():
    module = read_module(_module(CALLS, tail=PROTOTYPE).replace(
        ".address_size 64\n", ".address_size 64\n" + PROTOTYPE.split(";")[0] + ";\n", 1))
    k = next(f for f in module.functions if f.name == "k")
    names = [i.name for i in k.body.items if isinstance(i, Directive)]
    assert ".callprototype" in names and ".branchtargets" in names
    assert next(f for f in module.functions if f.name == "nr").performance == [".noreturn"]
    assert [v.error for v in check_module(module).verdicts] == [None] * 3


@ptxas
def test_indirect_calls_jump_tables_and_noreturn_agree_with_ptxas(tmp_path):
    text = _module(CALLS, tail=PROTOTYPE.split(";", 1)[1]).replace(
        ".address_size 64\n", ".address_size 64\n" + PROTOTYPE.split(";")[0] + ";\n", 1)
    status, errors = _ptxas_errors(text, tmp_path)
    assert (status, errors) == (0, {})
    assert check_module(read_module(text)).illegal == 0


def test_an_alias_is_read():
    text = _module("", tail=".visible .func baz();\n.alias baz, k;\n")
    assert [f.name for f in read_module(text).functions] == ["k", "baz"]


def test_a_noreturn_prototype_is_read():
    text = _module("", tail=".extern .func foo_ext\n(\n\t.param .b32 foo_ext_param_0\n)\n"
                            ".noreturn;\n")
    fn = read_module(text).functions[1]
    assert (fn.name, fn.body, fn.performance) == ("foo_ext", None, [".noreturn"])


def test_an_unknown_body_directive_is_still_refused_by_name():
    with pytest.raises(PtxError, match=r"unknown directive \"?\.frobnicate"):
        read_module(_module("\t.frobnicate 1;"))


# ---- the fixture agrees with ptxas -------------------------------------------------------

FIXTURES = sorted((Path(__file__).parent / "ptx").glob("llvm14_*.ptx"))
FORMS = Path(__file__).parent / "llvm_forms.txt"
# LLVM's register names: %f/%fd are .f32/.f64 in older output, .b32/.b64 in newer
DECLARATIONS = {
    "new": "%p .pred, %rs .b16, %r .b32, %rd .b64, %f .b32, %fd .b64, %h .b16, %hh .b32",
    "old": "%p .pred, %rs .b16, %r .b32, %rd .b64, %f .f32, %fd .f64, %h .b16, %hh .b32",
}


def _forms_module(style: str) -> tuple[str, int]:
    decls = [f"\t.reg {t} {n}<20>;" for n, t in
             (d.split() for d in DECLARATIONS[style].split(", "))]
    head = _module("").split("\tret;")[0] + "\n".join(decls) + "\n"
    forms = [line for line in FORMS.read_text().splitlines() if line.strip()]
    return head + "\n".join(f"\t{f}" for f in forms) + "\n\tret;\n}\n", head.count("\n") + 1


def test_the_fixtures_are_there_and_read():
    assert len(FIXTURES) >= 5 and len(FORMS.read_text().splitlines()) > 250
    judged = sum(len(check_module(read_module(p.read_text())).verdicts) for p in FIXTURES)
    assert judged > 150
    for style in DECLARATIONS:
        assert len(check_module(read_module(_forms_module(style)[0])).verdicts) > 200


@ptxas
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_each_fixture_instruction_agrees_with_ptxas(path, tmp_path):
    text = path.read_text()
    status, errors = _ptxas_errors(text, tmp_path)
    verdicts = check_module(read_module(text)).verdicts
    assert status == 0 and not errors  # LLVM's own output: ptxas takes all of it
    assert [v for v in verdicts if v.error] == []


@ptxas
@pytest.mark.parametrize("style", sorted(DECLARATIONS))
def test_each_form_agrees_with_ptxas(style, tmp_path):
    """ptxas names every line it refuses here (no syntax errors); ptxsmt must call each
    line ptxas takes legal or leave it unjudged, and each line it calls legal ptxas takes."""
    text, _ = _forms_module(style)
    _, errors = _ptxas_errors(text, tmp_path)
    ours = {v.line: v.error for v in check_module(read_module(text)).verdicts}
    false_illegal = [n for n, e in ours.items() if e and n not in errors]
    false_legal = [n for n, e in ours.items() if e is None and n in errors]
    assert (false_illegal, false_legal) == ([], [])
    # the refused forms are the sm_100 three-operand min/max and max.NaN.f64, unjudged
    lines = text.splitlines()
    assert sorted(lines[n - 1].split()[0] for n in errors) == \
        ["max.NaN.f32", "max.NaN.f64", "min.f32"]
