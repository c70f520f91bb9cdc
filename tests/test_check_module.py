"""`check` on whole modules, as ptxas reads them: what ptxas refuses of a module as a whole
(labels, branch targets, functions defined twice), the operand spellings it takes (an
integer for a predicate, a vector register's element), line ends, and the judge that
reads a module once (each shape parsed once, results as each function is read).

Expectations come from ptxas 13.0 (docs/ptxas-legality.md, "Modules ptxas refuses" and
"Operand spellings"); where ptxas is installed the tests marked `ptxas` ask it again, and
the predicate folding is read back from the SASS it writes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt import PtxError, evaluate
from ptxsmt.check import Judge, check_module
from ptxsmt.cli import main
from ptxsmt.function import read_function
from ptxsmt.isa.module import read_module

CORPUS = sorted((Path(__file__).parent / "ptx").glob("*.ptx"))
HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n"
ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


def _ptxas(text: str, tmp_path: Path) -> tuple[int, str]:
    src = tmp_path / "k.ptx"
    src.write_text(text)
    run = subprocess.run(["ptxas", "-arch", "sm_80", str(src), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True)
    return run.returncode, run.stderr


# ---- modules ptxas refuses as a whole ---------------------------------------------------

# (body after HEADER, the line ptxas names or None if it takes the module, its words)
MODULES = [
    (".visible .entry k()\n{\nL1:\nret;\nL1:\nret;\n}\n", 8,
     "Duplicate definition of label 'L1'"),
    (".visible .entry k()\n{\n{\nL1:\nret;\n}\n{\nL1:\nret;\n}\n}\n", None, ""),
    (".visible .entry k()\n{\nL1:\nret;\n}\n.visible .entry j()\n{\nL1:\nret;\n}\n", None, ""),
    (".visible .entry k()\n{\n{\nL1:\nret;\n}\nbra L1;\n}\n", 10, "Unknown symbol 'L1'"),
    (".visible .entry k()\n{\nbra L9;\nret;\n}\n", 6, "Unknown symbol 'L9'"),
    (".visible .entry k()\n{\n.reg .pred %p;\n@%p bra.uni L9;\nret;\n}\n", 7,
     "Unknown symbol 'L9'"),
    (".visible .entry k()\n{\n.reg .pred %p;\n@!%p bra L2;\n{\nbra L2;\n}\nL2:\nret;\n}\n",
     None, ""),  # a forward branch, and one from an inner scope to an outer label
    (".visible .entry k()\n{\n.reg .b32 %r;\nmov.u32 %r, 0;\nts: .branchtargets L1, L2;\n"
     "brx.idx %r, ts;\nL1:\nret;\n}\n", 8, "Unknown symbol 'L2'"),
    (".visible .entry k()\n{\n.reg .b32 %r;\nmov.u32 %r, 0;\nts: .branchtargets L1, L2;\n"
     "brx.idx %r, ts;\nL1:\nret;\nL2:\nret;\n}\n", None, ""),
    (".visible .entry k()\n{\nret;\n}\n.visible .entry k()\n{\nret;\n}\n", 8,
     "Duplicate definition of function 'k'"),
    (".visible .func f()\n{\nret;\n}\n.visible .func f()\n{\nret;\n}\n", 9,
     "Duplicate definition of function 'f'"),
    (".visible .func f(\n.param .b32 a\n)\n{\nret;\n}\n.visible .func f(\n.param .b32 a\n)\n\n"
     "{\nret;\n}\n", 14, "Duplicate definition of function 'f'"),
    (".visible .func f();\n.visible .func f();\n.visible .func f()\n{\nret;\n}\n", None, ""),
]


@pytest.mark.parametrize("body,line,words", MODULES)
def test_what_ptxas_refuses_of_a_module_is_refused_with_its_words_and_line(body, line, words):
    text = HEADER + body
    name = "f" if ".func" in body else "k"
    readers = [read_module, lambda t: read_module(t, only=name), lambda t: read_function(t, name),
               lambda t: list(Judge().read(t))]
    for read in readers:
        if line is None:
            read(text)
            continue
        with pytest.raises(PtxError) as e:
            read(text)
        assert e.value.line == line and e.value.message.startswith(words)
    run = CliRunner().invoke(main, ["check", "-"], input=text)
    assert run.exit_code == (5 if line is None else 2)  # `ret` is not judged
    if line is not None:
        assert f"line {line}," in run.output and words in run.output


@ptxas
@pytest.mark.parametrize("body,line,words", MODULES)
def test_ptxas_refuses_the_same_modules_at_the_same_lines(body, line, words, tmp_path):
    status, stderr = _ptxas(HEADER + body, tmp_path)
    if line is None:
        assert status == 0, stderr
    else:
        assert status != 0 and f"line {line}; error   : {words}" in stderr


def test_a_function_not_asked_for_is_left_out_unread():
    """docs/functions.md: an error in a function not asked for (nor called by it) does not
    stop reading the one asked for; `check` of the module still reports it."""
    other = ".visible .entry j()\n{\n.reg .nonsense %x;\nret;\n}\n"
    text = HEADER + ".visible .entry k()\n{\nret;\n}\n" + other
    with pytest.raises(PtxError, match="one register type"):
        read_module(text)
    module = read_module(text, only="k")
    assert [f.name for f in module.functions] == ["k"] and module.unread == ["j"]
    assert read_function(text, "k").name == "k"
    run = CliRunner().invoke(main, ["check", "-"], input=text)
    assert run.exit_code == 2 and "line 10," in run.output


def test_the_function_asked_for_brings_its_callees():
    text = HEADER + (".func (.param .b32 r) g(.param .b32 a)\n{\nret;\n}\n"
                     ".func h()\n{\nret;\n}\n"
                     ".visible .entry k()\n{\n.reg .b32 %r<2>;\n{\n.param .b32 p;\n"
                     ".param .b32 q;\ncall.uni (q), g, (p);\n}\nret;\n}\n")
    module = read_module(text, only="k")
    assert {f.name: f.body is not None for f in module.functions} == {"g": True, "k": True}
    assert module.unread == ["h"]


# ---- the judge: one reading, the same verdicts -------------------------------------------


def _verdicts(text: str):
    judge = Judge()
    verdicts = list(judge.read(text))
    return verdicts, judge.unjudged


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_judge_gives_what_a_full_reading_gives(path):
    text = path.read_text()
    full = check_module(read_module(text))
    verdicts, unjudged = _verdicts(text)
    assert verdicts == full.verdicts and unjudged == full.unjudged


def test_a_shape_seen_before_is_judged_by_its_registers_types():
    """The same text but for register names is one shape only when the registers have the
    same declared types: here one is legal and the next is not."""
    body = ("{\n.reg .pred %p<3>;\n.reg .b32 %r<3>;\n.reg .f32 %f<3>;\n.reg .b16 %h<3>;\n"
            "setp.lt.u32 %p1, %r1, %r2;\nsetp.lt.u32 %p2, %f1, %r2;\n"
            "setp.lt.u32 %p2, %h1, %r2;\nsetp.lt.u32 %p1, %r2, %r1;\n"
            "setp.lt.f32 %p1, %r1, 1.0;\nsetp.lt.f32 %p1, %f1, 1.0;\nret;\n}\n")
    text = HEADER + ".visible .entry k()\n" + body + ".visible .entry j()\n" + body
    full = check_module(read_module(text))
    verdicts, _ = _verdicts(text)
    assert verdicts == full.verdicts
    assert [v.error is None for v in verdicts] == [True, False, False, True, True, True] * 2


def test_verdicts_come_as_each_function_is_read():
    text = (HEADER + ".visible .entry k()\n{\n.reg .pred %p;\n.reg .b32 %r<2>;\n"
            "setp.lt.u32 %p, %r0, %r1;\nret;\n}\n.visible .entry j()\n{\n.bogus;\n}\n")
    got = []
    with pytest.raises(PtxError, match="unknown directive"):
        for v in Judge().read(text):
            got.append(v)
    assert [v.function for v in got] == ["k"]


def test_check_prints_a_module_as_before():
    for path in CORPUS:
        text = path.read_text()
        run = CliRunner().invoke(main, ["check", str(path)])
        full = check_module(read_module(text))
        assert run.stdout.count("\n") == len(full.verdicts) + 1
        assert f"{len(full.verdicts)} instructions checked" in run.stdout.splitlines()[-1]


# ---- operand spellings ------------------------------------------------------------------

# ptxas 13.0 takes any integer for a predicate operand, a float never (measured: tiny
# modules through `ptxas -arch sm_80`); the truth is what its constant folder makes of it
# in the SASS: set/setp's c reads the low 32 bits, every other predicate operand all 64,
# and `!k` is the logical not of k first.
PREDICATE_IMMEDIATES = [  # (instruction with c, c, truth)
    ("setp.eq.and.u32 p, a, a, {c};", "0", False),
    ("setp.eq.and.u32 p, a, a, {c};", "1", True),
    ("setp.eq.and.u32 p, a, a, {c};", "2", True),
    ("setp.eq.and.u32 p, a, a, {c};", "-1", True),
    ("setp.eq.and.u32 p, a, a, {c};", "0x100", True),
    ("setp.eq.and.u32 p, a, a, {c};", "4294967296", False),
    ("setp.eq.and.u32 p, a, a, {c};", "!2", False),
    ("setp.eq.and.u32 p, a, a, {c};", "!0", True),
    ("setp.eq.and.u32 p, a, a, {c};", "!4294967296", False),
    ("setp.eq.and.u32 p, a, a, {c};", "07", True),
    ("setp.eq.and.u32 p, a, a, {c};", "0b1", True),
    ("setp.eq.and.u32 p, a, a, {c};", "2U", True),
    ("mov.pred p, {c};", "2", True),
    ("mov.pred p, {c};", "4294967296", True),
    ("mov.pred p, {c};", "0", False),
    ("and.pred p, q, {c};", "4294967296", True),
    ("and.pred p, q, {c};", "0x100000000000", True),
]


@pytest.mark.parametrize("form,c,truth", PREDICATE_IMMEDIATES)
def test_an_integer_for_a_predicate_is_read_as_ptxas_folds_it(form, c, truth):
    text = form.format(c=c)
    inputs = {"a": "5"} if " a," in text else {"q": "true"} if " q," in text else {}
    outputs = evaluate(text, inputs).outputs
    assert outputs["p"] is truth


@pytest.mark.parametrize("c,truth", [("2", True), ("4294967296", True), ("!4294967296", False),
                                     ("0", False)])
def test_selp_reads_its_predicate_integer_whole(c, truth):
    assert evaluate(f"selp.u32 d, 7, 9, {c};", {}).outputs["d"] == (7 if truth else 9)


@pytest.mark.parametrize("text", ["setp.eq.and.u32 p, a, b, 1.0;",
                                  "setp.eq.and.u32 p, a, b, 0f3F800000;",
                                  "selp.u32 d, a, b, 0d3FF0000000000000;",
                                  "setp.eq.and.bf16 p, a, b, 2;"])
def test_a_float_for_a_predicate_is_refused(text):
    run = CliRunner().invoke(main, ["check"], input=text)
    assert run.exit_code == 1 and "illegal" in run.output


def _fold(line: str, tmp_path: Path) -> str:
    """The SASS ptxas writes for a kernel that selects 7 or 9 by %p1 as `line` sets it."""
    from ptxsmt.ptxasdiff.tools import resolve_disassembler

    text = (HEADER + ".visible .entry k(.param .u32 k_a, .param .u64 k_o)\n{\n"
            ".reg .pred %p<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n"
            "ld.param.u32 %r1, [k_a];\nld.param.u64 %rd1, [k_o];\n"
            f"{line}\nselp.u32 %r2, 7, 9, %p1;\nst.global.u32 [%rd1], %r2;\nret;\n}}\n")
    status, stderr = _ptxas(text, tmp_path)
    assert status == 0, stderr
    run = subprocess.run([*resolve_disassembler(), str(tmp_path / "k.cubin")],
                         capture_output=True, text=True, check=True)
    return run.stdout


@ptxas
@pytest.mark.parametrize("form,c,truth", PREDICATE_IMMEDIATES)
def test_ptxas_folds_the_predicate_integers_so(form, c, truth, tmp_path):
    pytest.importorskip("nvidia")  # nvdisasm comes with the CUDA pip wheels
    line = form.format(c=c).replace("p,", "%p1,").replace("q,", "%p2,")
    line = line.replace(" a, a,", " %r1, %r1,")
    prefix = "setp.eq.u32 %p2, %r1, %r1;\n" if " %p2," in line else ""
    sass = _fold(prefix + line, tmp_path)
    if line.startswith("setp"):  # the compare stays; c is its last predicate: PT or !PT
        m = re.search(r"ISETP\.\S+ P0, PT, R\d+, [^,]+, (!?PT)", sass)
        assert m and (m.group(1) == "PT") is truth
    else:  # folded: the constant stored
        assert re.search(rf"MOV\S* R5, \S*\s*\S*\s*0x{7 if truth else 9}\b", sass), sass


VECTORS = HEADER + (".visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<3>;\n"
                    ".reg .v2 .b32 %v;\n.reg .v4 .b32 %w;\n.reg .v4 .b16 %h;\n"
                    ".reg .v2 .f32 %f;\n.reg .v2 .u64 %d;\nLINE\nret;\n}\n")
# (line, ptxas takes it): measured with ptxas 13.0
VECTOR_ELEMENTS = [
    ("setp.eq.u32 %p1, %v.x, 1;", True),
    ("setp.eq.u32 %p1, %v.y, %w.w;", True),
    ("setp.eq.u32 %p1, %w.a, %w.r;", True),
    ("selp.u32 %v.x, %v.y, 1, %p1;", True),
    ("mov.u32 %v.y, %r1;", True),
    ("setp.eq.u16 %p1, %h.x, 1;", True),
    ("setp.lt.f32 %p1, %f.x, %f.y;", True),
    ("setp.lt.f32 %p1, %v.x, %f.y;", True),  # a float operand takes a bit register
    ("setp.eq.u64 %p1, %d.y, 1;", True),
    ("setp.eq.and.u32 %p1, %v .x, 1, %p2;", True),
    ("mov.b64 %d.x, {%v.x, %v.y};", True),
    ("set.eq.u32.u32 %v.x, %v.y, 0;", True),
    ("setp.eq.u32 %p1, %h.x, 1;", False),  # a .b16 element for a .u32 operand
    ("setp.eq.u32 %p1, %d.y, 1;", False),
    ("setp.eq.u32 %p1, %f.x, 1;", False),  # an .f32 one for a .u32 operand
    ("setp.eq.u32 %p1, %v, 1;", False),  # the whole vector
    ("setp.eq.u32 %p1, %r1.x, 1;", False),  # not a vector
    ("vset2.u32.u32.eq %v.x, %v.y, %w.z, %r1;", False),  # selectors, not elements
]


@pytest.mark.parametrize("line,legal", VECTOR_ELEMENTS)
def test_a_vector_element_is_a_register_of_the_element_type(line, legal):
    result = check_module(read_module(VECTORS.replace("LINE", line)))
    assert len(result.verdicts) == 1 and (result.illegal == 0) is legal, result.verdicts


@ptxas
@pytest.mark.parametrize("line,legal", VECTOR_ELEMENTS)
def test_ptxas_takes_the_same_vector_elements(line, legal, tmp_path):
    status, stderr = _ptxas(VECTORS.replace("LINE", line), tmp_path)
    assert (status == 0) is legal, stderr


def test_an_element_past_a_vectors_end_is_refused():
    """ptxas takes %v.z of a .v2 and reads an undefined value: ptxsmt refuses it."""
    result = check_module(read_module(VECTORS.replace("LINE", "setp.eq.u32 %p1, %v.z, 1;")))
    assert not result.legal and "has no element %v.z" in result.verdicts[0].error


def test_vector_elements_evaluate_as_registers():
    out = evaluate("mov.b64 d, {v.x, v.g};", {"v.x": "1", "v.y": "2"}).outputs
    assert out["d"] == 0x0000000200000001
    assert evaluate("setp.lt.u32 p, v.y, v.x;", {"v.x": "9", "v.y": "2"}).outputs["p"] is True


# ---- line ends --------------------------------------------------------------------------


def test_a_carriage_return_inside_a_statement_is_whitespace():
    for text in (b"setp.eq.u32\rp, a, b;\n", b"setp.eq.u32 p,\r a, b;\r\n",
                 b"setp.eq.u32 p, a, b;\r\n\r\nsetp.lt.s32 q, a, b;\r\n"):
        run = CliRunner().invoke(main, ["check"], input=text)
        assert run.exit_code == 0 and "illegal" not in run.output, run.output
    assert evaluate("setp.eq.u32 p,\ra,\rb;", {"a": "1", "b": "1"}).outputs["p"] is True


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_a_module_with_any_line_end_is_read(end, tmp_path):
    text = (HEADER + ".visible .entry k()\n{\n.reg .pred %p;\n.reg .b32 %r<2>;\n"
            "setp.lt.u32 %p, %r0, %r1;\nret;\n}\n").replace("\n", end)
    path = tmp_path / "k.ptx"
    path.write_bytes(text.encode())
    run = CliRunner().invoke(main, ["check", str(path)])
    assert run.exit_code == 5 and "k, line 8)" in run.output, run.output  # `ret`: not judged


# ---- a module's header against its instructions: a warning where ptxas refuses one -------

# g's `max.NaN.f32` (line 8 under a 3-line header), reached from f by a call: llc-14 writes
# it into sm_70 code
NAN_CALLEE = (".func (.param .b32 r) g(.param .b32 a)\n{\n.reg .f32 %f<3>;\n"
              "ld.param.f32 %f1, [a];\nmax.NaN.f32 %f2, %f1, %f1;\nst.param.f32 [r], %f2;\n"
              "ret;\n}\n.visible .func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 %r<3>;\n"
              "ld.param.b32 %r1, [a];\n{\n.param .b32 p;\n.param .b32 q;\n"
              "st.param.b32 [p], %r1;\ncall.uni (q), g, (p);\nld.param.b32 %r2, [q];\n}\n"
              "st.param.b32 [r], %r2;\nret;\n}\n")
# (header, ptxsmt's reason, ptxas's words; None: legal)
NAN_HEADERS = [
    (".version 7.0\n.target sm_70\n", "needs sm_80 or higher (target is sm_70)",
     "Modifier '.NaN' requires .target sm_80 or higher"),
    (".version 6.5\n.target sm_75\n", "needs PTX ISA 7.0 (have 6.5)",
     "Feature '.NaN' requires PTX ISA .version 7.0 or later"),
    (".version 7.0\n.target sm_80\n", None, None),
]


@pytest.mark.parametrize("header, why, _", NAN_HEADERS)
def test_an_instruction_ptxas_refuses_for_the_header_is_warned_of_and_read(header, why, _,
                                                                           tmp_path):
    """eval and equiv read a function whose module's `.target`/`.version` ptxas refuses an
    instruction of (a callee's too) as the ISA defines it, and say so on stderr, with its
    place: the answer is what it is on a later target (max(1.5, 1.5) = 1.5)."""
    path = tmp_path / "k.ptx"
    path.write_text(header + ".address_size 64\n" + NAN_CALLEE)
    runs = [CliRunner().invoke(main, args) for args in (
        ["eval", str(path), "--function", "f", "a=0x3fc00000", "--json"],
        ["equiv", str(path), str(path), "--function", "f"])]
    assert [r.exit_code for r in runs] == [0, 0], [r.output for r in runs]
    assert '"r": "0x3fc00000"' in runs[0].stdout and runs[1].stdout.startswith("equivalent")
    warning = (f"warning: {path}: in g: line 8, col 1: 'max.NaN.f32' {why}: ptxas refuses it; "
               "ptxsmt reads the code as the PTX ISA defines it\n")
    assert [r.stderr for r in runs] == ([warning, 2 * warning] if why else ["", ""])  # equiv:
    # a warning a side


def test_a_header_ptxas_refuses_is_warned_of_alone(tmp_path):
    """ptxas: "PTX .version 6.5 does not support .target sm_80" (and the `.NaN` line): the
    header is the one warning."""
    path = tmp_path / "k.ptx"
    path.write_text(".version 6.5\n.target sm_80\n.address_size 64\n" + NAN_CALLEE)
    r = CliRunner().invoke(main, ["eval", str(path), "--function", "f", "a=0x3fc00000"])
    assert r.exit_code == 0 and r.stderr == (
        f"warning: {path}: .target sm_80 needs PTX ISA 7.0 or later (have 6.5): ptxas refuses "
        "it; ptxsmt reads the code as the PTX ISA defines it\n")


@pytest.mark.parametrize("header, why, _", NAN_HEADERS)
def test_a_batch_line_holds_what_ptxas_refuses_as_a_field(header, why, _, tmp_path):
    """`equiv --batch` writes JSON lines: single `equiv`'s warning is the line's
    `ptxas_refuses`, every refusal with its file (once where both sides are one file)."""
    (tmp_path / "k.ptx").write_text(header + ".address_size 64\n" + NAN_CALLEE)
    (tmp_path / "ok.ptx").write_text(NAN_HEADERS[2][0] + ".address_size 64\n" + NAN_CALLEE)
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(
        {"a": a, "b": "k.ptx", "function": "f"}) + "\n" for a in ("k.ptx", "ok.ptx")))
    r = CliRunner().invoke(main, ["equiv", "--batch", str(tmp_path / "pairs.jsonl")])
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 0 and [row["verdict"] for row in rows] == ["equivalent"] * 2, r.output
    want = [f"{tmp_path / 'k.ptx'}: in g: line 8, col 1: 'max.NaN.f32' {why}"] if why else None
    assert [row.get("ptxas_refuses") for row in rows] == [want, want] and r.stderr == ""


# tv's own PTX, as llc-14 writes `llvm.maximum` for sm_70: LLVM 22 keeps its headers legal,
# so the PTX is handed to tv in place of its compiler's
MAXIMUM_IR = ("define float @f(float %a) {\n  %r = call float @llvm.maximum.f32(float %a, "
              "float %a)\n  ret float %r\n}\ndeclare float @llvm.maximum.f32(float, float)\n")
MAXIMUM_PTX = (".visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0)\n{\n"
               ".reg .f32 %f<3>;\nld.param.f32 %f1, [f_param_0];\nmax.NaN.f32 %f2, %f1, %f1;\n"
               "st.param.f32 [func_retval0], %f2;\nret;\n}\n")


@pytest.mark.parametrize("header, why, _", NAN_HEADERS)
@pytest.mark.parametrize("as_json", [False, True])
def test_tv_says_what_ptxas_refuses_of_its_ptx(header, why, _, as_json, tmp_path, monkeypatch):
    """tv: the warning on stderr, or with --json the function's `ptxas_refuses`."""
    pytest.importorskip("llvmlite")
    from ptxsmt.llvm import module
    monkeypatch.setattr(module, "compile_to_ptx", lambda *a, **k: header + ".address_size 64\n"
                        + MAXIMUM_PTX)
    (tmp_path / "k.ll").write_text(MAXIMUM_IR)
    r = CliRunner().invoke(main, ["tv", str(tmp_path / "k.ll"), *["--json"] * as_json])
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0]
    refusal = f"in f: line 8, col 1: 'max.NaN.f32' {why}"
    if as_json:
        assert json.loads(first).get("ptxas_refuses") == ([refusal] if why else None)
        assert r.stderr == ""
    else:
        assert first == "@f: refines" and r.stderr == (
            f"warning: the PTX of @f: {refusal}: ptxas refuses it; ptxsmt reads the code as "
            "the PTX ISA defines it\n" if why else "")


@ptxas
@pytest.mark.parametrize("header, _, words", NAN_HEADERS)
def test_ptxas_refuses_what_is_warned_of_at_its_line(header, _, words, tmp_path):
    status, stderr = _ptxas(header + ".address_size 64\n" + NAN_CALLEE, tmp_path)
    if words is None:
        assert status == 0, stderr
    else:
        assert status != 0 and f"line 8; error   : {words}" in stderr
