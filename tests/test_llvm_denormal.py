"""The denormal modes ("denormal-fp-math", "denormal-fp-math-f32") against the LangRef:
an input denormal of a floating-point operation is read as a zero (preserve-sign: of its
sign; positive-zero: +0.0), an output denormal may be flushed (a choice), and fneg, fabs,
copysign, select and memory never flush. The host JIT cannot flush, so it checks the
functions on inputs without denormals; denormal inputs and results are checked against
values written out by hand (Python floats)."""

from __future__ import annotations

import math
import struct

import pytest

pytest.importorskip("llvmlite")
pytest.importorskip("ml_dtypes")

from llvm_host import run_jit  # noqa: E402
from test_llvm_jit import _function, _inputs, disagreement, evaluate  # noqa: E402
from test_llvm_sem import outcome, possible  # noqa: E402

from ptxsmt.llvm import Unsupported, encode_function, read_ir  # noqa: E402


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


DENORM = 0x00000003  # 3 * 2^-149, a float denormal
NEG_DENORM = 0x80000003
MIN_NORMAL = 0x00800000  # 2^-126
HALF_MIN = 0x00400000  # 2^-127: MIN_NORMAL * 0.5, a denormal result
PS, PZ = "preserve-sign", "positive-zero"


def encode(body: str, params: str, ret: str, attrs: str):
    ir = f"define {ret} @f({params}) #0 {{\n{body}\n}}\nattributes #0 = {{ {attrs} }}\n"
    return encode_function(read_ir(ir)["f"])


def f32_mode(mode: str) -> str:
    return f'"denormal-fp-math-f32"="{mode}"'


def unary(op: str, mode: str, t: str = "float", rt: str | None = None,
          attr: str = "denormal-fp-math-f32"):
    """`op` (a line computing %y from the float %x) between bitcasts of integers."""
    it, rt = {"float": "i32", "double": "i64"}[t], rt or t
    ri = {"float": "i32", "double": "i64", "i1": "i1"}[rt]
    out = "ret i1 %y" if rt == "i1" else f"%r = bitcast {rt} %y to {ri}\nret {ri} %r"
    return encode(f"%x = bitcast {it} %a to {t}\n{op}\n{out}", f"{it} %a", ri,
                  f'"{attr}"="{mode}"')


def values(enc, **inputs) -> set[int]:
    ub, poison, bits = outcome(enc, **inputs)
    assert not ub and not poison
    return possible(bits)


# (line, input, {mode: the values LangRef allows}) on float, by hand:
# an input denormal is a zero of its sign (preserve-sign) or +0.0 (positive-zero); a
# denormal result may stay or be flushed.
CASES = [
    # fadd d, 0.0: d (ieee); the input flushed: 0.0 + 0.0 (signs: -0 + +0 = +0)
    ("%y = fadd float %x, 0.0", DENORM, {"ieee": {DENORM}, PS: {0}, PZ: {0},
                                          f"{PS},ieee": {DENORM, 0}, f"ieee,{PS}": {0}}),
    ("%y = fadd float %x, -0.0", NEG_DENORM, {"ieee": {NEG_DENORM}, PS: {0x80000000}, PZ: {0},
                                               f"ieee,{PS}": {0x80000000}}),
    # 2^-126 * 0.5 = 2^-127: a denormal result, which may be flushed
    ("%y = fmul float %x, 0.5", MIN_NORMAL, {"ieee": {HALF_MIN}, PS: {HALF_MIN, 0},
                                             PZ: {HALF_MIN, 0}, f"ieee,{PS}": {HALF_MIN}}),
    ("%y = fmul float %x, -0.5", MIN_NORMAL, {"ieee": {HALF_MIN | 1 << 31},
                                              PS: {HALF_MIN | 1 << 31, 0x80000000},
                                              PZ: {HALF_MIN | 1 << 31, 0}}),
    # floor(-d) = -1.0, but floor(-0.0) = -0.0
    ("%y = call float @llvm.floor.f32(float %x)", NEG_DENORM,
     {"ieee": {f32(-1.0)}, PS: {0x80000000}, PZ: {0}}),
    ("%y = call float @llvm.ceil.f32(float %x)", DENORM, {"ieee": {f32(1.0)}, PS: {0}}),
    ("%y = call float @llvm.sqrt.f32(float %x)", DENORM,
     {"ieee": {f32(math.sqrt(3 * 2.0 ** -149))}, PS: {0}}),  # exact in a double
    ("%y = call float @llvm.maxnum.f32(float %x, float -1.0)", DENORM,
     {"ieee": {DENORM}, PS: {0}}),
    ("%y = call float @llvm.fma.f32(float %x, float 1.0, float 0.0)", DENORM,
     {"ieee": {DENORM}, PS: {0}, f"{PS},ieee": {DENORM, 0}}),
    ("%y = fdiv float %x, 2.0", f32(2.0 ** -126 * 1.5),  # 1.5 * 2^-127: denormal out
     {"ieee": {0x00600000}, PS: {0x00600000, 0}}),
    # bit operations and moves never flush
    ("%y = fneg float %x", DENORM, {"ieee": {NEG_DENORM}, PS: {NEG_DENORM}, PZ: {NEG_DENORM}}),
    ("%y = call float @llvm.fabs.f32(float %x)", NEG_DENORM, {PS: {DENORM}}),
    ("%y = call float @llvm.copysign.f32(float %x, float -1.0)", DENORM, {PS: {NEG_DENORM}}),
    ("%y = select i1 true, float %x, float 1.0", DENORM, {PS: {DENORM}}),
]


@pytest.mark.parametrize("line,x,mode,want", [(line, x, m, w) for line, x, modes in CASES
                                              for m, w in modes.items()])
def test_flushing_as_the_langref_says(line, x, mode, want):
    assert values(unary(line, mode), a=x) == want


def test_a_value_is_flushed_or_not_once_for_all_its_uses():
    """One operation, one result: two bitcasts of a maybe-flushed value agree."""
    enc = encode("%x = bitcast i32 %a to float\n%y = fmul float %x, 0.5\n"
                 "%p = bitcast float %y to i32\n%q = bitcast float %y to i32\n"
                 "%d = sub i32 %p, %q\nret i32 %d", "i32 %a", "i32", f32_mode(PS))
    assert values(enc, a=MIN_NORMAL) == {0}
    big = float(2 ** 126)
    enc = unary(f"%z = fmul float %x, 0.5\n%p = fmul float %z, {big!r}\n"
                f"%q = fmul float %z, {big!r}\n%y = fsub float %p, %q", f"{PS},ieee")
    assert values(enc, a=MIN_NORMAL) == {0}  # 0.5 - 0.5 or 0.0 - 0.0, never 0.5 - 0.0


@pytest.mark.parametrize("mode,want", [(PS, {0}), (f"{PS},ieee", {f32(0.5), 0})])
def test_a_later_operation_reads_a_maybe_flushed_value_by_its_input_mode(mode, want):
    """2^-127 * 2^126: 0.5 from the denormal, 0.0 from its flushed zero; where inputs
    flush too, the denormal is read as that zero either way."""
    enc = unary(f"%z = fmul float %x, 0.5\n%y = fmul float %z, {float(2 ** 126)!r}", mode)
    assert values(enc, a=MIN_NORMAL) == want


@pytest.mark.parametrize("line", [
    "%s = select i1 true, float %z, float 1.0\n%y = fneg float %s",
    "%v = insertelement <2 x float> poison, float %z, i32 1\n"
    "%y = extractelement <2 x float> %v, i32 1",
    "%y = call float @g(float %x)",
])
def test_moves_and_calls_keep_both_values(line):
    ir = ("define float @g(float %a) #0 {\n%r = fmul float %a, 0.5\nret float %r\n}\n"
          "define i32 @f(i32 %a) #0 {\n%x = bitcast i32 %a to float\n"
          f"%z = fmul float %x, 0.5\n{line}\n%r = bitcast float %y to i32\nret i32 %r\n}}\n"
          f"attributes #0 = {{ {f32_mode(PS)} }}\n")
    enc = encode_function(read_ir(ir)["f"])
    got = values(enc, a=MIN_NORMAL)
    assert got == ({HALF_MIN | 1 << 31, 1 << 31} if "fneg" in line else {HALF_MIN, 0})


@pytest.mark.parametrize("mode,want", [("ieee", 0), (PS, 1), (PZ, 1), (f"{PS},ieee", 0)])
def test_a_compare_reads_denormal_inputs_as_zero(mode, want):
    """fcmp is a floating-point operation: oeq d, 0.0 holds where inputs are flushed."""
    enc = unary("%y = fcmp oeq float %x, 0.0", mode, rt="i1")
    assert values(enc, a=DENORM) == {want}


def test_the_f32_attribute_overrides_and_other_types_follow_the_general_one():
    """"denormal-fp-math-f32": "Same as denormal-fp-math, but only controls the behavior of
    the 32-bit float type ... If both are present, this overrides denormal-fp-math"."""
    d = 1  # the least double denormal
    both = f'"denormal-fp-math"="{PS}" "denormal-fp-math-f32"="ieee"'
    for attrs, want_f, want_d in ((f32_mode(PS), {0}, {d}),
                                  (f'"denormal-fp-math"="{PS}"', {0}, {0}),
                                  (both, {DENORM}, {0})):
        encf = encode("%x = bitcast i32 %a to float\n%y = fadd float %x, 0.0\n"
                      "%r = bitcast float %y to i32\nret i32 %r", "i32 %a", "i32", attrs)
        encd = encode("%x = bitcast i64 %a to double\n%y = fadd double %x, 0.0\n"
                      "%r = bitcast double %y to i64\nret i64 %r", "i64 %a", "i64", attrs)
        assert (values(encf, a=DENORM), values(encd, a=d)) == (want_f, want_d), attrs


def test_casts_flush_by_the_mode_of_their_source_and_their_result():
    # fptrunc: a double input (general mode: ieee) rounding to a float denormal (f32: may flush)
    enc = unary("%y = fptrunc double %x to float", PS, t="double", rt="float")
    assert values(enc, a=f64(2.0 ** -127)) == {HALF_MIN, 0}
    # fpext: a float denormal input is read as a zero
    enc = unary("%y = fpext float %x to double", PS, rt="double")
    assert values(enc, a=NEG_DENORM) == {f64(-0.0)}
    enc = unary("%y = fpext float %x to double", "ieee", rt="double")
    assert values(enc, a=DENORM) == {f64(3 * 2.0 ** -149)}


def test_contraction_reads_its_multiplicands_flushed():
    enc = encode("%x = bitcast i32 %a to float\n%m = fmul contract float %x, 4.0\n"
                 "%s = fadd contract float %m, 0.0\n%r = bitcast float %s to i32\nret i32 %r",
                 "i32 %a", "i32", f32_mode(PS))
    assert values(enc, a=DENORM) == {0}


@pytest.mark.parametrize("value", ["dynamic", "preserve-sign,dynamic", "dynamic,ieee"])
def test_modes_ptxsmt_does_not_model_are_refused(value):
    with pytest.raises(Unsupported) as e:
        unary("%y = fadd float %x, 0.0", value)
    assert e.value.reason == "fp environment"


# ---- the host JIT on inputs without denormals -----------------------------------------

JIT_CASES = [(f"{op}_ftz", ["float", "float"], "float", f"{op} float %a0, %a1")
             for op in ("fadd", "fsub", "fmul", "fdiv")] + [
    ("fcmp_olt_ftz", ["float", "float"], "i1", "fcmp olt float %a0, %a1"),
    ("fptrunc_ftz", ["double"], "float", "fptrunc double %a0 to float"),
    ("fpext_ftz", ["float"], "double", "fpext float %a0 to double"),
    ("fptosi_ftz", ["float"], "i32", "fptosi float %a0 to i32"),
    ("fma_ftz", ["float", "float", "float"], "float",
     "call float @llvm.fma.f32(float %a0, float %a1, float %a2)"),
    ("sqrt_ftz", ["float"], "float", "call float @llvm.sqrt.f32(float %a0)"),
    ("minnum_ftz", ["float", "float"], "float",
     "call float @llvm.minnum.f32(float %a0, float %a1)"),
    ("floor_ftz", ["float"], "float", "call float @llvm.floor.f32(float %a0)"),
    ("round_ftz", ["float"], "float", "call float @llvm.round.f32(float %a0)"),
]
WIDTHS = {"float": 32, "double": 64, "i1": 8, "i32": 32}


def _denormal(bits: int, t: str) -> bool:
    e, m = {"float": (8, 23), "double": (11, 52)}[t]
    return (bits >> m) & ((1 << e) - 1) == 0 and bits & ((1 << m) - 1) != 0


def test_terms_agree_with_llvm_on_inputs_without_denormals():
    """Every function in "preserve-sign" mode: LLVM's (unflushed) answer must be one the
    terms allow wherever no input is a denormal (a denormal result may stay)."""
    ir = "\n".join(_function(*c).replace(") {", ") #0 {", 1) for c in JIT_CASES)
    ir += f"\nattributes #0 = {{ {f32_mode(PS)} }}\n"
    module = read_ir(ir)
    calls, expected = {}, {}
    for name, args, ret, _ in JIT_CASES:
        enc = encode_function(module[name])
        rows = [(a, evaluate(enc, {f"x{i}": v for i, v in enumerate(a)}, WIDTHS[ret]))
                for a in _inputs(name, args)
                if not any(_denormal(v, t) for v, t in zip(a, args, strict=True))]
        rows = [(a, e) for a, e in rows if e is not None]
        assert rows, name
        expected[name] = rows
        calls[name] = (WIDTHS[ret], [WIDTHS[a] for a in args], 0, [a for a, _ in rows])
    results = run_jit(ir, calls)
    wrong = [f"@{name} {[hex(a) for a in args]}: LLVM {got:#x}, {why}"
             for name, rows in expected.items()
             for (args, e), got in zip(rows, results[name], strict=True)
             if (why := disagreement(e, got))]
    assert not wrong, wrong[:5]


# ---- refinement: the PTX LLVM writes for a flushing function, and planted bugs ----------

FTZ_IR = """define float @f(float %a, float %b) #0 {
  %r = fadd float %a, %b
  ret float %r
}
attributes #0 = { MODE }
"""
FTZ_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{
	.reg .f32 	%f<4>;
	ld.param.f32 	%f1, [f_param_0];
	ld.param.f32 	%f2, [f_param_1];
	ADD 	%f3, %f1, %f2;
	st.param.f32 	[func_retval0+0], %f3;
	ret;
}
"""


@pytest.mark.parametrize("mode,add,verdict", [
    (f32_mode(PS), "add.rn.ftz.f32", "refines"),  # what LLVM writes
    (f32_mode(PS), "add.rn.f32", "different"),  # inputs must be read as zeros
    (f32_mode(f"{PS},ieee"), "add.rn.f32", "refines"),  # flushing results is optional
    (f32_mode(f"{PS},ieee"), "add.rn.ftz.f32", "different"),  # but not inputs
    (f32_mode(PZ), "add.rn.ftz.f32", "different"),  # -d + -0.0: the IR's zero is +0.0
    (f32_mode("ieee"), "add.rn.ftz.f32", "different"),
])
def test_ftz_ptx_refines_only_a_flushing_function(mode, add, verdict):
    from ptxsmt.function import read_function
    from ptxsmt.smt.queries.refinement import ir_refines
    ir = read_ir(FTZ_IR.replace("MODE", mode))["f"]
    r = ir_refines(ir, read_function(FTZ_PTX.replace("ADD", add), "f"), timeout_ms=20_000)
    assert r.verdict == verdict, r


# ---- `denormal_fpenv`, the attribute that replaced the strings (LLVM after 22) ----------

# the new spelling of each mode CASES uses, from LLVM's parser tests: OUTPUT|INPUT, one
# kind for both; `float:` for what "denormal-fp-math-f32" said
FPENV = {"ieee": "ieee", PS: "preservesign", PZ: "positivezero",
         f"{PS},ieee": "preservesign|ieee", f"ieee,{PS}": "ieee|preservesign"}


def fpenv_unary(op: str, fpenv: str):
    ir = ("define i32 @f(i32 %a) denormal_fpenv(FPENV) {\n%x = bitcast i32 %a to float\n"
          f"{op}\n%r = bitcast float %y to i32\nret i32 %r\n}}\n").replace("FPENV", fpenv)
    return encode_function(read_ir(ir)["f"])


@pytest.mark.parametrize("line,x,mode,want", [
    (line, x, m, w) for line, x, modes in CASES for m, w in modes.items() if m in FPENV])
@pytest.mark.parametrize("section", ["", "float: "])
def test_denormal_fpenv_flushes_as_the_strings_did(line, x, mode, want, section):
    """The hand-written values of CASES, the mode now given as `denormal_fpenv(...)`:
    the general mode and the float section alike govern float."""
    assert values(fpenv_unary(line, section + FPENV[mode]), a=x) == want


@pytest.mark.parametrize("fpenv,want_f,want_d", [
    ("preservesign", {0}, {0}),
    ("float: preservesign", {0}, {1}),
    ("preservesign, float: ieee", {DENORM}, {0}),
    ("ieee|ieee, float: positivezero|ieee", {DENORM, 0}, {1}),  # the result may flush
])
def test_denormal_fpenv_float_section_overrides_for_float_only(fpenv, want_f, want_d):
    """fadd d, 0.0 on float and double (d the least denormal of each)."""
    ir = ("define i32 @f(i32 %a) denormal_fpenv(E) {\n%x = bitcast i32 %a to float\n"
          "%y = fadd float %x, 0.0\n%r = bitcast float %y to i32\nret i32 %r\n}\n"
          "define i64 @g(i64 %a) denormal_fpenv(E) {\n%x = bitcast i64 %a to double\n"
          "%y = fadd double %x, 0.0\n%r = bitcast double %y to i64\nret i64 %r\n}\n"
          ).replace("E", fpenv)
    module = read_ir(ir)
    assert values(encode_function(module["f"]), a=DENORM) == want_f
    assert values(encode_function(module["g"]), a=1) == want_d


def test_denormal_fpenv_in_an_attribute_group_and_dynamic_refused():
    ir = ("define float @f(float %a) #0 {\n%r = fadd float %a, 0.0\nret float %r\n}\n"
          "attributes #0 = { nounwind denormal_fpenv(dynamic) }\n")
    with pytest.raises(Unsupported) as e:
        encode_function(read_ir(ir)["f"])
    assert e.value.reason == "fp environment"


@pytest.mark.parametrize("attr,where", [
    ("denormal_fpenv(preservesign,preservesign)", "1:42"),  # the strings' comma: not a kind
    ("denormal_fpenv(invalid)", "1:42"),
    ("denormal_fpenv(preservesign|ieee float: ieee)", "1:42"),
    ("denormal_fpenv(preservesign {", "1:27"),
])
def test_a_malformed_denormal_fpenv_is_one_line_naming_its_place(attr, where):
    from ptxsmt.llvm import LlvmError
    with pytest.raises(LlvmError) as e:
        read_ir(f"define float @f(float %a) {attr} {{\nret float %a\n}}\n")
    assert str(e.value).startswith(f"LLVM IR: {where}: error: ") and "\n" not in str(e.value)


@pytest.mark.parametrize("fpenv,add,verdict", [
    ("float: preservesign", "add.rn.ftz.f32", "refines"),
    ("float: preservesign", "add.rn.f32", "different"),
    ("preservesign|ieee", "add.rn.f32", "refines"),
    ("preservesign|ieee", "add.rn.ftz.f32", "different"),
])
def test_ftz_ptx_against_denormal_fpenv(fpenv, add, verdict):
    from ptxsmt.function import read_function
    from ptxsmt.smt.queries.refinement import ir_refines
    ir = read_ir(FTZ_IR.replace("MODE", f"denormal_fpenv({fpenv})"))["f"]
    r = ir_refines(ir, read_function(FTZ_PTX.replace("ADD", add), "f"), timeout_ms=20_000)
    assert r.verdict == verdict, r


def test_the_nvptx_backend_reads_denormal_fpenv():
    """llvmlite's LLVM 22 reads the strings only: the rewrite reaches it too (ftz PTX)."""
    from ptxsmt.llvm.module import compile_to_ptx
    ptx = compile_to_ptx(FTZ_IR.replace("MODE", "denormal_fpenv(preservesign)"))
    assert "add.rn.ftz.f32" in ptx
