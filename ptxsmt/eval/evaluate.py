"""Concrete evaluation by substituting input values into the Z3 terms.

There is no second interpreter: the value of an output is what Z3's
simplifier makes of the very formula the prover reasons about.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3

from ..isa.errors import PtxError
from ..isa.literals import hex_bits
from ..program import compiled
from ..sem.options import DEFAULT, Options
from ..sem.sorts import Choose, given_first, open_inputs, register_value, take_open, unreached
from ..solver import check
from ..terms.walk import free_applications
from .values import UNSPECIFIED, Evaluation, OpenValue, UnspecifiedOutput, Value, convert_inputs


def evaluate(ptx: str, inputs: Mapping[str, object] | None = None,
             opts: Options = DEFAULT, unspecified_ok: bool = False,
             choose: Choose | None = None) -> Evaluation:
    """Run a snippet on concrete inputs. An output the ISA leaves open raises
    UnspecifiedOutput, or is UNSPECIFIED with `unspecified_ok`, unless its open values
    are given (`open[NAME of ARGUMENT]`, as a counterexample names them) or `choose`
    takes them.

    >>> evaluate("setp.lt.f32 p, a, b;", {"a": "nan", "b": "1.0"}).outputs
    {'p': False}
    """
    program, enc = compiled(ptx, opts)
    inputs, opened = open_inputs(inputs or {})
    choose = given_first(opened, choose)
    values = convert_inputs(inputs, program.types, enc.inputs)
    pairs = [(const, register_value(values[name], program.types[name]))
             for name, const in enc.inputs.items() if name in values]
    outputs: dict[str, Value] = {}
    chosen: dict[OpenValue, None] = {}
    for name, term in enc.outputs.items():
        result = z3.simplify(z3.substitute(term, *pairs) if pairs else term)
        if choose is not None:
            result, taken = take_open(result, choose)
            chosen.update(dict.fromkeys(taken))
        try:
            outputs[name] = _value(result, name, enc, values)
        except UnspecifiedOutput:
            if not unspecified_ok:
                raise
            outputs[name] = UNSPECIFIED
    unreached(opened, chosen, "the snippet")
    used = {k: v for k, v in values.items() if k in enc.inputs}
    return Evaluation(program.types, used, outputs, program.spelling, tuple(chosen))


def _value(term: z3.ExprRef, name: str, enc, values) -> Value:
    if not (z3.is_bv_value(term) or z3.is_true(term) or z3.is_false(term)):
        missing = [n for n in enc.inputs if n not in values]
        if missing:
            raise PtxError(f"output {name} depends on inputs without a value: {', '.join(missing)}")
        term = _pinned(term, name)
    return z3.is_true(term) if z3.is_bool(term) else term.as_long()


def _pinned(term: z3.ExprRef, name: str) -> z3.ExprRef:
    """An output that still holds a named free value (one the ISA leaves open, such as the
    NaN of a cvt): its literal if no choice of them changes it (a compare of that NaN), else
    a clear error. Never a guess (two NaNs that give two words show it open at once)."""
    free = free_applications(term)
    one, two = (z3.simplify(z3.substitute(term, *[(f, z3.BoolVal(v == -1) if z3.is_bool(f)
                else z3.BitVecVal(v, f.size())) for f in free])) for v in (-1, -2))  # -1: fused
    fresh = [z3.substitute(term, *[(f, z3.FreshConst(f.sort())) for f in free]) for _ in "ab"]
    solver = z3.Solver()
    solver.add(fresh[0] != fresh[1])
    if free and (z3.is_bv_value(one) and z3.is_bv_value(two) and not one.eq(two)
                 or check(solver) != z3.unsat):
        f = free[0]
        args = ", ".join(hex_bits(x.as_long(), x.size()) if z3.is_bv_value(x) else str(x)
                         for x in f.children())
        raise UnspecifiedOutput(f"output {name} is unspecified: {f.decl().name()} on {args} "
                                "gives a value the PTX ISA leaves open (Spec notes 9, 13)")
    if not (z3.is_bv_value(one) or z3.is_true(one) or z3.is_false(one)):
        raise RuntimeError(f"output {name} did not simplify to a value: {one}")  # a ptxsmt bug
    return one
