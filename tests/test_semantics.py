"""Differential tests: the Z3 semantics (via the evaluator) against tests/oracle.py.

The oracle decodes floats exactly in plain Python and knows nothing of Z3.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import evaluate as oracle_evaluate
from strategies import instruction_text, lane_bits, oracle_desc, variants

from ptxsmt import Options, evaluate, parse_one
from ptxsmt.isa.variants import FAMILIES, operand_types

SETTINGS = settings(max_examples=settings.default.max_examples)  # the profile's (conftest.py)


@st.composite
def case(draw, family: str):
    v = draw(variants(family))
    text = draw(instruction_text(v))
    ins = parse_one(text)
    types = operand_types(v)
    inputs = {}
    for slot in ins.sources:
        t = types[slot]
        if t.width == 1:
            inputs[slot] = draw(st.booleans())
        elif slot == "b" and draw(st.integers(0, 4)) == 0:
            inputs[slot] = inputs["a"]  # equal operands are where eq/le/ge turn
        else:
            inputs[slot] = draw(lane_bits(t))
    return text, ins, inputs


def check(text, ins, inputs, opts=None):
    opts = opts or Options()
    got = evaluate(text, inputs, opts).outputs
    want = oracle_evaluate(oracle_desc(ins, opts.target, opts.vset_merge), inputs)
    for slot, o in ins.destinations.items():
        assert got[o.text] == want[slot], (text, inputs, slot)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_family_matches_oracle(family, data):
    check(*data.draw(case(family)))


@SETTINGS
@given(data=st.data(), family=st.sampled_from(["set", "setp", "slct"]))
def test_sm_1x_flushes_f32(data, family):
    text, ins, inputs = data.draw(case(family))
    check(text, ins, inputs, Options(target=13))


@SETTINGS
@given(data=st.data(), family=st.sampled_from(["vset2", "vset4"]))
def test_vset_merge_from_b(data, family):
    check(*data.draw(case(family)), Options(vset_merge="b"))


@SETTINGS
@given(data=st.data(), family=st.sampled_from(FAMILIES), guard=st.booleans(), neg=st.booleans())
def test_guard_keeps_prior_value(data, family, guard, neg):
    text, ins, inputs = data.draw(case(family))
    prior = {o.text: (True if operand_types(ins.variant)[k].width == 1 else 0x5A)
             for k, o in ins.destinations.items()}
    guarded = f"@{'!' if neg else ''}g {text}"
    got = evaluate(guarded, {**inputs, **prior, "g": guard}).outputs
    if guard != neg:
        want = evaluate(text, inputs).outputs
        assert got == want
    else:
        assert got == prior
