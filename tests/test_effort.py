"""A candidate proof's limit is an `Effort` (issue 44, item 2: the same merges on every
run): the work the solver counts itself, at points that are the same in every run
(bitwuzla's calls of its terminator, z3's resource units), never the CPU clock, which
a loaded machine moves (cache contention); a CPU cap well above it stops a query whose
solver seldom counts. The CPU clock here is a fake one, frozen (an infinitely fast
machine) or racing (each reading a thousand seconds): no test depends on this machine's speed."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from ptxsmt.smt.solving import budget, portfolio
from ptxsmt.smt.solving.budget import EFFORT_PER_SECOND, SAFETY, TERMINATOR_EVERY, Effort
from ptxsmt.smt.sweeping import fraig, sweep

needs_bitwuzla = pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
ROOT = Path(__file__).resolve().parent.parent
FROZEN = budget.Clocks(lambda thread: 0.0, budget.REAL.wall)  # CPU seconds never pass


def _racing() -> budget.Clocks:
    """Each reading of the CPU clock is a thousand seconds more: a limit of less is
    spent at its first reading."""
    ticks = itertools.count()
    return budget.Clocks(lambda thread: 1000.0 * next(ticks), budget.REAL.wall)


def _factoring(bits: int = 12, prime: int = 8388593, name: str = "") -> list[z3.BoolRef]:
    """A prime as a product of two `bits`-bit numbers greater than 1: unsat. At 12 bits,
    some 10,000 of bitwuzla's terminator calls (hundreds of thousands of z3's units), a
    few hundredths of a second; at 14 bits (134217689), some 43,000."""
    x, y = z3.BitVecs(f"x{name} y{name}", 2 * bits)
    return [x * y == prime, z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 1 << bits),
            z3.ULT(y, 1 << bits)]


def _bitwuzla(effort: Effort) -> tuple[str, int]:
    """bitwuzla's answer on the factoring within `effort`, and its terminator's calls."""
    made = []
    real = Effort.terminator

    def spy(self: Effort, characters: int = 0) -> budget.Counted:
        made.append(real(self, characters))
        return made[-1]

    text = portfolio.smt2(_factoring())
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Effort, "terminator", spy)
        result = portfolio._run_bitwuzla(text, effort)[0]
    return result, made[0].calls


def _soon_after(stop: int, calls: int) -> bool:
    """bitwuzla, told to stop at call `stop`, ends within a few calls more."""
    return stop <= calls < stop + 32


def _z3(effort: Effort) -> tuple[str, int]:
    """z3's answer on the factoring within `effort`, in a context of its own, and the
    resource units it counted."""
    solver = z3.Solver(ctx=z3.Context())
    solver.from_string(portfolio.smt2(_factoring()) + "(check-sat)")
    result = str(budget.check(solver, effort))
    stats = solver.statistics()
    return result, stats.get_key_value("rlimit count")


def test_an_effort_is_its_seconds_in_each_solvers_count_rounded_to_a_step():
    """s seconds are s times EFFORT_PER_SECOND, the seconds rounded to the nearest
    2^(k/8): a limit moved by a little (a sweep's pace read off the CPU clock) keeps its
    count; never 0 (z3's "no limit"), an infinite one the largest."""
    for solver, rate in EFFORT_PER_SECOND.items():
        assert Effort(1.0).units(solver) == rate
        assert Effort(0.125).units(solver) == rate // 8
        assert Effort(0.97).units(solver) == Effort(1.03).units(solver) == rate
        assert Effort(0.9).units(solver) == round(rate * 2 ** -0.125)
        assert Effort(0.0).units(solver) == Effort(-1.0).units(solver) == 1
        assert Effort(float("inf")).units(solver) == budget.UNLIMITED
    assert Effort(2.0).cap("z3").seconds == SAFETY * 2.0


@needs_bitwuzla
def test_bitwuzla_ends_a_query_at_the_same_count_in_every_run():
    """The same query: the same answer after the same number of terminator calls, and
    stopped within half that effort at its count (bitwuzla asks a few times more once
    told to stop), the same twice."""
    done = _bitwuzla(Effort(10.0))
    assert done[0] == "unsat" and done == _bitwuzla(Effort(10.0))
    half = Effort(done[1] / 2 / EFFORT_PER_SECOND["bitwuzla"])
    with budget.using(FROZEN):  # the count binds, not the CPU cap of a loaded machine
        stopped = _bitwuzla(half)
        assert stopped[0] == "unknown" and stopped == _bitwuzla(half)
    assert _soon_after(half.units("bitwuzla"), stopped[1])


@needs_bitwuzla
def test_bitwuzlas_count_binds_before_its_cap_on_a_machine_slower_than_the_model():
    """bitwuzla's calls cost SECONDS_PER_UNIT each by `Work`'s model, about twice what
    EFFORT_PER_SECOND says; on a machine half as fast again as the model (each reading
    of the CPU clock, one every TERMINATOR_EVERY calls, that many calls at 1.5 times
    the model's cost) an effort still ends at its count, not at its CPU cap: so a
    proof's end is the same on a loaded machine. A cap of 3 times the effort's seconds
    (round 49's, the mutant) stopped it first."""
    done = _bitwuzla(Effort(10.0))
    half = Effort(done[1] / 2 / EFFORT_PER_SECOND["bitwuzla"])
    step = 1.5 * TERMINATOR_EVERY * budget.SECONDS_PER_UNIT["bitwuzla"]
    ticks = itertools.count()
    with budget.using(budget.Clocks(lambda thread: step * next(ticks), budget.REAL.wall)):
        stopped = _bitwuzla(half)
    assert stopped[0] == "unknown" and _soon_after(half.units("bitwuzla"), stopped[1])


@needs_bitwuzla
def test_bitwuzlas_effort_is_counted_not_read_off_the_cpu_clock():
    """On a machine infinitely fast (the CPU clock frozen) an effort still ends the
    search at its count; on one where each reading is a thousand seconds, the CPU cap (SAFETY
    times the seconds) stops it at the first reading of the clocks, long before."""
    effort = Effort(1000 / EFFORT_PER_SECOND["bitwuzla"])
    with budget.using(FROZEN):
        result, calls = _bitwuzla(effort)
    assert result == "unknown" and _soon_after(1000, calls)
    with budget.using(_racing()):
        result, calls = _bitwuzla(Effort(10.0))
    assert result == "unknown" and _soon_after(TERMINATOR_EVERY, calls)


def test_z3_ends_a_query_at_the_same_count_in_every_run():
    """z3 within an effort: its resource limit, the same answer and count twice; short
    of its count, unknown (a CPU clock that never moves does not save it)."""
    done = _z3(Effort(10.0))
    assert done[0] == "unsat" and done == _z3(Effort(10.0))
    with budget.using(FROZEN):
        stopped = _z3(Effort(done[1] / 2 / EFFORT_PER_SECOND["z3"]))
    assert stopped[0] == "unknown" and stopped[1] < done[1]


def test_an_effort_of_nothing_is_unknown():
    """0 is "no limit" to z3: an effort of none is one unit, and the search ends at once."""
    assert _z3(Effort(0.0))[0] == "unknown"
    if not portfolio.unavailable():
        result, calls = _bitwuzla(Effort(0.0))
        assert result == "unknown" and _soon_after(1, calls)


@pytest.mark.parametrize("solver", ["bitwuzla", "z3"])
def test_a_candidate_proof_is_held_to_its_effort(monkeypatch, solver):
    """The sweep's `_check` (each solver in turn) gives a query its seconds as an
    effort: on an infinitely fast machine a tiny one still ends it, unknown; a large
    one decides it."""
    if solver == "bitwuzla" and portfolio.unavailable():
        pytest.skip("needs bitwuzla")
    if solver == "z3":
        monkeypatch.setattr(fraig, "_fast_solver", lambda: None)
    query = z3.And(*_factoring())
    with budget.using(FROZEN):
        assert fraig._check(query, 1e-4, {})[0] == "unknown"
        assert fraig._check_z3(query, 1e-4, {})[0] == "unknown"
    assert fraig._check(query, 10.0, {})[0] == "unsat"


def test_an_efforts_cpu_cap_is_no_more_than_its_budget_has_left():
    """SAFETY times a proof's seconds, but never past `most` (what the sweep has left):
    a sweep's last proofs do not take it past its whole. Told 0 CPU seconds left, a
    large effort ends at the cap's first reading, unknown, in each solver."""
    assert Effort(2.0).cap("z3").seconds == SAFETY * 2.0
    assert Effort(2.0, most=1.5).cap("z3").seconds == 1.5
    assert Effort(2.0, most=100.0).cap("z3").seconds == SAFETY * 2.0
    query = z3.And(*_factoring())
    with budget.using(FROZEN):
        assert fraig._check_z3(query, 10.0, {}, 0.0)[0] == "unknown"
        if not portfolio.unavailable():
            assert fraig._check(query, 10.0, {}, 0.0)[0] == "unknown"
            assert fraig._check(query, 10.0, {}, 100.0)[0] == "unsat"


@needs_bitwuzla
def test_a_large_candidate_query_takes_its_effort_to_its_own_process(monkeypatch):
    """A query over LARGE characters is solved in a child process, handed the effort
    itself (not its CPU cap: its count binds there too)."""
    monkeypatch.setattr(portfolio, "LARGE", 0)
    assert portfolio.solve_here(_factoring(), Effort(10.0)).result == "unsat"
    monkeypatch.setattr(portfolio, "_run_bitwuzla",
                        lambda text, limit: ("unknown", {}, repr(limit)))
    assert portfolio.solve_here(_factoring(), Effort(0.5)).reason == repr(Effort(0.5))


def _two_factorings() -> tuple[z3.BoolRef, list[z3.ExprRef]]:
    """One query of a 12-bit and a 14-bit factoring, each false on every simulated
    input, and its inputs."""
    parts = [_factoring(12, 8388593, "0"), _factoring(14, 134217689, "1")]
    root = z3.Or(*[z3.And(*p) for p in parts])
    return root, [t for p in parts for t in (p[0].arg(0).arg(0), p[0].arg(0).arg(1))]


def _told(monkeypatch, read) -> list:
    """What each candidate's proof (`fraig._check`) is told, as `read(seconds, most)`."""
    told, real = [], fraig._check

    def spy(term, seconds, names, most=None):
        told.append(read(seconds, most))
        return real(term, seconds, names, most)

    monkeypatch.setattr(fraig, "_check", spy)
    return told


@needs_bitwuzla
def test_a_sweep_merges_alike_whatever_the_cpu_clocks_pace():
    """Two factorings in one query, each false on every simulated input: the sweep asks
    each against false (`_proved_constant`, an eighth of a candidate's half second:
    25,000 calls). The 12-bit one is proved (merged), the 14-bit one not, on a machine whose
    CPU clock reads 1 ms and on one slowed four times (cache contention) alike. Held to
    CPU seconds (the mutant), the slowed one stops the 12-bit proof short: no merge."""
    root, inputs = _two_factorings()

    def swept(step: float) -> tuple[list[tuple[int, int]], int, int]:
        ticks = itertools.count()
        with budget.using(budget.Clocks(lambda thread: step * next(ticks), budget.REAL.wall)):
            _, stats = sweep([root], inputs, None, 0.5)
        return stats.merges, stats.proved, stats.undecided

    idle = swept(1e-3)
    assert idle[1:] == (1, 1) and swept(4e-3) == idle


def test_a_sweeps_proofs_are_capped_by_what_the_sweep_has_left(monkeypatch):
    """Every candidate's proof of a sweep within 5 CPU seconds is told what is left of
    them (`most`): never more than the 5, never none. The clock frozen, so the sweep
    asks both factorings as above."""
    root, inputs = _two_factorings()
    told = _told(monkeypatch, lambda seconds, most: most)
    with budget.using(FROZEN):
        sweep([root], inputs, 5.0, 0.5)
    assert told and all(most is not None and most <= 5.0 for most in told)


@needs_bitwuzla
def test_a_sweeps_pace_is_read_off_its_proofs_work_not_the_cpu_clock(monkeypatch):
    """A sweep within 0.1 CPU seconds walks at a pace of half of them: the 12-bit
    factoring's proof, charged its work as counted (`budget.Work`: its text and its
    terminator calls, some 0.06 s), puts the walk behind, and the 14-bit one's proofs
    get the pace's floor. The same limits and merges on an infinitely fast machine and
    on one where each reading of the CPU clock is a millisecond (81 readings: the budget
    never runs out). Read off the CPU clock (the mutant), the fast machine's walk is
    never behind, and its limits are another's."""
    root, inputs = _two_factorings()
    told = _told(monkeypatch, lambda seconds, most: seconds)

    def swept(step: float) -> tuple[list[float], list[tuple[int, int]], bool]:
        told.clear()
        ticks = itertools.count()
        with budget.using(budget.Clocks(lambda thread: step * next(ticks), budget.REAL.wall)):
            _, stats = sweep([root], inputs, budget.Budget(0.1), 0.5)
        return list(told), stats.merges, stats.done

    idle = swept(0.0)
    assert idle[2] and min(idle[0]) < 0.5 / 8  # the pace binds
    assert swept(1e-3) == idle


def test_a_z3_proofs_work_is_its_resource_units():
    """z3 under an effort: its `Work` is the units that check counted, not its context's
    running total (a context that counted before it counts the same), the same in
    each context."""
    efforts = [Effort(10.0), Effort(10.0)]
    for effort, before in zip(efforts, (0, 1), strict=True):
        solver = z3.Solver(ctx=z3.Context())
        solver.from_string(portfolio.smt2(_factoring()) + "(check-sat)")
        if before:
            budget.check(z3.Solver(ctx=solver.ctx), Effort(10.0))
        assert budget.check(solver, effort) == z3.unsat
    first, second = (e.work.seconds for e in efforts)
    assert 0 < first == second < 10.0


def test_a_sweeps_pace_counts_the_models_it_simulates_again(monkeypatch):
    """Every candidate refuted (stubbed: a model of all zeros, no solver work): each model
    is simulated again over the whole DAG, which the pace charges (RESIMULATED_NODE_SECONDS
    a node; here a second, so that one puts the walk behind): the limits fall to the
    pace's floor. The models counted are the refutations."""
    x, y = z3.BitVecs("x y", 32)
    pairs = [(z3.If(x == 0x12345678 + k, z3.BitVecVal(0, 32), x * (2 * k + 3)), x * (2 * k + 3))
             for k in range(8)]
    limits, made = [], []
    monkeypatch.setattr(fraig, "RESIMULATED_NODE_SECONDS", 1.0)
    monkeypatch.setattr(fraig._Sweep, "_proved_constant", lambda *_: False)

    def refuted(self, i, r, seconds):
        made.append(self)
        limits.append(seconds)
        return "sat", {}
    monkeypatch.setattr(fraig._Sweep, "_prove_equal", refuted)
    lhs, rhs = z3.Sum([i for i, _ in pairs]) + y, z3.Sum([r for _, r in pairs]) + y
    with budget.using(FROZEN):
        _, stats = sweep([lhs != rhs], [x, y], budget.Budget(1000.0), sides=([lhs], [rhs]))
    assert limits[0] == fraig.QUERY_SECONDS and min(limits) <= fraig.FLOOR
    assert made[-1]._refuted() == stats.refuted > 0


@pytest.mark.parametrize(("cpu", "counted", "again"), [(8.0, 1.0, True), (1.0, 7.0, False)])
def test_whether_a_sweep_goes_again_is_read_off_its_work_not_the_cpu_clock(
        monkeypatch, cpu, counted, again):
    """A pass done with pairs undecided sweeps again where its share has AGAIN seconds
    left (`fraig._again`): left as its proofs' work counts them (`budget.Work`), not as
    the CPU clock reads them. 8 CPU seconds spent of 10 but 1 counted: again; 1 spent
    but 7 counted: not (by the CPU clock, the mutant, the other way round both times)."""
    now = [0.0]
    calls = []
    monkeypatch.setattr(fraig, "sweep", lambda roots, *_a, **_k: (
        calls.append(1), (roots, fraig.SweepStats(done=True)))[1])
    x = z3.BitVec("x", 8)
    with budget.using(budget.Clocks(lambda thread: now[0], budget.REAL.wall)):
        share = budget.Budget(10.0)
        share.worked, now[0] = counted, cpu
        fraig._again([x == 1], [x], fraig.SweepStats(nodes=1, done=True, undecided=1), share)
    assert bool(calls) == again


@needs_bitwuzla
def test_a_proofs_work_is_the_same_whatever_terms_were_made_before():
    """z3 prints a let-binding under its term's AST id (`?x10` in a fresh process,
    `?x40012` after 20,000 other terms), so a query's text is longer or shorter by the
    history of the process: its `Work` counts the text without those names, the same in
    both (counting them, the mutant, it differs)."""
    script = """
import sys
import z3
from ptxsmt.smt.solving import portfolio
from ptxsmt.smt.solving.budget import Effort
kept = [z3.BitVec(f"history{k}", 8) + k for k in range(int(sys.argv[1]))]
x, y = z3.FPs("wx wy", z3.Float32())
big = z3.fpAdd(z3.RNE(), x, y)
effort = Effort(1.0)
portfolio.solve_here([z3.And(z3.fpIsNaN(big), z3.fpLT(big, y), z3.fpGT(big, x))], effort)
print(repr(effort.work.seconds))
"""
    works = [subprocess.run([sys.executable, "-c", script, str(history)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}
                            ).stdout.strip() for history in (0, 20000)]
    assert works[0] and works[0] == works[1]
