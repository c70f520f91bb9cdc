"""bf16 arithmetic as compilers write it without bf16 instructions (issue 40 item 8):
f32 arithmetic on widened bf16 values, rounded back (`sem.sorts.narrowed` reads it as
the bf16 operation), and fma with a constant 1.0, -1.0 or -0.0 operand
(`sem.sorts.fused` reads it as add, sub or mul). Each against the exact oracle
(tests/exact_float.py: rationals, one rounding per step, as the ISA says each
instruction rounds), and the refinements they make quick."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner
from exact_float import NAN, arith, decode, to_format

from ptxsmt.cli import main
from ptxsmt.eval.evaluate import evaluate
from ptxsmt.eval.values import UNSPECIFIED
from ptxsmt.llvm.module import compile_to_ptx

# bf16 values that make rounding hard: zeros, the subnormal ends, 1 and its neighbours,
# the finite ends, infinities, a NaN
SPECIAL = [0x0000, 0x8000, 0x0001, 0x807F, 0x007F, 0x0080, 0x3F80, 0x3F81, 0x3F7F, 0xBF80,
           0x7F7F, 0xFF7F, 0x0100, 0x7F80, 0xFF80, 0x7FC0, 0x4040, 0x3EAB, 0x1F80, 0x2001]


# a pair where rounding twice differs from rounding once: 1 - 2^-30 rounds to 1.0 in
# f32, whose bf16 toward zero is 1.0, where 1 - 2^-30's own is 0x3f7f
HARD = [(0x3F80, 0xB080)]


def _samples(n: int, operands: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    pick = [*SPECIAL, *(rng.getrandbits(16) for _ in range(40))]
    hard = [xs[:operands] for xs in HARD]
    return hard + [tuple(rng.choice(pick) for _ in range(operands)) for _ in range(n)]


def _bf16_of(f32: int | str, direction: str) -> int | str:
    """An f32 result rounded to bf16 by `direction` (cvt.{rn,rz}.bf16.f32)."""
    return NAN if f32 == NAN else to_format(decode(f32, "f32"), "bf16", direction)


def _is(got, want) -> bool:
    """NaN results: the ISA leaves their bits open (the evaluator says unspecified, or
    gives a NaN's bits)."""
    if want == NAN:
        return got is UNSPECIFIED or decode(got, "bf16").kind == "nan"
    return got == want


@pytest.mark.parametrize(("op", "rounding", "narrowing"), [
    ("add", "rn", "rn"), ("sub", "rz", "rz"), ("mul", "rn", "rn"), ("div", "rn", "rn"),
    ("div", "rz", "rz"), ("sqrt", "rn", "rn"), ("add", "rn", "rz"), ("mul", "rz", "rn")])
def test_f32_arithmetic_rounded_to_bf16_is_what_the_isa_says(op, rounding, narrowing):
    """cvt.f32.bf16 (exact), op.f32, cvt.bf16.f32: the oracle rounds twice, to f32 and
    then to bf16, as the instructions do; ptxsmt's terms are the one bf16 operation
    where both round alike, two roundings where not."""
    two = op != "sqrt"
    body = (f"cvt.f32.bf16 x, a; {'cvt.f32.bf16 y, b; ' if two else ''}"
            f"{op}.{rounding}.f32 q, x{', y' if two else ''}; cvt.{narrowing}.bf16.f32 d, q;")
    for xs in _samples(120, 2 if two else 1, seed=len(body)):
        inputs = dict(zip("ab", xs))
        got = evaluate(body, inputs, unspecified_ok=True).outputs["d"]
        f32 = arith(op, rounding, "f32", *(x << 16 for x in xs))
        assert _is(got, _bf16_of(f32, narrowing)), (body, inputs, got)


@pytest.mark.parametrize(("c", "op", "rounding"), [
    ("one", "add", "rn"), ("minus_one", "sub", "rn"), ("minus_zero", "mul", "rn"),
    ("zero", "fma", "rn")])  # -0 * 1 + +0 is +0: no mul
def test_fma_with_a_constant_is_what_the_isa_says(c, op, rounding):
    """fma.bf16 d, a, 1.0, b (what LLVM writes for fadd bfloat on sm_80), d, a, -1.0, b
    and d, a, b, -0.0: one rounding of the exact a*c + b, by the oracle's fma."""
    const = {"one": 0x3F80, "minus_one": 0xBF80, "minus_zero": 0x8000, "zero": 0}[c]
    addend = c.endswith("zero")
    body = f"mov.b16 k, {const:#06x}; fma.{rounding}.bf16 d, " + (
        "a, b, k;" if addend else "k, a, b;")
    for a, b in [(0x8000, 0x3F80), (0x0000, 0xBF80), *_samples(120, 2, seed=const)]:
        got = evaluate(body, {"a": a, "b": b}, unspecified_ok=True).outputs["d"]
        want = arith("fma", rounding, "bf16", *((a, b, const) if addend else (const, a, b)))
        assert _is(got, want), (body, a, b, got, want)


@pytest.mark.parametrize("rounding", ["rn", "rz", "rm", "rp"])
def test_adding_minus_zero_keeps_a_zero_product_but_toward_minus_infinity(rounding):
    """+0 * 2 + -0: +0, but -0 rounding toward -inf (fma.rm.f32: its own fma)."""
    for a, b in ((0x00000000, 0x40000000), (0x40000000, 0x00000000), (0x80000000, 0x40000000)):
        got = evaluate(f"fma.{rounding}.f32 d, a, b, 0f80000000;", {"a": a, "b": b}
                       ).outputs["d"]
        assert got == arith("fma", rounding, "f32", a, b, 0x80000000), (a, b, got)


LL = """target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define bfloat @div(bfloat %a, bfloat %b) {
  %r = fdiv bfloat %a, %b
  ret bfloat %r
}
define bfloat @sub(bfloat %a, bfloat %b) {
  %r = fsub bfloat %a, %b
  ret bfloat %r
}
define i32 @bfk(float %x, i32 %k) {
  %b = fptrunc float %x to bfloat
  %h = bitcast bfloat %b to i16
  %w = zext i16 %h to i32
  %s = shl i32 %w, 16
  %n = fcmp uno float %x, %x
  %r = select i1 %n, i32 %k, i32 %s
  ret i32 %r
}
"""


@pytest.mark.parametrize(("cpu", "function", "line", "mutant"), [
    # cvt.f32.bf16, div.rn.f32, cvt.rn.bf16.f32; the mutant divides b by a
    ("sm_90", "div", "div.rn.f32 \t%r3, %r2, %r1;", "div.rn.f32 \t%r3, %r1, %r2;"),
    # the widening as a shift left by 16
    ("sm_80", "div", "div.rn.f32 \t%r5, %r4, %r2;", "div.rn.f32 \t%r5, %r2, %r4;"),
    # b * -1.0 + a; the mutant is a * -1.0 + b
    ("sm_80", "sub", "fma.rn.bf16 \t%rs4, %rs3, %rs2, %rs1;",
     "fma.rn.bf16 \t%rs4, %rs1, %rs2, %rs3;"),
    # cvt.rn.bf16.f32, shift, setp.nan, selp; the mutant rounds toward zero
    ("sm_90", "bfk", "cvt.rn.bf16.f32 \t%rs1, %r1;", "cvt.rz.bf16.f32 \t%rs1, %r1;"),
])
def test_small_bf16_refinements_are_decided(tmp_path, cpu, function, line, mutant):
    """Each refines (z3 alone took minutes on the first three, an f32 division circuit
    against a bf16 one, and bitwuzla reads no bf16); each mutant is a replayed
    difference."""
    ll, ptx, wrong = tmp_path / "f.ll", tmp_path / "f.ptx", tmp_path / "wrong.ptx"
    ll.write_text(LL)
    text = compile_to_ptx(LL, cpu)
    assert text.count(line) == 1, text
    ptx.write_text(text)
    wrong.write_text(text.replace(line, mutant))
    r = CliRunner().invoke(main, ["equiv", str(ll), str(ptx), "--function", function])
    assert r.stdout.startswith(f"@{function}: refines"), r.output
    r = CliRunner().invoke(main, ["equiv", str(ll), str(wrong), "--function", function])
    assert r.exit_code == 1 and r.stdout.startswith(f"@{function}: different"), r.output
