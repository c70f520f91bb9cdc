"""9.7.9.21 cvt forms of PTX 7.0 outside the variant catalogue (sem/convert.py's
`sm80_form`): cvt.{rn,rz}{.relu}.{f16,bf16}.f32, the packed .f16x2/.bf16x2 from two
.f32 ("d[31:16] = convert(a); d[15:0] = convert(b)") and cvt.rna.tf32.f32, against exact
rational rounding (tests/exact_float.py); the NVVM intrinsics that name them
(llvm.nvvm.ff2f16x2.rn ...) and LLVM's fold of two fptruncs into one packed cvt."""

from __future__ import annotations

import random
import struct

import exact_float as ef
import pytest
import z3

from ptxsmt.isa.types import BF16, F16
from ptxsmt.sem.convert import sm80_form
from ptxsmt.sem.sorts import is_nan

FMT = {"f16": F16, "bf16": BF16}


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


SPECIALS = [0, 0x80000000, f32(1.0), f32(-1.0), f32(65504.0), f32(65520.0), f32(-65520.0),
            f32(1e-8), f32(-1e-8), f32(2.0 ** -24), f32(2.0 ** -25), f32(3 * 2.0 ** -26),
            f32(1.0 + 2.0 ** -11), f32(1.0 + 3 * 2.0 ** -11), f32(1.0 + 2.0 ** -8),
            f32(1.0 + 3 * 2.0 ** -8), 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 1,
            0x80000001, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x3F801000, 0x3F803000,
            0xBF801000, 0x00001000, 0x00003000, 0x7F7FF000]
INPUTS = SPECIALS + [random.Random(k).getrandbits(32) for k in range(40)]


def _allowed(term: z3.BitVecRef) -> set[int] | None:
    """Every value of `term` (None for more than 4: a free NaN or low bits)."""
    found, s = set(), z3.Solver()
    while len(found) < 5 and s.check(*[term != v for v in found]) == z3.sat:
        found.add(s.model().eval(term, model_completion=True).as_long())
    return found if len(found) < 5 else None


def convert(x: int, fmt: str, rnd: str, relu: bool) -> set[int] | str:
    """The values convert(x) may take ("nan": any NaN of fmt)."""
    v = ef.decode(x, "f32")
    e, m = ef.FORMATS[fmt]
    if v.kind == "nan":
        return "nan"
    if v.kind == "inf":
        bits = (v.sign << (e + m)) | (((1 << e) - 1) << m)
    else:
        bits = ef.round_to(v.q, fmt, rnd, zero_sign=v.sign)
    if relu and bits >> (e + m):  # ".relu clamps the result to 0 if negative"
        return {0, bits} if bits == 1 << (e + m) else {0}  # -0.0: either reading
    return {bits}


def _check(term: z3.BitVecRef, want: set[int] | str, fmt) -> None:
    if want == "nan":
        assert z3.Solver().check(z3.Not(is_nan(term, fmt))) == z3.unsat
    else:
        assert _allowed(term) == want


FORMS = [(rnd, relu, dst) for rnd in ("rn", "rz") for relu in (False, True)
         for dst in ("f16", "bf16")]


@pytest.mark.parametrize("rnd,relu,dst", FORMS)
def test_narrowing_against_exact_rounding(rnd, relu, dst):
    spelling = f"cvt.{rnd}{'.relu' if relu else ''}.{dst}.f32"
    a = z3.BitVec("a", 32)
    term = sm80_form(spelling, [a])
    for x in INPUTS:
        got = z3.simplify(z3.substitute(term, (a, z3.BitVecVal(x, 32))))
        _check(got, convert(x, dst, rnd, relu), FMT[dst])


@pytest.mark.parametrize("rnd,relu,dst", FORMS)
def test_packed_pairs_put_a_high_and_b_low(rnd, relu, dst):
    spelling = f"cvt.{rnd}{'.relu' if relu else ''}.{dst}x2.f32"
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    term = sm80_form(spelling, [a, b])
    rng = random.Random(spelling)
    for _ in range(12):
        x, y = rng.choice(INPUTS), rng.choice(INPUTS)
        got = z3.simplify(z3.substitute(term, (a, z3.BitVecVal(x, 32)), (b, z3.BitVecVal(y, 32))))
        _check(z3.simplify(z3.Extract(31, 16, got)), convert(x, dst, rnd, relu), FMT[dst])
        _check(z3.simplify(z3.Extract(15, 0, got)), convert(y, dst, rnd, relu), FMT[dst])


def test_tf32_rounds_to_nearest_ties_away_in_the_high_19_bits():
    a = z3.BitVec("a", 32)
    term = z3.Extract(31, 13, sm80_form("cvt.rna.tf32.f32", [a]))
    for x in INPUTS:
        got = z3.simplify(z3.substitute(term, (a, z3.BitVecVal(x, 32))))
        v = ef.decode(x, "f32")
        if v.kind == "nan":
            assert z3.Solver().check(z3.Extract(17, 10, got) != 0xFF) == z3.unsat
            assert z3.Solver().check(z3.Extract(9, 0, got) == 0) == z3.unsat
            continue
        want = x >> 13 if v.kind == "inf" else ef.round_to(v.q, "tf32", "rna", zero_sign=v.sign)
        assert got.as_long() == want, hex(x)
    # the tie 1 + 2^-11 rounds away (up); nearest-even would keep 1.0
    assert ef.round_to(ef.decode(0x3F801000, "f32").q, "tf32", "rna") == 0x3F801000 >> 13 | 1


def test_other_spellings_are_not_these_forms():
    a = z3.BitVec("a", 32)
    for spelling in ("cvt.rn.f16.f32", "cvt.rm.f16x2.f32", "cvt.rn.satfinite.f16x2.f32",
                     "cvt.rn.tf32.f32", "cvt.rna.f16.f32", "cvt.rn.f32.f16"):
        n = 2 if "x2" in spelling else 1
        if spelling == "cvt.rn.f16.f32":
            assert sm80_form(spelling, [a]) is not None
            assert sm80_form(spelling, [a, a]) is None
            continue
        assert sm80_form(spelling, [a] * n) is None, spelling


# ---- through the PTX reader and the NVVM intrinsics --------------------------------------

llvm = pytest.importorskip("llvmlite")

FOLD = """define <2 x half> @fold(float %a, float %b) {
  %ah = fptrunc float %a to half
  %bh = fptrunc float %b to half
  %v0 = insertelement <2 x half> poison, half %ah, i64 0
  %v1 = insertelement <2 x half> %v0, half %bh, i64 1
  ret <2 x half> %v1
}
define half @lane1(float %a, float %b) {
  %v = call <2 x half> @llvm.nvvm.ff2f16x2.rn(float %a, float %b)
  %e = extractelement <2 x half> %v, i64 1
  ret half %e
}
define i32 @tf32(float %a) {
  %v = call i32 @llvm.nvvm.f2tf32.rna(float %a)
  ret i32 %v
}
declare <2 x half> @llvm.nvvm.ff2f16x2.rn(float, float)
declare i32 @llvm.nvvm.f2tf32.rna(float)
"""


def _verdict(name: str, ptx: str):
    from ptxsmt.function import read_function
    from ptxsmt.llvm import read_ir
    from ptxsmt.smt.queries.refinement import ir_refines
    return ir_refines(read_ir(FOLD)[name], read_function(ptx, name), timeout_ms=60_000)


def test_llvm_folds_two_fptruncs_into_one_packed_cvt_and_a_swap_is_found():
    """LangRef's fptrunc (checked against the JIT elsewhere) against the PTX semantics:
    lane 0 (the low half) is %a, so LLVM writes cvt.rn.f16x2.f32 d, %b, %a."""
    from ptxsmt.llvm.module import compile_to_ptx
    ptx = compile_to_ptx(FOLD, opt=2)
    line = next(x for x in ptx.splitlines() if "cvt.rn.f16x2.f32" in x)
    assert _verdict("fold", ptx).verdict == "refines"
    *head, a, b = line.replace(",", " ").replace(";", " ").split()
    swapped = ptx.replace(line, f"\tcvt.rn.f16x2.f32 \t{head[-1]}, {b}, {a};")
    r = _verdict("fold", swapped)
    assert r.verdict == "different", r


def test_an_intrinsics_lanes_are_the_registers_halves():
    """ff2f16x2.rn(a, b) is cvt.rn.f16x2.f32 d, a, b: element 1 (the high half) is a
    rounded; what LLVM writes to extract it (its own reading of the lanes) refines."""
    from ptxsmt.llvm.module import compile_to_ptx
    ptx = compile_to_ptx(FOLD, opt=2)
    assert _verdict("lane1", ptx).verdict == "refines"
    assert _verdict("tf32", ptx).verdict == "refines"
    from ptxsmt.llvm import encode_function, read_ir
    enc = encode_function(read_ir(FOLD)["lane1"])
    x = z3.BitVecVal(f32(1.0 + 3 * 2.0 ** -11), 32)  # rounds up to 1 + 2^-9 in f16 (rn)
    got = z3.simplify(z3.substitute(enc.result[0].bits, (enc.params["a"], x),
                                    (enc.params["b"], z3.BitVecVal(0, 32))))
    assert got.as_long() == ef.round_to(ef.decode(f32(1.0 + 3 * 2.0 ** -11), "f32").q, "f16", "rn")
