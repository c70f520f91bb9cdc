"""Whole functions, sound by construction (issue 22): control is followed or refused,
never data; a difference that exists only through what ptxsmt leaves free (unmodelled
instructions, NaNs the ISA leaves open, return bytes never written) is `unknown`;
parameters and return values are bytes; every printed reproduce line runs as printed.
Expected values are computed by hand from the PTX ISA, not from the encoding."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy
import pytest
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.eval.values import outputs_json
from ptxsmt.function import read_function
from ptxsmt.function.evaluate import evaluate_function
from ptxsmt.isa.errors import PtxError
from ptxsmt.sem.unspecified import UNSPECIFIED

HERE = Path(__file__).parent / "ptx" / "functions"
TABLE, OPAQUE, MEMORY = (HERE / f"{n}.ptx" for n in ("jump_table", "opaque", "memory"))


def _cli(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def _fn(path: Path, name: str):
    return read_function(path.read_text(), name)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("path", sorted(HERE.glob("*.ptx")), ids=lambda p: p.name)
def test_the_test_files_are_legal_ptx(path, tmp_path):
    r = subprocess.run(["ptxas", "-arch", "sm_80", str(path), "-o", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---- control ------------------------------------------------------------------------

def test_a_jump_table_is_a_jump():
    """f returns 1 for index 0 and 2 for index 1 (`brx.idx`); g returns 1."""
    for index, expect in ((0, 1), (1, 2)):
        ev = evaluate_function(_fn(TABLE, "f"), {"f_param_0": index})
        assert ev.returns == {"func_retval0": expect}
    with pytest.raises(PtxError, match="past the 2 targets"):
        evaluate_function(_fn(TABLE, "f"), {"f_param_0": 2})
    r = _cli("equiv", TABLE, TABLE, "--function", "f", "--function-b", "g", "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1 and out["verdict"] == "different"
    assert out["counterexample"]["inputs"]["f_param_0"] == "0x00000001"


def test_an_index_past_the_table_gives_no_verdict():
    r = _cli("equiv", TABLE, TABLE, "--function", "f")
    assert r.exit_code == 3 and "past the 2 targets" in r.stdout


@pytest.mark.parametrize("instruction", ["call f, (%r1);", "jmp L;", "brkpt.foo %r1, %r1;"])
def test_what_moves_control_is_never_data(instruction):
    text = TABLE.read_text().replace("brx.idx \t%r1, $L_brx_0;", instruction)
    with pytest.raises(PtxError):
        from ptxsmt.function.encode import encode_function
        encode_function(read_function(text, "f"))


# ---- what ptxsmt leaves free ------------------------------------------------------------

@pytest.mark.parametrize("a, b, code, words", [
    ("dv", "sh", 0, []),  # div by 2 is shr 1 (div is modelled: sem/arith)
    ("m24", "sl", 3, ["mul24.lo.u32 _, _, 2"]),  # mul24 by 2 vs shl 1: mul24 is unmodelled
    ("dv2", "dv2", 0, []),  # the same unmodelled instruction on the same value
    ("dv2", "dv3", 1, []),  # m(x)+1 vs m(x)+2: different whatever mul24 gives
    ("ng", "xr", 3, ["neg.f16"]),  # neg.f16 of a NaN is open; xor 0x8000 is not
])
def test_a_difference_through_free_values_is_unknown(a, b, code, words):
    r = _cli("equiv", OPAQUE, OPAQUE, "--function", a, "--function-b", b)
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output and all(w in r.stdout for w in words)


def test_congruence_needs_the_same_immediates():
    """mul24 by 2 on one side and by 3 on the other are different functions."""
    text = OPAQUE.read_text()
    three = text.replace("mul24.lo.u32 \t%r5, %r3, 2;\n\tadd.u32 \t%r5, %r5, 2;",
                         "mul24.lo.u32 \t%r5, %r3, 3;\n\tadd.u32 \t%r5, %r5, 1;")
    assert three != text
    from ptxsmt.smt.queries.functions import check_function_equivalence
    v = check_function_equivalence(read_function(text, "dv2"), read_function(three, "dv3"))
    assert v.verdict == "unknown"


def test_an_open_nan_evaluates_as_unspecified():
    ev = evaluate_function(_fn(OPAQUE, "ng"), {"p": 0x7E01})
    assert ev.returns["func_retval0"] is not None
    assert "unspecified" in json.dumps(outputs_json(ev.outputs()))
    ev = evaluate_function(_fn(OPAQUE, "ng"), {"p": 0x3C00})  # 1.0 -> -1.0
    assert ev.returns == {"func_retval0": 0xBC00}


# ---- bytes --------------------------------------------------------------------------

def test_returns_and_parameters_compare_as_bytes():
    """xr returns {x ^ 0x8000, 0} with st.param.v2.b16 from a .b32 parameter; xr2 the
    same with st.param.b32 from a .b8 [4] parameter read byte by byte."""
    r = _cli("equiv", OPAQUE, OPAQUE, "--function", "xr", "--function-b", "xr2")
    assert r.exit_code == 0, r.output
    for name in ("xr", "xr2"):
        ev = evaluate_function(_fn(OPAQUE, name), {"p": 0x12343C00})
        assert ev.returns == {"func_retval0": 0x0000BC00}


# ---- reproduce lines ------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [("f", "g"), ("dv2", "dv3")])
def test_every_printed_reproduce_line_runs_as_printed(a, b):
    path = TABLE if a == "f" else OPAQUE
    _reproduce(path, path, a, b)


# ---- the mutants the issue lists ----------------------------------------------------

def test_a_signed_byte_load_sign_extends():
    ev = evaluate_function(_fn(MEMORY, "sext"), {"q": 0x1000, "global[0x1000].b8": 0x80})
    assert ev.returns == {"r": 0xFFFFFF80}
    ev = evaluate_function(_fn(MEMORY, "sext"), {"q": 0x1000, "global[0x1000].b8": 0x7F})
    assert ev.returns == {"r": 0x7F}


def test_a_parameter_offset_is_read():
    ev = evaluate_function(_fn(MEMORY, "second"), {"s": 0x1122334455667788})
    assert ev.returns == {"r": 0x11223344}


def test_shared_memory_is_compared():
    r = _cli("equiv", MEMORY, MEMORY, "--function", "keep", "--function-b", "keep_shared")
    assert r.exit_code == 1 and "shared[" in r.stdout


@pytest.mark.parametrize("c, expect", [(0, 5), (1, 0xABCD)])
def test_a_guarded_load_runs_only_under_its_guard(c, expect):
    ev = evaluate_function(_fn(MEMORY, "guarded"),
                           {"q": 0x40, "c": c, "global[0x40].u32": 0xABCD})
    assert ev.returns == {"r": expect}


def test_a_guard_must_be_a_predicate():
    text = MEMORY.read_text().replace("@%p1 ld.global", "@%r2 ld.global")
    with pytest.raises(PtxError, match="not a declared .pred"):
        evaluate_function(read_function(text, "guarded"), {"q": 0x40, "c": 1})


# ---- memory spaces --------------------------------------------------------------------

SPACES_G, SPACES_O3 = HERE / "spaces_G.ptx", HERE / "spaces_O3.ptx"


@pytest.mark.parametrize("name", ["_Z2smPii", "_Z3locPii"])
def test_shared_and_local_reached_through_generic_addresses(name):
    """nvcc -G reaches __shared__ and a local array through cvta.shared/.local and
    generic ld/st; -O3 through ld.shared/.local: the same memories."""
    r = _cli("equiv", SPACES_G, SPACES_O3, "--function", name)
    assert r.exit_code == 0, r.output


def test_a_shared_index_off_by_one_word_is_found(tmp_path):
    wrong = tmp_path / "wrong.ptx"
    wrong.write_text(SPACES_O3.read_text().replace("add.s32 \t%r6, %r2, 4;",
                                                   "add.s32 \t%r6, %r2, 8;"))
    r = _cli("equiv", SPACES_G, wrong, "--function", "_Z2smPii")
    assert r.exit_code == 1 and "global[" in r.stdout
    _reproduce(SPACES_G, wrong, "_Z2smPii", "_Z2smPii")


@pytest.mark.parametrize("path, windows", [(SPACES_G, True), (SPACES_O3, False)])
def test_a_generic_address_from_cvta_shared_reaches_shared_memory(path, windows):
    """s[5 & 63] = 5; o[tid] = s[6]: s at shared 0x100, so s[6] is shared[0x118]."""
    inputs = {"_Z2smPii_param_0": 0x1000, "_Z2smPii_param_1": 5, "_ZZ2smPiiE1s": 0x100,
              "tid.x": 1, "shared[0x118].u32": 0xBEEF}
    if windows:
        inputs |= {"window.shared": 0x10000000000, "window.local": 0x20000000000}
    ev = evaluate_function(_fn(path, "_Z2smPii"), inputs)
    stores = {str(loc): v for loc, v in ev.stores.items()}
    assert stores == {"shared[0x114]": 5, "global[0x1004]": 0xBEEF}


def test_local_memory_is_not_compared(tmp_path):
    other = tmp_path / "other.ptx"
    text = SPACES_O3.read_text()
    assert text.count("st.global.u32 \t[%rd3], %r5;") == 1
    # a local word written after the last read: dead with the thread
    other.write_text(text.replace("st.global.u32 \t[%rd3], %r5;",
                                  "st.global.u32 \t[%rd3], %r5;\n\tst.local.u32 [%rd5], 77;"))
    r = _cli("equiv", SPACES_O3, other, "--function", "_Z3locPii")
    assert r.exit_code == 0, r.output


def _reproduce(lhs: Path, rhs: Path, a: str, b: str, unroll: int = 0) -> None:
    """Every reproduce line of the verdict's text runs as printed and gives the outputs
    the verdict shows for that side."""
    from ptxsmt.report.function import function_verdict_json, function_verdict_text
    from ptxsmt.smt.queries.functions import check_function_equivalence
    v = check_function_equivalence(_fn(lhs, a), _fn(rhs, b), unroll=unroll)
    assert v.verdict == "different"
    text, js = function_verdict_text(v, str(lhs), str(rhs)), function_verdict_json(v)
    lines = text.split("reproduce:\n")[1].splitlines()[:2]
    for line, side in zip(lines, ("lhs", "rhs")):
        words = shlex.split(line)
        assert words[:2] == ["ptxsmt", "eval"]
        r = _cli(*words[1:], "--json")
        assert r.exit_code == 0, (line, r.output)
        assert json.loads(r.stdout)["outputs"] == js["counterexample"][side]


# ---- calls ----------------------------------------------------------------------------

CALLS = HERE / "calls.ptx"  # llc-14 -O0 of max(max(x, y), 7) + 1 through a helper, ...


@pytest.mark.parametrize("x, y, expect", [(3, -5, 8), (9, 2, 10), (-1, -2, 8), (7, 8, 9)])
def test_a_call_is_inlined(x, y, expect):
    ev = evaluate_function(_fn(CALLS, "f"), {"f_param_0": x, "f_param_1": y})
    assert ev.returns == {"func_retval0": expect & 0xFFFFFFFF}


def test_arguments_are_passed_in_order():
    ev = evaluate_function(_fn(CALLS, "h"), {"h_param_0": 10, "h_param_1": 3})
    assert ev.returns == {"func_retval0": 7}  # minus(10, 3)


def test_a_call_and_its_inlined_form_are_equivalent(tmp_path):
    assert _cli("equiv", CALLS, CALLS, "--function", "f", "--function-b", "g").exit_code == 0
    wrong = tmp_path / "wrong.ptx"
    text = CALLS.read_text()
    assert text.count("max.s32") == 3  # the helper's, and g's two
    wrong.write_text(text.replace("max.s32", "min.s32", 1))  # the helper's
    assert _cli("equiv", CALLS, wrong, "--function", "f").exit_code == 1
    assert _cli("equiv", CALLS, wrong, "--function", "g").exit_code == 0
    plus2 = tmp_path / "plus2.ptx"  # another name: a run reads each file once
    plus2.write_text(text.replace("add.s32 \t%r8, %r6, 1;", "add.s32 \t%r8, %r6, 2;"))
    _reproduce(CALLS, plus2, "f", "f")


@pytest.mark.parametrize("name, message", [("rec", "recursion (rec -> rec)"),
                                           ("ind", "an indirect call")])
def test_recursion_and_indirect_calls_are_refused(name, message):
    r = _cli("equiv", CALLS, CALLS, "--function", name)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


# ---- operand spellings ------------------------------------------------------------------

LITERALS = HERE / "literals.ptx"


def test_an_integer_predicate_immediate_is_true_when_nonzero():
    assert evaluate_function(_fn(LITERALS, "pred"), {}).returns == {"r": 1 + 8 + 16}


def test_immediates_inside_vector_operands():
    """{%h1, 3} packs 3 in the high half; unpacked, %h3 = 3; stored as {3, 7}."""
    assert evaluate_function(_fn(LITERALS, "vec"), {"c": 0x1234}).returns == {"r": 0x00070003}


# ---- loops ------------------------------------------------------------------------------

LOOPS_O0, LOOPS_O2 = HERE / "loops_O0.ptx", HERE / "loops_O2.ptx"  # llc-14 of sum, nest


@pytest.mark.parametrize("path", [LOOPS_O0, LOOPS_O2], ids=["O0", "O2"])
def test_a_loop_runs_up_to_k_times(path):
    for n in range(1, 5):  # do { acc += i } while (++i < n)
        ev = evaluate_function(_fn(path, "sum"), {"sum_param_0": n}, unroll=4)
        assert ev.returns == {"func_retval0": sum(range(n))}
    with pytest.raises(PtxError, match="more than 4 times"):
        evaluate_function(_fn(path, "sum"), {"sum_param_0": 5}, unroll=4)
    # -O2 enters the outer loop in its middle (the latch is laid out above the header):
    # its first partial trip takes one of the K copies
    for n in range(3):
        for m in range(4):
            ev = evaluate_function(_fn(path, "nest"), {"nest_param_0": n, "nest_param_1": m},
                                   unroll=3)
            assert ev.returns == {"func_retval0": sum(i + j for i in range(n)
                                                      for j in range(m))}, (n, m)


def test_a_continue_is_a_branch_back():
    """odd(n): the sum of the odd i in 1..n; the head runs n + 1 times."""
    fn = _fn(HERE / "continue.ptx", "odd")
    for n in range(5):
        ev = evaluate_function(fn, {"n": n}, unroll=5)
        assert ev.returns == {"r": sum(i for i in range(1, n + 1) if i % 2)}, n
    with pytest.raises(PtxError, match="more than 5 times"):
        evaluate_function(fn, {"n": 5}, unroll=5)


@pytest.mark.parametrize("name", ["sum", "nest"])
def test_loops_are_equivalent_only_up_to_k_iterations(name):
    # without --unroll: up to DEFAULT_UNROLL iterations, and agreement there is unknown
    r = _cli("equiv", LOOPS_O0, LOOPS_O2, "--function", name)
    assert r.exit_code == 3 and "--unroll" in r.output and "equivalent up to 4" in r.output
    r = _cli("equiv", LOOPS_O0, LOOPS_O2, "--function", name, "--unroll", "3")
    assert r.exit_code == 0 and r.stdout.startswith("equivalent up to 3 iterations")
    out = json.loads(_cli("equiv", LOOPS_O0, LOOPS_O2, "--function", name, "--unroll", "3",
                          "--json").stdout)
    assert out["verdict"] == "bounded" and out["unroll"] == 3


def test_a_wrong_loop_bound_is_found_within_k_iterations(tmp_path):
    wrong = tmp_path / "le.ptx"
    text = LOOPS_O2.read_text()
    assert text.count("setp.lt.u32 \t%p1, %r7, %r5;") == 1
    wrong.write_text(text.replace("setp.lt.u32 \t%p1, %r7, %r5;", "setp.le.u32 \t%p1, %r7, %r5;"))
    r = _cli("equiv", LOOPS_O0, wrong, "--function", "sum", "--unroll", "3")
    assert r.exit_code == 1, r.output
    _reproduce(LOOPS_O0, wrong, "sum", "sum", unroll=3)
    # without --unroll: a counterexample within the default bound is a real one
    r = _cli("equiv", LOOPS_O0, wrong, "--function", "sum", "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1 and out["verdict"] == "different" and out["unroll"] == 4
    _reproduce(LOOPS_O0, wrong, "sum", "sum", unroll=4)


# ---- counterexamples a person can use ---------------------------------------------------

def test_pointers_are_distinct_aligned_buffers_and_memory_small():
    from ptxsmt.smt.queries.functions import check_function_equivalence
    ptx = Path(__file__).parent / "ptx"
    name = "_Z4pickPKiS0_Piii"
    v = check_function_equivalence(_fn(ptx / "func_sm90_O3.ptx", name),
                                   _fn(ptx / "func_sm90_O3_wrong.ptx", name))
    cex = v.counterexample
    pointers = [cex.inputs[f"{name}_param_{k}"] for k in range(3)]
    assert len(set(pointers)) == 3 and all(p % 0x1000 == 0 and p for p in pointers)
    assert all(value <= 1 for value in cex.memory.values())


def test_half_values_read_and_print_as_floats():
    """min(-x, h0) with x = -0.0 from memory and h0 = 1.5: 0.0 stored at q + 2."""
    ev = evaluate_function(_fn(LITERALS, "half"),
                           {"q": 0x100, "global[0x100]": "-0.0", "h0": "1.5"})
    assert {str(k): v for k, v in ev.stores.items()} == {"global[0x102]": 0x0000}
    r = _cli("eval", LITERALS, "--function", "half", "q=0x100", "global[0x100]=-2.0", "h0=nan")
    assert r.exit_code == 0, r.output
    assert "0x7e00 (qNaN)" in r.stdout and "0xc000 (-2.0)" in r.stdout
    assert "global[0x102] = 0x4000 (2.0)" in r.stdout


def test_a_return_value_one_path_leaves_unwritten_is_no_difference():
    partial = HERE / "partial.ptx"
    r = _cli("equiv", partial, partial, "--function", "one", "--function-b", "both")
    assert r.exit_code == 3 and "r unwritten" in r.stdout
    assert evaluate_function(_fn(partial, "one"), {"c": 5}).returns == {"r": 1}
    assert "unspecified" in json.dumps(outputs_json(
        evaluate_function(_fn(partial, "one"), {"c": 0}).outputs()))


def test_call_sequences_declaring_one_param_name_at_two_sizes_meet():
    """nvcc -G's h_relu (issue 40): `param0` is .b32 in __float2half's call sequence and
    .b8[2] in __hgt's, and the two arms of `?:` meet holding each; scoped to its braces,
    neither is read past the meet. Against -O3: equivalent; against -O3 with the compare
    made `ge`: different at -0.0, where IEEE says -0.0 > 0 is false and -0.0 >= 0 true
    (numpy's float16), so relu stores +0.0 and the mutant -0.0."""
    ptx = Path(__file__).parent / "ptx"
    debug, fast, mutant = (ptx / f"h_relu_sm90_{n}.ptx" for n in ("G", "O3", "O3_ge"))
    r = _cli("equiv", debug, fast, "--function", "h_relu")
    assert (r.exit_code, r.stdout.split(":")[0]) == (0, "equivalent"), r.output
    r = _cli("equiv", debug, mutant, "--function", "h_relu", "--json")
    assert r.exit_code == 1, r.output
    cex = json.loads(r.stdout)["counterexample"]
    x = numpy.frombuffer(int(cex["memory"]["global[0x20000]"], 16).to_bytes(2, "little"),
                         numpy.float16)  # i[tid.x], tid.x = 0
    relu, mutant_relu = (numpy.where(c, x, numpy.float16(0)).view(numpy.uint16)[0]
                         for c in (x > 0, x >= 0))
    (out,) = cex["differ"]
    assert (int(cex["lhs"][out], 16), int(cex["rhs"][out], 16)) == (relu, mutant_relu)
    assert relu != mutant_relu


# ---- what the ISA leaves undefined is assumed not to happen ----------------------------

def test_the_isa_rules_on_addresses_and_special_registers_are_assumed():
    """sm_80 reads a and b with ld.global.nc (read-only for the kernel), sm_90 with
    ld.global; the output aliasing an input, misaligned or wrapping around memory would
    tell them apart, and the ISA leaves each undefined."""
    ptx = Path(__file__).parent / "ptx"
    name = "_Z2bfPK14__nv_bfloat162S1_PS_Pj"
    r = _cli("equiv", ptx / "halfcmp_sm80_O3.ptx", ptx / "halfcmp_sm90_O3.ptx",
             "--function", name)
    assert r.exit_code == 0, r.output
    with pytest.raises(PtxError, match=r"%tid.x is in 0..1023"):
        evaluate_function(_fn(SPACES_O3, "_Z2smPii"), {
            "_Z2smPii_param_0": 0x1000, "_Z2smPii_param_1": 5, "_ZZ2smPiiE1s": 0x100,
            "tid.x": 1024})
    with pytest.raises(PtxError, match="a multiple of 4"):
        evaluate_function(_fn(MEMORY, "guarded"), {"q": 0x41, "c": 1})


# ---- reading what compilers write -------------------------------------------------------

_TABBED = """.version 7.0
.target sm_80
.address_size 64
.visible .func  (.param .b32 func_retval0) {name}(.param .b32 p, .param .b32 q)
{{
\t.reg .b32 \t%r<5>;
\tld.param.u32 \t%r1, [p];
\tld.param.u32 \t%r2, [q];
\tbra.uni\tL1;
L1:
\tbfi.b32\t%r3, {x}, {y}, 0, 8;
\tst.param.b32 \t[func_retval0+0], %r3;
\tret;
}}
"""


@pytest.mark.parametrize("x, y, code", [("%r1", "%r2", 0), ("%r2", "%r1", 1)])
def test_a_tab_alone_ends_the_opcode(tmp_path, x, y, code):
    """nvcc -G writes `bra.uni<TAB>$L__tmp158` (no space): the label is the branch's
    operand, and `bfi.b32<TAB>%r3, ...` writes %r3 (was: a crash, and the operands read
    as modifiers). bfi on swapped inputs differs where p and q differ in a bit above 7."""
    a, b = tmp_path / "a.ptx", tmp_path / "b.ptx"
    a.write_text(_TABBED.format(name="f", x="%r1", y="%r2"))
    b.write_text(_TABBED.format(name="f", x=x, y=y).replace("bfi.b32\t", "bfi.b32 \t"))
    r = _cli("equiv", a, b, "--function", "f", "--json")
    assert r.exit_code == code, r.output
    if code == 1:  # f = b with its low 8 bits from a
        cex = json.loads(r.stdout)["counterexample"]
        p, q = (int(cex["inputs"][k], 16) for k in ("p", "q"))
        assert int(cex["lhs"]["func_retval0"], 16) == q & ~0xFF | p & 0xFF
        assert int(cex["rhs"]["func_retval0"], 16) == p & ~0xFF | q & 0xFF


def test_nvcc_bfi_runs_as_the_oracle_runs_it():
    """nvcc's `bfi.b32 %r4, %r1, %r2, %r3, 8` (tests/ptx/oracle/nvcc.ptx) through ptxsmt's
    function evaluator and through tests/oracle_function.py, pos around the msb."""
    import oracle_function as of

    text = (Path(__file__).parent / "ptx" / "oracle" / "nvcc.ptx").read_text()
    ours, theirs = read_function(text, "insert"), of.read(text, "insert")
    for pos in (0, 1, 24, 25, 28, 31, 32, 33, 255, 256, 0x104, 0xFFFFFFFF):
        args = {"insert_param_0": 0x5A3, "insert_param_1": 0xF0F0F0F0, "insert_param_2": pos}
        got = evaluate_function(ours, args).returns["func_retval0"]
        assert got == of.run(theirs, args).returns["func_retval0"], hex(pos)


# ---- a branch on an open NaN ------------------------------------------------------------

OPEN_BRANCH = HERE / "open_branch.ptx"  # each function stores where a * b is a NaN
INF, ONE, TWO = 0x7F800000, 0x3F800000, 0x40000000
PRODUCT_NAN = f"open[mul.rn.f32 NaN of {INF:#018x}]"  # of 0 * inf


def test_a_branch_every_choice_of_an_open_nan_takes_alike_runs():
    """setp.num of 0 * inf (through memory) is false whatever NaN the mul gives: num runs
    without a choice of it."""
    with numpy.errstate(invalid="ignore"):
        assert numpy.isnan(numpy.float32(0) * numpy.float32(numpy.inf))
    ev = evaluate_function(_fn(OPEN_BRANCH, "num"), {"q": 0x1000, "a": 0, "b": INF})
    stores = {str(loc): v for loc, v in ev.stores.items()}
    assert stores == {"global[0x1004]": UNSPECIFIED, "global[0x1000]": 7}
    ev = evaluate_function(_fn(OPEN_BRANCH, "num"), {"q": 0x1000, "a": ONE, "b": TWO})
    assert {str(loc): v for loc, v in ev.stores.items()} == {"global[0x1004]": TWO}


@pytest.mark.parametrize("nan, stored", [(0x7FFFFFFF, 1), (0x7FC00000, 2), (0xFFC00001, 1)])
def test_a_branch_on_an_open_nans_bits_runs_only_under_a_choice_of_it(nan, stored):
    inputs = {"q": 0x1000, "a": 0, "b": INF}
    with pytest.raises(PtxError, match=r"whether line 43 \(st.global.u32 \[%rd1\], 1\) runs"):
        evaluate_function(_fn(OPEN_BRANCH, "parity"), inputs)
    ev = evaluate_function(_fn(OPEN_BRANCH, "parity"), {**inputs, PRODUCT_NAN: nan})
    assert {str(loc): v for loc, v in ev.stores.items()} == {"global[0x1000]": stored}


def _f32(bits: int) -> float:
    return float(numpy.uint32(bits).view(numpy.float32))


def test_a_difference_through_a_branch_on_an_open_nan_is_different_under_a_choice():
    """parity stores 1 or 2 where a * b is a NaN, three stores 3: different for every
    choice of that NaN, shown under the H200's (0x7fffffff, odd: 1)."""
    from ptxsmt.smt.queries.functions import check_function_equivalence
    v = check_function_equivalence(_fn(OPEN_BRANCH, "parity"), _fn(OPEN_BRANCH, "three"))
    cex = v.counterexample
    with numpy.errstate(invalid="ignore"):
        product = numpy.float32(_f32(cex.inputs["a"])) * numpy.float32(_f32(cex.inputs["b"]))
    assert v.verdict == "different" and numpy.isnan(product)
    assert [(c.name, c.value) for c in cex.chosen] == [("mul.rn.f32 NaN", 0x7FFFFFFF)]
    assert ([*cex.lhs.stores.values()], [*cex.rhs.stores.values()]) == ([1], [3])
    _reproduce(OPEN_BRANCH, OPEN_BRANCH, "parity", "three")


def test_a_difference_only_through_a_branch_on_an_open_nan_is_unknown_or_exact():
    """parity against one (1 where a * b is a NaN) differs only where that NaN's bits are
    even: unknown (exit 3); under --nan exact, different under the model's choice."""
    r = _cli("equiv", OPEN_BRANCH, OPEN_BRANCH, "--function", "parity", "--function-b",
             "one")
    assert r.exit_code == 3 and "mul.rn.f32 NaN" in r.output
    r = _cli("equiv", OPEN_BRANCH, OPEN_BRANCH, "--function", "parity", "--function-b",
             "one", "--nan", "exact", "--json")
    cex = json.loads(r.stdout)["counterexample"]
    assert r.exit_code == 1 and len(cex["open_values"]) == 1
    assert int(cex["open_values"][0]["taken_as"], 16) & 1 == 0
    assert (cex["lhs"], cex["rhs"]) == ({"global[0x10000]": "0x00000002"},
                                        {"global[0x10000]": "0x00000001"})
    r = _cli("equiv", OPEN_BRANCH, OPEN_BRANCH, "--function", "parity", "--function-b",
             "one", "--nan", "exact")
    assert "differ for this choice of them" in r.output
