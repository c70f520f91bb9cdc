"""The glue (mov, not/and/or/xor, exact widening cvt) against the independent oracle,
and cvt's bit construction against Z3's own conversion and numpy.

cvt of a NaN: the ISA leaves the result open (README, Spec notes 9), so the oracle
expects the "unspecified" error, never bits, and the prover may not rely on any NaN.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
import z3
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import Unspecified
from oracle import evaluate as oracle_evaluate
from strategies import lane_bits, oracle_desc

from ptxsmt import Options, evaluate, parse_one
from ptxsmt.cli import main
from ptxsmt.eval.values import UnspecifiedOutput
from ptxsmt.fast.codegen import compile_terms
from ptxsmt.isa.literals import canonical_nan
from ptxsmt.isa.syntax import format_variant
from ptxsmt.isa.types import BF16, F16, F32, F64, ptx_type
from ptxsmt.isa.variants import catalogue, operand_slots, operand_types
from ptxsmt.program import Program
from ptxsmt.ptxasdiff import assemble, find_tool, ptxas_version, resolve_disassembler
from ptxsmt.sem.sorts import as_float, fields, fp_sort, widen
from ptxsmt.smt.queries.snippets import check_equivalence

GLUE = [v for v in catalogue() if v.family == "glue"]
WIDENINGS = [(F16, F32), (BF16, F32), (F32, F64)]


def glue_text(v) -> str:
    return f"{format_variant(v)} {', '.join(operand_slots(v))};"


@st.composite
def glue_cases(draw):
    v = draw(st.sampled_from(GLUE))
    t = operand_types(v)["a"]
    value = st.booleans() if t.width == 1 else lane_bits(t)
    return glue_text(v), {n: draw(value) for n in operand_slots(v) if n != "d"}


def test_every_glue_variant_is_drawn():
    assert {v.opcode for v in GLUE} == {"mov", "not", "and", "or", "xor", "cvt"}
    # the exact cvts without modifiers; those that round are the "convert" family
    assert {format_variant(v) for v in GLUE if v.opcode == "cvt" and v.atype.is_float} == {
        "cvt.f32.f16", "cvt.f32.bf16", "cvt.f64.f32", "cvt.f64.f16", "cvt.f64.bf16",
        "cvt.f16.f16", "cvt.bf16.bf16", "cvt.f32.f32", "cvt.f64.f64"}
    assert len([v for v in GLUE if v.opcode == "cvt"]) == 9 + 36 + 21  # ints: 21 with .sat


@settings(max_examples=400, deadline=None)
@given(case=glue_cases(), target=st.sampled_from([90, 13]))
def test_glue_matches_the_oracle(case, target):
    text, inputs = case
    opts = Options(target=target)
    try:
        want = oracle_evaluate(oracle_desc(parse_one(text), target), inputs)
    except Unspecified:
        with pytest.raises(UnspecifiedOutput, match=r"output d is unspecified: cvt\."):
            evaluate(text, inputs, opts)
        return
    assert evaluate(text, inputs, opts).outputs == want


# ---- the bit construction ------------------------------------------------------------------

@pytest.mark.parametrize(("src", "dst"), WIDENINGS, ids=lambda f: f.name)
def test_widen_is_z3s_conversion_on_every_non_nan(src, dst):
    """A proof over all inputs: the bits equal fp.to_ieee_bv of Z3's exact fpToFP."""
    x = z3.BitVec("x", src.width)
    exact = z3.fpToIEEEBV(z3.fpToFP(z3.RNE(), as_float(x, src), fp_sort(dst)))
    s = z3.Solver()
    s.add(z3.Not(z3.fpIsNaN(as_float(x, src))), widen(x, src, dst) != exact)
    assert s.check() == z3.unsat


def _widen_program(src, dst):
    """The construction compiled to numpy (the fast path's compiler, no free values)."""
    x = z3.BitVec("a", src.width)
    return compile_terms({"a": x}, {"d": widen(x, src, dst)}, {"a": ptx_type(f"b{src.width}")})


@pytest.mark.parametrize(("src", "np_type"), [(F16, np.float16), (BF16, ml_dtypes.bfloat16)],
                         ids=["f16", "bf16"])
def test_widen_exhaustive_against_numpy(src, np_type):
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(invalid="ignore"):
        values = bits.view(np_type).astype(np.float32)
    keep = ~np.isnan(values)
    got = _widen_program(src, F32)({"a": bits})["d"]
    assert keep.sum() == (1 << 16) - 2 * ((1 << (src.sbits - 1)) - 1)
    assert np.array_equal(got[keep], values.view(np.uint32)[keep].astype(np.uint64))


def test_widen_f32_sampled_against_numpy():
    rng = np.random.default_rng(3)
    special = [s << 31 | e << 23 | f for s in (0, 1) for e in (0, 1, 2, 126, 127, 254, 255)
               for f in (0, 1, 2, 1 << 22, (1 << 22) - 1, (1 << 23) - 1)]
    bits = np.concatenate([np.array(special, np.uint32),
                           rng.integers(0, 1 << 32, 200_000, np.uint32),
                           rng.integers(0, 1 << 23, 20_000, np.uint32)])  # subnormals
    with np.errstate(invalid="ignore"):
        values = bits.view(np.float32).astype(np.float64)
    keep = ~np.isnan(values)
    got = _widen_program(F32, F64)({"a": bits})["d"]
    assert np.array_equal(got[keep], values.view(np.uint64)[keep])


# ---- a NaN is free, never a guess ---------------------------------------------------------

@pytest.mark.parametrize("v", [v for v in GLUE if v.opcode == "cvt" and v.atype.is_float],
                         ids=format_variant)
def test_cvt_nan_is_any_nan_and_only_a_nan(v):
    """The encoding keeps every NaN open: not ptxas's fold (0x7fffffff), not the canonical
    NaN, not the payload kept (ptxas's run-time bf16 shift) or kept and quieted (IEEE's
    advice); yet it is always a NaN."""
    src, dst = v.atype.fmt, v.dtype.fmt
    x = z3.BitVec("a", src.width)
    out = Program.parse(glue_text(v)).encode().outputs["d"]
    sign, _, frac = fields(x, src)
    pad = [z3.BitVecVal(0, dst.sbits - src.sbits)] if dst.sbits > src.sbits else []
    kept = z3.Concat(sign, z3.BitVecVal(-1, dst.ebits), frac, *pad)
    guesses = {"fold": z3.BitVecVal((1 << (dst.width - 1)) - 1, dst.width),
               "canonical": z3.BitVecVal(canonical_nan(dst), dst.width),
               "kept": kept, "quieted": kept | (1 << (dst.sbits - 2))}
    nan_in = z3.fpIsNaN(as_float(x, src))
    for name, guess in guesses.items():
        s = z3.Solver()
        s.add(nan_in, out != guess)
        assert s.check() == z3.sat, name
    s = z3.Solver()
    s.add(nan_in, z3.Not(z3.fpIsNaN(as_float(out, dst))))
    assert s.check() == z3.unsat


def test_one_input_one_nan():
    """The free NaN is a function of the input bits: two conversions of a agree."""
    v = check_equivalence("cvt.f32.bf16 x, a; cvt.f32.bf16 y, a; xor.b32 d, x, y;",
                          "mov.b32 d, 0;", ["d"])
    assert v.verdict == "equivalent"


def test_compare_of_a_free_nan_has_a_value():
    out = evaluate("cvt.f32.bf16 x, a; setp.lt.f32 p|q, x, b; mov.b32 x, 0;",
                   {"a": "0xff81", "b": "1.0"}).outputs
    assert out == {"x": 0, "p": False, "q": True}


def test_unspecified_output_is_one_clear_error():
    with pytest.raises(UnspecifiedOutput) as e:
        evaluate("cvt.f64.f32 d, a;", {"a": "0x7f800001"})
    assert str(e.value) == ("output d is unspecified: cvt.f64.f32 on 0x7f800001 gives a value "
                            "the PTX ISA leaves open (Spec notes 9, 13)")
    r = CliRunner().invoke(main, ["eval", "cvt.f32.f16 d, a;", "a=0x7e00"])
    assert r.exit_code == 2 and "output d is unspecified" in r.output
    assert "Traceback" not in r.output


def test_batch_lines_with_cvt_on_nan_subnormal_and_zero():
    lines = [{"ptx": "cvt.f32.bf16 d, a;", "inputs": {"a": "0x7f81"}},
             {"ptx": "cvt.f32.bf16 d, a;", "inputs": {"a": "0x8001"}},
             {"ptx": "cvt.f32.f16 d, a;", "inputs": {"a": "0x8000"}},
             {"ptx": "cvt.f64.f32 d, a;", "inputs": {"a": "0x00000001"}}]
    r = CliRunner().invoke(main, ["eval", "--batch", "-"],
                           input="".join(json.dumps(x) + "\n" for x in lines))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.exit_code == 1
    assert "unspecified" in out[0]["error"] and "outputs" not in out[0]
    assert [x.get("outputs") for x in out[1:]] == [
        {"d": "0x80010000"}, {"d": "0x80000000"}, {"d": "0x36a0000000000000"}]


# ---- the evidence (README, Spec notes 9): ptxas 13.0 fixes no NaN either ------------------

PTXAS = find_tool("ptxas")
DISASM = find_tool("nvdisasm") or find_tool("cuobjdump")
_KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{{
  .reg .u64 %o, %i;
  .reg .b16 %h;
  .reg .f32 %f, %x;
  .reg .f64 %d;
  ld.param.u64 %o, [out];
  ld.param.u64 %i, [inp];
  cvta.to.global.u64 %o, %o;
  cvta.to.global.u64 %i, %i;
  {body}
  ret;
}}
"""


def _sass(body: str) -> str:
    done = assemble(_KERNEL.format(body=body), PTXAS, resolve_disassembler(), "sm_90")
    assert done.sass, done.errors or done.loose
    return done.sass


@pytest.mark.skipif(not (PTXAS and DISASM and "V13.0." in ptxas_version(PTXAS)),
                    reason="documents ptxas 13.0 with nvdisasm or cuobjdump")
@pytest.mark.parametrize(("cvt", "src", "nan", "run_time", "folded"), [
    ("cvt.f32.bf16 %f, %h;", "ld.global.b16 %h, [%i];", "mov.b16 %h, 0x7f81;",
     "SHF.L.U32", "0x7fffffff"),  # a shift keeps an sNaN; the fold canonicalises
    ("cvt.f32.f16 %f, %h;", "ld.global.b16 %h, [%i];", "mov.b16 %h, 0x7e01;",
     "HADD2.F32", "0x7fffffff"),
    ("cvt.f64.f32 %d, %x;", "ld.global.f32 %x, [%i];", "mov.b32 %x, 0f7F800001;",
     "F2F.F64.F32", "0x7ff80000"),  # the fold keeps the payload and quiets it
])
def test_ptxas_fixes_no_nan(cvt, src, nan, run_time, folded):
    store = "st.global.f64 [%o], %d;" if "%d," in cvt else "st.global.f32 [%o], %f;"
    live = _sass(f"{src} {cvt} {store}")
    assert run_time in live and "0x7fffffff" not in live
    assert folded in _sass(f"{nan} {cvt} {store}")


def test_a_counterexample_may_hinge_on_an_unspecified_nan():
    """`cvt.f32.bf16` of a NaN is any NaN; a rewrite that fixes the payload, observed as
    bits (and.b32), is different under --nan exact and unknown by default (never
    equivalent: docs/spec-notes.md note 14)."""
    from click.testing import CliRunner

    from ptxsmt.cli import main

    snippets = ["cvt.f32.bf16 x, a;", "mov.b32 x, {z, a}; and.b32 x, x, 0xffff0000;"]
    r = CliRunner().invoke(main, ["equiv", "--json", *snippets])
    assert r.exit_code == 3 and "observed as bits" in json.loads(r.stdout)["reason"]
    r = CliRunner().invoke(main, ["equiv", "--json", "--nan", "exact", "--timeout", "5",
                                  *snippets])
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["only_nan_payloads"]
    cex = json.loads(r.stdout)["counterexample"]
    assert cex["lhs"]["x"] == "unspecified"
    a = int(cex["inputs"]["a"], 16)
    assert (a >> 7) & 0xFF == 0xFF and a & 0x7F  # the input is a bf16 NaN


def test_vectors_leave_out_unspecified_outputs():
    from ptxsmt.smt.queries.vectors import vectors_for

    vecs = list(vectors_for("cvt.f32.bf16 d, a;", per_case=2))
    assert len(vecs) >= 10  # every class but NaN, both outcomes where reachable
    assert all(v["outputs"]["d"] != "unspecified" for v in vecs)
    assert not any(v["case"].startswith("a=NaN") for v in vecs)
