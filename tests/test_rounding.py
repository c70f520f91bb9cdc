"""The instructions compilers emit beyond compares: float-arith (add/sub/mul/fma/mad/div/
sqrt/rcp with .rnd/.ftz/.sat, copysign, testp), convert (cvt that rounds), bits (popc,
clz, brev, bfe, prmt, shf) and arith's mul.wide/mad/div/rem, against the independent
oracle (tests/oracle_rounding.py on tests/exact_float.py's rational arithmetic), which is
itself held against numpy/ml_dtypes for .rn and against hand-worked directed cases.

Both evaluation paths: substitution + simplify (ptxsmt.evaluate) and the batch.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from fractions import Fraction
from pathlib import Path

import exact_float as ef
import ml_dtypes
import numpy as np
import pytest
from batchbits import evaluate_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import UNSPECIFIED
from reference import run as reference
from strategies import lane_bits
from test_arith import SCRIPTS, _below, _line, _ver

from ptxsmt import Options, PtxError, evaluate
from ptxsmt.check import check_line
from ptxsmt.isa.syntax import format_variant
from ptxsmt.isa.targets import TARGET_MIN_PTX, parse_target
from ptxsmt.isa.types import PRED
from ptxsmt.isa.variants import catalogue, operand_slots, operand_types

NEW_INT = [v for v in catalogue().family("arith") if v.opcode in ("div", "rem", "mad")
           or v.mode == "wide"]
FAMILIES = {name: catalogue().family(name) for name in ("float-arith", "convert", "bits")}
FAMILIES["int"] = NEW_INT


def text(v) -> str:
    return f"{format_variant(v)} {', '.join(operand_slots(v))};"


def _operand(v, slot, t):
    if v.opcode in ("bfe", "bfi", "shf") and slot in ("b", "c", "e") and t.width == 32 and \
            t.kind.name == "UNSIGNED":
        return st.one_of(st.sampled_from([0, 1, 7, 8, 31, 32, 33, 63, 64, 255, 256, 0x1F1F]),
                         st.integers(0, (1 << 32) - 1))
    return lane_bits(t)


@st.composite
def cases(draw, variants):
    v = draw(st.sampled_from(variants))
    types = operand_types(v)
    inputs = {n: draw(_operand(v, n, types[n])) for n in operand_slots(v)
              if n not in ("d", "p")}
    return text(v), inputs


def _out(v_text: str) -> str:
    return "p" if v_text.startswith("testp") else "d"


def _check_slow(ptx, inputs, target=90):
    want = reference(ptx, inputs, target)[_out(ptx)]
    if want == UNSPECIFIED:
        with pytest.raises(PtxError, match="unspecified"):
            evaluate(ptx, inputs, Options(target=target))
        return
    got = evaluate(ptx, inputs, Options(target=target)).outputs[_out(ptx)]
    assert got == want, (ptx, {k: hex(x) for k, x in inputs.items()}, hex(got), hex(want))


@pytest.mark.parametrize("family", list(FAMILIES))
@settings(max_examples=settings.default.max_examples, deadline=None)
@given(data=st.data())
def test_slow_path_matches_the_oracle(family, data):
    ptx, inputs = data.draw(cases(FAMILIES[family]))
    _check_slow(ptx, inputs)


@settings(max_examples=60, deadline=None)
@given(case=cases([v for v in catalogue().family("float-arith") + catalogue().family("convert")
                   if "f32" in {t.name for t in v.types}]))
def test_sm_1x_flushes_f32(case):
    """sm_1x: f32 inputs and results flush without .ftz (the float-arith and cvt rules)."""
    _check_slow(*case, target=13)


@settings(max_examples=25, deadline=None)
@given(batch=st.lists(cases([v for f in FAMILIES.values() for v in f]), min_size=1,
                      max_size=30))
def test_batch_path_matches_the_oracle(batch):
    """The batch answers every line (its compiled path, or line by line where the code
    generator has no operator for IEEE rounding) as the oracle does."""
    items = [(ptx, {k: hex(x) for k, x in inputs.items()}) for ptx, inputs in batch]
    for (ptx, inputs), got in zip(batch, evaluate_bits(items)):
        want = reference(ptx, inputs)[_out(ptx)]
        if want == UNSPECIFIED:
            assert isinstance(got, PtxError) and "unspecified" in str(got)
        else:
            assert not isinstance(got, Exception), (ptx, got)
            assert got[_out(ptx)] == want, (ptx, inputs)


# ---- stated rules, worked by hand from the ISA text -------------------------------------

@pytest.mark.parametrize(("ptx", "inputs", "out"), [
    # directed rounding of 1 + 2**-30 (f32: between 1.0 and 1.0 + 2**-23)
    ("add.rn.f32 d, a, b;", {"a": 0x3F800000, "b": 0x30800000}, 0x3F800000),
    ("add.rz.f32 d, a, b;", {"a": 0x3F800000, "b": 0x30800000}, 0x3F800000),
    ("add.rp.f32 d, a, b;", {"a": 0x3F800000, "b": 0x30800000}, 0x3F800001),
    ("add.rm.f32 d, a, b;", {"a": 0xBF800000, "b": 0xB0800000}, 0xBF800001),
    # x + (-x): +0, but -0 rounding toward -inf
    ("sub.rn.f32 d, a, b;", {"a": 0x3F800000, "b": 0x3F800000}, 0x00000000),
    ("sub.rm.f32 d, a, b;", {"a": 0x3F800000, "b": 0x3F800000}, 0x80000000),
    # overflow: .rz stops at the largest finite value
    ("mul.rz.f32 d, a, b;", {"a": 0x7F7FFFFF, "b": 0x40000000}, 0x7F7FFFFF),
    ("mul.rn.f32 d, a, b;", {"a": 0x7F7FFFFF, "b": 0x40000000}, 0x7F800000),
    # .ftz: a subnormal input is zero; a subnormal result is zero
    ("add.ftz.f32 d, a, b;", {"a": 0x00000001, "b": 0x00000000}, 0x00000000),
    ("mul.rn.ftz.f32 d, a, b;", {"a": 0x00800000, "b": 0x3F000000}, 0x00000000),
    ("mul.rn.f32 d, a, b;", {"a": 0x00800000, "b": 0x3F000000}, 0x00400000),
    # .sat: clamp to [0, 1], NaN to +0
    ("add.sat.f32 d, a, b;", {"a": 0x3F800000, "b": 0x3F800000}, 0x3F800000),
    ("add.sat.f32 d, a, b;", {"a": 0xBF800000, "b": 0x00000000}, 0x00000000),
    ("add.sat.f32 d, a, b;", {"a": 0x7F800000, "b": 0xFF800000}, 0x00000000),
    ("add.sat.f32 d, a, b;", {"a": 0x80000000, "b": 0x80000000}, 0x00000000),  # ptxas folds
    # fma rounds once: (1 + 2**-12)**2 - 1 keeps the 2**-24 term that mul.rn drops
    ("fma.rn.f32 d, a, b, c;", {"a": 0x3F800800, "b": 0x3F800800, "c": 0xBF800000}, 0x3A000400),
    ("div.rn.f32 d, a, b;", {"a": 0x3F800000, "b": 0x40400000}, 0x3EAAAAAB),
    ("div.rz.f32 d, a, b;", {"a": 0x3F800000, "b": 0x40400000}, 0x3EAAAAAA),
    ("sqrt.rn.f32 d, a;", {"a": 0x40000000}, 0x3FB504F3),
    ("sqrt.rn.f32 d, a;", {"a": 0x80000000}, 0x80000000),
    ("rcp.rn.f64 d, a;", {"a": 0x4008000000000000}, 0x3FD5555555555555),
    ("add.rn.f16 d, a, b;", {"a": 0x3C00, "b": 0x1000}, 0x3C00),  # 1 + 2**-11: a tie, even
    ("add.rn.f16x2 d, a, b;", {"a": 0x3C003C00, "b": 0x3C000000}, 0x40003C00),
    ("copysign.f32 d, a, b;", {"a": 0x80000000, "b": 0x3F800000}, 0xBF800000),
    # cvt
    ("cvt.rn.f16.f32 d, a;", {"a": 0x3F801000}, 0x3C00),  # 1 + 2**-11: tie to even
    ("cvt.rp.f16.f32 d, a;", {"a": 0x3F801000}, 0x3C01),
    ("cvt.rn.f16.f32 d, a;", {"a": 0x47800000}, 0x7C00),  # 65536 overflows
    ("cvt.rz.f16.f32 d, a;", {"a": 0x47800000}, 0x7BFF),
    ("cvt.rn.bf16.f32 d, a;", {"a": 0x3F808000}, 0x3F80),
    ("cvt.rzi.s32.f32 d, a;", {"a": 0xBFC00000}, 0xFFFFFFFF),  # -1.5 -> -1
    ("cvt.rmi.s32.f32 d, a;", {"a": 0xBFC00000}, 0xFFFFFFFE),  # -1.5 -> -2
    ("cvt.rni.s32.f32 d, a;", {"a": 0x40200000}, 2),  # 2.5 -> 2 (even)
    ("cvt.rzi.s32.f32 d, a;", {"a": 0x7FC00000}, 0),  # NaN -> 0 (a 32-bit conversion)
    ("cvt.rzi.s32.f64 d, a;", {"a": 0x7FF8000000000000}, 0x80000000),  # 64-bit: MININT
    ("cvt.rzi.s32.f32 d, a;", {"a": 0x7F800000}, 0x7FFFFFFF),  # clamped
    ("cvt.rzi.u32.f32 d, a;", {"a": 0xBF800000}, 0),
    ("cvt.rn.f32.s32 d, a;", {"a": 0x01000001}, 0x4B800000),  # 2**24 + 1: tie to even
    ("cvt.rp.f32.s32 d, a;", {"a": 0x01000001}, 0x4B800001),
    ("cvt.rni.f32.f32 d, a;", {"a": 0xBF000000}, 0x80000000),  # -0.5 -> -0
    ("cvt.sat.f32.f16 d, a;", {"a": 0x4000}, 0x3F800000),
    # integers
    ("mul.wide.s32 d, a, b;", {"a": 0xFFFFFFFF, "b": 5}, 0xFFFFFFFFFFFFFFFB),
    ("mul.wide.u32 d, a, b;", {"a": 0xFFFFFFFF, "b": 5}, 0x4FFFFFFFB),
    ("mad.lo.s32 d, a, b, c;", {"a": 3, "b": 4, "c": 5}, 17),
    ("mad.hi.u32 d, a, b, c;", {"a": 0x80000000, "b": 4, "c": 1}, 3),
    ("mad.wide.u16 d, a, b, c;", {"a": 0xFFFF, "b": 0xFFFF, "c": 1}, 0xFFFE0002),
    ("mad.hi.sat.s32 d, a, b, c;", {"a": 0x7FFFFFFF, "b": 0x7FFFFFFF, "c": 0x7FFFFFFF},
     0x7FFFFFFF),
    ("div.s32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}, 0xFFFFFFFD),  # -7 / 2 = -3
    ("rem.s32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}, 0xFFFFFFFF),  # -7 % 2 = -1
    ("div.u32 d, a, b;", {"a": 0xFFFFFFF9, "b": 2}, 0x7FFFFFFC),
    ("div.s32 d, a, b;", {"a": 0x80000000, "b": 0xFFFFFFFF}, 0x80000000),
    # bits
    ("popc.b64 d, a;", {"a": 0xFFFF0000FFFF0001}, 33),
    ("clz.b32 d, a;", {"a": 0}, 32),
    ("clz.b32 d, a;", {"a": 0x00010000}, 15),
    ("brev.b32 d, a;", {"a": 1}, 0x80000000),
    ("bfe.u32 d, a, b, c;", {"a": 0x12345678, "b": 8, "c": 8}, 0x56),
    ("bfe.s32 d, a, b, c;", {"a": 0x0000F000, "b": 12, "c": 4}, 0xFFFFFFFF),
    ("bfe.s32 d, a, b, c;", {"a": 0x80000000, "b": 40, "c": 4}, 0xFFFFFFFF),  # pos > msb
    ("bfe.u32 d, a, b, c;", {"a": 0x80000000, "b": 28, "c": 0}, 0),
    ("bfi.b32 d, a, b, c, e;", {"a": 0xABCD, "b": 0x12345678, "c": 8, "e": 8}, 0x1234CD78),
    ("bfi.b32 d, a, b, c, e;", {"a": 0xF, "b": 0, "c": 30, "e": 8}, 0xC0000000),  # past msb
    ("bfi.b32 d, a, b, c, e;", {"a": 0xF, "b": 7, "c": 32, "e": 8}, 7),  # pos > msb: b
    ("bfi.b32 d, a, b, c, e;", {"a": 2, "b": 1, "c": 0x101, "e": 0x102}, 5),  # & 0xff
    ("bfi.b64 d, a, b, c, e;", {"a": 1, "b": 0, "c": 63, "e": 255}, 1 << 63),
    ("prmt.b32 d, a, b, c;", {"a": 0x33221100, "b": 0x77665544, "c": 0x7654}, 0x77665544),
    ("prmt.b32 d, a, b, c;", {"a": 0x33221100, "b": 0x80665544, "c": 0x010F}, 0x001100FF),
    ("prmt.b32.f4e d, a, b, c;", {"a": 0x33221100, "b": 0x77665544, "c": 1}, 0x44332211),
    ("prmt.b32.b4e d, a, b, c;", {"a": 0x33221100, "b": 0x77665544, "c": 0}, 0x55667700),
    ("shf.l.wrap.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 33}, 3),
    ("shf.l.clamp.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 33}, 0x80000000),
    ("shf.r.clamp.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 40}, 1),
    ("shf.r.wrap.b32 d, a, b, c;", {"a": 0x80000000, "b": 1, "c": 4}, 0x18000000),
    ("testp.normal.f32 p, a;", {"a": 0x00800000}, True),
    ("testp.normal.f32 p, a;", {"a": 0x007FFFFF}, False),
    ("testp.subnormal.f32 p, a;", {"a": 0}, False),
    ("bfe.u32 d, a, b, c;", {"a": 0xFFFFFFFF, "b": 256, "c": 8}, 0xFF),  # ptxas folds so too
    ("testp.finite.f64 p, a;", {"a": 0x7FF0000000000000}, False),
])
def test_stated_rules(ptx, inputs, out):
    """Worked examples; the oracle and ptxsmt both give them."""
    name = "p" if ptx.startswith("testp") else "d"
    assert reference(ptx, inputs)[name] == out
    assert evaluate(ptx, inputs).outputs[name] == out


@pytest.mark.parametrize(("ptx", "inputs", "out"), [
    ("cvt.rpi.s32.f32 d, a;", {"a": 0x00000001}, 0),  # the subnormal is +0 first
    ("cvt.rn.f32.f64 d, a;", {"a": 0x3800000000000000}, 0),  # 2**-127 would be subnormal
    ("cvt.f64.f32 d, a;", {"a": 0x80000001}, 1 << 63),
    ("add.f32 d, a, b;", {"a": 0x00000001, "b": 0x00000001}, 0),
    ("mul.rn.f32 d, a, b;", {"a": 0x00800000, "b": 0x3F000000}, 0),
])
def test_sm_1x_flushes_f32_inputs_and_results(ptx, inputs, out):
    """sm_1x: "subnormal inputs and results are flushed to sign-preserving zero" for f32,
    in arithmetic and cvt alike; sm_20 keeps them."""
    assert reference(ptx, inputs, 13)["d"] == out
    assert evaluate(ptx, inputs, Options(target=13)).outputs["d"] == out
    assert evaluate(ptx, inputs, Options(target=20)).outputs["d"] != out


@pytest.mark.parametrize("ptx,inputs", [
    ("div.u32 d, a, b;", {"a": 7, "b": 0}),
    ("rem.s64 d, a, b;", {"a": 7, "b": 0}),
    ("add.rn.f32 d, a, b;", {"a": 0x7F800000, "b": 0xFF800000}),
    ("cvt.rn.f16.f32 d, a;", {"a": 0x7FC00001}),
    # the text and ptxas 13.0's folding disagree: open
    ("testp.normal.f32 p, a;", {"a": 0x80000000}),
    ("bfe.u64 d, a, b, c;", {"a": (1 << 64) - 1, "b": 0, "c": 256}),
    ("bfe.s64 d, a, b, c;", {"a": 1 << 63, "b": 260, "c": 8}),
])
def test_open_values_are_unspecified(ptx, inputs):
    out = "p" if ptx.startswith("testp") else "d"
    assert reference(ptx, inputs)[out] == UNSPECIFIED
    with pytest.raises(PtxError, match=f"output {out} is unspecified"):
        evaluate(ptx, inputs)


# ---- the exact oracle against the host's IEEE arithmetic (.rn) ---------------------------

HOST = {"f16": (np.float16, np.uint16, 16), "bf16": (ml_dtypes.bfloat16, np.uint16, 16),
        "f32": (np.float32, np.uint32, 32), "f64": (np.float64, np.uint64, 64)}
SPECIAL = {16: [0, 0x8000, 1, 0x3FF, 0x400, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7F7F,
                0x80, 0x3F80],
           32: [0, 1 << 31, 1, 0x7FFFFF, 0x800000, 0x3F800000, 0x7F7FFFFF, 0x7F800000,
                0xFF800000, 0x7FC00000],
           64: [0, 1 << 63, 1, (1 << 52) - 1, 1 << 52, 0x3FF0000000000000,
                0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0x7FF8000000000000]}


@pytest.mark.parametrize("fmt", list(HOST))
def test_exact_oracle_agrees_with_the_host_for_rn(fmt):
    ftype, utype, w = HOST[fmt]
    rng = random.Random(fmt)
    values = SPECIAL[w] + [rng.getrandbits(w) for _ in range(300)]
    pairs = [(a, b) for a in SPECIAL[w] for b in SPECIAL[w]] + \
        [(rng.choice(values), rng.choice(values)) for _ in range(1500)]
    bad = []
    for a, b in pairs:
        fa, fb = (np.array([x], dtype=utype).view(ftype)[0] for x in (a, b))
        with np.errstate(all="ignore"):
            host = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb,
                    "sqrt": np.sqrt(fa)}
        for op, r in host.items():
            got = ef.arith(op, "rn", fmt, a) if op == "sqrt" else ef.arith(op, "rn", fmt, a, b)
            want = ef.NAN if np.isnan(r) else int(np.array([r], dtype=ftype).view(utype)[0])
            if got != want:
                bad.append((op, hex(a), hex(b), got, want))
    assert not bad, bad[:5]


def test_exact_oracle_directed_rounding_brackets_the_value():
    """For every direction: rz/rm/rp results bracket the exact value and are adjacent."""
    rng = random.Random(3)
    for _ in range(2000):
        q = Fraction(rng.getrandbits(40) - (1 << 39), rng.getrandbits(30) + 1)
        down, up = ef.round_to(q, "f32", "rm"), ef.round_to(q, "f32", "rp")
        dq, uq = ef.decode(down, "f32").q, ef.decode(up, "f32").q
        assert dq <= q <= uq and (dq == uq) == (down == up)
        assert ef.round_to(q, "f32", "rz") == (down if q >= 0 else up)
        assert ef.round_to(q, "f32", "rn") in (down, up)
        if down != up:
            assert ef.round_to(q, "f32", "rn") == (down if q - dq < uq - q else up
                                                  if q - dq > uq - q else
                                                  (down if down % 2 == 0 else up))


def test_exact_oracle_known_cases():
    assert ef.round_to(Fraction(1, 3), "f32", "rz") == 0x3EAAAAAA
    assert ef.round_to(Fraction(1, 3), "f32", "rn") == 0x3EAAAAAB
    assert ef.round_to(Fraction(-1, 3), "f32", "rm") == 0xBEAAAAAB
    assert ef.round_to(Fraction(2) ** -150, "f32", "rn") == 0  # half the smallest: even
    assert ef.round_to(Fraction(3, 2) * Fraction(2) ** -149, "f32", "rn") == 2  # a tie up to even
    assert ef.round_to(Fraction(2) ** 128, "f32", "rz") == 0x7F7FFFFF
    assert ef.round_to(-Fraction(2) ** 128, "f32", "rp") == 0xFF7FFFFF
    assert ef.sqrt(ef.decode(0x40800000, "f32"), "f32", "rn") == 0x40000000


def test_every_family_is_reachable_from_a_snippet_and_the_cli_spelling():
    for family, vs in FAMILIES.items():
        assert vs, family
    assert all(v.rnd in ("rn", "rz", "rm", "rp") for v in catalogue().family("float-arith")
               if v.opcode == "fma")
    assert PRED in operand_types(next(v for v in catalogue().family("float-arith")
                                      if v.opcode == "testp")).values()


BFI_EDGES = (0, 1, 7, 31, 32, 33, 63, 64, 65, 255, 256, 257, 0x1F1F, 0xFFFFFFFF)


@pytest.mark.parametrize("width", [32, 64])
def test_bfi_inserts_as_the_text_loops(width):
    """bfi over every edge pos x len pair and random ones, against the text's loop written
    as plain Python here (f = b; f[pos+i] = a[i] for i < len and pos+i <= msb, pos and
    len masked to 8 bits), and against tests/oracle_rounding.py's."""
    rng = random.Random(width)
    pairs = [(p, n) for p in BFI_EDGES for n in BFI_EDGES] + \
        [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(200)]
    items = [(f"bfi.b{width} d, a, b, c, e;", {"a": rng.getrandbits(width),
                                               "b": rng.getrandbits(width), "c": p, "e": n})
             for p, n in pairs]
    bad = []
    for (ptx, inputs), got in zip(items, evaluate_bits(items), strict=True):
        f = list(format(inputs["b"], f"0{width}b")[::-1])
        for i in range(inputs["e"] & 0xFF):
            if (inputs["c"] & 0xFF) + i < width:
                f[(inputs["c"] & 0xFF) + i] = str(inputs["a"] >> i & 1)
        want = int("".join(reversed(f)), 2)
        if not got["d"] == want == reference(ptx, inputs)["d"]:
            bad.append(({k: hex(x) for k, x in inputs.items()}, hex(got["d"]), hex(want)))
    assert not bad, bad[:5]


# ---- legality: ptxas 13.0 on each variant's claimed minimum, and just below -------------

@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("family", ["float-arith", "convert", "bits", "glue"])
def test_catalogue_agrees_with_ptxas_at_and_below_each_requirement(family):
    """Every variant assembles on its claimed minimum target and version, and `check`
    agrees with ptxas one step below (older version, older target)."""
    sys.path.insert(0, str(SCRIPTS))
    import ptxas_probe

    vs_all = catalogue().family(family)
    by_header: dict[tuple[str, str], list] = {}
    for v in vs_all:
        req = catalogue().requirement(v)
        headers = [(f"sm_{req.sm}", _ver(max(req.ptx, TARGET_MIN_PTX[f"sm_{req.sm}"]))),
                   *_below(req)]
        for header in headers:
            by_header.setdefault(header, []).append(v)
    wrong = []
    for (target, version), vs in by_header.items():
        lines = [_line(v) for v in vs]
        for v, line, err in zip(vs, lines, ptxas_probe.probe(lines, target, version)):
            ours = check_line(text(v), parse_target(target), tuple(map(int, version.split("."))))
            if (ours is None) != (err is None):
                wrong.append((target, version, line, err, ours))
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:5]}"


# ---- whole functions: the compiler pairs the issue found "different" -----------------------

KERNEL = """.version 7.0
.target sm_80
.address_size 64
.visible .entry f(.param .u32 f_param_0, .param .u64 f_param_1)
{{
  .reg .b32 %r<12>; .reg .b64 %rd<5>; .reg .f32 %f<4>; .reg .b16 %rs<3>;
  ld.param.u32 %r1, [f_param_0];
  ld.param.u64 %rd1, [f_param_1];
{body}
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  st.global.u32 [%rd3+4], %r3;
{cvt}  ret;
}}
"""
O0 = "  div.u32 %r2, %r1, 2;\n  shf.l.wrap.b32 %r3, %r1, %r1, 5;"
O3 = ("  shr.u32 %r2, %r1, 1;\n  shl.b32 %r5, %r1, 5;\n  shr.b32 %r6, %r1, 27;\n"
      "  or.b32 %r3, %r5, %r6;")


CVT = "  mov.b32 %f1, %r1;\n  cvt.rn.f16.f32 %rs1, %f1;\n  st.global.u16 [%rd3+8], %rs1;\n"


@pytest.mark.parametrize(("body", "cvt", "verdict"), [
    (O3, CVT, "equivalent"),
    (O3.replace("27", "26"), "", "different"),  # a wrong rotate
    (O3.replace("27", "26"), CVT, "different"),  # ... beside a cvt whose NaN is open
    (O3.replace("shr.u32 %r2, %r1, 1", "shr.s32 %r2, %r1, 1"), "", "different"),
])
def test_functions_with_div_shf_mul_wide_and_cvt_compare(body, cvt, verdict):
    """div.u32 by 2 is shr; shf.l.wrap is a rotate; mul.wide and cvt.rn.f16.f32 agree with
    themselves (they were opaque, one side's free value against the other's)."""
    from ptxsmt.function import read_function
    from ptxsmt.smt.queries.functions import check_function_equivalence

    lhs = read_function(KERNEL.format(body=O0, cvt=cvt))
    rhs = read_function(KERNEL.format(body=body, cvt=cvt))
    got = check_function_equivalence(lhs, rhs)
    assert got.verdict == verdict and not got.uninterpreted


# ---- ptxas 13.0's constant folder, recorded (scripts/ptxas_folds.py) ---------------------

FOLDS = [json.loads(line) for line in
         (Path(__file__).parent / "ptxas_folds.jsonl").read_text().splitlines()]


def _folded(value):
    return value if isinstance(value, bool) else int(value, 16)


def test_ptxsmt_agrees_with_what_ptxas_folds():
    """1,181 cases of the new families that ptxas -O3 folds to constants (cvt in every
    kind, add/sub/mul/mad, testp, bfe, shf, prmt, popc, clz, brev): ptxsmt's values."""
    assert len(FOLDS) > 1000
    got = evaluate_bits([(f["ptx"], f["inputs"]) for f in FOLDS])
    bad = [(f["ptx"], f["inputs"], r, f["ptxas"]) for f, r in zip(FOLDS, got)
           if any(r[k] != _folded(v) for k, v in f["ptxas"].items())]
    assert not bad, bad[:5]


def test_the_oracle_agrees_with_what_ptxas_folds():
    """The same cases through tests/oracle_rounding.py: the oracle is ptxas's reading too."""
    bad = []
    for f in FOLDS:
        inputs = {k: int(v, 16) for k, v in f["inputs"].items()}
        want = reference(f["ptx"], inputs)
        if any(want[k] != _folded(v) for k, v in f["ptxas"].items()):
            bad.append((f["ptx"], f["inputs"], f["ptxas"]))
    assert not bad, bad[:5]
