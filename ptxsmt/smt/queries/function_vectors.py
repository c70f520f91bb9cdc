"""`ptxsmt vectors FILE.ptx --function F`: inputs that drive each compare of a function
each way on a path that reaches it, as batch lines that name the function.

For each `setp` the function meets and each predicate it writes, the solver is asked for
inputs (parameters, special registers, the memory the function loads, the results of
instructions ptxsmt does not model) under which the path to it runs and the predicate
is true, then false; unreachable outcomes are left out. Each line's outputs come from
the evaluator (`function.evaluate`), so `ptxsmt eval --batch LINES --check` replays them.
"""

from __future__ import annotations

from collections.abc import Iterator

import z3

from ...eval.values import outputs_json, to_json
from ...function.encode import encode_function
from ...function.evaluate import Location, evaluate_function
from ...function.memory import at as memory_at
from ...function.memory import load
from ...isa.module import Function
from ...sem.options import DEFAULT, Options
from ...solver import check
from .functions import prefer_nice


def function_vectors(path: str, fn: Function, opts: Options = DEFAULT) -> Iterator[dict]:
    """Batch lines `{"file", "function", "inputs", "outputs", "case"}`, two per predicate
    of each compare where both outcomes are reachable."""
    enc = encode_function(fn, opts, unmodelled="input")
    for decision in enc.decisions:
        for name, predicate in decision.predicates.items():
            for outcome in (True, False):
                solver = z3.Solver()
                solver.add(decision.when, predicate == outcome,
                           *[a.holds for a in enc.assumed],
                           *[z3.Not(u.when) for u in (*enc.undefined, *enc.bounded)])
                if check(solver) != z3.sat:
                    continue  # no path reaches this outcome
                prefer_nice(solver, enc)
                inputs = _inputs(enc, solver.model())
                ev = evaluate_function(fn, inputs, opts)
                yield {"file": path, "function": fn.name, "inputs": inputs,
                       "outputs": outputs_json(ev.outputs()),
                       "case": f"line {decision.line}: {' '.join(decision.text.split())} "
                               f"-> {name} = {str(outcome).lower()}"}


def _inputs(enc, model: z3.ModelRef) -> dict[str, object]:
    """The model as `ptxsmt eval FILE.ptx` inputs: scalars, then each loaded location."""
    def value(term: z3.ExprRef):
        v = model.eval(term, model_completion=True)
        return z3.is_true(v) if z3.is_bool(v) else v.as_long()

    out = {k: to_json(value(c), enc.types[k]) for k, c in enc.inputs.items()}
    for a in enc.loads:
        if value(a.when):
            loc = Location(a.space, value(a.address), a.type)
            bits = value(load(enc.memory[a.space], memory_at(loc.space, loc.address),
                              a.type.width))
            out[f"{loc}.{a.type.name}"] = to_json(bits, a.type)
    return out
