"""Reading real PTX: modules as nvcc and LLVM emit them, declared register types,
snippet spellings from real sources, `ptxsmt check FILE.ptx`, and agreement with ptxas.

tests/ptx/*.ptx: `nvcc -ptx -arch=sm_90 -O3 X.cu`, `-arch=sm_80 -O3` and `-arch=sm_90 -G`
(debug: -O0, `.loc`, `.section` blocks) of tests/ptx/*.cu with CUDA 13.0;
llvm_style.ptx is written by hand in LLVM NVPTX's style (`%r<5>`, `$L__BB0_2:`, call
sequences in `{ }` with shadowing, return parameters, a statement over two lines);
llvm14_sm80.ptx and llvm14_sm53.ptx are LLVM 14's own (`llc -march=nvptx64 -mcpu=sm_80
-mattr=+ptx75 llvm14.ll`, and -mcpu=sm_53): select/compare functions, a branch, f16/f16x2.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from tier import THOROUGH

from ptxsmt import PtxError, evaluate, parse, parse_target, parse_version
from ptxsmt.check import check_line, check_module
from ptxsmt.cli import main
from ptxsmt.isa.body import Checked, Generic, Label
from ptxsmt.isa.module import read_module
from ptxsmt.isa.registers import DECLARABLE, fits
from ptxsmt.isa.types import TYPES
from ptxsmt.isa.variants import catalogue, operand_types

CORPUS = sorted((Path(__file__).parent / "ptx").glob("*.ptx"))
# at a statement's start: a line's, or after `;` or `{` (inline asm bodies on one line)
COMPARE_SELECT = re.compile(r"(?:^|[;{])[\s{]*(?:@!?%?\w+\s+)?(set|setp|selp|slct)\.", re.M)
ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


def _ptxas_errors(text: str, tmp_path: Path) -> tuple[int, dict[int, str]]:
    src = tmp_path / "k.ptx"
    src.write_text(text)
    run = subprocess.run(["ptxas", "-c", "-arch", "sm_90", str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    errors = {int(m.group(1)): m.group(2)
              for m in re.finditer(r"line (\d+); (?:error|fatal)\s*: (.*)", run.stderr)}
    return run.returncode, errors


# ---- the corpus -------------------------------------------------------------------------


def test_the_corpus_is_there():
    assert len(CORPUS) >= 7 and any("_G" in p.name for p in CORPUS)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_compare_and_select_is_read_with_its_declared_types(path):
    text = path.read_text()
    module = read_module(text)
    assert module.version and module.target and module.address_size == 64
    checked = [c for fn in module.functions if fn.body for c in fn.body.checked]
    seen = [c for c in checked if c.instruction.variant.opcode in ("set", "setp", "selp", "slct")]
    assert len(seen) == len(COMPARE_SELECT.findall(text)) > 0
    for c in seen:
        ins = c.instruction
        names = {r for o in ins.operands.values() for r in o.registers}
        names |= {ins.guard.register} if ins.guard else set()
        assert set(c.registers) == names, ins.text  # every register has its declaration
        types = operand_types(ins.variant)
        for slot, o in ins.operands.items():
            for name in o.registers:
                if o.kind == "reg":
                    assert fits(c.registers[name].type, types[slot])


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_corpus_is_legal_for_its_own_header(path):
    result = check_module(read_module(path.read_text()))
    assert result.illegal == 0 and result.unjudged > 0 and result.verdict == "not judged"


def test_the_llvm_style_module_in_detail():
    module = read_module((Path(__file__).parent / "ptx" / "llvm_style.ptx").read_text())
    helper, umin, fmax = module.functions
    assert (helper.name, helper.body, [p.name for p in helper.returns]) == \
        ("helper", None, ["func_retval0"])
    assert [p.type.name for p in umin.params] == ["b32", "b32"] and umin.linkage == (".visible",)
    assert fmax.params[0].attributes == (".ptr", ".global") and fmax.params[0].align == 4
    assert (fmax.params[1].array, fmax.params[1].align) == (16, 8)
    assert fmax.performance == [".maxntid 128, 1, 1", ".minnctapersm 2"]
    assert any(isinstance(i, Label) and i.name == "$L__BB0_2" for i in umin.body.items)
    bra = next(g for g in umin.body.generic if g.opcode == "bra")
    assert (bra.guard.register, bra.operands) == ("p2", ("$L__BB0_2",))
    ld = next(g for g in fmax.body.generic if g.modifiers == ("param", "f32"))
    assert ld.operands == ("%f2", "[fmax_bits_param_1+8]")
    # the inner `.reg .b32 %r1` shadows the outer one inside the call sequence
    slct = next(c for c in umin.body.checked if c.instruction.variant.opcode == "slct")
    assert slct.registers["r1"].line == 37 and slct.registers["r3"].line == 23
    assert len(module.variables) == 1


@ptxas
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_check_agrees_with_ptxas_on_each_file(path, tmp_path):
    status, _ = _ptxas_errors(path.read_text(), tmp_path)
    assert (status == 0) == (check_module(read_module(path.read_text())).illegal == 0)


@given(st.data())
def test_layout_does_not_change_what_is_read(data):
    """Statements spread over lines, comments between operands, several per line."""
    path = Path(__file__).parent / "ptx" / "llvm_style.ptx"
    text = path.read_text()

    def relayout(m: re.Match) -> str:
        return data.draw(st.sampled_from([", ", ",\n\t", ", /* c */ ", ",// c\n"]))

    moved = re.sub(r", (?=%)", relayout, text)
    moved = re.sub(r";\n\t(?=[a-z])", lambda m: data.draw(st.sampled_from([";\n\t", "; "])),
                   moved)

    def read(t: str) -> list[str]:
        return [str(c.instruction) for fn in read_module(t).functions if fn.body
                for c in fn.body.checked]

    assert read(moved) == read(text)


# ---- declared types against ptxas -------------------------------------------------------


def _register(t) -> str:
    return f"%{t.declared_as or t.name}_0"


def _variant_lines(offset: int = 0) -> list[tuple[str, str, str]]:
    """(line, slot, register type): every operand of a sample of variants (every 23rd,
    from `offset`) in turn given a register of each declarable type, the others a
    register of their own type."""
    out = []
    variants = [v for v in catalogue() if not (v.ftz and v.types[0].name == "f32")][offset::23]
    for v in variants:
        types = operand_types(v)
        slots = [s for s in ("d", "p", "a", "b", "c") if s in types
                 and (s != "c" or v.boolop or not v.syntax.optional_c)]
        for slot in slots:
            for decl in DECLARABLE:
                ops = [f"%{decl}_1" if s == slot else _register(types[s]) for s in slots]
                out.append((f"{v} {', '.join(ops)};", slot, decl))
    return out


# PTXSMT_PROFILE=thorough: the whole variant space (264,316 lines, 0 disagreements when
# last run); otherwise one sample of 11,526 lines
OFFSETS = range(23) if THOROUGH else [0]


@ptxas
@pytest.mark.parametrize("offset", OFFSETS)
def test_declared_register_types_agree_with_ptxas(tmp_path, offset):
    lines = _variant_lines(offset)
    head = [".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{"]
    head += [f".reg .{t} %{t}_<2>;" for t in DECLARABLE]
    text = "\n".join([*head, *(line for line, _, _ in lines), "ret;", "}", ""])
    _, errors = _ptxas_errors(text, tmp_path)
    ours = {v.line: v.error for v in check_module(read_module(text)).verdicts}
    wrong = [(line, ours.get(n), errors.get(n))
             for n, (line, _, _) in enumerate(lines, len(head) + 1)
             if (ours.get(n) is None) != (errors.get(n) is None)]
    assert len(lines) > 9000 and sum(1 for e in ours.values() if e) > 4000
    assert wrong == []  # including ptxas's .pred as b of set.*.bf16x2 without a BoolOp


@given(st.sampled_from(DECLARABLE), st.sampled_from(sorted(TYPES)))
def test_fits_is_width_and_kind(reg, operand):
    r, o = TYPES[reg], TYPES[operand]
    if fits(r, o):
        integer = ("u", "s")
        assert r.width == o.width and (r.kind == o.kind or "b" in (r.name[0], o.name[0])
                                       or {r.name[0], o.name[0]} <= set(integer)
                                       or r.name == "f16x2" and o.name[0] in integer)


# ---- snippets ---------------------------------------------------------------------------


def test_a_declared_predicate_is_not_an_s32():
    with pytest.raises(PtxError) as err:
        parse(".reg .pred %p1;\nslct.u32.s32 d, a, b, %p1;")
    assert (err.value.line, err.value.col) == (2, 23)
    assert "declared .pred on line 1, col 12" in err.value.message
    assert len(parse("slct.u32.s32 d, a, b, %p1;")) == 1  # undeclared: typed by use


@pytest.mark.parametrize("text", [
    ".reg .u32 a;\ncvt.u32.u16 d, a;",  # PTX: a is chopped to 16 bits
    ".reg .pred %q;\nset.gt.bf16x2.bf16x2 %q, a, b;",
])
def test_a_register_ptxas_takes_but_ptxsmt_does_not_model_is_refused_not_misread(text):
    """ptxas takes these registers (a wider cvt source, a .pred for a bf16x2 d); the
    semantics of a register of another width are not modelled, so evaluation refuses
    rather than read the register as if it had the operand's width."""
    assert parse(text)  # legal
    with pytest.raises(PtxError, match="evaluates this operand only on a register of"):
        evaluate(text, {"a": "0x12345678", "b": "0"})


def test_inline_asm_bodies_as_cuda_headers_write_them():
    body = "{ .reg .pred p; setp.ne.b32 p, %1, 0; selp.u32 %0, 1, 0, p; }"
    assert evaluate(body, {"%1": "5"}).outputs["0"] == 1
    assert evaluate(body, {"1": "0"}).outputs["0"] == 0
    two = "{.reg .pred __$temp3;\n  setp.ne.b16 __$temp3, %1, 0;\n  selp.u16 %0, 1, 0, __$temp3;}"
    assert evaluate(two, {"1": "0x8000"}).outputs["0"] == 1


@pytest.mark.parametrize("text,inputs,want", [
    ("setp.lt.s32 p, %r1+-1, %r2;", {"r1": "0", "r2": "0"}, True),  # -1 < 0
    ("setp.lt.u32 p, %r1+-1, %r2;", {"r1": "0", "r2": "0"}, False),  # 0xffffffff
    ("setp.eq.u16 p, r+65535, s;", {"r": "1", "s": "0"}, True),  # wraps at 16 bits
    ("setp.eq.b64 p, r + 0x10, s;", {"r": "1", "s": "17"}, True),
])
def test_a_register_plus_an_offset_is_the_sum(text, inputs, want):
    assert evaluate(text, inputs).outputs["p"] is want


@pytest.mark.parametrize("text", [
    "setp.lt.f32 p, a+1, b;", "selp.b32 d+1, a, b, p;", "vset2.u32.u32.eq d, a+1, b, c;",
    "setp.lt.s32 p, !a+1, b;", "setp.lt.s32 p, a+1.5, b;", "setp.lt.s32 p, a-1, b;",
])
def test_offsets_where_ptxas_refuses_or_crashes_are_errors(text):
    with pytest.raises(PtxError):
        parse(text)


def test_labels_and_several_instructions_per_line():
    sm90, v90 = parse_target("sm_90"), parse_version("9.0")
    assert check_line("$L0: setp.lt.u32 p, a, b; selp.b32 d, a, b, p;", sm90, v90) is None
    err = check_line("setp.lt.u32 p, a, b; set.lt.bf16.f32 d, a, b;", parse_target("sm_80"),
                     parse_version("7.0"))
    assert err and "col 22" in err


# ---- the command line -------------------------------------------------------------------


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_check_a_file_reports_judged_and_other_instructions():
    path = str(Path(__file__).parent / "ptx" / "llvm_style.ptx")
    r = run("check", "--json", path)
    assert r.exit_code == 5  # no line illegal, 15 not judged: the module is not judged
    import json

    j = json.loads(r.stdout)
    assert (j["target"], j["ptx_version"], j["judged"], j["not_judged"]) == ("sm_90", "8.4", 11, 15)
    assert (j["verdict"], j["legal"]) == ("not judged", False)
    assert j["instructions"][2]["ptx"] == "setp.ne.s32 %p2, %r3, 0;"
    text = run("check", path).stdout
    assert "11 instructions checked" in text and "15 other instructions not judged" in text
    r = run("check", "--target", "sm_52", "--ptx-version", "7.0", path)
    assert r.exit_code == 1
    assert "in fmax_bits: line 76, col 2: 'setp.eq.f16' needs sm_53" in r.output


def test_a_module_on_stdin_and_an_operand_kind_error():
    src = (".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n"
           ".reg .pred %p<2>; .reg .b32 %r<3>;\nslct.u32.s32 %r1, %r2, %r0, %p1;\nret;\n}\n")
    r = run("check", "-", stdin=src)
    assert r.exit_code == 1
    assert "in k: line 6, col 29: %p1 is declared .pred on line 5, col 12" in r.output


HOSTILE = [
    ("/* never closed", "unterminated comment"),
    ("{ setp.lt.u32 %p1, %r1, %r2;", "expected a directive"),
    (".entry k() { { ret; }", "is never closed"),
    (".visible .entry k() { .reg .b32 %r<x>; ret; }", "bad register range"),
    (".visible .entry k() { .reg .b32 r; .reg .u32 r; ret; }", "declared twice"),
    (".visible .entry k() { ret; } }", "expected a directive"),
    (".frobnicate 3;", "unknown directive"),
    (".visible .entry k() { .frob; ret; }", "unknown directive"),
    (".visible .entry k() { ret }", "missing ';'"),
    (".visible .entry k() { .reg .b32 r<99999999999>; ret; }", "bad register range"),
    (".file 1 \"k.cu", "unterminated string"),
    (".target sm_99", "not a target"),
]


@pytest.mark.parametrize("body,fragment", HOSTILE)
def test_hostile_modules_get_one_line(body, fragment):
    r = run("check", "-", stdin=f".version 9.0\n.target sm_90\n{body}\n")
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert fragment in r.output and len(r.stderr.strip().splitlines()) == 1, r.output
    assert re.search(r"line \d+, col \d+", r.output), r.output


def test_a_range_of_zero_declares_nothing_as_in_ptxas():
    text = ".version 9.0\n.target sm_90\n.address_size 64\n.entry k() { .reg .b32 %r<0>; ret; }"
    module = read_module(text)
    assert module.functions[0].body.registers == []
    assert isinstance(module.functions[0].body.items[0], Generic)
    assert not any(isinstance(i, Checked) for i in module.functions[0].body.items)


@ptxas
def test_a_pred_register_as_b_of_set_bf16x2_only_without_a_boolop(tmp_path):
    """ptxas 13.0 takes `.pred` for b of set.CmpOp.dtype.bf16x2, and refuses it once a
    BoolOp is there; ptxsmt judges both as ptxas does."""
    lines = ["set.gt.u32.bf16x2 %r1, %r2, %p1;", "set.nan.bf16x2.bf16x2 %r1, %r2, %p1;",
             "set.gt.and.u32.bf16x2 %r1, %r2, %p1, %p2;", "set.gt.u32.bf16x2 %r1, %p1, %r2;"]
    head = [".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{",
            ".reg .b32 %r<3>;", ".reg .pred %p<3>;"]
    text = "\n".join([*head, *lines, "ret;", "}", ""])
    _, errors = _ptxas_errors(text, tmp_path)
    ours = {v.line: v.error for v in check_module(read_module(text)).verdicts}
    first = len(head) + 1
    assert sorted(errors) == [first + 2, first + 3]
    assert [n for n, e in sorted(ours.items()) if e] == [first + 2, first + 3]


@ptxas
def test_registers_ptxas_takes_outside_the_rule(tmp_path):
    """Rows of the fitting tables found by the sweep of the whole variant space: an
    .f16x2 register in the .pred glue, none as a shift amount, wider bit registers for a
    float cvt but not for cvt.f32.bf16, a .pred as b of setp on .bf16x2 without a BoolOp."""
    legal = ["and.pred %f16x2_1, %pred_0, %pred_0;", "not.pred %pred_0, %f16x2_1;",
             "cvt.f32.f16 %b64_1, %f16_0;", "cvt.f64.f32 %f64_0, %b64_1;",
             "setp.lt.bf16x2 %pred_0, %b32_0, %pred_1;"]
    illegal = ["shl.b32 %b32_0, %b32_0, %f16x2_1;", "cvt.f32.bf16 %f32_0, %b32_1;",
               "setp.lt.and.bf16x2 %pred_0, %b32_0, %pred_1, %pred_0;"]
    head = [".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{"]
    head += [f".reg .{t} %{t}_<2>;" for t in DECLARABLE]
    text = "\n".join([*head, *legal, *illegal, "ret;", "}", ""])
    _, errors = _ptxas_errors(text, tmp_path)
    ours = {v.line: v.error for v in check_module(read_module(text)).verdicts}
    refused = list(range(len(head) + len(legal) + 1, len(head) + len(legal) + len(illegal) + 1))
    assert sorted(errors) == refused
    assert [n for n, e in sorted(ours.items()) if e] == refused
