"""The vectorised path (compiled from the Z3 terms) equals the slow path (Z3 simplify)."""

from __future__ import annotations

import numpy as np
import pytest
import z3
from batchbits import evaluate_bits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import _SPECIAL, instruction_text, lane_bits, variants

from ptxsmt import Options, PtxError, evaluate
from ptxsmt.batch.programs import compile_program
from ptxsmt.fast import Unsupported
from ptxsmt.fast.codegen import compile_terms
from ptxsmt.isa.types import BF16, F16, F32, F64, PRED, ptx_type
from ptxsmt.isa.variants import FAMILIES
from ptxsmt.sem.sorts import as_float

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def batch(draw, family):
    text = draw(instruction_text(draw(variants(family))))
    fast = compile_program(text)
    rows = [{name: draw(st.booleans()) if fast.types[name].width == 1
             else draw(lane_bits(fast.types[name])) for name in fast.inputs}
            for _ in range(draw(st.integers(1, 8)))]
    if {"a", "b"} <= set(fast.inputs) and fast.types["a"] == fast.types["b"]:
        for row in rows[::2]:  # equal operands: where lt and le, gt and ge part
            row["b"] = row["a"]
    return text, rows


def check(text, rows, opts=None):
    opts = opts or Options()
    fast = compile_program(text, opts)
    got = fast({name: np.array([r[name] for r in rows],
                               dtype=bool if fast.types[name].width == 1 else np.uint64)
                for name in fast.inputs})
    for i, row in enumerate(rows):
        want = evaluate(text, row, opts).outputs
        have = {k: (bool(v[i]) if isinstance(want[k], bool) else int(v[i]))
                for k, v in got.items()}
        assert have == want, (text, row)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_fast_equals_slow(family, data):
    check(*data.draw(batch(family)))


@SETTINGS
@given(data=st.data(), family=st.sampled_from(["set", "setp", "slct", "vset2", "vset4"]))
def test_fast_equals_slow_with_options(data, family):
    check(*data.draw(batch(family)), Options(target=13, vset_merge="b"))


def _random_rows(types, names, n=200):
    rng = np.random.default_rng(1)
    return [{k: bool(rng.integers(2)) if types[k].width == 1
             else int(rng.integers(0, 1 << types[k].width, dtype=np.uint64))
             for k in names} for _ in range(n)]


@pytest.mark.parametrize("text", [
    "@g setp.lt.and.f32 p|q, a, b, !p; selp.b32 d, a, b, q;",
    "mov.b32 a, {a0, a1}; set.lt.u32.f16x2 d, a, b; mov.b32 {d0, d1}, d; not.b16 e, d0;",
    "@!g slct.ftz.f32.f32 d, a, b, c; xor.b32 e, d, c; or.b32 e, e, a; and.b32 e, e, b;",
])
def test_fast_equals_slow_on_snippets(text):
    fast = compile_program(text)
    check(text, _random_rows(fast.types, fast.inputs))


# One instruction with decorations: its program is its core's plus a few lines (core.py)
COMPOSED = [
    "@g setp.lt.f32 p, a, b;",
    "@!g setp.lt.f32 p, a, b;",
    "setp.lt.and.f32 p, a, b, !c;",
    "@!g setp.lt.and.f32 p|q, a, b, !p;",  # a destination that is a source, p|q, a guard
    "setp.lt.and.f32 p, a, b, p;",
    "setp.lt.s32 p, a, a;",  # one register in two slots
    "setp.lt.and.f32 p, a, a, b;",
    "@g setp.ge.or.f16x2 _|q, a, a, !g;",
    "@p setp.gtu.xor.f64 p|_, a, b, p;",  # the guard is the destination and a source
    "@!c selp.b32 d, a, d, !c;",
    "@g set.num.and.f16x2.f16x2 d, a, b, !g;", "@!g set.num.and.ftz.u32.f32 d, a, d, !g;",
    "@!g slct.s32.f32 d, d, a, d;",
    "vset4.s32.u32.lt.add d, a, b, d;",
    "@g vset2.u32.s32.ge d.h1, a.h10, b, c;",
    "@g mov.b32 d, a;",
    "@!g add.u16 d, d, d;",
]


def _special_rows(types, names, n=300):
    """Rows of special values (signed zeros, subnormals, infinities, NaNs, extremes) and
    random bits; every register of one width draws from one list, so repeats are common."""
    rng = np.random.default_rng(2)
    pools = {w: [*_SPECIAL.get(w, [0, 1, (1 << w) - 1, 1 << (w - 1)]), *rng.integers(
        0, 1 << w, 4, dtype=np.uint64).tolist()] for w in (8, 16, 32, 64)}
    pick = lambda pool: pool[rng.integers(len(pool))]  # noqa: E731
    return [{k: bool(rng.integers(2)) if types[k].width == 1 else pick(pools[types[k].width])
             for k in names} for _ in range(n)]


@pytest.mark.parametrize("text", COMPOSED)
def test_composed_programs_equal_the_slow_path(text):
    fast = compile_program(text)
    check(text, _special_rows(fast.types, fast.inputs))


@pytest.mark.parametrize("text", COMPOSED)
def test_composed_programs_specialize_on_any_input(text):
    """A composed line's inputs (its deps) are the shape's: fixing one input runs the
    lines that read only it once, and the rest agree with the whole program."""
    fast = compile_program(text)
    rows = _special_rows(fast.types, fast.inputs, n=20)
    columns = {k: np.array([r[k] for r in rows], dtype=bool if fast.types[k].width == 1
                           else np.uint64) for k in fast.inputs}
    whole = fast(columns)
    for name in fast.inputs:
        for i, row in enumerate(rows):
            run = fast.specialize({name: np.array(row[name])})
            got = run({k: v[i:i + 1] for k, v in columns.items() if k != name})
            assert {k: v[0] for k, v in got.items()} == {k: v[i] for k, v in whole.items()}


# a, b: NaN payloads (quiet, signalling, negative), subnormals, signed zeros, inf, normal
_F16 = ["0x7e01", "0xfc01", "0x8001", "0x03ff", "0x8000", "0x0000", "0x7c00", "0x3c00"]
_F32 = ["0x7fc00001", "0xff800001", "0x80000001", "0x007fffff", "0x80000000", "0x0",
        "0xff800000", "0x3f800000"]


@pytest.mark.parametrize(("text", "rows"), [
    ("cvt.f32.f16 x, a; cvt.f32.bf16 y, b; setp.lt.f32 p, x, y; xor.pred r, p, c;",
     [{"a": a, "b": b, "c": True} for a in _F16 for b in ("0x3f80", "0x0001", "0x8000")]),
    ("cvt.f32.f16 x, a; setp.nan.f32 p, x, x;", [{"a": a} for a in _F16]),
    ("cvt.f64.f32 x, a; setp.geu.f64 p, x, 0d0000000000000001;", [{"a": a} for a in _F32]),
])
def test_cvt_takes_the_slow_path_with_the_same_answers(text, rows):
    """A cvt's NaN is a free value: the fast path refuses the text, the batch falls back
    and gives the slow path's answers and errors (an unspecified NaN output) line by line."""
    with pytest.raises(Unsupported, match="leaves open"):
        compile_program(text)
    got = [str(g) if isinstance(g, PtxError) else g
           for g in evaluate_bits([(text, r) for r in rows])]
    assert got == [_answer(text, r) for r in rows]
    assert any("unspecified" in str(g) for g in got) and any(isinstance(g, dict) for g in got)


def _answer(text, inputs):
    try:
        return evaluate(text, inputs).outputs
    except PtxError as e:
        return str(e)


def _fp_terms(a, b, fmt):
    """Every FP operator the compiler takes, each in a term whose value shows it."""
    x, y = as_float(a, fmt), as_float(b, fmt)
    srt = x.sort()
    return {
        "isNaN": z3.fpIsNaN(x), "isInf": z3.fpIsInf(x), "isZero": z3.fpIsZero(x),
        "isSubnormal": z3.fpIsSubnormal(x), "isNormal": z3.fpIsNormal(x),
        "isNegative": z3.fpIsNegative(x), "isPositive": z3.fpIsPositive(x),
        "lt": z3.fpLT(x, y), "le": z3.fpLEQ(x, y), "gt": z3.fpGT(x, y), "ge": z3.fpGEQ(x, y),
        "eq": z3.fpEQ(x, y),
        "-0": z3.fpIsNegative(z3.If(z3.fpIsZero(x), z3.fpMinusZero(srt), x)),
        "+0": z3.fpIsPositive(z3.If(z3.fpIsNegative(y), z3.fpPlusZero(srt), y)),
        "+inf": z3.fpLT(x, z3.fpPlusInfinity(srt)), "-inf": z3.fpGT(x, z3.fpMinusInfinity(srt)),
        "1.0": z3.fpLEQ(x, z3.FPVal(1.0, srt)),
    }


def _bv_terms(a, b):
    w = a.size()
    p, q = z3.ULT(a, b), z3.Extract(0, 0, a) == z3.Extract(1, 1, b)
    return {
        "ult": p, "ule": z3.ULE(a, b), "ugt": z3.UGT(a, b), "uge": z3.UGE(a, b),
        "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b, "eq": a == b,
        "distinct": a != b, "and": a & b, "or": a | b, "xor": a ^ b, "bvnot": ~a,
        "add": a + b, "sub": a - b, "shl": a << b, "shl3": a << 3, "lt-const": a < -2,
        "extract": z3.Extract(w - 2, 3, a), "ite": z3.If(p, a, b), "bool-and": z3.And(p, q),
        "bool-or": z3.Or(p, q), "bool-xor": z3.Xor(p, q), "not": z3.Not(p),
        "bool-ite": z3.If(q, p, z3.Not(p)), "bool-eq": p == q,
        **({"concat": z3.Concat(a, b), "zext": z3.ZeroExt(8, a), "sext": z3.SignExt(8, a)}
           if w <= 32 else {}),
    }


@pytest.mark.parametrize(("fmt", "kind"), [
    (F16, "fp"), (BF16, "fp"), (F32, "fp"), (F64, "fp"), (F16, "bv"), (F32, "bv"), (F64, "bv")],
    ids=lambda x: getattr(x, "name", x))
def test_every_operator_equals_z3(fmt, kind):
    """Operator by operator, the compiled numpy step equals Z3's own evaluation on special
    and random operands (the snippet tests reach an operator only where a family uses it)."""
    w = fmt.width
    a, b = z3.BitVec("a", w), z3.BitVec("b", w)
    terms = (_fp_terms(a, b, fmt) if kind == "fp" else _bv_terms(a, b))
    rng = np.random.default_rng(w)
    vals = [*_SPECIAL[w][:14], *(int(x) for x in rng.integers(0, 1 << w, 4, dtype=np.uint64))]
    rows = [(x, y) for x in vals for y in vals[::3]] + [(x, 5) for x in vals]
    prog = compile_terms({"a": a, "b": b}, terms, {"a": ptx_type(f"b{w}"), "b": ptx_type(f"b{w}")})
    got = prog({"a": np.array([r[0] for r in rows], np.uint64),
                "b": np.array([r[1] for r in rows], np.uint64)})
    for name, term in terms.items():
        for (x, y), have in zip(rows, got[name].tolist(), strict=True):
            pairs = (a, z3.BitVecVal(x, w)), (b, z3.BitVecVal(y, w))
            want = z3.simplify(z3.substitute(term, *pairs))
            want = z3.is_true(want) if z3.is_bool(want) else want.as_long()
            assert have == want, (name, hex(x), hex(y))


def _fp(name, fmt=F32):
    return as_float(z3.BitVec(name, fmt.width), fmt)


_REFUSED = {
    "= on FP": lambda: _fp("a") == _fp("b"),
    "distinct on FP": lambda: z3.Distinct(_fp("a"), _fp("b")),
    "fpToFP RNE": lambda: z3.fpToFP(z3.RNE(), _fp("a"), z3.Float64()) == z3.FPVal(1, z3.Float64()),
    "fpToFP RTZ": lambda: z3.fpLT(z3.fpToFP(z3.RTZ(), _fp("a"), z3.Float64()),
                                   z3.FPVal(1, z3.Float64())),
    "fpToFP narrowing": lambda: z3.fpIsNaN(z3.fpToFP(z3.RNE(), _fp("a"), z3.FPSort(8, 8))),
    "fp.to_ieee_bv": lambda: z3.fpToIEEEBV(_fp("a")) == 0,
    "NaN constant": lambda: z3.fpLT(_fp("a"), z3.fpNaN(z3.Float32())),
    "free value": lambda: z3.Function("cvt.f32.bf16", z3.BitVecSort(32), z3.BitVecSort(32))(
        z3.BitVec("a", 32)) == 0,
    "unknown operator": lambda: z3.UDiv(z3.BitVec("a", 32), 3) == 0,
}


@pytest.mark.parametrize("name", _REFUSED)
def test_refuses_what_it_cannot_compile_exactly(name):
    types = {"a": ptx_type("b32"), "b": ptx_type("b32")}
    inputs = {"a": z3.BitVec("a", 32), "b": z3.BitVec("b", 32)}
    with pytest.raises(Unsupported):
        compile_terms(inputs, {"p": _REFUSED[name]()}, types)


def test_compile_terms_is_exact_on_what_it_takes():
    """The refusal test's twin: fp.eq, bits->FP and FP constants compile and compare
    IEEE-wise (-0 == +0, NaN unordered), so a refusal above is not a blanket one."""
    a, b = z3.BitVec("a", 16), z3.BitVec("b", 16)
    x, y = as_float(a, BF16), as_float(b, BF16)
    prog = compile_terms({"a": a, "b": b}, {
        "eq": z3.fpEQ(x, y), "lt0": z3.fpLT(x, z3.fpMinusZero(x.sort())),
        "big": z3.fpGT(x, z3.fpToFP(z3.BitVecVal(0x4000, 16), x.sort())),
    }, {"a": ptx_type("b16"), "b": ptx_type("b16")})
    out = prog({"a": np.array([0x8000, 0x7FC1, 0xBF80, 0x4080], dtype=np.uint64),
                "b": np.array([0x0000, 0x7FC1, 0xBF80, 0x0000], dtype=np.uint64)})
    assert out["eq"].tolist() == [True, False, True, False]
    assert out["lt0"].tolist() == [False, False, True, False]
    assert out["big"].tolist() == [False, False, False, True]


def test_batch_falls_back_and_keeps_errors_in_place():
    items = [("setp.lt.f32 p, a, b;", {"a": "1.0", "b": "2.0"}),
             ("setp.lt.f32 p, a, b;", {"a": "1.0"}),  # missing b: the slow path's error
             ("setp.lt.f32 p, a, b;", {"a": "1.0", "b": "nan"}),
             ("setp.lt.bad.f32 p, a, b;", {})]
    out = evaluate_bits(items)
    assert out[0] == {"p": True} and out[2] == {"p": False}
    assert "without a value: b" in str(out[1]) and "unknown modifier" in str(out[3])


def test_a_nan_guard_goes_only_beside_a_compare_of_the_same_operands():
    """`!(isNaN x || isNaN y) && x < y` compiles to `x < y`; a guard on other operands
    must stay: here z is NaN and x < y holds, so the answer is false."""
    x, y, z = (z3.BitVec(n, 32) for n in "xyz")
    fx, fy, fz = (z3.fpBVToFP(v, z3.Float32()) for v in (x, y, z))
    same = z3.And(z3.Not(z3.Or(z3.fpIsNaN(fx), z3.fpIsNaN(fy))), z3.fpLT(fx, fy))
    other = z3.And(z3.Not(z3.Or(z3.fpIsNaN(fx), z3.fpIsNaN(fz))), z3.fpLT(fx, fy))
    t = ptx_type("f32")
    program = compile_terms({"x": x, "y": y, "z": z}, {"same": same, "other": other},
                            {"x": t, "y": t, "z": t, "same": PRED, "other": PRED})
    out = program({"x": np.array([0x3F800000, 0x7FC00000], dtype=np.uint32),
                   "y": np.array([0x40000000, 0x40000000], dtype=np.uint32),
                   "z": np.array([0x7FC00000, 0], dtype=np.uint32)})
    assert out["same"].tolist() == [True, False] and out["other"].tolist() == [False, False]
    types = {"x": t, "y": t, "p": PRED}
    guarded = compile_terms({"x": x, "y": y}, {"p": same}, types)
    assert len(guarded.lines) == len(compile_terms({"x": x, "y": y}, {"p": z3.fpLT(fx, fy)},
                                                   types).lines)


def test_a_form_whose_simplified_terms_the_fast_path_lacks_still_compiles():
    """Repeated vset lanes with .add simplify to a bvmul: the terms as built are compiled."""
    text = "vset4.s32.u32.lt.add d, a.b0000, b.b4444, a;"
    program = compile_program(text)
    inputs = {"a": 0x000000FF, "b": 0x00000001}
    got = program({k: np.array([v], dtype=np.uint32) for k, v in inputs.items()})["d"]
    assert got.tolist() == [evaluate(text, inputs).outputs["d"]]


@pytest.mark.parametrize("text", [
    "vset4.u32.u32.lt d, a, b, c;", "vset4.s32.s32.ge d.b3210, a.b7654, b.b0123, c;",
    "vset4.u32.s32.ne.add d, a, b, c;", "vset2.s32.u32.gt d.h10, a.h01, b, c;",
    "vset4.u32.u32.lt d.b20, a, b, c;", "set.lt.u32.f16x2 d, a, b;",
])
def test_lane_views_hold_on_strided_and_fixed_operands(text):
    """Lanes are read as views of a column's bytes where it is contiguous; a strided
    column, or an operand fixed to one value (0-d), takes the shifting path. Both held
    against the plain-Python reference."""
    from reference import run as reference

    rng = np.random.default_rng(7)
    fast = compile_program(text)
    cols = {n: rng.integers(0, 1 << 32, 40, dtype=np.uint64).astype(np.uint32)
            for n in fast.inputs}
    cols["b"][::3] = cols["a"][::3]  # equal lanes: where lt and le part
    wide = np.zeros(80, np.uint32)
    wide[::2] = cols["a"]
    for fixed in ({}, {"b": cols["b"][5]}):
        run = fast.specialize(fixed)
        got = run({**{n: c for n, c in cols.items() if n not in fixed}, "a": wide[::2]})["d"]
        for i in range(40):
            row = {n: int(fixed.get(n, c[i])) for n, c in cols.items()}
            assert int(got[i]) == reference(text, row)["d"], (text, fixed, row)


@pytest.mark.parametrize("order", [(3, 2, 1, 0), (0, 1, 2, 3), (2, 3, 0, 1)])
def test_lane_flags_join_in_the_terms_order(order):
    """A concat of per-lane compare flags becomes one view of all flags only where the
    lanes come highest first; any other order is joined as written (vs Z3 itself)."""
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    byte = [(z3.Extract(8 * k + 7, 8 * k, a), z3.Extract(8 * k + 7, 8 * k, b)) for k in range(4)]
    flag = [z3.If(z3.ULT(x, y), z3.BitVecVal(1, 8), z3.BitVecVal(0, 8)) for x, y in byte]
    term = z3.Concat(*[flag[k] for k in order])
    t = ptx_type("b32")
    prog = compile_terms({"a": a, "b": b}, {"d": term}, {"a": t, "b": t, "d": t})
    rows = [(0x01FF7F80, 0x02FE8081), (0x80000001, 0x7F000102), (0x12345678, 0x12345678)]
    got = prog({"a": np.array([r[0] for r in rows], np.uint32),
                "b": np.array([r[1] for r in rows], np.uint32)})["d"].tolist()
    want = [z3.simplify(z3.substitute(term, (a, z3.BitVecVal(x, 32)), (b, z3.BitVecVal(y, 32))))
            .as_long() for x, y in rows]
    assert got == want
