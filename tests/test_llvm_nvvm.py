"""NVVM intrinsics that are one PTX instruction (ptxsmt/llvm/nvvm.py): each table entry
is the instruction LLVM's own NVPTX backend (llvmlite's LLVM) emits for the intrinsic,
what LLVM emits refines the IR, and a wrong signedness planted in the PTX is found."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import nvvm, read_ir  # noqa: E402
from ptxsmt.llvm.module import compile_to_ptx  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

IR_TYPE = {"f32": "float", "f64": "double", "s16": "i16", "u16": "i16", "s32": "i32",
           "u32": "i32", "s64": "i64", "u64": "i64", "b32": "i32", "bf16": "bfloat",
           "f16x2": "<2 x half>", "bf16x2": "<2 x bfloat>", "tf32": "i32"}


def _function(base: str) -> str:
    dest, sources = nvvm.ptx_types(base)
    ret = IR_TYPE[dest]
    args = ", ".join(f"{IR_TYPE[t]} %a{i}" for i, t in enumerate(sources))
    return (f"declare {ret} @llvm.{base}({', '.join(IR_TYPE[t] for t in sources)})\n"
            f"define {ret} @{base.replace('.', '_')}({args}) {{\n"
            f"  %r = call {ret} @llvm.{base}({args})\n  ret {ret} %r\n}}\n")


@pytest.fixture(scope="module")
def compiled():
    ir = "".join(_function(b) for b in sorted(nvvm.PTX))
    return ir, compile_to_ptx(ir, opt=2)


def test_each_intrinsic_is_the_instruction_llvm_emits(compiled):
    _, ptx = compiled
    bodies = dict(re.findall(r"\.func\s+\([^)]*\)\s+(\w+)\((.*?)\n}", ptx, re.S))
    wrong = {}
    for base, spelling in sorted(nvvm.PTX.items()):
        emitted = [line.split()[0] for line in bodies[base.replace(".", "_")].splitlines()
                   if line.startswith("\t") and not line.strip().startswith(
                       ("ld.param", "st.param", "ret", ".reg", ".param", "//"))]
        if spelling not in emitted:
            wrong[base] = (spelling, emitted)
    assert not wrong


SAMPLE = ("nvvm.add.rm.f", "nvvm.mulhi.ll", "nvvm.f2i.rz", "nvvm.d2f.rn", "nvvm.fmax.nan.f",
          "nvvm.prmt", "nvvm.fma.rp.d", "nvvm.ull2f.rz", "nvvm.f2bf16.rz")


@pytest.mark.parametrize("base", SAMPLE)
def test_what_llvm_emits_refines(compiled, base):
    ir, ptx = compiled
    name = base.replace(".", "_")
    r = ir_refines(read_ir(ir)[name], read_function(ptx, name), timeout_ms=60_000)
    assert r.verdict == "refines", r


def _signed(x: int, width: int) -> int:
    return x - (1 << width) if x >> (width - 1) else x


@pytest.mark.parametrize("base,width", [("nvvm.mulhi.ll", 64), ("nvvm.mulhi.s", 16)])
def test_a_wrong_signedness_is_found(compiled, base, width):
    """mul.hi.u64 planted for llvm.nvvm.mulhi.ll (mul.hi.s64), mul.hi.u16 for
    llvm.nvvm.mulhi.s: the counterexample's IR value is the high half of the signed
    product, the PTX's of the unsigned one. (Integers: a float counterexample may hinge
    on a PTX NaN left unspecified.) z3 alone takes about a minute on the 128-bit
    products, bitwuzla about a second: the commands' second solver, as `ptxsmt tv` asks."""
    ir, ptx = compiled
    name = base.replace(".", "_")
    assert f"mul.hi.s{width}" in ptx
    bad = ptx.replace(f"mul.hi.s{width}", f"mul.hi.u{width}")
    r = ir_refines(read_ir(ir)[name], read_function(bad, name), timeout_ms=60_000,
                   solver="auto")
    assert r.verdict == "different", r
    a, b = r.inputs["a0"], r.inputs["a1"]
    assert r.ir_result == (_signed(a, width) * _signed(b, width) >> width) % (1 << width)
    assert r.ptx_result == (a * b) >> width != r.ir_result


# ---- llvm.nvvm.fshl.clamp / fshr.clamp: their own meaning (NVPTXUsage), not a table row --

CLAMP = """declare i32 @llvm.nvvm.fshl.clamp.i32(i32, i32, i32)
declare i32 @llvm.nvvm.fshr.clamp.i32(i32, i32, i32)
define i32 @l(i32 %hi, i32 %lo, i32 %n) {
  %r = call i32 @llvm.nvvm.fshl.clamp.i32(i32 %hi, i32 %lo, i32 %n)
  ret i32 %r
}
define i32 @r(i32 %hi, i32 %lo, i32 %n) {
  %r = call i32 @llvm.nvvm.fshr.clamp.i32(i32 %hi, i32 %lo, i32 %n)
  ret i32 %r
}
"""


def _clamp_oracle(left: bool, hi: int, lo: int, n: int) -> int:
    """"like llvm.fshl/fshr, except the shift amount is clamped at the integer width":
    the 64-bit hi:lo shifted by min(n, 32), its high (left) or low (right) word."""
    wide, k = hi << 32 | lo, min(n, 32)
    return (wide << k) >> 32 & 0xFFFFFFFF if left else (wide >> k) & 0xFFFFFFFF


@pytest.mark.parametrize("name", ["l", "r"])
def test_clamped_funnel_shifts_against_exact_integers(name):
    import random

    import z3

    from ptxsmt.llvm import encode_function
    enc = encode_function(read_ir(CLAMP)[name])
    rng = random.Random(name)
    for n in [0, 1, 5, 31, 32, 33, 63, 64, 0xFFFFFFFF, *[rng.getrandbits(32) for _ in range(8)]]:
        hi, lo = rng.getrandbits(32), rng.getrandbits(32)
        sub = [(enc.params["hi"], z3.BitVecVal(hi, 32)), (enc.params["lo"], z3.BitVecVal(lo, 32)),
               (enc.params["n"], z3.BitVecVal(n, 32))]
        got = z3.simplify(z3.substitute(enc.result[0].bits, *sub)).as_long()
        assert got == _clamp_oracle(name == "l", hi, lo, n), (hi, lo, n)


@pytest.mark.parametrize("name,spelling", [("l", "shf.l.clamp.b32"), ("r", "shf.r.clamp.b32")])
def test_clamped_funnel_shifts_refine_and_a_wrap_is_found(name, spelling):
    ptx = compile_to_ptx(CLAMP, opt=2)
    assert spelling in ptx
    r = ir_refines(read_ir(CLAMP)[name], read_function(ptx, name), timeout_ms=60_000)
    assert r.verdict == "refines", r
    bad = ptx.replace(spelling, spelling.replace("clamp", "wrap"))
    r = ir_refines(read_ir(CLAMP)[name], read_function(bad, name), timeout_ms=60_000)
    assert r.verdict == "different", r
    hi, lo, n = r.inputs["hi"], r.inputs["lo"], r.inputs["n"]
    assert n >= 32 and r.ir_result == _clamp_oracle(name == "l", hi, lo, n) != r.ptx_result
