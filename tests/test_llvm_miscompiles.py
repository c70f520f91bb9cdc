"""Known NVPTX miscompiles, in PTX that llc-14 and llvmlite's LLVM 22.1 wrote
(tests/ptx/llvm/miscompiles/, made by `llc-14 -march=nvptx64 -mcpu=sm_80 -O{0,2}` and
`compile_to_ptx(..., opt={0,2})`), are found, and each counterexample is checked against
plain Python: the IR's value computed from the LangRef by hand, and the PTX's from the
PTX instructions that were emitted. Correct compiles of the same IR refine.

- llc-14: `ashr exact (and x, -32768), 15` as the unsigned `bfe.u32`; `sitofp i1 true`
  as +1.0; a 64-bit rotate (fshl) by an amount not taken modulo 64.
- both LLVMs: `fptoui float to i1` as `x == 0.0` (llvm/llvm-project#200718), and
  `fptosi float to i1` the same way (1, i.e. -1, for +0.0; the IR's is 0).
- LLVM 22.1 -O2: `sext (shl nsw i16 x, 15)` as `mul.wide.s16 x, -32768`.
- LLVM 22.1: `uitofp i32 to bfloat` as `cvt.rn.f32.u32` then `cvt.rn.bf16.f32`, which rounds
  twice (llc-14 cannot select bfloat conversions: its files lack the function).
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

HERE = Path(__file__).parent / "ptx" / "llvm" / "miscompiles"
IR = read_ir((HERE / "known.ll").read_text())


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _s(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) & 1 else x


def _rotl(a: int, n: int) -> int:
    n %= 64
    return ((a << n) | (a >> (64 - n))) & (2 ** 64 - 1) if n else a


def _nearest_even(n: int, digits: int) -> int:
    """The integer n > 0 rounded to `digits` significant bits, ties to even."""
    drop = max(n.bit_length() - digits, 0)
    q, r = divmod(n, 1 << drop)
    half = (1 << drop) >> 1
    return (q + (r > half or (r == half and drop > 0 and q & 1))) << drop


def _bf16_bits(n: int) -> int:
    """The bfloat holding the integer n (exact: n has at most 8 significant bits)."""
    return _bits(float(n)) >> 16 if n else 0


def _fpto_i1(x: int, fits: tuple[int, int]) -> int | None:
    """fptoui/fptosi to i1: the truncated value's bit where it fits, else poison (None)."""
    t = math.trunc(_f32(x)) if math.isfinite(_f32(x)) else None
    return t & 1 if t in fits else None


# function: (IR value from its inputs (None: poison), bits of the IR value compared)
ORACLE = {
    "ashr_bfe": (lambda i: (_s(i["a"] & 0xFFFF8000, 32) >> 15) & 0xFFFFFFFF, 32),
    "i1_to_float": (lambda i: _bits(-1.0 if i["a"] else 0.0), 32),
    "rotl64": (lambda i: _rotl(i["a"], i["n"]), 64),
    "f32_to_u1": (lambda i: _fpto_i1(i["x"], (0, 1)), 1),
    "f32_to_s1": (lambda i: _fpto_i1(i["x"], (-1, 0)), 1),
    "sext_shl_top": (lambda i: (_s(i["x"], 16) << 15) & 0xFFFFFFFF
                     if -(2 ** 15) <= _s(i["x"], 16) << 15 < 2 ** 15 else None, 32),
    # LangRef uitofp: "the value is rounded using the default rounding mode": once
    "u32_to_bf16": (lambda i: _bf16_bits(_nearest_even(i["a"], 8)), 16),
}
# function: the PTX's value from the instructions the compiler emitted (where short)
PTX_ORACLE = {
    "ashr_bfe": lambda i: (i["a"] >> 15) & 0x1FFFF,                       # bfe.u32 a, 15, 17
    "i1_to_float": lambda i: _bits(float(i["a"] & 1)),                    # cvt.rn.f32.u32
    "f32_to_u1": lambda i: int(i["x"] == 0),                               # setp.eq x, 0
    "f32_to_s1": lambda i: int(i["x"] == 0),                               # setp.eq x, 0
    "sext_shl_top": lambda i: (_s(i["x"], 16) * -32768) & 0xFFFFFFFF,      # mul.wide.s16
    "u32_to_bf16": lambda i: _bf16_bits(_nearest_even(_nearest_even(i["a"], 24), 8)),
}
# (PTX file, function): different (True) or refines (False)
EXPECTED = {
    **{(f, "ashr_bfe"): f.startswith("llc14") for f in ("llc14_O0", "llc14_O2", "lite_O2")},
    **{(f, "i1_to_float"): f.startswith("llc14") for f in ("llc14_O0", "llc14_O2", "lite_O2")},
    **{(f, "rotl64"): f.startswith("llc14") for f in ("llc14_O0", "llc14_O2", "lite_O2")},
    **{(f, "f32_to_u1"): True for f in ("llc14_O0", "llc14_O2", "lite_O0", "lite_O2")},
    **{(f, "f32_to_s1"): True for f in ("llc14_O0", "llc14_O2", "lite_O0", "lite_O2")},
    ("lite_O2", "sext_shl_top"): True, ("llc14_O2", "sext_shl_top"): False,
    **{(f, "u32_to_bf16"): True for f in ("lite_O0", "lite_O2")},
}


@pytest.mark.parametrize("ptx,name", sorted(EXPECTED), ids=lambda x: x)
def test_known_miscompiles_are_found_and_correct_compiles_refine(ptx, name):
    fn = read_function((HERE / f"known_{ptx}.ptx").read_text(), name)
    r = ir_refines(IR[name], fn, timeout_ms=60_000)
    if not EXPECTED[ptx, name]:
        assert r.verdict == "refines", r
        return
    assert r.verdict == "different", r
    oracle, width = ORACLE[name]
    want = oracle(r.inputs)
    assert want is not None, "the counterexample's IR value is poison: nothing to differ from"
    mask = (1 << width) - 1
    assert r.ir_result & mask == want
    assert r.ptx_result & mask != want
    if name in PTX_ORACLE:
        assert r.ptx_result & mask == PTX_ORACLE[name](r.inputs) & mask
