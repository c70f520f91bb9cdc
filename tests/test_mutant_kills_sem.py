"""Tests written to kill mutants of the issue-22 `sem/` families and of the congruence rule
that the rest of the suite let live (scripts/mutants.py, block SEM22; docs/mutants.md says
which test kills which mutant).

Each expectation comes from outside the Z3 terms: the ISA text (what it leaves open, what
it names the same instruction), tests/oracle_rounding.py's rational arithmetic and the
ISA's tables (through tests/reference.py), or a verdict argued from the ISA by hand.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from reference import UNSPECIFIED
from reference import run as reference

from ptxsmt import Options, PtxError, evaluate
from ptxsmt.batch.engine import evaluate_many
from ptxsmt.function import read_function
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.queries.snippets import check_equivalence

# ---- the prover: what the ISA calls one instruction, and what it leaves open -----------


@pytest.mark.parametrize("lhs, rhs", [
    # 9.7.3: no rounding modifier means .rn: add.f32 is add.rn.f32, NaN results included
    ("add.f32 d, a, b;", "add.rn.f32 d, a, b;"),
    ("mul.f16x2 d, a, b;", "mul.rn.f16x2 d, a, b;"),
    # 9.7.3.6: mad with a rounding modifier is fma with it (one rounding of a*b + c)
    ("mad.rn.f32 d, a, b, c;", "fma.rn.f32 d, a, b, c;"),
    ("mad.rz.ftz.f32 d, a, b, c;", "fma.rz.ftz.f32 d, a, b, c;"),
    # 9.7.4: the .f16x2 forms operate on each half: a lane of add.f16x2 is add.f16
    ("add.f16x2 d, a, b;", "mov.b32 {x, y}, a; mov.b32 {z, w}, b; add.f16 u, x, z;"
     " add.f16 v, y, w; mov.b32 d, {u, v};"),
    # "the minimum of a and b" names no order
    ("min.f32 d, a, b;", "min.f32 d, b, a;"),
])
def test_one_instruction_spelled_two_ways_is_proved(lhs, rhs):
    assert check_equivalence(lhs, rhs, outputs=["d"]).verdict == "equivalent"


@pytest.mark.parametrize("lhs, rhs", [
    # an open NaN is one per instruction *and inputs*: add(a, b) and add(a, c) need not be
    # the same NaN when a is NaN, so d = t ^ u need not be 0 there
    ("add.f32 t, a, b; add.f32 u, a, c; xor.b32 d, t, u;",
     "add.f32 t, a, b; add.f32 u, a, c; xor.b32 d, t, u; testp.notanumber.f32 p, a;"
     " selp.b32 d, 0, d, p;"),
    # the same for a cvt: each conversion and rounding has its own open NaN
    ("cvt.rn.f16.f32 t, a; cvt.rz.f16.f32 u, a; xor.b16 d, t, u;",
     "cvt.rn.f16.f32 t, a; cvt.rz.f16.f32 u, a; xor.b16 d, t, u; testp.notanumber.f32 p, a;"
     " selp.b16 d, 0, d, p;"),
    # "Division by zero yields an unspecified, machine-specific value": a / 0 and c / 0
    # need not be equal
    ("div.u32 t, a, b; div.u32 u, c, b; setp.eq.u32 p, t, u;",
     "div.u32 t, a, b; div.u32 u, c, b; setp.eq.u32 q, t, u; setp.eq.or.u32 p, b, 0, q;"),
    ("rem.s32 t, a, b; rem.s32 u, c, b; setp.eq.s32 p, t, u;",
     "rem.s32 t, a, b; rem.s32 u, c, b; setp.eq.s32 q, t, u; setp.eq.or.s32 p, b, 0, q;"),
])
def test_open_values_are_not_shared_between_inputs(lhs, rhs):
    out = "d" if "xor" in lhs else "p"
    assert check_equivalence(lhs, rhs, outputs=[out]).verdict != "equivalent"


# ---- the congruence rule: same opcode, modifiers and inputs, and only those ------------

HEAD = ".version 7.8\n.target sm_80\n.address_size 64\n"
REGS = "\t.reg .b32 %r<9>;\n\t.reg .b32 %out;\n\t.reg .pred %p<4>;\n\t.reg .f32 %f<9>;"
MMA = ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, "
       "{%r1,%r1}, {%r1,%r1}, {%f1,%f1,%f1,%f1,%f1,%f1,%f1,%f1};")
VOTE = ("ld.param.u32 %r1, [p];\n\tsetp.ne.u32 %p1, %r1, 0;\n\tvote.sync.all.pred %p2, {}, -1;"
        "\n\tselp.b32 %out, 1, 0, %p2;")


def _function(name: str, body: str) -> str:
    return (f".visible .func (.param .b32 func_retval0) {name}(.param .b32 p)\n{{\n{REGS}\n"
            f"\t{body}\n\tst.param.b32 [func_retval0+0], %out;\n\tret;\n}}\n")


CONGRUENCE = {
    # the same unmodelled instruction on the same value, in other registers: equal
    "renamed": ("ld.param.u32 %r1, [p];\n\tmul24.lo.u32 %out, %r1, 2;",
                "ld.param.u32 %r5, [p];\n\tmul24.lo.u32 %out, %r5, 2;", "equivalent"),
    # another modifier, another opcode, a negated input, another destination: not provably
    # equal (unknown, as nothing but the free results differs), never "equivalent"
    "modifier": ("ld.param.u32 %r1, [p];\n\tmul24.lo.u32 %out, %r1, 2;",
                 "ld.param.u32 %r1, [p];\n\tmul24.hi.u32 %out, %r1, 2;", "unknown"),
    "opcode": ("ld.param.f32 %f1, [p];\n\tsin.approx.f32 %f2, %f1;\n\tmov.b32 %out, %f2;",
               "ld.param.f32 %f1, [p];\n\tcos.approx.f32 %f2, %f1;\n\tmov.b32 %out, %f2;",
               "unknown"),
    "negated input": (VOTE.format("%p1"), VOTE.format("!%p1"), "unknown"),
    "destination": (f"ld.param.u32 %r1, [p];\n\tmov.b32 %f1, %r1;\n\t{MMA}\n\tmov.b32 %out, %f1;",
                    f"ld.param.u32 %r1, [p];\n\tmov.b32 %f1, %r1;\n\t{MMA}\n\tmov.b32 %out, %f2;",
                    "unknown"),
}


def congruence_module(case: str) -> str:
    """Functions a and b of one case, as a module ptxas accepts (a test checks)."""
    a, b, _ = CONGRUENCE[case]
    return HEAD + _function("a", a) + _function("b", b)


@pytest.mark.parametrize("case", list(CONGRUENCE))
def test_congruence_keys_on_opcode_modifiers_and_input_values(case):
    text = congruence_module(case)
    v = check_function_equivalence(read_function(text, "a"), read_function(text, "b"))
    assert v.verdict == CONGRUENCE[case][2]
    assert v.uninterpreted  # the verdict rests on the rule, which says so


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("case", list(CONGRUENCE))
def test_the_congruence_modules_are_legal_ptx(case, tmp_path):
    path = tmp_path / "m.ptx"
    path.write_text(congruence_module(case))
    r = subprocess.run(["ptxas", "-arch", "sm_80", str(path), "-o", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---- edge cases against the oracle: one or more per mutant, deterministic -----------------
# The expected value is tests/reference.py's (tests/oracle_rounding.py: rational arithmetic
# and the ISA's tables), never written from the encoding. Hypothesis draws these only by
# luck; here every run holds them. The comment names what each case pins down.

F32_ONE, F32_NAN, F32_INF = 0x3F800000, 0x7FC00000, 0x7F800000
PRMT = {"a": 0x33221100, "b": 0x77665544}

EDGES = [
    # rounding directions
    ("add.rz.f32 d, a, b;", {"a": 0xBF800000, "b": 0xB0800000}),  # -(1 + 2**-30): rz up
    ("add.rm.f32 d, a, b;", {"a": 0xBF800000, "b": 0xB0800000}),  # ... rm down
    ("add.rp.f32 d, a, b;", {"a": 0x3F800000, "b": 0x30800000}),
    ("add.rn.f16 d, a, b;", {"a": 0x3C00, "b": 0x1000}),  # a tie: to even, not away
    ("add.f32 d, a, b;", {"a": F32_ONE, "b": 0x33800001}),  # no modifier: nearest (up)
    ("mul.f32 d, a, b;", {"a": 0x3FAAAAAB, "b": 0x40400000}),
    ("cvt.rzi.s32.f32 d, a;", {"a": 0xBFC00000}),  # -1.5 -> -1
    ("cvt.rmi.s32.f32 d, a;", {"a": 0xBFC00000}),  # -1.5 -> -2
    ("cvt.rpi.s32.f32 d, a;", {"a": 0xBFC00000}),  # -1.5 -> -1
    ("cvt.rni.s32.f32 d, a;", {"a": 0x40200000}),  # 2.5 -> 2
    # float-arith
    ("sub.f32 d, a, b;", {"a": F32_ONE, "b": F32_ONE}),
    ("fma.rn.f32 d, a, b, c;", {"a": 0x40000000, "b": 0x40400000, "c": F32_ONE}),  # 2*3+1
    # fma rounds once: (1 + 2**-12)**2 - 1 keeps the 2**-24 that a rounded product drops
    ("fma.rn.f32 d, a, b, c;", {"a": 0x3F800800, "b": 0x3F800800, "c": 0xBF800000}),
    ("rcp.rn.f32 d, a;", {"a": 0x40000000}),  # 1/2
    ("rcp.rz.f32 d, a;", {"a": 0x40400000}),  # 1/3 toward zero
    ("div.rz.f32 d, a, b;", {"a": F32_ONE, "b": 0x40400000}),
    ("div.rp.f64 d, a, b;", {"a": 0x3FF0000000000000, "b": 0x4008000000000000}),
    ("sqrt.rp.f32 d, a;", {"a": 0x40000000}),  # sqrt 2 rounded up
    ("sqrt.rm.f64 d, a;", {"a": 0x4000000000000000}),
    ("add.rn.f16x2 d, a, b;", {"a": 0x3C003C00, "b": 0x3C000000}),  # lanes in place
    ("copysign.f32 d, a, b;", {"a": 0x80000000, "b": F32_ONE}),  # a's sign, b's value
    ("copysign.f64 d, a, b;", {"a": 0, "b": 0xC000000000000000}),
    # open NaNs stay open; .sat maps every NaN to +0
    ("add.f32 d, a, b;", {"a": F32_INF, "b": 0xFF800000}),
    ("add.sat.f32 d, a, b;", {"a": F32_INF, "b": 0xFF800000}),
    ("cvt.rn.sat.f16.f32 d, a;", {"a": 0x7FC00001}),
    # .sat: [+0, 1]
    ("add.sat.f32 d, a, b;", {"a": F32_ONE, "b": F32_ONE}),  # 2 -> 1
    ("add.sat.f32 d, a, b;", {"a": F32_ONE, "b": 0x3F000000}),  # 1.5 -> 1
    ("mul.sat.f32 d, a, b;", {"a": 0x3F000000, "b": 0x3F000000}),  # 0.25 kept
    ("add.sat.f32 d, a, b;", {"a": 0x80000000, "b": 0x80000000}),  # -0 -> +0 (ptxas folds)
    ("cvt.sat.f32.f16 d, a;", {"a": 0x4000}),  # 2 -> 1
    ("cvt.rn.sat.f16.f32 d, a;", {"a": 0x40000000}),
    # testp
    ("testp.finite.f32 p, a;", {"a": F32_NAN}),
    ("testp.finite.f32 p, a;", {"a": F32_INF}),
    ("testp.number.f32 p, a;", {"a": F32_INF}),
    ("testp.notanumber.f64 p, a;", {"a": 0x7FF0000000000001}),
    ("testp.subnormal.f32 p, a;", {"a": 0}),
    ("testp.subnormal.f32 p, a;", {"a": 0x807FFFFF}),
    ("testp.normal.f32 p, a;", {"a": 0x007FFFFF}),
    ("testp.normal.f32 p, a;", {"a": 0x00800000}),
    ("testp.normal.f32 p, a;", {"a": F32_NAN}),
    ("testp.normal.f32 p, a;", {"a": 0}),  # open: the text and ptxas disagree
    ("testp.infinite.f32 p, a;", {"a": 0xFF800000}),
    # .ftz: inputs and results, sign kept, only subnormals
    ("add.ftz.f32 d, a, b;", {"a": 0x80000001, "b": 0x80000000}),  # -0 + -0 = -0
    ("add.ftz.f32 d, a, b;", {"a": 0x00800000, "b": 0}),  # the smallest normal stays
    ("add.ftz.f32 d, a, b;", {"a": 0x00000001, "b": 0x00800000}),  # an input flushed
    ("mul.rn.ftz.f32 d, a, b;", {"a": 0x00800000, "b": 0x3F000000}),  # a subnormal result
    ("add.ftz.f16 d, a, b;", {"a": 0x0001, "b": 0}),
    ("min.ftz.f32 d, a, b;", {"a": 0x80000001, "b": 0}),
    # cvt
    ("cvt.rzi.s32.f32 d, a;", {"a": 0xFF800000}),  # -inf -> MININT
    ("cvt.rzi.s32.f32 d, a;", {"a": 0xCF32D05E}),  # -3e9 -> MININT
    ("cvt.rzi.s32.f32 d, a;", {"a": 0x4F000000}),  # 2**31 -> MAXINT
    ("cvt.rzi.s32.f32 d, a;", {"a": F32_NAN}),  # NaN -> 0
    ("cvt.rzi.u32.f32 d, a;", {"a": 0xBF800000}),  # -1 -> 0
    ("cvt.rzi.u32.f32 d, a;", {"a": 0xC0000000}),  # -2 -> 0
    ("cvt.rzi.u32.f32 d, a;", {"a": 0x4F32D05E}),  # 3e9 fits u32
    ("cvt.rni.u16.f32 d, a;", {"a": 0x477FFF80}),  # 65535.5 -> 65535 (clamped)
    ("cvt.rp.f32.s32 d, a;", {"a": 0x01000001}),
    ("cvt.rn.f32.s32 d, a;", {"a": 0xFFFFFFFF}),  # -1
    ("cvt.rz.f32.u32 d, a;", {"a": 0xFFFFFFFF}),
    ("cvt.rz.f16.f32 d, a;", {"a": 0x47800000}),  # 65536 -> the largest finite
    ("cvt.rm.bf16.f32 d, a;", {"a": 0xBF808001}),
    ("cvt.rni.f32.f32 d, a;", {"a": 0xBF000000}),  # -0.5 -> -0
    ("cvt.rpi.f64.f64 d, a;", {"a": 0x3FF8000000000000}),  # 1.5 -> 2
    ("cvt.rpi.ftz.s32.f32 d, a;", {"a": 0x00000001}),  # the subnormal is +0 first
    ("cvt.rn.ftz.f32.f64 d, a;", {"a": 0x3800000000000000}),  # 2**-127 -> 0
    ("cvt.rn.ftz.f16.f32 d, a;", {"a": 0x33800000}),  # 2**-24: an f16 subnormal, kept
    # bits
    ("popc.b64 d, a;", {"a": 0xFFFF0000FFFF0001}),
    ("clz.b32 d, a;", {"a": 0}),
    ("clz.b64 d, a;", {"a": 0}),
    ("clz.b32 d, a;", {"a": 0x00010001}),
    ("brev.b32 d, a;", {"a": 1}),
    ("brev.b64 d, a;", {"a": 0x8000000000000003}),
    ("bfe.u32 d, a, b, c;", {"a": 0xFFFFFFFF, "b": 256, "c": 8}),  # pos & 0xff
    ("bfe.u32 d, a, b, c;", {"a": 0xFFFFFFFF, "b": 0, "c": 0x104}),  # len & 0xff
    ("bfe.u32 d, a, b, c;", {"a": 0xFFFFFFFF, "b": 40, "c": 4}),  # pos past msb
    ("bfe.s32 d, a, b, c;", {"a": 0x80000000, "b": 40, "c": 4}),
    ("bfe.s32 d, a, b, c;", {"a": 0x80000000, "b": 0, "c": 0}),  # len 0: 0
    ("bfe.s32 d, a, b, c;", {"a": 0x0000F000, "b": 12, "c": 4}),
    ("bfe.u32 d, a, b, c;", {"a": 0x0000F000, "b": 12, "c": 4}),
    ("bfe.s32 d, a, b, c;", {"a": 0x00008000, "b": 8, "c": 30}),  # field past msb: bit 31
    ("bfe.u64 d, a, b, c;", {"a": (1 << 64) - 1, "b": 0, "c": 256}),  # open
    ("prmt.b32 d, a, b, c;", {**PRMT, "c": 0x7654}),
    ("prmt.b32 d, a, b, c;", {**PRMT, "c": 0x3210}),
    ("prmt.b32 d, a, b, c;", {"a": 0x33221100, "b": 0x77665580, "c": 0x4444}),  # no sign
    ("prmt.b32 d, a, b, c;", {"a": 0x33221100, "b": 0x80665544, "c": 0x010F}),  # sign
    *[(f"prmt.b32.{mode} d, a, b, c;", {**PRMT, "c": c})
      for mode in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16") for c in (0, 1, 2, 3, 5, 0xE)],
    ("shf.l.wrap.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 4}),
    ("shf.r.wrap.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 4}),
    ("shf.l.wrap.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 33}),
    ("shf.l.clamp.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 33}),
    ("shf.r.clamp.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 40}),
    ("shf.r.clamp.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 32}),
    # integers
    ("mul.hi.u32 d, a, b;", {"a": 0x80000000, "b": 4}),
    ("mul.hi.s32 d, a, b;", {"a": 0xFFFFFFFF, "b": 2}),  # -2: the high word is -1
    ("mul.wide.s32 d, a, b;", {"a": 0xFFFFFFFF, "b": 5}),
    ("mul.wide.u32 d, a, b;", {"a": 0xFFFFFFFF, "b": 5}),
    ("mad.lo.s32 d, a, b, c;", {"a": 3, "b": 4, "c": 5}),
    ("mad.hi.u32 d, a, b, c;", {"a": 0x80000000, "b": 4, "c": 1}),
    ("mad.wide.s16 d, a, b, c;", {"a": 0xFFFF, "b": 3, "c": 1}),
    ("mad.hi.sat.s32 d, a, b, c;", {"a": 0xFFFFFFFF, "b": 1, "c": 0}),  # -1 + 0
    ("mad.hi.sat.s32 d, a, b, c;", {"a": 0x7FFFFFFF, "b": 0x7FFFFFFF, "c": 0x7FFFFFFF}),
    ("mad.hi.sat.s32 d, a, b, c;", {"a": 0x80000000, "b": 0x7FFFFFFF, "c": 0x80000000}),
    ("add.sat.s32 d, a, b;", {"a": 0x7FFFFFFF, "b": 1}),
    ("sub.sat.s32 d, a, b;", {"a": 0x80000000, "b": 1}),
    ("div.s32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}),  # -7 / 2 = -3
    ("div.u32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}),
    ("div.s32 d, a, b;", {"a": 0x80000000, "b": 0xFFFFFFFF}),  # MININT / -1 wraps
    ("rem.s32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}),  # -7 % 2 = -1
    ("rem.s32 d, a, b;", {"a": 7, "b": 0xFFFFFFFE}),  # 7 % -2 = 1
    ("rem.u32 d, a, b;", {"a": 0xFFFFFFF9, "b": 10}),
    ("div.u32 d, a, b;", {"a": 7, "b": 0}),  # open
    ("rem.s64 d, a, b;", {"a": 7, "b": 0}),  # open
    ("min.s32 d, a, b;", {"a": 0xFFFFFFFF, "b": 1}),
    ("min.u32 d, a, b;", {"a": 0xFFFFFFFF, "b": 1}),
    ("max.u32 d, a, b;", {"a": 1, "b": 2}),
    ("max.s16 d, a, b;", {"a": 0x8000, "b": 1}),
    # float min/max: NaN, .NaN, signed zeros
    ("min.f32 d, a, b;", {"a": F32_NAN, "b": F32_ONE}),
    ("max.f32 d, a, b;", {"a": F32_ONE, "b": F32_NAN}),
    ("min.NaN.f32 d, a, b;", {"a": F32_NAN, "b": F32_ONE}),  # open (canonical NaN)
    ("max.NaN.f16 d, a, b;", {"a": 0x3C00, "b": 0x7E00}),
    ("min.f32 d, a, b;", {"a": 0x80000000, "b": 0}),  # -0
    ("min.f32 d, a, b;", {"a": 0, "b": 0x80000000}),
    ("max.f32 d, a, b;", {"a": 0x80000000, "b": 0}),  # +0
    # 9.3: the guard
    ("@!p add.u32 d, a, b;", {"p": True, "a": 1, "b": 2, "d": 7}),
    ("@!p add.u32 d, a, b;", {"p": False, "a": 1, "b": 2, "d": 7}),
    ("@p add.u32 d, a, b;", {"p": False, "a": 1, "b": 2, "d": 7}),
]


# sm_1x: f32 inputs and results flush without .ftz
SM1X = [
    ("cvt.rpi.s32.f32 d, a;", {"a": 0x00000001}),
    ("cvt.rn.f32.f64 d, a;", {"a": 0x3800000000000000}),
    ("add.f32 d, a, b;", {"a": 0x00000001, "b": 0x00000001}),
    ("mul.rn.f32 d, a, b;", {"a": 0x00800000, "b": 0x3F000000}),
]


def _out(ptx: str) -> str:
    return "p" if "testp" in ptx else "d"


def _id(ptx: str, inputs: dict) -> str:
    return f"{ptx[:-1]} " + " ".join(f"{k}={int(v):#x}" for k, v in inputs.items())


def _expect(ptx, inputs, target=90):
    return reference(ptx, inputs, target)[_out(ptx)]


@pytest.mark.parametrize("ptx, inputs, target", [(*e, 90) for e in EDGES] +
                         [(*e, 13) for e in SM1X],
                         ids=[_id(*e) for e in EDGES] + [f"sm_13 {_id(*e)}" for e in SM1X])
def test_edges_match_the_oracle(ptx, inputs, target):
    want = _expect(ptx, inputs, target)
    if want == UNSPECIFIED:
        with pytest.raises(PtxError, match="unspecified"):
            evaluate(ptx, inputs, Options(target=target))
        return
    got = evaluate(ptx, inputs, Options(target=target)).outputs[_out(ptx)]
    assert got == want, (hex(got), hex(want))


def test_edges_match_the_oracle_in_a_batch():
    """The batch (compiled or line by line) on the same cases."""
    got = evaluate_many([(p, {k: hex(int(v)) for k, v in i.items()}) for p, i in EDGES],
                        Options())
    bad = []
    for (ptx, inputs), r in zip(EDGES, got):
        want = _expect(ptx, inputs)
        if isinstance(r, Exception):
            ok = want == UNSPECIFIED and isinstance(r, PtxError) and "unspecified" in str(r)
        else:  # outputs as JSON writes them: hex strings
            got_value = r[_out(ptx)]
            if want == UNSPECIFIED or got_value == "unspecified":
                ok = want == UNSPECIFIED and got_value == "unspecified"
            else:
                ok = (int(got_value, 16) if isinstance(got_value, str) else got_value) == want
        if not ok:
            bad.append((ptx, inputs, r))
    assert not bad, bad[:5]
