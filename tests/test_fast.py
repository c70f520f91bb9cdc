"""The vectorised path (compiled from the Z3 terms) equals the slow path (Z3 simplify)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instruction_text, lane_bits, variants

from ptxsmt import Options, evaluate
from ptxsmt.isa.variants import FAMILIES
from ptxsmt.smt.batch import evaluate_many
from ptxsmt.smt.fast import compile_program

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def batch(draw, family):
    text = draw(instruction_text(draw(variants(family))))
    fast = compile_program(text)
    rows = [{name: draw(st.booleans()) if fast.types[name].width == 1
             else draw(lane_bits(fast.types[name])) for name in fast.inputs}
            for _ in range(draw(st.integers(1, 8)))]
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


@pytest.mark.parametrize("text", [
    "@g setp.lt.and.f32 p|q, a, b, !p; selp.b32 d, a, b, q;",
    "mov.b32 a, {a0, a1}; set.lt.u32.f16x2 d, a, b; mov.b32 {d0, d1}, d; not.b16 e, d0;",
    "cvt.f32.f16 x, a; cvt.f32.bf16 y, b; setp.lt.f32 p, x, y; xor.pred r, p, c;",
    "cvt.f64.f32 x, a; setp.geu.f64 p, x, 0d0000000000000001;",
])
def test_fast_equals_slow_on_snippets(text):
    fast = compile_program(text)
    rng = np.random.default_rng(1)
    rows = [{n: bool(rng.integers(2)) if fast.types[n].width == 1
             else int(rng.integers(0, 1 << fast.types[n].width, dtype=np.uint64))
             for n in fast.inputs} for _ in range(200)]
    check(text, rows)


def test_batch_falls_back_and_keeps_errors_in_place():
    items = [("setp.lt.f32 p, a, b;", {"a": "1.0", "b": "2.0"}),
             ("setp.lt.f32 p, a, b;", {"a": "1.0"}),  # missing b: the slow path's error
             ("setp.lt.f32 p, a, b;", {"a": "1.0", "b": "nan"}),
             ("setp.lt.bad.f32 p, a, b;", {})]
    out = evaluate_many(items)
    assert out[0].outputs == {"p": True} and out[2].outputs == {"p": False}
    assert "without a value: b" in str(out[1]) and "unknown modifier" in str(out[3])
