"""The arithmetic next to compares (the "arith" family and cvt between integers) against
the independent oracle, numpy, and ptxas 13.0 for legality.

Special values first: integer extremes and signs, shift amounts around the width, ±0,
±inf, NaNs with payloads and subnormals (tests/strategies.py). Both evaluation paths are
checked: substitution + simplify (ptxsmt.evaluate) and the compiled numpy batch.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import z3
from batchbits import evaluate_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import evaluate as oracle_evaluate
from reference import UNSPECIFIED
from reference import run as reference
from strategies import bits, lane_bits

from ptxsmt import Options, PtxError, evaluate
from ptxsmt.check import check_line
from ptxsmt.fast.codegen import compile_terms
from ptxsmt.isa.syntax import format_variant
from ptxsmt.isa.targets import TARGET_MIN_PTX, parse_target
from ptxsmt.isa.types import ptx_type
from ptxsmt.isa.variants import catalogue, operand_slots, operand_types

ARITH = catalogue().family("arith")
INT_CVT = [v for v in catalogue().family("glue") if v.opcode == "cvt" and not v.atype.is_float]
SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def text(v) -> str:
    return f"{format_variant(v)} {', '.join(operand_slots(v))};"


def _operand(t, width_shift: int | None):
    """Special values first; a shift amount around the width."""
    if width_shift:
        w = width_shift
        return st.one_of(st.sampled_from([0, 1, w - 1, w, w + 1, 0xFFFFFFFF]), bits(32))
    return lane_bits(t)


@st.composite
def cases(draw, variants=ARITH + INT_CVT):
    v = draw(st.sampled_from(variants))
    types = operand_types(v)
    shift = types["a"].width if v.opcode in ("shl", "shr") else None
    inputs = {n: draw(_operand(types[n], shift if n == "b" else None))
              for n in operand_slots(v) if n != "d"}
    return text(v), inputs


def _want(ptx: str, inputs: dict, target: int):
    return reference(ptx, inputs, target)["d"]


@settings(max_examples=settings.default.max_examples * 2, deadline=None)
@given(case=cases(), target=st.sampled_from([90, 13]))
def test_slow_path_matches_the_oracle(case, target):
    ptx, inputs = case
    want = _want(ptx, inputs, target)
    if want == UNSPECIFIED:
        with pytest.raises(PtxError, match="output d is unspecified"):
            evaluate(ptx, inputs, Options(target=target))
        return
    assert evaluate(ptx, inputs, Options(target=target)).outputs == {"d": want}


@settings(deadline=None)
@given(batch=st.lists(cases(), min_size=1, max_size=40), target=st.sampled_from([90, 13]))
def test_fast_path_matches_the_oracle(batch, target):
    items = [(ptx, {k: hex(x) for k, x in inputs.items()}) for ptx, inputs in batch]
    for (ptx, inputs), got in zip(batch, evaluate_bits(items, Options(target=target))):
        want = _want(ptx, inputs, target)
        if want == UNSPECIFIED:
            assert isinstance(got, PtxError) and "unspecified" in str(got)
        else:
            assert got == {"d": want}, (ptx, inputs)


# ---- the oracle's float rules against numpy, where numpy's rules are the ISA's ----------

FLOATS = [(np.float16, "f16", np.uint16), (ml_dtypes.bfloat16, "bf16", np.uint16),
          (np.float32, "f32", np.uint32), (np.float64, "f64", np.uint64)]


@pytest.mark.parametrize(("np_type", "name", "word"), FLOATS, ids=[f[1] for f in FLOATS])
def test_oracle_min_max_agree_with_numpy_off_nan_and_zero(np_type, name, word):
    """np.fmin/fmax return the non-NaN operand as the ISA does; their choice between -0 and
    +0 is unspecified, so the pairs of zeros are checked by the ISA's rule alone."""
    rng = np.random.default_rng(7)
    width = np.dtype(word).itemsize * 8
    raw = rng.integers(0, 1 << min(width, 63), 3000, dtype=np.uint64).astype(word)
    special = np.array([0, 1 << (width - 1), 1, 0x7E00 if width == 16 else 0], dtype=word)
    a, b = np.concatenate([raw, special]), np.concatenate([raw[::-1], special[::-1]])
    with np.errstate(invalid="ignore"):
        fa, fb = a.view(np_type), b.view(np_type)
        for op, np_op in (("min", np.fmin), ("max", np.fmax)):
            want = np_op(fa, fb).view(word)
            for x, y, fx, fy, w in zip(a.tolist(), b.tolist(), fa.tolist(), fb.tolist(),
                                       want.tolist()):
                got = oracle_evaluate({"opcode": op, "type": name}, {"a": x, "b": y},
                                      lambda key, fmt: -1)["d"]
                if got == -1:  # two NaNs: a NaN the ISA leaves open
                    continue
                if fx == fy == 0:  # the sign bit decides: -0.0 < +0.0
                    assert got == (max(x, y) if op == "min" else min(x, y))
                else:
                    assert got == w, (op, name, hex(x), hex(y))


@pytest.mark.parametrize(("np_type", "name", "word"), FLOATS, ids=[f[1] for f in FLOATS])
def test_oracle_abs_neg_agree_with_numpy_off_nan(np_type, name, word):
    width = np.dtype(word).itemsize * 8
    x = np.random.default_rng(5).integers(0, 1 << min(width, 63), 2000, dtype=np.uint64)
    x = x.astype(word)
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(x.view(np_type).astype(np.float64))
        for op, np_op in (("abs", np.abs), ("neg", np.negative)):
            want = np_op(x.view(np_type)).view(word)
            got = [oracle_evaluate({"opcode": op, "type": name}, {"a": v})["d"]
                   for v in x[keep].tolist()]
            assert got == want[keep].tolist()


# ---- the rules the ISA text states, named -------------------------------------------------

@pytest.mark.parametrize(("ptx", "inputs", "d"), [
    ("min.f32 d, a, b;", {"a": "0.0", "b": "-0.0"}, 0x80000000),  # -0.0 < +0.0
    ("max.f32 d, a, b;", {"a": "-0.0", "b": "0.0"}, 0),  # +0.0 > -0.0
    ("min.f32 d, a, b;", {"a": "0x7fc00001", "b": "2.0"}, 0x40000000),  # NaN: the other
    ("max.f64 d, a, b;", {"a": "1.0", "b": "nan"}, 0x3FF0000000000000),
    ("min.ftz.f32 d, a, b;", {"a": "0x80000001", "b": "0.0"}, 0x80000000),  # flushed, -0
    ("min.f32 d, a, b;", {"a": "0x80000001", "b": "0.0"}, 0x80000001),
    ("abs.f64 d, a;", {"a": "0xfff0000000000001"}, 0xFFF0000000000001),  # passed through
    ("abs.ftz.f32 d, a;", {"a": "0x80000001"}, 0),
    ("neg.f16x2 d, a;", {"a": "0x3c000000"}, 0xBC008000),
    ("shr.s32 d, a, b;", {"a": "0x80000000", "b": "100"}, 0xFFFFFFFF),  # clamped, sign fill
    ("shr.u32 d, a, b;", {"a": "0x80000000", "b": "31"}, 1),
    ("shr.b16 d, a, b;", {"a": "0x8000", "b": "15"}, 1),
    ("shl.b64 d, a, b;", {"a": "1", "b": "64"}, 0),
    ("cvt.s32.s16 d, a;", {"a": "0x8000"}, 0xFFFF8000),  # sign-extend
    ("cvt.u32.s16 d, a;", {"a": "0x8000"}, 0xFFFF8000),  # by the source's signedness
    ("cvt.s32.u16 d, a;", {"a": "0x8000"}, 0x8000),  # zero-extend
    ("cvt.u16.u32 d, a;", {"a": "0x12345"}, 0x2345),  # chop
    ("cvt.sat.u16.s32 d, a;", {"a": "-1"}, 0),
    ("cvt.sat.s16.u64 d, a;", {"a": "0x8000"}, 0x7FFF),
    ("add.sat.s32 d, a, b;", {"a": "0x80000000", "b": "-1"}, 0x80000000),
    ("sub.sat.s32 d, a, b;", {"a": "0x7fffffff", "b": "-1"}, 0x7FFFFFFF),
    ("mul.hi.s16 d, a, b;", {"a": "-2", "b": "0x4000"}, 0xFFFF),
    ("mul.hi.u16 d, a, b;", {"a": "0xfffe", "b": "0x4000"}, 0x3FFF),
    ("abs.s32 d, a;", {"a": "0x80000000"}, 0x80000000),
    ("min.s16 d, a, b;", {"a": "0xffff", "b": "1"}, 0xFFFF),
    ("min.u16 d, a, b;", {"a": "0xffff", "b": "1"}, 1),
])
def test_stated_rules(ptx, inputs, d):
    assert evaluate(ptx, inputs).outputs == {"d": d}
    assert evaluate_bits([(ptx, inputs)]) == [{"d": d}]


@pytest.mark.parametrize("ptx", ["min.f32 d, a, b;", "max.NaN.f32 d, a, b;", "neg.f32 d, a;",
                                 "abs.bf16 d, a;", "min.NaN.f16x2 d, a, b;"])
def test_an_open_nan_is_unspecified(ptx):
    inputs = {"a": "0x7f800001" if "f32" in ptx else "0x7f81"}
    if ", b;" in ptx:
        inputs["b"] = "0xffc00000" if "f32" in ptx and "NaN" not in ptx else "0x0"
    with pytest.raises(PtxError, match="unspecified"):
        evaluate(ptx, inputs)


def test_canonical_nan_is_one_nan():
    """`.NaN` gives *the* canonical NaN: one NaN, whatever the inputs. Without `.NaN` two
    NaNs give a NaN the text leaves open, one per pair of inputs (the minimum of a and b
    names no order): the operands may be swapped either way, but min and max differ."""
    from ptxsmt.smt.queries.snippets import check_equivalence

    for t in ("f32", "f16", "bf16x2"):
        for nan in ("", ".NaN"):
            assert check_equivalence(f"min{nan}.{t} d, a, b;", f"min{nan}.{t} d, b, a;",
                                     ["d"]).verdict == "equivalent", (t, nan)
    assert check_equivalence("min.f32 d, a, b;", "max.f32 d, a, b;", ["d"]).verdict == "different"


# ---- codegen's new operators, held to Z3 ---------------------------------------------------

@pytest.mark.parametrize("op", ["lshr", "ashr"])
@pytest.mark.parametrize("w", [16, 32, 64])
def test_codegen_shifts_equal_z3(op, w):
    x, n = z3.BitVec("a", w), z3.BitVec("b", w)
    term = z3.LShR(x, n) if op == "lshr" else x >> n
    prog = compile_terms({"a": x, "b": n}, {"d": term}, {"a": ptx_type(f"b{w}"),
                                                          "b": ptx_type(f"b{w}")})
    rng = np.random.default_rng(w)
    word = getattr(np, f"uint{w}")
    xs = np.concatenate([rng.integers(0, 1 << (w - 1), 200, dtype=np.uint64) * 2 + 1,
                         np.array([0, 1, (1 << (w - 1)), (1 << w) - 1], np.uint64)]).astype(word)
    ns = np.array([0, 1, w - 1, w, w + 1, (1 << w) - 1] * 34, np.uint64)[:len(xs)].astype(word)
    got = prog({"a": xs, "b": ns})["d"]
    for xv, nv, g in zip(xs.tolist(), ns.tolist(), got.tolist()):
        want = z3.simplify(z3.substitute(term, (x, z3.BitVecVal(xv, w)), (n, z3.BitVecVal(nv, w))))
        assert g == want.as_long(), (op, w, hex(xv), nv)


# ---- legality: ptxas 13.0 on each variant's claimed minimum, and just below -------------

ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


def _ver(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def _below(req) -> list[tuple[str, str]]:
    """Headers one step under a requirement: the version just below (with the target), and
    the target just below (at the version), where ptxas knows such a header."""
    from ptxsmt.isa.targets import PTX_VERSIONS

    target = f"sm_{req.sm}"
    out = []
    versions = [v for v in PTX_VERSIONS if v < req.ptx]
    if versions and TARGET_MIN_PTX[target] <= versions[-1]:
        out.append((target, _ver(versions[-1])))
    lower = [t for t, v in TARGET_MIN_PTX.items() if t[3:].isdigit() and int(t[3:]) < req.sm
             and v <= req.ptx]
    if lower:
        out.append((max(lower, key=lambda t: int(t[3:])), _ver(req.ptx)))
    return out


def _line(v) -> str:
    import ptxas_probe

    types = operand_types(v)
    return f"{format_variant(v)} " + ", ".join(
        ptxas_probe.reg(types[s].name, i) for i, s in enumerate(operand_slots(v))) + ";"


@ptxas
def test_catalogue_agrees_with_ptxas_at_and_below_each_requirement():
    """Every arith and integer-cvt variant assembles on its claimed minimum target and
    version, and `check` agrees with ptxas one step below (older version, older target)."""
    sys.path.insert(0, str(SCRIPTS))
    import ptxas_probe

    by_header: dict[tuple[str, str], list] = {}
    for v in ARITH + INT_CVT:
        req = catalogue().requirement(v)
        headers = [(f"sm_{req.sm}", _ver(max(req.ptx, TARGET_MIN_PTX[f"sm_{req.sm}"]))),
                   *_below(req)]
        for header in headers:
            by_header.setdefault(header, []).append(v)
    wrong, total = [], 0
    for (target, version), vs in by_header.items():
        lines = [_line(v) for v in vs]
        for v, line, err in zip(vs, lines, ptxas_probe.probe(lines, target, version)):
            total += 1
            ours = check_line(text(v), parse_target(target), tuple(map(int, version.split("."))))
            if (ours is None) != (err is None):
                wrong.append((target, version, line, err, ours))
    assert total > len(ARITH + INT_CVT) and not wrong, wrong[:5]


@ptxas
def test_near_misses_are_illegal_for_ptxas_and_check():
    """Forms the tables leave out: ptxas refuses them too."""
    sys.path.insert(0, str(SCRIPTS))
    import ptxas_probe

    lines = ["add.sat.u16 %u16_0, %u16_1, %u16_2;", "sub.sat.s64 %s64_0, %s64_1, %s64_2;",
             "neg.u32 %u32_0, %u32_1;", "abs.u16 %u16_0, %u16_1;", "shl.s32 %s32_0, %s32_1, "
             "%u32_2;", "min.NaN.f64 %f64_0, %f64_1, %f64_2;", "abs.ftz.f64 %f64_0, %f64_1;",
             "cvt.sat.s32.s16 %s32_0, %s16_1;", "cvt.sat.u32.u32 %u32_0, %u32_1;",
             "min.b32 %b32_0, %b32_1, %b32_2;", "mul.s32 %s32_0, %s32_1, %s32_2;"]
    verdicts = ptxas_probe.probe(lines, "sm_90", "9.0")
    assert all(err is not None for err in verdicts), list(zip(lines, verdicts))
    for line in lines:
        plain = f"{line.split()[0]} {', '.join('dab'[:line.count(',') + 1])};"
        assert check_line(plain, parse_target("sm_90"), (9, 0)) is not None, plain
