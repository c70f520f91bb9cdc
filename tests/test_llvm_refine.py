"""ir_refines: PTX that LLVM's NVPTX backend wrote (llvmlite's LLVM, and llc-14 where
installed) refines its IR; a PTX with a known bug class planted (an ordered compare for
an unordered one, max.NaN for maxnum, a sign extension where the IR says zeroext) does
not, and its counterexample is checked against a plain-Python reading of the IR."""

from __future__ import annotations

import math
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import z3
from tier import THOROUGH

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.llvm.module import compile_to_ptx  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

DECLS = """
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
declare <2 x half> @llvm.minnum.v2f16(<2 x half>, <2 x half>)
declare float @llvm.maxnum.f32(float, float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
"""
FCMP = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
        "une", "uno")
FUNCTIONS = {
    "smin": "define i32 @smin(i32 %a, i32 %b) {\n%r = call i32 @llvm.smin.i32(i32 %a, i32 %b)\n"
            "ret i32 %r\n}",
    "umax": "define i32 @umax(i32 %a, i32 %b) {\n%r = call i32 @llvm.umax.i32(i32 %a, i32 %b)\n"
            "ret i32 %r\n}",
    "add8": "define i8 @add8(i8 %a, i8 %b) {\n%r = add i8 %a, %b\nret i8 %r\n}",
    "minh": "define <2 x half> @minh(<2 x half> %a, <2 x half> %b) {\n"
            "%r = call <2 x half> @llvm.minnum.v2f16(<2 x half> %a, <2 x half> %b)\n"
            "ret <2 x half> %r\n}",
    "maxf": "define float @maxf(float %a, float %b) {\n"
            "%r = call float @llvm.maxnum.f32(float %a, float %b)\nret float %r\n}",
    "pick": "define i32 @pick(i32 %a, i32 %b) {\nentry:\n%c = icmp slt i32 %a, %b\n"
            "br i1 %c, label %l, label %r\nl:\n%x = sub i32 %b, %a\nbr label %j\n"
            "r:\n%y = shl i32 %a, 1\nbr label %j\nj:\n%p = phi i32 [ %x, %l ], [ %y, %r ]\n"
            "ret i32 %p\n}",
    "tid": "define i32 @tid(i32 %a) {\n%t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
           "%r = xor i32 %t, %a\nret i32 %r\n}",
    "sel": "define i32 @sel(float %a, float %b, i32 %x, i32 %y) {\n"
           "%c = fcmp ult float %a, %b\n%r = select i1 %c, i32 %x, i32 7\nret i32 %r\n}",
    **{f"fcmp_{p}": f"define zeroext i1 @fcmp_{p}(float %a, float %b) {{\n"
                    f"%r = fcmp {p} float %a, %b\nret i1 %r\n}}" for p in FCMP},
    **{f"fcmph_{p}": f"define zeroext i1 @fcmph_{p}(half %a, half %b) {{\n"
                     f"%r = fcmp {p} half %a, %b\nret i1 %r\n}}" for p in ("une", "olt", "ueq")},
}
IR = "\n".join(FUNCTIONS.values()) + DECLS


def _llc14(ir: str, opt: str, tmp_path) -> str:
    src = tmp_path / "m.ll"
    src.write_text(ir.replace("ptr ", "i8* "))
    out = tmp_path / "m.ptx"
    subprocess.run(["llc-14", "-march=nvptx64", "-mcpu=sm_80", "-mattr=+ptx75", opt,
                    str(src), "-o", str(out)], check=True, capture_output=True)
    return out.read_text()


COMPILERS = {
    "llvmlite-O0": lambda ir, tmp: compile_to_ptx(ir, opt=0),
    "llvmlite-O2": lambda ir, tmp: compile_to_ptx(ir, opt=2),
    "llc14-O2": pytest.param(lambda ir, tmp: _llc14(ir, "-O2", tmp), marks=pytest.mark.skipif(
        shutil.which("llc-14") is None, reason="llc-14 not installed")),
    "llc14-O0": pytest.param(lambda ir, tmp: _llc14(ir, "-O0", tmp), marks=pytest.mark.skipif(
        shutil.which("llc-14") is None, reason="llc-14 not installed")),
}
# Compiles whose PTX ptxsmt models in full today (the rest may be "unknown", never
# "different").
MUST_PROVE = {"smin", "umax", "add8", "minh", "sel", "tid", "fcmp_une", "fcmp_olt"}


@pytest.mark.parametrize("compiler", list(COMPILERS.values()), ids=list(COMPILERS))
def test_llvm_compiles_refine_their_ir(compiler, tmp_path):
    ptx = compiler(IR, tmp_path)
    fns = read_ir(IR)
    verdicts = {name: ir_refines(fns[name], read_function(ptx, name)) for name in FUNCTIONS}
    wrong = {n: v for n, v in verdicts.items() if v.verdict == "different"}
    assert wrong == {}
    unproved = {n: v.reason for n, v in verdicts.items() if v.verdict != "refines"}
    assert not MUST_PROVE & set(unproved), unproved


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _fcmp_une(a: int, b: int) -> bool:
    x, y = _f32(a), _f32(b)
    return math.isnan(x) or math.isnan(y) or x != y


def test_an_ordered_compare_for_une_is_found():
    """The bug class of the issue: `fcmp une` lowered to the ordered `setp.ne`."""
    ptx = compile_to_ptx(IR)
    assert "setp.neu.f32" in ptx
    bad = ptx.replace("setp.neu.f32", "setp.ne.f32")
    r = ir_refines(read_ir(IR)["fcmp_une"], read_function(bad, "fcmp_une"))
    assert r.verdict == "different"
    a, b = r.inputs["a"], r.inputs["b"]
    assert r.ir_result == _fcmp_une(a, b) == 1  # a NaN operand: true in the IR
    assert math.isnan(_f32(a)) or math.isnan(_f32(b))
    assert r.ptx_result == 0


def test_max_nan_for_maxnum_is_found():
    ptx = compile_to_ptx(IR)
    fns = read_ir(IR)
    assert "max.f32" in ptx
    bad = ptx.replace("max.f32", "max.NaN.f32")
    r = ir_refines(fns["maxf"], read_function(bad, "maxf"))
    if r.verdict == "unknown":  # max.NaN not yet modelled on this branch
        pytest.skip(r.reason)
    assert r.verdict == "different"
    assert math.isnan(_f32(r.inputs["a"])) != math.isnan(_f32(r.inputs["b"]))


@pytest.mark.parametrize("attr,old,new,verdict", [
    ("", "cvt.u32.u16", "cvt.s32.s16", "refines"),   # upper bits of a plain i8 return: free
    ("zeroext", "", "", "refines"),
    ("zeroext", "%r1, 255", "%r1, 511", "different"),  # zeroext: they must be zero
])
def test_i8_return_is_extended_only_when_the_ir_says(attr, old, new, verdict):
    ir = f"define {attr} i8 @add8(i8 %a, i8 %b) {{\n%r = add i8 %a, %b\nret i8 %r\n}}"
    ptx = compile_to_ptx(ir)
    assert old in ptx
    r = ir_refines(read_ir(ir)["add8"], read_function(ptx.replace(old, new), "add8"))
    assert r.verdict == verdict, r
    if verdict == "different":  # the carry out of the low byte shows in bit 8
        assert (r.inputs["a"] + r.inputs["b"]) >> 8 & 1 and r.ptx_result >> 8 & 1


def test_a_poison_result_lets_the_ptx_return_anything():
    ir = "define i32 @f(i32 %a, i32 %b) {\n%r = add nsw i32 %a, %b\nret i32 %r\n}"
    ptx = compile_to_ptx(ir).replace("add.s32", "sub.s32")
    r = ir_refines(read_ir(ir)["f"], read_function(ptx, "f"))
    assert r.verdict == "different"  # sub differs on inputs that do not overflow
    a, b = (r.inputs[k] - (1 << 32) * (r.inputs[k] >> 31) for k in "ab")
    assert -(2 ** 31) <= a + b < 2 ** 31


def test_poison_frees_the_ptx_and_only_poison_does():
    """`or disjoint` is poison where the operands share a bit, so `add` refines it; a
    plain `or` it does not."""
    for flag, verdict in (("disjoint", "refines"), ("", "different")):
        ir = f"define i32 @od(i32 %a, i32 %b) {{\n%r = or {flag} i32 %a, %b\nret i32 %r\n}}"
        ptx = compile_to_ptx(ir).replace("or.b32", "add.s32")
        r = ir_refines(read_ir(ir)["od"], read_function(ptx, "od"))
        assert r.verdict == verdict, (flag, r)
        if verdict == "different":
            assert r.inputs["a"] & r.inputs["b"]


@pytest.mark.parametrize("opt", [0, 2])
def test_parameters_read_at_an_offset(opt):
    """-O2 reads lane 1 of a <2 x half> parameter as `ld.param.b16 [p+2]`, -O0 as a .b32
    split by mov; both refine, and the low lane in its place does not."""
    ir = "define half @hi(<2 x half> %v) {\n%e = extractelement <2 x half> %v, i32 1\n" \
         "ret half %e\n}"
    ptx = compile_to_ptx(ir, opt=opt)
    assert ir_refines(read_ir(ir)["hi"], read_function(ptx, "hi")).verdict == "refines"
    wrong = ptx.replace("[hi_param_0+2]", "[hi_param_0]").replace("{tmp, %rs1}", "{%rs1, tmp}")
    r = ir_refines(read_ir(ir)["hi"], read_function(wrong, "hi"))
    assert r.verdict == "different"
    assert r.inputs["v"] >> 16 != r.inputs["v"] & 0xFFFF


MEMORY = """define void @inc(ptr addrspace(1) %p, i32 %x, i64 %i) {
  %q = getelementptr i32, ptr addrspace(1) %p, i64 %i
  %v = load i32, ptr addrspace(1) %q, align 4
  %s = add i32 %v, %x
  store i32 %s, ptr addrspace(1) %p, align 4
  ret void
}
define void @gen(ptr %p, i16 %x) {
  %q = getelementptr i8, ptr %p, i64 2
  store i16 %x, ptr %q, align 2
  ret void
}
define i32 @k(ptr %p, i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  store i32 1, ptr %p, align 4
  br label %b
b:
  %v = load i32, ptr %p, align 4
  ret i32 %v
}
"""


@pytest.mark.parametrize("opt", [0, 2])
def test_memory_through_pointer_parameters(opt):
    """Global and generic pointers (PTX's global memory) compared byte by byte at the end;
    a store one byte short leaves bytes the IR wrote. Memory's arrays are slow in z3
    alone (seconds for `inc`), so bitwuzla takes over as it does for the commands."""
    ptx = compile_to_ptx(MEMORY, opt=opt)
    fns = read_ir(MEMORY)
    assert {n: ir_refines(f, read_function(ptx, n), solver="auto").verdict
            for n, f in fns.items()} == dict.fromkeys(fns, "refines")
    short = ptx.replace("st.global.b32", "st.global.b16")
    assert ir_refines(fns["inc"], read_function(short, "inc"), solver="auto").verdict == \
        "different"


# LLVM 22.1's real miscompile (#200718, docs/known-bugs.md): a float to i1 as x == 0.0,
# in fptosi/fptoui and, after the clamp, in fptosi.sat/fptoui.sat
I1_CONVERSIONS = {"fptosi__float_i1", "fptoui__float_i1", "fptosi__double_i1",
                  "fptoui__half_i1", "fptosi_sat_double_i1", "fptoui_sat_double_i1"}
# and a sign operation lowered through neg.f16 (-O0's copysign.f16: and, neg.f16, selp),
# whose NaN the ISA leaves open where copysign keeps the payload (llvm#219089's kind)
OPEN_NAN_SIGN_OPS = {"copysign__f16_"}


@pytest.mark.skipif(not THOROUGH,
                    reason="minutes: PTXSMT_PROFILE=thorough")
@pytest.mark.parametrize("opt", [0, 2])
def test_every_jit_table_function_compiled_by_llvm_refines(opt):
    """The ~330 functions of tests/test_llvm_jit.py's table, compiled by llvmlite's LLVM:
    none is "different" but the conversions to i1 LLVM 22.1 miscompiles and a sign
    operation through an open NaN (measured: 231
    refine at -O2, 232 at -O0, the rest unknown, mostly PTX instructions not yet
    modelled)."""
    import test_llvm_jit as table
    ir = "\n".join(table._function(*c) for c in table.CASES)
    fns = read_ir(ir)
    ptx = compile_to_ptx(ir, opt=opt)
    verdicts = {n: ir_refines(f, read_function(ptx, n), timeout_ms=4000).verdict
                for n, f in fns.items()}
    different = {n for n, v in verdicts.items() if v == "different"}
    assert I1_CONVERSIONS <= different <= I1_CONVERSIONS | OPEN_NAN_SIGN_OPS, different
    assert sum(v == "refines" for v in verdicts.values()) >= 200


NAN_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<5>;
\tld.param.b32 \t%r1, [f_param_0];
\tld.param.b32 \t%r2, [f_param_1];
\tRESULT
\tsetp.nan.f32 \t%p1, %r3, %r3;
\tselp.b32 \t%r4, WHEN_NAN, %r3, %p1;
\tst.param.b32 \t[func_retval0], %r4;
\tret;
}
"""


@pytest.mark.parametrize("ir_op,ptx_op,when_nan,verdict", [
    # an arithmetic NaN result is any NaN: a negative all-ones NaN is one of them
    ("fadd", "add.rn.f32 \t%r3, %r1, %r2;", "-1", "refines"),
    # ... but never a number (infinity where the sum is NaN)
    ("fadd", "add.rn.f32 \t%r3, %r1, %r2;", "0x7F800000", "different"),
    # a NaN the IR passes through (select of a parameter) keeps its bits exactly: a
    # result that differs only in which NaN it is refines up to NaN payloads (the
    # default NaN policy, docs/spec-notes.md note 14; --nan exact: test below)
    ("select", "mov.b32 \t%r3, %r1;", "-1", "refines"),
    ("select", "mov.b32 \t%r3, %r1;", "0x7F800000", "different"),
])
def test_a_nan_result_is_any_nan_and_only_where_the_ir_makes_one(ir_op, ptx_op, when_nan,
                                                                 verdict):
    """The IR's "any NaN" is a predicate on the PTX value (it must be a NaN), not a
    chosen constant: no quantifier in the query."""
    from ptxsmt.llvm import encode_function
    body = "%r = fadd float %a, %b" if ir_op == "fadd" else \
        "%c = fcmp uno float %a, %a\n%r = select i1 %c, float %a, float %a"
    ir = f"define float @f(float %a, float %b) {{\n{body}\nret float %r\n}}"
    fn = read_ir(ir)["f"]
    assert encode_function(fn).choices == []
    ptx = NAN_PTX.replace("RESULT", ptx_op).replace("WHEN_NAN", when_nan)
    r = ir_refines(fn, read_function(ptx, "f"))
    assert r.verdict == verdict, r
    if verdict == "different":
        a, b = _f32(r.inputs["a"]), _f32(r.inputs["b"])
        ir_value = a + b if ir_op == "fadd" else a
        assert math.isnan(ir_value)  # only where the IR's value is a NaN may the PTX's differ
        assert r.ptx_result == when_nan_bits(when_nan)
        if ir_op == "select":  # the IR's result is the input NaN, bit for bit
            assert r.ir_result == r.inputs["a"] != r.ptx_result
    if (ir_op, when_nan) == ("select", "-1"):
        assert r.up_to_nan_payloads and r.nan == "payload-free"
        exact = ir_refines(fn, read_function(ptx, "f"), nan="exact")
        assert (exact.verdict, exact.only_nan_payloads) == ("different", True), exact
        # the IR's result is the input NaN bit for bit, the PTX's all ones: two NaNs
        a = _f32(exact.inputs["a"])
        assert math.isnan(a) and exact.ir_result == exact.inputs["a"] != exact.ptx_result
        assert math.isnan(_f32(exact.ptx_result))
    elif verdict == "refines":
        assert not r.up_to_nan_payloads  # the PTX's NaN is the IR's any NaN


def when_nan_bits(text: str) -> int:
    return int(text, 0) & 0xFFFFFFFF


CONVERSIONS = {  # IR cast -> the conversion terms a query may hold, counted by kind
    "sitofp i64 %x to double": z3.Z3_OP_FPA_TO_FP,
    "uitofp i32 %x to float": z3.Z3_OP_FPA_TO_FP_UNSIGNED,
    "fptosi double %x to i32": z3.Z3_OP_FPA_TO_SBV,
    "fptoui float %x to i64": z3.Z3_OP_FPA_TO_UBV,
}


@pytest.mark.parametrize("cast", sorted(CONVERSIONS))
@pytest.mark.parametrize("opt", [0, 2])
def test_a_conversion_and_its_cvt_share_one_term(cast, opt):
    """The query holds the IR's conversion and the PTX's cvt as one term (the PTX's
    parameter read replaced by the IR's bits; fptosi as cvt.rzi writes it), so the solver
    never has to show two conversion circuits equal: what made convert-fp.ll's 64-bit
    conversions time out. fpext is sem.sorts.widen on both sides: no conversion at all."""
    src, dst = cast.split()[1], cast.split()[-1]
    ir = f"define {dst} @f({src} %x) {{\n%r = {cast}\nret {dst} %r\n}}\n" \
         f"define double @w(float %x) {{\n%r = fpext float %x to double\nret double %r\n}}"
    ptx = compile_to_ptx(ir, opt=opt)
    fns = read_ir(ir)
    for name, kind, most in (("f", CONVERSIONS[cast], 1), ("w", z3.Z3_OP_FPA_TO_FP, 0)):
        query = []
        r = ir_refines(fns[name], read_function(ptx, name), emit=query.extend)
        assert r.verdict == "refines", r
        seen, todo, found = set(), list(query), set()
        while todo:
            t = todo.pop()
            if t.get_id() in seen:
                continue
            seen.add(t.get_id())
            if z3.is_app_of(t, kind) and t.num_args() == 2:  # rounded (not a bits view)
                found.add(t.get_id())
            todo.extend(t.children())
        assert len(found) == most, (name, [str(q)[:300] for q in query])


DEPOT = """
.version 7.0
.target sm_80
.address_size 64
.visible .func  (.param .b32 func_retval0) ext(
	.param .align 4 .b8 ext_param_0[4],
	.param .b32 ext_param_1
)
{
	.local .align 4 .b8 	__local_depot0[4];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;
	.reg .b16 	%rs<3>;
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<6>;

	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
	ld.param.v2.u16 	{%rs1, %rs2}, [ext_param_0];
	ld.param.u32 	%r1, [ext_param_1];
	st.v2.u16 	[%SP+0], {%rs1, %rs2};
	cvt.u64.u32 	%rd1, %r1;
	and.b64  	%rd2, %rd1, 1;
	shl.b64 	%rd3, %rd2, 1;
	add.u64 	%rd4, %SP, 0;
	or.b64  	%rd5, %rd4, %rd3;
	ld.u16 	%r2, [%rd5];
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
"""


def test_an_offset_ored_into_a_local_depot_address_refines():
    """llc-14 -O0's extractelement by a variable index: the vector stored to the local
    depot, the lane's offset ORed into the depot's generic address, which is aligned as
    the depot is declared (the local window's base is: memory.WINDOW_ALIGN)."""
    ir = "define i16 @ext(<2 x i16> %a, i32 %i) {\n%r = extractelement <2 x i16> %a, i32 %i\n" \
         "ret i16 %r\n}"
    r = ir_refines(read_ir(ir)["ext"], read_function(DEPOT, "ext"))
    assert r.verdict == "refines", r
    wrong = DEPOT.replace("shl.b64 \t%rd3, %rd2, 1", "shl.b64 \t%rd3, %rd2, 2")
    assert ir_refines(read_ir(ir)["ext"], read_function(wrong, "ext")).verdict == "different"


@pytest.mark.parametrize("opt", [0, 2])
def test_a_chain_of_float_instructions_is_one_chain_of_ieee_operations(opt):
    """mul.rn.f32 then add.rn.f32 (an fmul and an fadd without `contract`): the add reads
    the mul's result as the IEEE product itself (sem.sorts.as_float; a one-lane register
    is not an Extract of all its bits), so the query holds one fp.mul and one fp.add, the
    IR's and the PTX's, and is decided at once (it timed out, fma.ll's @t1_f32); add.rz
    for add.rn is found."""
    ir = "define float @t1(float %x, float %y, float %z) {\n%a = fmul float %x, %y\n" \
         "%b = fadd float %a, %z\nret float %b\n}"
    ptx = compile_to_ptx(ir, opt=opt)
    query = []
    r = ir_refines(read_ir(ir)["t1"], read_function(ptx, "t1"), timeout_ms=10_000,
                   emit=query.extend)
    assert r.verdict == "refines", r
    seen, todo, ops = set(), list(query), []
    while todo:
        t = todo.pop()
        if t.get_id() not in seen:
            seen.add(t.get_id())
            if z3.is_app_of(t, z3.Z3_OP_FPA_MUL) or z3.is_app_of(t, z3.Z3_OP_FPA_ADD):
                ops.append(t.decl().name())
            todo.extend(t.children())
    assert sorted(ops) == ["fp.add", "fp.mul"], ops
    wrong = ptx.replace("add.rn.f32", "add.rz.f32")
    assert ir_refines(read_ir(ir)["t1"], read_function(wrong, "t1"), timeout_ms=120_000,
                      solver="auto").verdict == "different"  # a busy machine: time


def test_shared_memory_addressed_with_64_bits_in_the_ir_is_refused():
    """A load through `ptr addrspace(3)` (64-bit in nvptx64's datalayout) becomes
    `ld.shared [%rd1]`, whose address is a 32-bit offset into the shared window: the two
    memories have different address sorts, which the query cannot link (it raised z3's
    'sort mismatch', bf16-instructions.ll @test_extload_bf16x8): refused, with why."""
    from ptxsmt.llvm.errors import Unsupported
    ir = "define i32 @ld(ptr addrspace(3) %p) {\n%v = load i32, ptr addrspace(3) %p\n" \
         "ret i32 %v\n}"
    ptx = compile_to_ptx(ir, opt=2)
    assert "ld.shared" in ptx
    with pytest.raises(Unsupported, match="64-bit in the IR and 32-bit in PTX shared"):
        ir_refines(read_ir(ir)["ld"], read_function(ptx, "ld"))


FMUL_FADD = "define float @t1(float %x, float %y, float %z) {\n%a = fmulFLAG float %x, %y\n" \
            "%b = faddFLAG float %a, %z\nret float %b\n}"
FMULADD = "declare float @llvm.fmuladd.f32(float, float, float)\n" \
          "define float @t1(float %x, float %y, float %z) {\n" \
          "%b = call float @llvm.fmuladd.f32(float %x, float %y, float %z)\nret float %b\n}"


@pytest.mark.parametrize("ir,verdict", [(FMUL_FADD.replace("FLAG", ""), "different"),
                                        (FMUL_FADD.replace("FLAG", " contract"), "refines"),
                                        (FMULADD, "refines")])
def test_plain_mul_and_add_refine_only_ir_that_lets_them_fuse(ir, verdict):
    """PTX `mul.f32; add.f32` (no rounding modifier: ptxas may fuse them, Spec notes 13)
    refines an fmul and an fadd only where the IR lets them fuse too (`contract` on both,
    or llvm.fmuladd); for plain IR the fused result is a counterexample."""
    ptx = compile_to_ptx(FMUL_FADD.replace("FLAG", ""), opt=2)
    loose = ptx.replace("mul.rn.f32", "mul.f32").replace("add.rn.f32", "add.f32")
    assert "mul.f32" in loose and "add.f32" in loose
    r = ir_refines(read_ir(ir)["t1"], read_function(loose, "t1"), timeout_ms=120_000,
                   solver="auto")
    assert r.verdict == verdict, r


FAST_MIN = Path(__file__).parent / "ptx" / "llvm" / "fast_min.ll"


@pytest.mark.parametrize("flags,op,verdict", [
    ("fast", "min.f32", "refines"),        # llc-14's own lowering
    ("nnan nsz", "min.f32", "refines"),    # the two flags it rests on
    ("nnan", "min.f32", "different"),      # min(-0.0, +0.0) is -0.0; the IR says +0.0
    ("nsz", "min.f32", "different"),       # min(x, NaN) is x; the IR says NaN
    ("fast", "max.f32", "different"),      # wrong on numbers, whatever the flags
])
def test_fast_math_min_lowering_refines_only_with_its_flags(flags, op, verdict):
    """`fcmp olt` + `select` lowered to min.f32: a false `different` at (-0.0, +0.0)
    until nsz let a zero result be either zero."""
    ir = FAST_MIN.read_text().replace(" fast ", f" {flags} ")
    ptx = FAST_MIN.with_name("fast_min_llc14_O2.ptx").read_text().replace("min.f32", op)
    r = ir_refines(read_ir(ir)["f"], read_function(ptx, "f"))
    assert r.verdict == verdict, r
    if verdict == "refines":
        return
    a, b = _f32(r.inputs["a"]), _f32(r.inputs["b"])
    ir_value = a if a < b else b  # fcmp olt; select
    if "nnan" in flags:
        assert not (math.isnan(a) or math.isnan(b))
    if op == "max.f32":  # two different numbers, not two zeros of different signs
        assert a != b and _f32(r.ir_result) == ir_value
    elif "nsz" in flags:
        assert math.isnan(a) != math.isnan(b)
    else:
        assert a == b == 0 and r.ir_result == r.inputs["b"] != r.ptx_result


SAT = Path(__file__).parent / "ptx" / "llvm" / "sat.ll"
SAT_OPS = {"sadd": (lambda a, b: a + b, True), "uadd": (lambda a, b: a + b, False),
           "ssub": (lambda a, b: a - b, True), "usub": (lambda a, b: a - b, False)}
SAT_TYPES = {"i8": (8, 1), "i16": (16, 1), "i32": (32, 1), "i64": (64, 1), "v2i16": (16, 2)}


def _saturated(op: str, lanes_of: str, a: int, b: int) -> int:
    """LangRef {s,u}{add,sub}.sat in exact integers: the sum or difference clamped to the
    type's range, lane by lane (lane 0 in the low bits)."""
    f, signed = SAT_OPS[op]
    w, lanes = SAT_TYPES[lanes_of]
    out = 0
    for i in range(lanes):
        x, y = (v >> (w * i) & ((1 << w) - 1) for v in (a, b))
        if signed:
            x, y = x - (x >> (w - 1) << w), y - (y >> (w - 1) << w)
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        out |= (min(max(f(x, y), lo), hi) & ((1 << w) - 1)) << (w * i)
    return out


def _flip_first(ptx: str) -> str:
    """The first add/sub of the function's body made the other one."""
    i = min(j for j in (ptx.find("\tadd."), ptx.find("\tsub.")) if j >= 0)
    op = ptx[i + 1:i + 4]
    return ptx[:i + 1] + {"add": "sub", "sub": "add"}[op] + ptx[i + 4:]


@pytest.mark.parametrize("name", [f"{op}_{t}" for op in SAT_OPS for t in SAT_TYPES])
def test_saturating_arithmetic_refines_llc14_and_a_flipped_op_does_not(name):
    ir = read_ir(SAT.read_text())[name]
    ptx = SAT.with_name("sat_llc14_O2.ptx").read_text()
    start = ptx.index(f" {name}(")
    body = ptx[start:ptx.index("\n}", start)]
    assert ir_refines(ir, read_function(ptx, name)).verdict == "refines"
    r = ir_refines(ir, read_function(ptx.replace(body, _flip_first(body)), name))
    assert r.verdict == "different", r
    op, t = name.split("_")
    w, lanes = SAT_TYPES[t]
    mask = (1 << (w * lanes)) - 1
    want = _saturated(op, t, r.inputs["a"], r.inputs["b"])
    assert r.ir_result & mask == want and r.ptx_result & mask != want


SIGN_OP_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .bTYPE func_retval0) f(.param .bTYPE f_param_0)
{
\t.reg .bTYPE \t%r<3>;
\tld.param.bTYPE \t%r1, [f_param_0];
\tOP;
\tst.param.bTYPE \t[func_retval0], %r2;
\tret;
}
"""
SIGN_OPS = {  # IR -> (its type's bits, its value from the input's bits, as plain Python)
    "fneg float": (32, lambda x: x ^ 1 << 31),
    "call float @llvm.fabs.f32": (32, lambda x: x & ~(1 << 31)),
    "call double @llvm.fabs.f64": (64, lambda x: x & ~(1 << 63)),
}


def _sign_op(ir_op: str, ptx_op: str, nan: str):
    width, _ = SIGN_OPS[ir_op]
    t = {32: "float", 64: "double"}[width]
    call = ir_op.startswith("call")
    ir = (f"declare {t} @llvm.fabs.f{width}({t})\n" if call else "") + \
        f"define {t} @f({t} %x) {{\n%r = {ir_op}{'(' + t + ' %x)' if call else ' %x'}\n" \
        f"ret {t} %r\n}}"
    ptx = SIGN_OP_PTX.replace("TYPE", str(width)).replace(
        "OP", ptx_op if "%r" in ptx_op else f"{ptx_op} \t%r2, %r1")
    return ir_refines(read_ir(ir)["f"], read_function(ptx, "f"), nan=nan), width


def _is_nan_bits(bits: int, width: int) -> bool:
    exponent = {32: 8, 64: 11}[width]
    mantissa = width - 1 - exponent
    return bits >> mantissa & (1 << exponent) - 1 == (1 << exponent) - 1 and \
        bits & (1 << mantissa) - 1 != 0


@pytest.mark.parametrize("ir_op,ptx_op", [("fneg float", "neg.f32"),
                                          ("call float @llvm.fabs.f32", "abs.f32")])
def test_a_sign_op_lowered_to_an_open_nan_does_not_refine_bit_for_bit(ir_op, ptx_op):
    """llvm#219089: LLVM's fneg/fabs touch the sign bit only; neg.f32/abs.f32 "yield an
    unspecified NaN". The PTX may return a NaN the IR forbids: not a refinement (the
    PTX's open NaN is the target's choice, held as the model made it in replay), said as
    resting on the ISA's open NaN. Payload-free it refines; xor/and of the sign refine."""
    r, width = _sign_op(ir_op, ptx_op, "exact")
    assert (r.verdict, r.only_nan_payloads, r.open_nan) == ("different", True, True), r
    x = r.inputs["x"]
    assert _is_nan_bits(x, width) and r.ir_result == SIGN_OPS[ir_op][1](x)  # plain Python
    assert _is_nan_bits(r.ptx_result, width) and r.ptx_result != r.ir_result
    from ptxsmt.report.llvm import tv_line
    from ptxsmt.smt.queries.refinement import Validated
    line = tv_line(Validated("f", r))
    assert line.startswith("@f: different where the PTX ISA leaves a NaN open (") and \
        f"PTX may give {r.ptx_result:#x}: the ISA leaves that NaN open" in line
    assert _sign_op(ir_op, ptx_op, "payload-free")[0].verdict == "refines"
    # the fix's lowering: the sign bit alone
    bits = "xor.b32 \t%r2, %r1, -2147483648" if ir_op.startswith("fneg") else \
        "and.b32 \t%r2, %r1, 2147483647"
    fixed = _sign_op(ir_op, bits, "exact")[0]
    assert fixed.verdict == "refines", fixed


def test_abs_f64_passes_a_nan_on_with_its_sign_a_definite_difference():
    """abs.f64: "NaN input is passed through unchanged" (sign kept): fabs clears the sign,
    so the difference is no open NaN's (`open_nan` false)."""
    r, width = _sign_op("call double @llvm.fabs.f64", "abs.f64", "exact")
    assert (r.verdict, r.only_nan_payloads, r.open_nan) == ("different", True, False), r
    x = r.inputs["x"]
    assert _is_nan_bits(x, 64) and x >> 63 and r.ptx_result == x  # unchanged
    assert r.ir_result == x & ~(1 << 63)


def test_an_open_nan_the_ir_shares_stays_the_irs_choice_in_replay():
    """llvm.nvvm.fmax.f means max.f32, whose NaN of two NaNs is open: the IR's choice
    too. A PTX that returns 0x7fffffff there returns a NaN the IR allows: never
    `different` (the replay leaves that NaN free; unproved, so unknown). Infinity there
    is no NaN at all: `different`, and not through an open NaN."""
    ir = "declare float @llvm.nvvm.fmax.f(float, float)\ndefine float @f(float %a, float %b) " \
         "{\n%r = call float @llvm.nvvm.fmax.f(float %a, float %b)\nret float %r\n}"
    fn = read_ir(ir)["f"]

    def with_nan(bits: str):
        ptx = NAN_PTX.replace("RESULT", "max.f32 \t%r3, %r1, %r2;").replace("WHEN_NAN", bits)
        return ir_refines(fn, read_function(ptx, "f"), nan="exact")
    assert with_nan("0x7FFFFFFF").verdict in ("refines", "unknown")
    r = with_nan("0x7F800000")
    assert (r.verdict, r.open_nan, r.ptx_result) == ("different", False, 0x7F800000), r
    assert math.isnan(_f32(r.inputs["a"])) and math.isnan(_f32(r.inputs["b"]))
