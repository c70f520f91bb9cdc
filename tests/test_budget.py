"""Limits count the CPU seconds of the work, not wall seconds (issue 44: the same
verdicts on three runs at load 8; `smt/solving/budget.py`). A fake machine whose wall
clock runs four times as fast as its work (a loaded one) sweeps a pair with the same
merges, in the same order, and gives the same verdict, as an idle one. No test here
depends on how fast this machine is: the fake clocks move only when the work reads
them, and the real ones only bound a solver that would otherwise run for minutes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.function.encode import encode_function
from ptxsmt.sem.options import DEFAULT
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.solving import budget
from ptxsmt.smt.solving.budget import Budget, Clocks
from ptxsmt.smt.solving.child import race
from ptxsmt.smt.sweeping import sweep

CORPUS = Path(__file__).parent / "ptx" / "division"
STEP = 1e-4  # the CPU seconds one reading of the clock by the work stands for


class Machine:
    """Fake clocks: each reading of the CPU clock by the thread that made it is STEP
    CPU seconds of work; the wall clock runs `load` times as fast (readings by other
    threads, a watcher's, move nothing: their number follows the real time)."""

    def __init__(self, load: float):
        self.load, self.ticks, self.owner = load, 0, threading.get_ident()

    def cpu_of(self, thread: int) -> float:
        if threading.get_ident() == self.owner:
            self.ticks += 1
        return self.ticks * STEP

    def wall(self) -> float:
        return self.ticks * STEP * self.load

    def clocks(self) -> Clocks:
        return Clocks(self.cpu_of, self.wall)


def _functions():
    return [read_function_file(str(CORPUS / f"mix32.{n}.ptx"), "f") for n in ("O0", "O2")]


def _swept(load: float, seconds: float) -> tuple[list[tuple[int, int]], int]:
    """mix32's -O0/-O2 query swept within `seconds` on a fake machine at `load`: the
    merges, and the readings of the CPU clock it took."""
    o0, o2 = (encode_function(f, DEFAULT) for f in _functions())
    a, b = o0.returns["func_retval0"], o2.returns["func_retval0"]
    inputs = list({**o0.inputs, **o2.inputs}.values())
    machine = Machine(load)
    with budget.using(machine.clocks()):
        _, stats = sweep([a != b], inputs, seconds, sides=([a], [b]))
    return stats.merges, machine.ticks


def test_the_sweep_merges_alike_when_the_wall_clock_runs_four_times_as_fast():
    """Calibrated on the idle machine (R readings of the clock, with time to spare),
    then given 3R steps: on a machine at load 4 the work still fits its CPU seconds
    and the wall cap (2 x 3R > 4R), while the wall clock passes 3R three quarters of
    the way in: a sweep that read it (the mutant) would stop there, merges missing."""
    merges, readings = _swept(1, 1e6)
    assert len(merges) > 40
    again, _ = _swept(4, 3 * readings * STEP)
    assert again == merges
    spent, _ = _swept(1, readings * STEP / 2)  # the budget does bind: half is not enough
    assert len(spent) < len(merges)


def test_a_pair_gets_the_same_verdict_and_merges_on_a_loaded_machine():
    """The whole of `equiv`: encoding, sweep and the last query, within --timeout's CPU
    seconds; at load 4 the verdict and the merges are the idle machine's."""
    def verdict(load: float, timeout: float):
        machine = Machine(load)
        with budget.using(machine.clocks()):
            v = check_function_equivalence(*_functions(), timeout=timeout)
        return v.verdict, v.merges, machine.ticks

    idle, merges, readings = verdict(1, 1e6)
    assert idle == "equivalent" and merges["proved"] > 0
    assert verdict(4, 3 * readings * STEP)[:2] == (idle, merges)


def test_a_budget_is_cpu_seconds_within_a_wall_cap():
    """CPU seconds left, and none once the wall cap (WALL_CAP times the seconds) has
    passed; a part gets its share of the wall too; a step's budget has no cap of its
    own, but ends at the cap of the budget being spent."""
    now = {"cpu": 0.0, "wall": 0.0}
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        whole = Budget.capped(10)
        part, step = whole.part(4), Budget(1)
        with part.spending():
            within = Budget(1)
    assert (whole.wall_end, part.wall_end, step.wall_end, within.wall_end) == (20, 8, None, 8)
    now.update(cpu=3, wall=5)
    assert whole.left() == 7 and part.left() == 1 and whole.wall_left() == 15
    assert step.expired() and step.wall_left() is None
    now.update(wall=20)  # the load stretched 3 CPU seconds to 20 wall seconds
    assert whole.expired() and part.expired() and whole.left() == 0
    now.update(cpu=10.5, wall=11)
    assert whole.expired() and part.expired()
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        assert whole.rest(2).left() == 2  # a last step's least
    assert Budget(None).left() is None and not Budget(None).expired()


def _hard() -> list[z3.BoolRef]:
    """Factoring a product of two 31-bit primes: far beyond a second of bit-blasting."""
    p, q = 2147483647, 2147483629
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    return [x * y == p * q, z3.ULT(1, x), z3.ULT(x, 1 << 32), z3.ULT(1, y),
            z3.ULT(y, 1 << 32), x != p, x != q]


def test_z3_stopped_by_its_budget_is_unknown_never_an_interrupt():
    """The watcher interrupts z3 as a Ctrl-C would (z3 says "interrupted"): that is the
    budget spent, an unknown, never the KeyboardInterrupt of `solver.check`."""
    s = z3.Solver()
    s.add(*_hard())
    b = Budget(0.2)
    assert budget.check(s, b) == z3.unknown and b.expired()


def test_bitwuzla_in_this_process_stops_at_the_budgets_clock():
    """`_run_bitwuzla` asks the budget's terminator: on a fake machine where each
    reading is a second of CPU, the factoring stops at the first look."""
    pytest.importorskip("bitwuzla")
    from ptxsmt.smt.solving import portfolio

    text = portfolio.smt2(_hard())
    machine = Machine(load=1)
    with budget.using(Clocks(lambda thread: machine.cpu_of(thread) / STEP, machine.wall)):
        assert portfolio._run_bitwuzla(text, 5.0)[0] == "unknown"
    assert 5 <= machine.ticks <= 8  # stopped by the fake clock, at the first look past 5 s


def _spin(seconds: float) -> str:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "done"


def test_a_child_is_stopped_once_its_cpu_time_passes_the_limit():
    """A child that would compute for ten seconds of CPU is stopped past `cpu` seconds of
    its own CPU time, with no wall-clock deadline at all."""
    if budget.process_cpu(1) is None and budget.process_cpu(0) is None:
        pytest.skip("no /proc")
    assert race({"spin": (_spin, (10.0,))}, None, cpu=0.2)["spin"].status == "stopped"
    assert race({"spin": (_spin, (0.01,))}, None, cpu=5.0)["spin"].value == "done"
