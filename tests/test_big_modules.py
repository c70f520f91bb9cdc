"""Reading one function of a big module (issue 40, item 4): only what it needs is read
(`isa/outline.py`, `llvm/outline.py`), and what is read is what reading the whole module
gives: the same function, the same verdicts, the same errors.

Checked by counting work (bodies parsed, statements read, definitions handed to
llvmlite), never by timing; the modules are `scripts/big_modules.py`'s, in which fN
is the same function at any size (its times are scripts/bench.py's `--only-big`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("llvmlite")

sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))

import big_modules  # noqa: E402

from ptxsmt import PtxError  # noqa: E402
from ptxsmt.cli import main  # noqa: E402
from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.isa import module as ptx_module  # noqa: E402
from ptxsmt.isa import statements  # noqa: E402
from ptxsmt.isa.module import called, read_module, written_variables  # noqa: E402
from ptxsmt.llvm import module as ir_module  # noqa: E402
from ptxsmt.llvm.errors import LlvmError  # noqa: E402

SMALL, BIG = 8, 120  # functions fN (and helpers hN) in a module
NAMES = ["f0", "f1", "f3", "h2", "h5", "f7"]  # f7: a kernel; h5 calls a helper


@pytest.fixture(scope="module")
def modules(tmp_path_factory) -> dict[int, tuple[Path, Path]]:
    """(IR, PTX) of the generated module of SMALL and of BIG functions."""
    place = tmp_path_factory.mktemp("big")
    out = {}
    for n in (SMALL, BIG):
        ir = big_modules.ir(n)
        (place / f"m{n}.ll").write_text(ir)
        (place / f"m{n}.ptx").write_text(big_modules.ptx(ir))
        out[n] = (place / f"m{n}.ll", place / f"m{n}.ptx")
    return out


def _whole(text: str, name: str):
    """The function `name` and its callees as reading every body of the module gives them."""
    functions = {f.name: f for f in read_module(text).functions if f.body is not None}
    wanted, found = [name], {}
    while wanted:
        f = functions.get(wanted.pop())  # none: a prototype's, an indirect call's
        if f is not None and f.name not in found:
            found[f.name] = f
            wanted += called(f.body)
    return found


# ---- the same function, from the module read whole ---------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_a_ptx_function_read_alone_is_the_one_the_whole_module_gives(modules, name):
    text = modules[BIG][1].read_text()
    fn = read_function(text, name)
    whole = _whole(text, name)
    assert fn == whole[name]
    read = {n: f for n, f in fn.module.items() if f.body is not None}
    assert read == whole and all(f.module is fn.module for f in read.values())
    globals_ = {n for n, v in fn.variables.items() if v.space == "global"}
    assert {n for n, v in fn.variables.items() if v.written} == \
        written_variables(text, globals_) & globals_


COMPILED = sorted(p for p in (Path(__file__).parent / "ptx").glob("**/*.ptx")
                  if "rejected" not in p.parts)  # hand-edited; a Rejected holds an exception


@pytest.mark.parametrize("path", COMPILED, ids=lambda p: p.name)
def test_every_function_of_what_compilers_wrote_read_alone_is_the_whole_modules(path):
    """nvcc -G and -O3, llc-14 and LLVM 22 modules (debug sections, `.file` strings,
    callees, variables): each function read alone is the one every body read gives."""
    text = path.read_text()
    for name, f in {f.name: f for f in read_module(text).functions if f.body}.items():
        fn = read_function(text, name)
        assert fn == f and {n for n, g in fn.module.items() if g.body} == set(_whole(text, name))


@pytest.mark.parametrize("name", NAMES)
def test_an_ir_function_read_alone_is_the_one_the_whole_module_gives(modules, name):
    text = modules[BIG][0].read_text()
    alone, whole = ir_module.read_ir(text, only=name), ir_module.read_ir(text)
    assert list(alone) == [name]
    a, w = alone[name], whole[name]
    assert (a.text, a.params, a.returns, a.return_attributes, a.param_attributes) == \
        (w.text, w.params, w.returns, w.return_attributes, w.param_attributes)
    assert str(a.refused) == str(w.refused)


@pytest.mark.parametrize("name", ["f1", "h1", "f7"])
def test_the_same_verdicts_from_a_small_and_a_big_module(modules, name, tmp_path):
    """fN of a module of 8 functions and of 120: the same source, the same verdicts (PTX
    against itself; IR against its PTX: refines, or for f7 the IR reader's error on
    its global)."""
    outputs = []
    for n in (SMALL, BIG):
        ir, ptx = modules[n]
        for pair in ([str(ptx), str(ptx)], [str(ir), str(ptx)]):
            run = CliRunner().invoke(main, ["equiv", *pair, "--function", name,
                                            "--timeout", "20"])
            outputs.append((run.exit_code, re.sub(r"\(\d+\.\d+ s\)", "", run.output)))
    assert outputs[:2] == outputs[2:]
    assert outputs[0][0] == 0


# ---- the same errors ---------------------------------------------------------------------

def test_a_missing_function_is_named_with_every_function_the_module_defines(modules):
    ir, ptx = modules[BIG]
    defined = [f.name for f in read_module(ptx.read_text()).functions if f.body is not None]
    with pytest.raises(PtxError) as e:
        read_function(ptx.read_text(), "nope")
    assert e.value.message == f'no function "nope" in the file (it defines {", ".join(defined)})'
    run = CliRunner().invoke(main, ["equiv", str(ir), str(ptx), "--function", "nope"])
    names = ", ".join("@" + n for n in ir_module.read_ir(ir.read_text()))
    assert run.exit_code == 2 and run.stderr.strip().endswith(f"(it defines {names})")


def test_a_missing_function_of_hand_written_ir_lists_every_function():
    """tests/ptx/llvm14.ll closes each body on its last line (`ret i32 %r }`): no outline
    is found, the module is read whole, and the error lists what llvmlite reads."""
    ptx = Path(__file__).parent / "ptx"
    run = CliRunner().invoke(main, ["equiv", str(ptx / "llvm14.ll"), str(ptx / "llvm14_sm80.ptx"),
                                    "--function", "nope"])
    assert run.exit_code == 2 and "(it defines @umin, @fsel, @funo, @s16," in run.output


CALLER = """
.visible .func (.param .b32 func_retval0) caller(.param .b32 caller_param_0)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [caller_param_0];
	{
	.param .b32 param0;
	st.param.b32 [param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), nowhere, (param0);
	ld.param.b32 %r2, [retval0+0];
	}
	st.param.b32 [func_retval0+0], %r2;
	ret;
}
"""


def test_a_call_of_a_missing_callee_is_the_same_error_in_a_small_and_a_big_module(modules,
                                                                                  tmp_path):
    header = ".version 7.5\n.target sm_80\n.address_size 64\n"
    messages = []
    for text in (header + CALLER, modules[BIG][1].read_text() + CALLER):
        path = tmp_path / f"m{len(messages)}.ptx"
        path.write_text(text)
        run = CliRunner().invoke(main, ["equiv", str(path), str(path), "--function", "caller"])
        messages.append((run.exit_code, run.output.replace(str(path), "M")
                         .split("line")[0]))
    assert messages[0] == messages[1] and "nowhere has no body" in run.output


def test_an_ir_error_in_the_function_asked_for_is_the_whole_modules(modules):
    """The cut module fails to parse: the whole module is read, and its first error (with
    its line, the module's) is the one given, as before the cut."""
    text = modules[BIG][0].read_text().replace("define void @f5(", "define void @f5(oops ")
    text = re.sub(r"(define \w+ @h9\(.*\{\n)", r"\1  %z = call i32 @missing(i32 0)\n", text)
    messages = []
    for only in (None, "h9"):
        with pytest.raises(LlvmError) as e:
            ir_module.read_ir(text, only=only)
        messages.append(e.value.message)
    line = text[:text.index("@f5(oops")].count("\n") + 1  # f5's, before h9: the first
    assert messages[0] == messages[1] and messages[0].startswith(f"LLVM IR: {line}:")


# ---- an error where nothing asked for lies: not met ----------------------------------------

def test_an_error_in_a_function_not_asked_for_does_not_stop_reading(modules, tmp_path):
    """docs/functions.md: reading one function reads what it needs; `check` reads all."""
    ptx = modules[BIG][1].read_text()
    bad = re.sub(r"(\.visible \.func f40\([^{]*\{)", r"\1\n\t.reg .frob %x;", ptx, count=1)
    assert bad != ptx
    assert read_function(bad, "f3") == read_function(ptx, "f3")
    with pytest.raises(PtxError, match="frob") as e:
        read_function(bad, "f40")  # its line is the file's: the bodies before it blanked
    assert (e.value.line, e.value.col) == (bad[:bad.index(".reg .frob")].count("\n") + 1, 2)
    (tmp_path / "bad.ptx").write_text(bad)
    run = CliRunner().invoke(main, ["check", str(tmp_path / "bad.ptx")])
    assert run.exit_code != 0 and "frob" in run.output

    ir = modules[BIG][0].read_text()
    broken = ir.replace("define void @f40(", "define void @f40(oops ")
    with pytest.raises(LlvmError):
        ir_module.read_ir(broken)
    assert ir_module.read_ir(broken, only="f3")["f3"].text == ir_module.read_ir(ir)["f3"].text


def test_an_error_after_a_definition_left_out_is_placed_as_reading_it_whole_places_it():
    text = (".version 7.5\n.target sm_80\n.address_size 64\n.visible .func j()\n{\nret;\n}  "
            ".visible .entry k(.param .frob x)\n{\nret;\n}\n")
    errors = []
    for read in (read_module, lambda t: read_function(t, "k")):
        with pytest.raises(PtxError) as e:
            read(text)
        errors.append((e.value.line, e.value.col, e.value.message))
    assert errors[0] == errors[1] and errors[0][:2] == (7, 4)


# ---- only what is needed is read ------------------------------------------------------------

def _ptx_work(text: str, name: str, patch) -> tuple[int, set[str]]:
    """(statements split, names of the bodies parsed) while `name` is read."""
    split, bodies = [0], set()
    iterate, read_body = statements.iter_statements, ptx_module.read_body

    def counting(*args, **kwargs):
        for st in iterate(*args, **kwargs):
            split[0] += 1
            yield st

    def parse(source, **kwargs):
        body = read_body(source, **kwargs)
        bodies.add(len(source))
        return body
    patch.setattr(ptx_module, "iter_statements", counting)
    patch.setattr(ptx_module, "read_body", parse)
    read_function(text, name)
    return split[0], bodies


@pytest.mark.parametrize("name", ["f3", "h5"])
def test_reading_a_ptx_function_reads_no_body_it_does_not_need(modules, name, monkeypatch):
    """The statements read for fN are as many in a module of 8 functions as in one of 120,
    and only its body and its callees' are parsed."""
    small = _ptx_work(modules[SMALL][1].read_text(), name, monkeypatch)
    big = _ptx_work(modules[BIG][1].read_text(), name, monkeypatch)
    assert small == big
    assert len(big[1]) == len(_whole(modules[BIG][1].read_text(), name))


def test_reading_an_ir_function_hands_llvmlite_only_what_it_needs(modules, monkeypatch):
    handed = []
    parse = ir_module.parse_module
    monkeypatch.setattr(ir_module, "parse_module", lambda text: handed.append(text) or parse(text))
    read = {n: ir_module.read_ir(modules[n][0].read_text(), only="h5") for n in (SMALL, BIG)}
    assert read[SMALL]["h5"].text == read[BIG]["h5"].text
    defines = [re.findall(r"^define .*?(@\w+)\(", t, re.M) for t in handed]
    assert defines[0] == defines[1] and "@h5" in defines[0] and len(defines[0]) <= 4


def test_tv_of_one_function_reads_what_it_needs_and_names_a_broken_module(modules):
    """`tv --function`: the verdict a small module gives; a module that does not parse
    (an error far from the function) is refused with the reader's error, not the
    backend's."""
    runs = [CliRunner().invoke(main, ["tv", str(modules[n][0]), "--function", "f1"])
            for n in (SMALL, BIG)]
    assert runs[0].output == runs[1].output and runs[0].exit_code == runs[1].exit_code
    broken = modules[BIG][0].read_text().replace("define void @f40(", "define void @f40(oops ")
    run = CliRunner().invoke(main, ["tv", "-", "--function", "f1"], input=broken)
    assert run.exit_code == 2 and "LLVM IR: " in run.output and "expected type" in run.output
