"""A solver portfolio: z3, bitwuzla and cvc5 on the same query, each in its own process;
the first definite answer wins and the others are killed.

The query travels as standard SMT-LIB 2 text (`smt2.script`, what `--emit-smt2` writes;
each solver, z3 included, reads it afresh). An answer is trusted only as far as ptxsmt can check it:
- "unsat" is accepted as unsat of the full query (it is the full query the solver read);
- "sat" comes back as values of the query's Bool and bit-vector constants, handed to
  the caller as z3 values: the caller pins them in its own z3 solver and replays the
  model through the evaluator before anyone sees it;
- anything else (a timeout, a query a solver cannot read, a crash) is unknown.
A solver is handed only a query whose every sort it reads (`unreadable`, from the
query's terms, before any text is written); bitwuzla reads a bf16 term as the f32 that
holds it (`bf16_in_f32`), or is not asked where no rule of that module covers it.
Two definite answers that disagree raise `SolverDisagreement`: never a verdict.

bitwuzla and cvc5 are an optional extra (`pip install 'ptxsmt[portfolio]'`), imported
only in the solver's own process: without them the portfolio is z3 alone
(`unavailable()` names what is missing, for the command line to say once).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module
from importlib.util import find_spec

import z3

from ...isa.errors import PtxError
from ...terms import walk
from . import bf16_in_f32
from . import budget as budgets
from .budget import GRACE, Budget, Effort, milliseconds, wall_cap
from .child import Outcome, race
from .smt2 import script, sorts

SOLVERS = ("z3", "bitwuzla", "cvc5")
LARGE = 50_000  # characters of a query `solve_here` hands to a child process it can stop


class SolverDisagreement(RuntimeError):
    """Two solvers gave opposite definite answers on one query: a solver (or ptxsmt) bug."""


@dataclass(frozen=True)
class Answer:
    result: str  # "sat" | "unsat" | "unknown"
    solver: str = ""  # who answered ("" when nobody did)
    values: dict[str, bool | int] = field(default_factory=dict)  # sat: constant -> value
    reason: str = ""  # unknown: each solver's reason


def unavailable() -> list[str]:
    """The portfolio's solvers whose Python bindings are not installed: found neither
    among the modules imported (None there: blocked) nor on the path. Looked up, not
    imported: each pair's process (`budget.bounded`) imported cvc5 and bitwuzla afresh
    (`tv` of 20 small functions: 1.55 CPU s, 1.11 without); a solver is imported where
    it runs, and a broken install is its reason there."""
    return [name for name in SOLVERS[1:] if (sys.modules[name] is None if name in sys.modules
                                             else find_spec(name) is None)]


# The floating-point formats bitwuzla reads (f16, f32, f64, f128). Any other, bf16's
# (_ FloatingPoint 8 8) included, is "experimental" there: its parser refuses the sort,
# and a term built by a conversion to it is computed by code "with known issues". bf16
# terms it is handed written in f32 (`bf16_in_f32`).
BITWUZLA_FLOATS = {(5, 11), (8, 24), (11, 53), (15, 113)}
IN_F32 = (bf16_in_f32.BF16.ebits(), bf16_in_f32.BF16.sbits())
# where a float format's indices are written: sorts, conversions and special values
FLOAT_INDICES = re.compile(r"\(_ (?:FloatingPoint|to_fp|to_fp_unsigned|NaN|[+-]zero|[+-]oo) "
                           r"(\d+) (\d+)\)")
BIT_LEVEL = (z3.Z3_BOOL_SORT, z3.Z3_BV_SORT, z3.Z3_ROUNDING_MODE_SORT)


def _reads_standard(sort: z3.SortRef) -> bool:
    """Bool, bit-vectors, rounding modes, floats and arrays of these, as `smt2.logic`
    names them (never Int or Real: no logic it names has them)."""
    kind = sort.kind()
    if kind == z3.Z3_ARRAY_SORT:
        return _reads_standard(sort.domain()) and _reads_standard(sort.range())
    return kind in BIT_LEVEL or kind == z3.Z3_FLOATING_POINT_SORT


def _reads_bitwuzla(sort: z3.SortRef) -> bool:
    kind = sort.kind()
    if kind == z3.Z3_ARRAY_SORT:
        return _reads_bitwuzla(sort.domain()) and _reads_bitwuzla(sort.range())
    if kind == z3.Z3_FLOATING_POINT_SORT:
        return (sort.ebits(), sort.sbits()) in BITWUZLA_FLOATS | {IN_F32}
    return _reads_standard(sort)


READS = {"z3": lambda sort: True, "bitwuzla": _reads_bitwuzla, "cvc5": _reads_standard}
QUANTIFIERS = {"z3"}  # the solvers handed a quantified query (IR's open choices)


def unreadable(assertions: Sequence[z3.BoolRef], solvers: Sequence[str]) -> dict[str, str]:
    """Each of `solvers` that cannot read the query, with why (the sorts it does not
    read, or a quantifier): such a solver is not asked, and says so among the reasons of
    an unknown."""
    terms = list(walk.subterms(*assertions))  # not smt2's, which keeps its terms alive
    used, quantified = sorts(terms), any(z3.is_quantifier(t) for t in terms)
    out = {}
    for s in solvers:
        if quantified and s not in QUANTIFIERS:
            out[s] = "not asked: the query is quantified"
        elif missing := sorted({x.sexpr() for x in used if not READS[s](x)}):
            out[s] = f"not asked: it reads no {', '.join(missing)}"
    return out


def smt2(assertions: Sequence[z3.BoolRef]) -> str:
    """The assertions as the standard SMT-LIB 2 script every solver reads
    (`smt2.script`: z3's own operators rewritten, the logic named), less its
    (check-sat): each runner asks itself."""
    text = script(assertions)
    return text[:text.rindex("(check-sat)")]


def solve(assertions: Sequence[z3.BoolRef], timeout: Budget | float | None,
          solvers: Sequence[str] = SOLVERS, cross_check: bool = False) -> Answer:
    """Race `solvers` on the conjunction of `assertions`, each within what is left of
    `timeout` (CPU seconds, `budget.py`) once the query is written out. `cross_check`
    waits for every solver (up to the limit) instead of the first definite answer, so
    that any two definite answers are compared."""
    if unknown := [s for s in solvers if s not in RUNNERS]:
        raise PtxError(f"unknown solver {unknown[0]!r} (solvers: {', '.join(SOLVERS)})")
    budget = Budget.of(timeout)
    if budget.expired():  # writing a large query out takes seconds, all past the limit
        return Answer("unknown", reason="the time ran out before the query was written out")
    names = [s for s in solvers if s not in unavailable()]
    refused = unreadable(assertions, names)
    names = [s for s in names if s not in refused]
    if not names:
        return Answer("unknown", reason=_reasons(refused))
    text = smt2(assertions)
    texts = {s: text for s in names}
    if "bitwuzla" in names and bf16_in_f32.BF16 in sorts(walk.subterms(*assertions)):
        if (translated := bf16_in_f32.text(assertions)) is None:
            refused["bitwuzla"] = UNTRANSLATED
            names.remove("bitwuzla")
        else:
            texts["bitwuzla"] = translated
    left = budget.left()  # writing the query out (seconds, for a large one) is its time
    if (left is not None and left <= 0) or not names:
        return Answer("unknown", reason="the time ran out while the query was written out"
                      if names else _reasons(refused))
    wall = budget.wall_left()
    calls = {s: (RUNNERS[s], (texts[s], left)) for s in names}

    def definite(done: dict[str, Outcome]) -> bool:
        return not cross_check and any(_result(o) != "unknown" for o in done.values())

    outcomes = race(calls, None if wall is None else wall + GRACE, definite,
                    None if left is None else left + GRACE)
    answers = {s: _answer(s, o) for s, o in outcomes.items()}
    definite_answers = [a for a in answers.values() if a.result != "unknown"]
    if len({a.result for a in definite_answers}) > 1:
        raise SolverDisagreement("the solvers disagree: " + ", ".join(
            f"{a.solver} says {a.result}" for a in definite_answers))
    if definite_answers:
        return min(definite_answers, key=lambda a: names.index(a.solver))
    return Answer("unknown", reason=_reasons({**{s: a.reason for s, a in answers.items()},
                                              **refused}))


UNTRANSLATED = "not asked: a bf16 operation that bf16_in_f32 has no rule for"


def _reasons(why: dict[str, str]) -> str:
    return "; ".join(f"{s}: {reason}" for s, reason in why.items())


def _result(o: Outcome) -> str:
    return o.value[0] if o.status == "ok" else "unknown"


def _answer(solver: str, o: Outcome) -> Answer:
    if o.status == "ok":
        result, values, reason = o.value
        return Answer(result, solver, values, reason)
    why = {"stopped": "stopped", "crashed": "crashed"}.get(o.status, "failed")
    return Answer("unknown", solver, reason=f"{why}{': ' + o.value if o.value else ''}")


# Each runner reads the text and answers (result, {constant: value}, reason) within
# `timeout` CPU seconds (None: no limit; `budget.py`). They run in a child process, so a
# solver's import, memory and time are its own.

def _run_z3(text: str, timeout: float | None) -> tuple[str, dict, str]:
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.from_string(text)
    budget = Budget(timeout)
    result = budgets.check(s, budget)
    if result != z3.sat:
        return str(result), {}, ("timeout" if budget.expired() else s.reason_unknown()) \
            if result == z3.unknown else ""
    model = s.model()
    values = {}
    for d in model.decls():
        if d.arity() == 0 and (z3.is_bool(v := model[d]) or z3.is_bv_value(v)):
            values[d.name()] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    return "sat", values, ""


def _run_bitwuzla(text: str, timeout: float | Effort | None) -> tuple[str, dict, str]:
    """`timeout` may be an `Effort` too (a sweep's candidate proof, `solve_here`)."""
    bw = import_module("bitwuzla")  # the optional extra, present: `unavailable()` asked

    tm, opts = bw.TermManager(), bw.Options()
    opts.set(bw.Option.PRODUCE_MODELS, True)
    # made before the parse, whose time counts
    stop = timeout.terminator(len(text)) if isinstance(timeout, Effort) \
        else Budget(timeout).terminator()
    parser = bw.Parser(tm, opts)
    parser.parse(text, True, False)
    solver = parser.bitwuzla()
    if timeout is not None:
        solver.configure_terminator(stop)
    result = str(solver.check_sat())
    if isinstance(timeout, Effort):
        timeout.work.counted("bitwuzla", stop.calls)
    if result != "sat":
        return result, {}, "bitwuzla gave up" if result == "unknown" else ""
    values = {}
    for t in parser.get_declared_funs():
        if t.sort().is_bool() or t.sort().is_bv():
            v = solver.get_value(t)
            values[_unquoted(t.symbol())] = v.value() if t.sort().is_bool() \
                else int(v.value(10))
    return "sat", values, ""


def _unquoted(symbol: str) -> str:
    """A symbol as declared: bitwuzla keeps the bars of a quoted one (`|a b|`), which
    SMT-LIB says are no part of its name."""
    return symbol[1:-1] if len(symbol) > 1 and symbol[0] == symbol[-1] == "|" else symbol


def _run_cvc5(text: str, timeout: float | None) -> tuple[str, dict, str]:
    cvc5 = import_module("cvc5")  # the optional extra, present: `unavailable()` asked

    solver = cvc5.Solver()
    solver.setOption("produce-models", "true")
    solver.setOption("fp-exp", "true")  # f16 and bf16 sorts
    solver.setOption("arrays-exp", "true")  # a constant array (memory that starts as zeros)
    if timeout:  # its own limit is wall-clock: the cap (the parent stops it at its CPU time)
        solver.setOption("tlimit-per", str(milliseconds(wall_cap() * timeout)))
    symbols = cvc5.SymbolManager(solver.getTermManager())
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    while not (command := parser.nextCommand()).isNull():
        command.invoke(solver, symbols)
    result = solver.checkSat()
    if not result.isSat():
        return ("unsat", {}, "") if result.isUnsat() else (
            "unknown", {}, str(result.getUnknownExplanation()))
    values = {}
    for t in symbols.getDeclaredTerms():
        sort = t.getSort()
        if sort.isBoolean() or sort.isBitVector():
            v = solver.getValue(t)
            values[t.getSymbol()] = (v.getBooleanValue() if sort.isBoolean()
                                     else int(v.getBitVectorValue(10)))
    return "sat", values, ""


RUNNERS = {"z3": _run_z3, "bitwuzla": _run_bitwuzla, "cvc5": _run_cvc5}


def solve_here(assertions: Sequence[z3.BoolRef], timeout: float | Effort) -> Answer:
    """bitwuzla on a small query in this process (sweeping's many small proofs, where a
    process of its own would cost more than the query; not the race's runners, which
    are the race's own), within `timeout` CPU seconds or an `Effort` (a candidate's
    proof: the same answer in every run); unknown where it is missing. The text is z3's own printing
    where that is standard already (printed in C; `smt2.script` walks the terms in
    Python), else `smt2.script`'s."""
    if "bitwuzla" in unavailable():
        return Answer("unknown", reason="bitwuzla is not installed")
    printer = z3.Solver()
    printer.add(*assertions)
    text = printer.to_smt2()
    # read from z3's own printing, not by walking the terms: sweeping asks thousands
    odd = {(int(e), int(s)) for e, s in FLOAT_INDICES.findall(text)} - BITWUZLA_FLOATS
    if odd - {IN_F32}:
        return Answer("unknown", "bitwuzla", reason="not asked: it reads no " + ", ".join(
            sorted(f"(_ FloatingPoint {e} {s})" for e, s in odd)))
    if odd:
        translated = bf16_in_f32.text(assertions)
        return Answer("unknown", "bitwuzla", reason=UNTRANSLATED) if translated is None \
            else _bitwuzla_here(translated, timeout) or Answer(
                "unknown", "bitwuzla", reason="bitwuzla could not read the query")
    if not any(op in text for op in Z3_ONLY):
        answer = _bitwuzla_here(text[:text.rindex("(check-sat)")], timeout)
        if answer is not None:
            return answer
    return _bitwuzla_here(smt2(assertions), timeout) or Answer(
        "unknown", "bitwuzla", reason="bitwuzla could not read the query")


def _bitwuzla_here(text: str, timeout: float | Effort) -> Answer | None:
    """bitwuzla's answer; None where it cannot read the text (z3 printed something
    it does not: `(or x)`). A query of more than LARGE characters goes to a child
    process, stopped at the limit (an effort's: its CPU cap): bitwuzla's own limit
    does not stop its preprocessing, which on such a query takes seconds. An effort's
    `Work` counts the text (less z3's let-names: LET_NAMES), and in a child its whole
    count (the child's does not come back)."""
    if isinstance(timeout, Effort):
        timeout.work.text(len(LET_NAMES.sub("", text)))
    if len(text) > LARGE:
        if isinstance(timeout, Effort):
            timeout.work.counted("bitwuzla", timeout.units("bitwuzla"))
        cpu = timeout.cap("bitwuzla", len(text)).seconds if isinstance(timeout, Effort) \
            else timeout
        outcome = race({"bitwuzla": (_run_bitwuzla, (text, timeout))}, wall_cap() * cpu,
                       cpu=cpu)["bitwuzla"]
        return None if outcome.status == "error" else _answer("bitwuzla", outcome)
    try:
        result, values, reason = _run_bitwuzla(text, timeout)
    except Exception:  # noqa: BLE001 - a text bitwuzla's parser refuses
        return None
    return Answer(result, "bitwuzla", values, reason)


# the names z3's printer gives its let-bindings: a term's AST id (`?x12`, `$x4374`), which
# the terms made before it decide; an effort's `Work` counts the text without them
LET_NAMES = re.compile(r"[?$]x\d+")
# what z3 prints that is not standard SMT-LIB (smt2.py rewrites them)
Z3_ONLY = ("to_ieee_bv", "bvudiv_i", "bvsdiv_i", "bvurem_i", "bvsrem_i", "bvsmod_i")
