"""Prove each rule of ptxsmt.smt.solving.bf16_in_f32 by a solver: for every operation
and rounding mode, the f32 term the translation writes is never other than z3's own
bf16 operation widened (unsat of the difference, NaN equal to NaN), on every bf16
input (every f32 or f64 for a conversion). Minutes per fma, so not a test; the tests
sample each rule against the exact oracle and prove the rounding itself.

    python scripts/prove_bf16_in_f32.py                     # every rule, by z3
    python scripts/prove_bf16_in_f32.py --solver cvc5 --only add,mul --timeout 600
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

import z3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptxsmt.smt.solving import portfolio  # noqa: E402
from ptxsmt.smt.solving.bf16_in_f32 import BF16, F32, _Translation  # noqa: E402

MODES = {"rn": z3.RNE, "rna": z3.RNA, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP}


def _inputs(n: int, sort: z3.FPSortRef = BF16) -> list[z3.FPRef]:
    width = sort.ebits() + sort.sbits()
    return [z3.fpBVToFP(z3.BitVec(f"x{i}", width), sort) for i in range(n)]


# each rule's bf16 term, by name: (rounded by a mode?, the term of a mode)
RULES = {
    "add": (True, lambda rm: z3.fpAdd(rm, *_inputs(2))),
    "sub": (True, lambda rm: z3.fpSub(rm, *_inputs(2))),
    "mul": (True, lambda rm: z3.fpMul(rm, *_inputs(2))),
    "div": (True, lambda rm: z3.fpDiv(rm, *_inputs(2))),
    "sqrt": (True, lambda rm: z3.fpSqrt(rm, *_inputs(1))),
    "fma": (True, lambda rm: z3.fpFMA(rm, *_inputs(3))),
    "cvt.bf16.f32": (True, lambda rm: z3.fpToFP(rm, *_inputs(1, F32), BF16)),
    "cvt.bf16.f16": (True, lambda rm: z3.fpToFP(rm, *_inputs(1, z3.FloatHalf()), BF16)),
    "cvt.bf16.f64": (True, lambda rm: z3.fpToFP(rm, *_inputs(1, z3.Float64()), BF16)),
    "neg": (False, lambda rm: z3.fpNeg(*_inputs(1))),
    "abs": (False, lambda rm: z3.fpAbs(*_inputs(1))),
}
# rules whose result is no bf16: proved equal as they are
EXACT = {
    "cvt.f32.bf16": lambda: z3.fpToFP(z3.RNE(), *_inputs(1), F32),
    "cvt.f64.bf16": lambda: z3.fpToFP(z3.RTZ(), *_inputs(1), z3.Float64()),
    "lt": lambda: z3.fpLT(*_inputs(2)), "le": lambda: z3.fpLEQ(*_inputs(2)),
    "gt": lambda: z3.fpGT(*_inputs(2)), "ge": lambda: z3.fpGEQ(*_inputs(2)),
    "eq": lambda: z3.fpEQ(*_inputs(2)), "=": lambda: _inputs(2)[0] == _inputs(2)[1],
    "isNaN": lambda: z3.fpIsNaN(*_inputs(1)), "isInf": lambda: z3.fpIsInf(*_inputs(1)),
    "isZero": lambda: z3.fpIsZero(*_inputs(1)), "isNormal": lambda: z3.fpIsNormal(*_inputs(1)),
    "isSubnormal": lambda: z3.fpIsSubnormal(*_inputs(1)),
    "isNegative": lambda: z3.fpIsNegative(*_inputs(1)),
    "isPositive": lambda: z3.fpIsPositive(*_inputs(1)),
}


def difference(term: z3.ExprRef) -> list[z3.BoolRef]:
    """The query "the translation of `term` is not `term`": unsat proves the rule."""
    translation = _Translation()
    wide = translation.term(term)
    same = wide == (z3.fpToFP(z3.RNE(), term, F32) if term.sort() == BF16 else term)
    return [*translation.definitions, z3.Not(same)]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def prove(query: list[z3.BoolRef], solver: str, timeout: float) -> str:
    if solver == "cvc5":
        return portfolio._run_cvc5(portfolio.smt2(query), timeout)[0]
    s = z3.Solver()
    s.set("timeout", int(timeout * 1000))
    s.add(*query)
    return str(s.check())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", choices=("z3", "cvc5"), default="z3")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a query")
    parser.add_argument("--only", help="rules, comma-separated (default: all)")
    parser.add_argument("--modes", default=",".join(MODES), help="rounding modes")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else {*RULES, *EXACT}
    queries = [(name, "-", EXACT[name]()) for name in EXACT if name in wanted]
    queries += [(name, mode, term(MODES.get(mode, z3.RNE)()))
                for name, (rounded, term) in RULES.items() if name in wanted
                for mode in (args.modes.split(",") if rounded else ["-"])]
    failed = 0
    print(f"| rule | mode | {args.solver} | CPU s |\n|---|---|---|---:|")
    for name, mode, term in queries:
        start = cpu()
        result = prove(difference(term), args.solver, args.timeout)
        failed += result != "unsat"
        print(f"| {name} | {mode} | {result} | {cpu() - start:.1f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
