"""Structs and arrays: extractvalue/insertvalue (their values against LLVM's JIT are in
test_llvm_jit.py's "aggregates"), and the NVPTX calling convention for them: an
aggregate parameter or return is a `.param .align A .b8 NAME[SIZE]` array with each field
at its datalayout offset (padding and a field's bits above its width free). What the
NVPTX backends of llc-14 and of llvmlite's LLVM write refines the IR; a PTX with a field
at the wrong offset, fields swapped, or a sign extension for a zero extension does not,
and the counterexample is checked against a plain-Python reading of the IR."""

from __future__ import annotations

import shutil
import subprocess

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.llvm.errors import Unsupported  # noqa: E402
from ptxsmt.llvm.module import compile_to_ptx  # noqa: E402
from ptxsmt.llvm.reader import aggregate_constant, aggregate_indices  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

IR = """
%S16 = type { i16, i16 }
%S = type { i8, i32 }
%T = type { i1, i16, float }
%U = type { <2 x half>, i64, [2 x i8] }
define %S16 @split(i32 %in) {
  %low = trunc i32 %in to i16
  %high32 = lshr i32 %in, 16
  %high = trunc i32 %high32 to i16
  %s1 = insertvalue %S16 poison, i16 %low, 0
  %s = insertvalue %S16 %s1, i16 %high, 1
  ret %S16 %s
}
define %S @pair(i8 %a, i32 %b) {
  %s1 = insertvalue %S poison, i8 %a, 0
  %s = insertvalue %S %s1, i32 %b, 1
  ret %S %s
}
define i32 @sum(%S %s) {
  %a = extractvalue %S %s, 0
  %b = extractvalue %S %s, 1
  %z = zext i8 %a to i32
  %r = add i32 %z, %b
  ret i32 %r
}
define %T @flip(%T %t) {
  %a = extractvalue %T %t, 0
  %n = xor i1 %a, true
  %r = insertvalue %T %t, i1 %n, 0
  ret %T %r
}
define %U @pass(%U %u) {
  ret %U %u
}
define [3 x i32] @rot([3 x i32] %a) {
  %x = extractvalue [3 x i32] %a, 2
  %r = insertvalue [3 x i32] %a, i32 %x, 0
  ret [3 x i32] %r
}
define { i32, i1 } @sovf(i32 %a, i32 %b) {
  %r = call { i32, i1 } @llvm.sadd.with.overflow.i32(i32 %a, i32 %b)
  ret { i32, i1 } %r
}
define i32 @uovf(i16 %a, i16 %b) {
  %r = call { i16, i1 } @llvm.umul.with.overflow.i16(i16 %a, i16 %b)
  %v = extractvalue { i16, i1 } %r, 0
  %o = extractvalue { i16, i1 } %r, 1
  %w = zext i16 %v to i32
  %s = select i1 %o, i32 -1, i32 %w
  ret i32 %s
}
declare { i32, i1 } @llvm.sadd.with.overflow.i32(i32, i32)
declare { i16, i1 } @llvm.umul.with.overflow.i16(i16, i16)
define { i32, i64 } @half_poison(i32 %a) {
  %s = insertvalue { i32, i64 } poison, i32 %a, 0
  ret { i32, i64 } %s
}
"""
NAMES = ("split", "pair", "sum", "flip", "pass", "rot", "half_poison", "sovf", "uovf")


def _llc14(opt: str, tmp_path) -> str:
    src, out = tmp_path / "m.ll", tmp_path / "m.ptx"
    src.write_text(IR)
    subprocess.run(["llc-14", "-march=nvptx64", "-mcpu=sm_80", opt, str(src), "-o", str(out)],
                   check=True, capture_output=True)
    return out.read_text()


NO_LLC = pytest.mark.skipif(shutil.which("llc-14") is None, reason="llc-14 not installed")
COMPILERS = {
    "llvmlite-O0": lambda tmp: compile_to_ptx(IR, opt=0),
    "llvmlite-O2": lambda tmp: compile_to_ptx(IR, opt=2),
    "llc14-O0": pytest.param(lambda tmp: _llc14("-O0", tmp), marks=NO_LLC),
    "llc14-O2": pytest.param(lambda tmp: _llc14("-O2", tmp), marks=NO_LLC),
}


@pytest.mark.parametrize("compiler", list(COMPILERS.values()), ids=list(COMPILERS))
def test_struct_and_array_parameters_and_returns_refine(compiler, tmp_path):
    ptx = compiler(tmp_path)
    fns = read_ir(IR)
    verdicts = {n: ir_refines(fns[n], read_function(ptx, n)) for n in NAMES}
    assert {n: v.verdict for n, v in verdicts.items()} == dict.fromkeys(NAMES, "refines"), \
        {n: v.reason for n, v in verdicts.items()}


def test_layout_follows_the_datalayout():
    fns = read_ir(IR)
    assert fns["pass"].returns.offsets == (0, 2, 8, 16, 17)
    assert fns["pass"].returns.size == 24
    assert fns["flip"].returns.offsets == (0, 2, 4)
    assert [t.text for t in fns["flip"].returns.leaves] == ["i1", "i16", "float"]
    # a module's own datalayout moves i64 to offset 4 (its ABI alignment there)
    own = read_ir('target datalayout = "e-i64:32"\n' + IR)
    assert own["pass"].returns.offsets == (0, 2, 4, 12, 13)


def _plant(ptx: str, name: str, old: str, new: str) -> str:
    """`old` replaced by `new` in function `name` only (it must be there)."""
    start = ptx.index(f" {name}(")
    end = ptx.index("\n}", start)
    body = ptx[start:end]
    assert old in body, (old, body)
    return ptx[:start] + body.replace(old, new) + ptx[end:]


def _split(x: int) -> tuple[int, int]:
    return x & 0xFFFF, x >> 16 & 0xFFFF


@pytest.mark.parametrize("opt", [0, 2])
def test_fields_at_the_wrong_offset_are_found(opt):
    """The high half stored over the low one's place, and the two fields swapped."""
    ptx = compile_to_ptx(IR, opt=opt)
    fns = read_ir(IR)
    lo = "[func_retval0]" if "[func_retval0]" in ptx else "[func_retval0+0]"
    for bad in (_plant(ptx, "split", "[func_retval0+2]", lo),
                _plant(_plant(ptx, "split", "[func_retval0+2]", "[X]"), "split", lo,
                       "[func_retval0+2]").replace("[X]", lo)):
        r = ir_refines(fns["split"], read_function(bad, "split"))
        assert r.verdict == "different", r
        low, high = _split(r.inputs["in"])
        assert low != high
        assert r.ir_result == low | high << 16


@pytest.mark.parametrize("opt", [0, 2])
def test_a_parameter_field_read_at_the_wrong_offset_is_found(opt):
    ptx = compile_to_ptx(IR, opt=opt)
    fns = read_ir(IR)
    bad = _plant(ptx, "sum", "[sum_param_0+4]", "[sum_param_0]")
    r = ir_refines(fns["sum"], read_function(bad, "sum"))
    assert r.verdict == "different", r
    image = r.inputs["s"]  # the struct's 8 bytes: i8 at 0, padding, i32 at 4
    a, b = image & 0xFF, image >> 32
    assert r.ir_result == (a + b) & 0xFFFFFFFF


def test_a_struct_result_is_reported_as_its_memory_image():
    """Fields at their offsets, as func_retval0 holds them: the i32 of %S at byte 4."""
    ptx = compile_to_ptx(IR, opt=2)
    bad = _plant(ptx, "pair", "ld.param.b32", "ld.param.s8")  # the i32 read as a byte
    r = ir_refines(read_ir(IR)["pair"], read_function(bad, "pair"))
    assert r.verdict == "different", r
    a, b = r.inputs["a"], r.inputs["b"]
    assert r.ir_result == a | b << 32
    assert r.ptx_result >> 32 != b


def test_sext_for_zext_of_a_field_is_found():
    """The i8 field's zext read as a signed byte."""
    ptx = compile_to_ptx(IR, opt=2)
    fns = read_ir(IR)
    assert "ld.param.b8" in ptx
    bad = _plant(ptx, "sum", "ld.param.b8", "ld.param.s8")
    r = ir_refines(fns["sum"], read_function(bad, "sum"))
    assert r.verdict == "different", r
    assert r.inputs["s"] & 0x80  # a negative byte


def test_padding_and_a_poison_field_are_free():
    """Bytes 1..3 of %S are padding: a PTX that stores junk there refines; a poison
    field (the i64 of @half_poison) may be anything, the other field may not."""
    ptx = compile_to_ptx(IR, opt=2)
    fns = read_ir(IR)
    junk = _plant(ptx, "pair", "st.param.b8", "st.param.b32")  # the i8's register widened
    assert ir_refines(fns["pair"], read_function(junk, "pair")).verdict == "refines"
    body = ptx[ptx.index(") half_poison("):]
    assert "func_retval0+8" not in body[:body.index("\n}")]  # LLVM leaves it unwritten
    off = _plant(ptx, "half_poison", "[func_retval0]", "[func_retval0+4]")
    r = ir_refines(fns["half_poison"], read_function(off, "half_poison"))
    assert r.verdict != "refines"


@pytest.mark.parametrize("opt", [0, 2])
def test_an_unsigned_overflow_check_for_a_signed_one_is_found(opt):
    """sadd.with.overflow's bit from an unsigned compare: a carry is no signed overflow."""
    ptx = compile_to_ptx(IR, opt=opt)
    bad = _plant(ptx, "sovf", "setp.lt.s32", "setp.lt.u32")
    r = ir_refines(read_ir(IR)["sovf"], read_function(bad, "sovf"))
    assert r.verdict == "different", r
    a, b = (r.inputs[k] - (r.inputs[k] >> 31 << 32) for k in "ab")
    overflow = not -(2 ** 31) <= a + b < 2 ** 31
    assert r.ir_result == ((a + b) & 0xFFFFFFFF) | overflow << 32


MEMORY = """
define void @put(ptr addrspace(1) %p, i8 %a, i32 %b) {
  %s0 = insertvalue { i8, i32 } poison, i8 %a, 0
  %s1 = insertvalue { i8, i32 } %s0, i32 %b, 1
  store { i8, i32 } %s1, ptr addrspace(1) %p, align 4
  ret void
}
define i32 @get(ptr addrspace(1) %p) {
  %s = load [2 x { i16, i8 }], ptr addrspace(1) %p, align 2
  %a = extractvalue [2 x { i16, i8 }] %s, 1, 0
  %b = extractvalue [2 x { i16, i8 }] %s, 0, 1
  %wa = zext i16 %a to i32
  %wb = zext i8 %b to i32
  %r = sub i32 %wa, %wb
  ret i32 %r
}
"""


@pytest.mark.parametrize("opt", [0, 2])
def test_structs_in_memory_are_their_fields_at_their_offsets(opt):
    """A struct stored and loaded whole: each field at its offset, the padding bytes
    neither written nor read; a field stored one byte off is found."""
    ptx = compile_to_ptx(MEMORY, opt=opt)
    fns = read_ir(MEMORY)
    for name in fns:
        assert ir_refines(fns[name], read_function(ptx, name)).verdict == "refines", name
    bad = _plant(ptx, "get", "[%rd1+2]", "[%rd1+3]")  # the i8 of field 0: byte 2
    r = ir_refines(fns["get"], read_function(bad, "get"))
    assert r.verdict == "different", r


def test_reading_aggregate_constants_and_indices():
    assert aggregate_constant('{ i32, { i8, [2 x i8] } } { i32 1, { i8, [2 x i8] } '
                              '{ i8 2, [2 x i8] c"a\\01" } }') == ["1", ["2", ["97", "1"]]]
    assert aggregate_constant("%S { i8 1, i64 poison }") == ["1", "poison"]
    assert aggregate_constant("{ i32, <2 x half> } zeroinitializer") == "zeroinitializer"
    assert aggregate_constant("{ i32, <2 x half> } { i32 1, <2 x half> <half 0xH3C00, "
                              "half poison> }") == ["1", ["0xH3C00", "poison"]]
    assert aggregate_indices("%q = extractvalue { i32, { i8, i16 } } %v, 1, 1") == [1, 1]
    assert aggregate_indices("%v = insertvalue { i8, { i8, i8 } } %s, i8 3, 1, 0") == [1, 0]
    assert aggregate_indices("%x = extractvalue %S %s, 1, !dbg !4") == [1]


@pytest.mark.parametrize("body,why", [
    ("%v = load { i1, i32 }, ptr %p\n%r = extractvalue { i1, i32 } %v, 1", "memory"),
    ("%v = load { <2 x i1>, i32 }, ptr %p\n%r = extractvalue { <2 x i1>, i32 } %v, 1",
     "memory"),
    ("%r = extractvalue <{ i8, i32 }> <{ i8 1, i32 2 }>, 1", "type"),
])
def test_what_stays_refused(body, why):
    ir = f"%S = type {{ i8, i32 }}\ndefine i32 @f(ptr %p) {{\n{body}\nret i32 %r\n}}"
    from ptxsmt.llvm import encode_function
    with pytest.raises(Unsupported) as e:
        encode_function(read_ir(ir)["f"])
    assert e.value.reason == why


@pytest.mark.parametrize("opt", [0, 2])
def test_a_byval_parameter_is_refused_not_judged(opt):
    """`ptr byval(%S)`: the IR's pointer to the caller's copy is, in PTX, the .param's
    own bytes (ld.param [p+4]): no address the IR's memory could link. Judged as a plain
    pointer it came out "different"; it is refused. sret stays a plain pointer."""
    ir = """%S = type { i32, i32 }
define i32 @f(ptr byval(%S) align 4 %p) {
  %q = getelementptr i8, ptr %p, i64 4
  %a = load i32, ptr %p, align 4
  %b = load i32, ptr %q, align 4
  %r = add i32 %a, %b
  ret i32 %r
}
define void @sr(ptr sret({ i32, i32 }) align 4 %o, i32 %x) {
  store i32 %x, ptr %o, align 4
  ret void
}
"""
    ptx = compile_to_ptx(ir, opt=opt)
    fns = read_ir(ir)
    with pytest.raises(Unsupported) as e:
        ir_refines(fns["f"], read_function(ptx, "f"))
    assert e.value.reason == "calling convention"
    assert ir_refines(fns["sr"], read_function(ptx, "sr")).verdict == "refines"
