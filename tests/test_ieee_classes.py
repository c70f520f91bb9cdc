"""Proofs by IEEE value classes (ptxsmt/smt/sweeping/ieee_classes.py), which sweeping trusts to
merge with no solver query: every class a node is given holds its value on every input
simulated (the simulator interprets the terms on its own, `smt/sweeping/simulate.py`), and every
pair of conditions the classes call equal is equal (proved by z3), on random PTX float
code of min, max, add, sub, mul, selp and setp."""

from __future__ import annotations

import random

import z3

from ptxsmt.program import Program
from ptxsmt.smt.sweeping.fraig import _Dag
from ptxsmt.smt.sweeping.ieee_classes import (
    ANY,
    FALSE,
    FORMATS,
    TRUE,
    Classes,
    bits_class,
    float_class,
)
from ptxsmt.smt.sweeping.simulate import evaluate_node, input_vectors

F32 = z3.Float32()
INPUTS = "abce"


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _program(rng: random.Random, length: int) -> str:
    floats, preds, lines = list(INPUTS), [], []
    for k in range(length):
        x, y = rng.choice(floats), rng.choice(floats)
        op = rng.choice(["min", "max", "add", "sub", "mul", "setp", "selp"])
        if op == "setp":
            cmp = rng.choice(["lt", "le", "gtu", "num", "nan", "eq", "geu"])
            lines.append(f"setp.{cmp}.f32 p{k}, {x}, {y};")
            preds.append(f"p{k}")
        elif op == "selp" and preds:
            lines.append(f"selp.f32 v{k}, {x}, {y}, {rng.choice(preds)};")
            floats.append(f"v{k}")
        elif op != "selp":
            lines.append(f"{op}.f32 v{k}, {x}, {y};")
            floats.append(f"v{k}")
    return "\n".join(lines)


def _nan(bits: z3.BitVecRef) -> z3.BoolRef:
    return z3.fpIsNaN(z3.fpBVToFP(bits, F32))


def _conditions(seed: int) -> tuple[list[z3.BoolRef], list[z3.BoolRef], list[z3.ExprRef]]:
    """A random program's conditions (its predicates, NaN and zero tests of its
    floats), the inputs' literal forms, and its inputs."""
    rng = random.Random(seed)
    enc = Program.parse(_program(rng, 8)).encode()
    inputs = [enc.inputs[r] for r in INPUTS if r in enc.inputs]
    asked = []
    for v in enc.outputs.values():
        if z3.is_bool(v):
            asked.append(v)
        else:
            asked += [_nan(v), z3.fpIsZero(z3.fpBVToFP(v, F32))]
    literals = []
    for x in inputs:
        literals.append(_nan(x))
        for y in inputs:
            if x.get_id() < y.get_id():
                literals += [z3.And(_nan(x), _nan(y)), z3.Or(_nan(x), _nan(y)),
                             z3.Not(z3.Or(_nan(x), _nan(y)))]
    return asked, literals, inputs


def test_conditions_the_classes_call_equal_are_equal():
    claimed = 0
    for seed in range(40):
        asked, literals, _ = _conditions(seed)
        dag = _Dag()
        ids = dag.add_roots([*asked, *literals, z3.BoolVal(True), z3.BoolVal(False)])
        classes = Classes(dag.nodes, dag.kids)
        terms = [*asked, *literals, z3.BoolVal(True), z3.BoolVal(False)]
        for a, i in zip(asked, ids, strict=False):
            for t, r in zip(terms[len(asked):], ids[len(asked):], strict=True):
                if classes.equal(i, r):
                    assert _valid(a == t), (a, t)
                    claimed += 1
    assert claimed >= 40  # not vacuous: chains of mins and sums meet their inputs' tests


def _concrete(value: object, sort) -> int:
    if sort.kind == "bool":
        return TRUE if value else FALSE
    if sort.kind == "fp":
        return float_class(value)
    return bits_class(value, FORMATS[sort.width])


def test_every_value_simulated_lies_in_its_classes():
    """With no assumption, and with each input assumed in the class it has."""
    checked = 0
    for seed in range(25):
        asked, _, inputs = _conditions(seed)
        dag = _Dag()
        dag.add_roots(asked)
        classes = Classes(dag.nodes, dag.kids)
        leaves = [i for i, n in enumerate(dag.nodes) if n.leaf and n.kind == z3.Z3_OP_UNINTERPRETED]
        vectors = dict(zip(leaves, input_vectors([dag.nodes[i].sort for i in leaves], 48,
                                                 seed=seed), strict=True))
        values: list = []
        for i, n in enumerate(dag.nodes):
            args = [values[k] for k in dag.kids[i]]
            values.append(None if any(a is None for a in args)
                          else evaluate_node(n, args, vectors.get(i), 48))
        tracked = [i for i, n in enumerate(dag.nodes) if values[i] is not None and (
            n.sort.kind in ("bool", "fp") or n.sort.kind == "bv" and n.sort.width in (32, 64))]
        for k in range(0, 48, 6):
            given = {i: _concrete(vectors[i][k], dag.nodes[i].sort) for i in leaves
                     if dag.nodes[i].sort.kind == "bv" and dag.nodes[i].sort.width == 32}
            for assume in ({}, given):
                for i in tracked:
                    got = classes.value(i, assume)
                    assert got & _concrete(values[i][k], dag.nodes[i].sort), (seed, i, k)
                    checked += 1
    assert checked > 1000


def test_a_min_of_a_chain_is_a_nan_only_where_its_inputs_are():
    """The pair sweeping met and bit-blasting could not decide in a second: `isNaN` of
    a min of mins and products against "both inputs are NaNs"."""
    enc = Program.parse("min.f32 x, a, b; mul.f32 y, x, x; min.f32 z, y, x;").encode()
    a, b, z = (enc.inputs["a"], enc.inputs["b"], enc.outputs["z"])
    both = z3.And(_nan(a), _nan(b))
    dag = _Dag()
    i, r, e = dag.add_roots([_nan(z), both, z3.Or(_nan(a), _nan(b))])
    classes = Classes(dag.nodes, dag.kids)
    assert classes.equal(i, r) and _valid(_nan(z) == both)
    assert not classes.equal(i, e)
    assert classes.value(i, {}) == ANY & (TRUE | FALSE)


def test_bits_read_as_two_formats_keep_their_own_classes():
    """16 bits may be an f16 NaN and no bf16 NaN (0x7c01): a test of one reading tells
    nothing of the other."""
    bits = z3.BitVec("h", 16)
    half, brain = (z3.fpBVToFP(bits, z3.FPSort(e, s)) for e, s in ((5, 11), (8, 8)))
    one = z3.FPVal(1.0, z3.FPSort(5, 11))
    t = z3.fpIsNaN(z3.If(z3.fpIsNaN(brain), one, half))
    assert not _valid(t == z3.BoolVal(False))
    dag = _Dag()
    (i,) = dag.add_roots([t])
    assert Classes(dag.nodes, dag.kids).value(i, {}) == FALSE | TRUE
