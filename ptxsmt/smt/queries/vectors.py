"""Coverage-directed test vectors: ask the solver for operands that reach each case.

A case is a combination of operand classes (NaN, ±inf, ±0, ±subnormal,
±normal; min/negative/zero/positive/max; true/false; per lane for x2 types)
and an outcome of each output (true/false; zero/non-zero; which operand a
select took; per-lane results and the count for vset). Unreachable cases are
skipped, so `.ftz` boundaries, NaN handling and sign boundaries all show up
where they change the answer. Outputs are filled in by the evaluator.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass

import z3

from ...eval.evaluate import evaluate
from ...eval.values import UNSPECIFIED, to_json
from ...isa.syntax import format_variant
from ...isa.types import PRED
from ...isa.variants import Variant, operand_slots, operand_types
from ...program import Program
from ...sem.options import DEFAULT, Options
from ...solver import check
from .classes import axes, class_of


@dataclass(frozen=True)
class Case:
    label: str
    constraint: z3.BoolRef


def instruction_forms(v: Variant, rng: random.Random | None = None) -> list[str]:
    """Instruction texts that exercise a variant's operand forms (`!c`, masks, selectors)."""
    name = format_variant(v)
    if v.syntax.lane_prefix:
        return _vset_forms(v, name, rng or random.Random(name))
    pair = v.syntax.pair_dest and v.compared_type.predicate_pair
    slots = ["p|q" if s == "p" and pair else s for s in operand_slots(v)]
    if slots[-1] == "c" and operand_types(v)["c"] is PRED:  # c and !c (slct's c is a value)
        return [f"{name} {', '.join([*slots[:-1], c])};" for c in ("c", "!c")]
    return [f"{name} {', '.join(slots)};"]


def _vset_forms(v: Variant, name: str, rng: random.Random) -> list[str]:
    lanes, prefix = v.syntax.lanes, v.syntax.lane_prefix
    masks = [m for k in range(1, lanes + 1)
             for m in itertools.combinations(range(lanes - 1, -1, -1), k)]
    forms = [f"{name} d, a, b, c;"]
    for mask in rng.sample(masks, min(3, len(masks))):
        forms.append(f"{name} d.{prefix}{''.join(map(str, mask))}, a, b, c;")
    for _ in range(2):
        sel = [rng.randrange(2 * lanes) for _ in range(lanes)]
        if "".join(map(str, sel)) == "1024":
            continue  # ptxas cannot parse .b1024
        forms.append(f"{name} d, a.{prefix}{''.join(map(str, sel))}, b, c;")
    return forms


Dimension = list[tuple[str, z3.BoolRef]]


def dimensions(program: Program, enc) -> list[Dimension]:
    """Each input axis's classes, then each output's outcomes."""
    dims: list[Dimension] = []
    for axis in axes(enc.inputs, program.types):
        dims.append([(f"{axis.name}={c}", class_of(c, axis.term, axis.type)) for c in axis.classes])
    ins = program.instructions[-1]
    for name, term in enc.outputs.items():  # outcomes read "-> p=true", inputs "a=NaN"
        dims.append([("-> " + label, c) for label, c in _outcomes(name, term, ins, enc.inputs)])
    return dims


def cases(dims: list[Dimension], rng: random.Random, budget: int = 4000) -> Iterator[Case]:
    """All combinations in random order, or a random sample of `budget` when there are more."""
    total = 1
    for d in dims:
        total *= len(d)
    if total <= budget:
        picks = list(itertools.product(*(range(len(d)) for d in dims)))
        rng.shuffle(picks)
    else:
        picks = list({tuple(rng.randrange(len(d)) for d in dims) for _ in range(budget)})
        picks.sort()
        rng.shuffle(picks)
    for pick in picks:
        chosen = [d[i] for d, i in zip(dims, pick)]
        yield Case(" ".join(label for label, _ in chosen), z3.And([c for _, c in chosen]))


def _outcomes(name: str, term: z3.ExprRef, ins, inputs) -> list[tuple[str, z3.BoolRef]]:
    v = ins.variant
    if z3.is_bool(term):
        return [(f"{name}=true", term), (f"{name}=false", z3.Not(term))]
    if v.syntax.lane_prefix:
        width = 32 // v.syntax.lanes
        if v.add:
            c = inputs.get(ins.operands["c"].text)
            count = term - c if c is not None else term
            return [(f"{name}=c+{k}", count == k) for k in range(len(ins.lane_spec("d").lanes) + 1)]
        lanes = sorted(ins.lane_spec("d").lanes)
        out = []
        for bits in itertools.product((0, 1), repeat=len(lanes)):
            cond = z3.And([z3.Extract(width * i + width - 1, width * i, term) == b
                           for i, b in zip(lanes, bits)])
            out.append((f"{name}[{''.join(map(str, bits))}]", cond))
        return out
    if v.syntax.selects:
        a, b = (inputs.get(ins.operands[k].text) for k in ("a", "b"))
        if a is not None and b is not None:
            return [(f"{name}=a", z3.And(term == a, a != b)),
                    (f"{name}=b", z3.And(term == b, a != b))]
    return [(f"{name}=0", term == 0), (f"{name}!=0", term != 0)]


def vectors_for(text: str, per_case: int = 1, limit: int | None = None,
                opts: Options = DEFAULT, seed: int = 0, timeout: float = 5.0) -> Iterator[dict]:
    """Vectors (batch JSONL objects with outputs) for one instruction text."""
    program = Program.parse(text)
    enc = program.encode(opts)
    found = 0
    options = {"options": opts.to_json()} if opts.to_json() else {}  # they travel with the line
    solver = z3.SolverFor("QF_BVFP")
    solver.set("timeout", int(timeout * 1000))
    for case in cases(dimensions(program, enc), random.Random(f"{seed}:{text}")):
        if limit is not None and found >= limit:
            return
        solver.push()
        solver.add(case.constraint)
        for _ in range(per_case):
            if check(solver) != z3.sat:
                break
            model = solver.model()
            values = {}
            for name, const in enc.inputs.items():
                val = model.eval(const, model_completion=True)
                values[name] = z3.is_true(val) if z3.is_bool(val) else val.as_long()
            ev = evaluate(text, values, opts, unspecified_ok=True)
            solver.add(z3.Or([const != model.eval(const, model_completion=True)
                              for const in enc.inputs.values()]))
            if UNSPECIFIED in ev.outputs.values():
                continue  # the ISA leaves this output open: nothing a vector could check
            yield {
                "ptx": text,
                "inputs": {k: to_json(x, program.types[k]) for k, x in values.items()},
                **options,
                "outputs": {k: to_json(x, program.types[k]) for k, x in ev.outputs.items()},
                "case": case.label,
            }
            found += 1
        solver.pop()
