"""Limits count the CPU seconds of the work, not wall seconds (issue 44: the same
verdicts on three runs at load 8; `smt/solving/budget.py`). A fake machine whose wall
clock runs four times as fast as its work (a loaded one) sweeps a pair with the same
merges, in the same order, and gives the same verdict, as an idle one. No test here
depends on how fast this machine is: the fake clocks move only when the work reads
them, and the real ones only bound a solver that would otherwise run for minutes."""

from __future__ import annotations

import json
import os
import signal
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
from ptxsmt.smt.solving.child import process_cpu, race
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
    # within a pair's deadline (2 x 3R less the report's share > 4R): the same again
    machine = Machine(4)
    with budget.using(machine.clocks()), budget.pair(3 * readings * STEP):
        v = check_function_equivalence(*_functions(), timeout=3 * readings * STEP)
    assert (v.verdict, v.merges) == (idle, merges)


class Late(Machine):
    """A fake machine whose wall clock may be set ahead (`late`): the pair's reading
    and encoding took that long before its check began."""
    late = 0.0

    def wall(self) -> float:
        return super().wall() + self.late


def test_a_pair_answers_by_its_wall_cap_counted_from_the_pair_start():
    """At load 8 the CPU seconds cannot bind (the idle machine's R readings take 8R of
    wall, past the cap of 2 x 2R), and half the cap went before the check began: the
    pair still ends within the cap of its start, `unknown`. Counted from the check's
    start (the mutant), it ends at 1.3 times the cap."""
    readings = 256  # the idle machine's, with time to spare (the test above)
    seconds = 2 * readings * STEP
    machine = Late(8)
    with budget.using(machine.clocks()):
        start = machine.wall()
        machine.late = budget.WALL_CAP * seconds / 2
        with budget.pair(seconds, start):
            v = check_function_equivalence(*_functions(), timeout=seconds)
    assert v.verdict == "unknown"
    assert machine.wall() - start <= budget.WALL_CAP * seconds


def test_every_budget_made_within_a_pair_ends_by_its_deadline():
    """A command's limit, a step's, and a rest's least: each ends by the pair's deadline,
    (1 - REPORT_SHARE) x WALL_CAP x the pair's seconds from its start; their CPU seconds
    stay theirs. Outside a pair, and with no limit, nothing changes."""
    now = {"cpu": 0.0, "wall": 100.0}
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        with budget.pair(10, start=90.0):  # 19 s from its start: at 109
            whole, step = Budget.capped(10), Budget(1)
            rest = whole.rest(30)
            inner = Budget.capped(3)
        with budget.pair(None):
            free = Budget(1)
        outside = Budget.capped(10)
    assert (whole.wall_end, step.wall_end, rest.wall_end, inner.wall_end) == (109, 109, 109, 106)
    assert (whole.seconds, step.seconds, rest.seconds) == (10, 1, 30)
    assert (free.wall_end, outside.wall_end) == (None, 120)


def _semiprime() -> list[z3.BoolRef]:
    """Factoring a product of two 12-bit primes: z3 finds the factors, in far more than
    the millisecond a search past its deadline is given."""
    x, y = z3.BitVec("x", 24), z3.BitVec("y", 24)
    return [x * y == 4093 * 4091, z3.ULT(1, x), z3.ULT(x, 4096), z3.ULT(1, y), z3.ULT(y, 4096)]


def test_a_search_with_no_budget_of_its_own_stops_at_the_pair_deadline():
    """A z3 search with only its own wall-clock limit (a counterexample's nice values,
    the IR replay's) is unknown once the pair's deadline has passed, never a
    KeyboardInterrupt; before it, and outside a pair, it runs as it did."""
    from ptxsmt.solver import check

    def search() -> z3.CheckSatResult:
        s = z3.Solver()
        s.set("timeout", 60_000)
        s.add(*_semiprime())
        return check(s)

    assert search() == z3.sat
    with budget.pair(60):
        assert search() == z3.sat
    with budget.pair(10, start=time.monotonic() - 30):  # its deadline passed 11 s ago
        assert search() == z3.unknown
        hard = z3.Solver()
        hard.set("timeout", 60_000)
        hard.add(*_hard())
    with budget.pair(0.2):  # the guard's watcher stops a search under way
        assert check(hard) == z3.unknown


def test_a_batch_pair_is_decided_within_its_deadline(monkeypatch):
    """`equiv --batch` runs each pair in a child process that inherits the pair's
    deadline, counted from the pair's start in the worker."""
    from ptxsmt import pairs

    def deadline(pair):
        return {"verdict": "unknown", "left": Budget(None).wall_left()}

    monkeypatch.setattr(pairs, "_decide", deadline)
    pair = pairs.Pair(1, "snippets", "mov.u32 d, a;", "mov.u32 d, a;",
                      options={"timeout": 10, "solver": "auto"})
    left = pairs.decide_pair(pair)["left"]
    assert left is not None and 0 < left <= (1 - budget.REPORT_SHARE) * budget.WALL_CAP * 10


def test_a_command_counts_from_the_start_of_its_process(tmp_path):
    """`started()` is when the process began: a process that slept half a second before
    asking has half a second behind it."""
    import subprocess
    import sys

    code = ("import time; time.sleep(0.5); from ptxsmt.smt.solving import budget; "
            "print(time.monotonic() - budget.started())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert float(out) >= 0.5


def test_a_budget_is_cpu_seconds_within_a_wall_cap():
    """CPU seconds left, and none once the wall cap (WALL_CAP times the seconds) has
    passed; a part gets the wall left less the CPU seconds left after it (a loaded
    machine cuts the steps after it, not the part); a step's budget has no cap of its
    own, but ends at the cap of the budget being spent."""
    now = {"cpu": 0.0, "wall": 0.0}
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        whole = Budget.capped(10)
        part, step = whole.part(4), Budget(1)
        with part.spending():
            within = Budget(1)
    assert (whole.wall_end, part.wall_end, step.wall_end, within.wall_end) == (20, 14, None, 14)
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


def test_a_part_takes_its_cpu_seconds_whole_on_a_loaded_machine():
    """A machine stretching the work 3 times: the first part (3 of 10 CPU seconds) is
    not cut by the wall (its share of it, 6 of 20 wall seconds, would end it after 2);
    a part asked once the wall is mostly spent gets at least its share of what is left."""
    now = {"cpu": 0.0, "wall": 0.0}
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        whole = Budget.capped(10)
        first = whole.part(3)
        now.update(cpu=2, wall=6)
        assert not first.expired() and first.left() == 1
        now.update(cpu=3, wall=9)
        assert first.expired() and not whole.expired()
        now.update(cpu=4, wall=16)  # 6 CPU seconds left, 4 wall seconds
        late = whole.part(3)
    assert late.wall_end == 18  # its share (2 of 4), more than 4 - (6 - 3)


def test_a_measurement_raises_the_wall_cap_by_the_environment(monkeypatch):
    """PTXSMT_WALL_CAP=20: a command's limit of 10 CPU seconds ends at 200 wall seconds,
    and a pair's deadline is as far; unset, the default cap (2) holds."""
    now = {"cpu": 0.0, "wall": 0.0}
    clocks = Clocks(lambda thread: now["cpu"], lambda: now["wall"])
    monkeypatch.setenv(budget.WALL_CAP_VARIABLE, "20")
    with budget.using(clocks):
        assert Budget.capped(10).wall_end == 200
        with budget.pair(10):
            assert Budget(None).wall_end == (1 - budget.REPORT_SHARE) * 200
    monkeypatch.delenv(budget.WALL_CAP_VARIABLE)
    with budget.using(clocks):
        assert Budget.capped(10).wall_end == 20


@pytest.mark.parametrize("value", ["", "fast", "0.5", "nan", "inf", "1e9"])
def test_a_wall_cap_that_is_no_number_from_1_is_refused(monkeypatch, value):
    """A cap below 1 (a pair stopped before its CPU seconds), or none at all, is refused
    with the variable named, not replaced by the default."""
    monkeypatch.setenv(budget.WALL_CAP_VARIABLE, value)
    with pytest.raises(budget.PtxError, match="PTXSMT_WALL_CAP=.* is not a wall cap"):
        budget.wall_cap()


def test_equiv_refuses_a_bad_wall_cap_in_one_line():
    """The command line: one line naming the variable, exit 2, no traceback."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ptxsmt", "equiv", "add.u32 d, a, b;",
                           "add.u32 d, b, a;"], capture_output=True, text=True,
                          env={**os.environ, budget.WALL_CAP_VARIABLE: "0"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'error: PTXSMT_WALL_CAP="0" is not a wall cap (a number from 1 to 1000: times the '
        'CPU seconds of --timeout)']


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
    if process_cpu(1) is None and process_cpu(0) is None:
        pytest.skip("no /proc")
    assert race({"spin": (_spin, (10.0,))}, None, cpu=0.2)["spin"].status == "stopped"
    assert race({"spin": (_spin, (0.01,))}, None, cpu=5.0)["spin"].value == "done"


def test_no_query_is_written_out_for_other_solvers_past_the_limit(monkeypatch):
    """Writing a 1,000-operation query out as SMT-LIB takes seconds of Python: past the
    deadline it is not begun (before, a float 1,000 pair at --timeout 20 wrote it out
    after its cap and ended at 78 s). `auto`: z3's first seconds spent the budget, so
    the query is not read for bitwuzla; the portfolio: an expired budget races nothing."""
    from ptxsmt.smt.solving import decide, portfolio

    now = {"cpu": 0.0, "wall": 0.0}

    def z3_first(solver, part):  # z3's first seconds: unknown, and the limit passed
        now.update(cpu=11.0, wall=11.0)
        return z3.unknown

    def unread(*args):
        raise AssertionError("the query was read for the other solvers")

    monkeypatch.setattr(decide, "check", z3_first)
    monkeypatch.setattr(portfolio, "unreadable", unread)
    monkeypatch.setattr(portfolio, "smt2", unread)
    monkeypatch.setattr(portfolio, "unavailable", lambda: [])
    s = z3.Solver()
    s.add(*_hard())
    with budget.using(Clocks(lambda thread: now["cpu"], lambda: now["wall"])):
        limit = Budget.capped(10)
        decision = decide.check_with(s, "auto", limit)
        assert (decision.result, decision.reason) == (z3.unknown, "timeout")
        answer = portfolio.solve(_hard(), limit)
    assert (answer.result, answer.reason) == (
        "unknown", "the time ran out before the query was written out")


def _python_work(seconds: float, log: list | None = None) -> str:
    """Pure Python work (no clock of its own, as encoding is), each step noted in `log`
    (a half-updated state, were the work stopped inside this process)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if log is not None:
            log.append(len(log))
    return "ran to its end"


def _deaf(seconds: float) -> str:
    """A solver that answers no interrupt and no signal a process may ignore (z3 in some
    phases of a large query): one C call, no Python instruction to stop between."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    time.sleep(seconds)
    return "answered"


def test_work_with_no_clock_is_stopped_at_the_pair_stop_time():
    """Past the pair's deadline (halfway to its cap), Python work with no clock of its
    own is stopped (OutOfTime); work that ends in time, or runs outside a pair, is not."""
    with budget.pair(0.2), pytest.raises(budget.OutOfTime):  # stopped at 0.39 s
        budget.bounded(_python_work, 20.0)
    with budget.pair(10):
        assert budget.bounded(_python_work, 0.01) == "ran to its end"
    assert budget.bounded(_python_work, 0.01) == "ran to its end"


def test_a_solver_that_answers_no_interrupt_is_killed_at_the_stop():
    """z3 sometimes ignores its interrupt (a 1,000-operation pair's last query ran 70 s
    past its budget): the pair's process is killed at its stop all the same."""
    with budget.pair(0.2), pytest.raises(budget.OutOfTime):
        budget.bounded(_deaf, 20.0)


def test_stopped_work_leaves_this_process_as_it_was():
    """The work runs in a process of its own: stopped mid-update, it leaves nothing
    half-updated here (an exception raised inside the work would have: the log half
    written); what it returns comes back, its effects on memory do not. Outside a
    pair it runs here."""
    log: list[int] = []
    with budget.pair(0.2), pytest.raises(budget.OutOfTime):
        budget.bounded(_python_work, 20.0, log)
    assert log == []
    with budget.pair(10):
        assert budget.bounded(_python_work, 0.0, log) == "ran to its end"
        assert budget.bounded(lambda: log.append(1) or len(log)) == 1
    assert log == []
    assert budget.bounded(lambda: log.append(1) or len(log)) == 1 and log == [1]


def test_within_the_pairs_process_bounded_forks_no_more():
    """The pair's own process is killed at the stop already: a `bounded` inside it calls
    its work there, whose effects stay (a second process would have lost them)."""
    def nested() -> list[int]:
        log: list[int] = []
        budget.bounded(log.append, 1)
        return log

    with budget.pair(10):
        assert budget.bounded(nested) == [1]


def _raise(e: BaseException) -> None:
    raise e


def test_the_works_error_is_raised_here_as_itself():
    """Bad input found in the pair's process is the same error here, with its place and
    fields (Unsupported's __init__ takes other arguments than it keeps); a process that
    dies is ChildDied."""
    from ptxsmt.isa.errors import PtxError
    from ptxsmt.llvm.errors import Unsupported

    with budget.pair(10):
        with pytest.raises(PtxError) as bad:
            budget.bounded(_raise, PtxError("no such register", line=3, col=7))
        assert str(bad.value) == "line 3, col 7: no such register"
        with pytest.raises(Unsupported) as refused:
            budget.bounded(_raise, Unsupported("loop", "a branch back to a block"))
        assert (refused.value.reason, str(refused.value)) == (
            "loop", "unsupported loop: a branch back to a block")
        with pytest.raises(budget.ChildDied, match="died"):
            budget.bounded(os._exit, 3)


def test_a_batch_pair_whose_solver_answers_no_interrupt_is_unknown(monkeypatch):
    """A batch line is killed at its stop, whatever its solver does, and says why."""
    from ptxsmt import pairs

    monkeypatch.setattr(pairs, "_decide", lambda pair: {"verdict": _deaf(20.0)})
    pair = pairs.Pair(1, "snippets", "mov.u32 d, a;", "mov.u32 d, a;",
                      options={"timeout": 0.25, "solver": "auto"})
    result = pairs.decide_pair(pair)
    assert result["verdict"] == "unknown" and result["reason"].startswith(budget.OUT_OF_TIME)
    assert result["run"]["memory"] is None


@pytest.fixture
def deaf_z3(monkeypatch):
    """Every z3 search answers no interrupt for 20 s (its budget's, the guard's)."""
    from ptxsmt import solver

    real = solver.check

    def check(s, *assumptions, stopped=None):
        _deaf(20.0)
        return real(s, *assumptions, stopped=stopped)

    monkeypatch.setattr(solver, "check", check)


def _invoke(*args: str):
    from click.testing import CliRunner

    from ptxsmt.cli import main

    return CliRunner().invoke(main, list(args))


def test_equiv_of_two_functions_answers_unknown_whatever_z3_does(deaf_z3):
    r = _invoke("equiv", str(CORPUS / "mix32.O0.ptx"), str(CORPUS / "mix32.O2.ptx"),
                "--function", "f", "--timeout", "0.25", "--json")
    assert r.exit_code == 3, r.output
    result = json.loads(r.stdout)
    assert (result["verdict"], result["reason"]) == ("unknown", budget.OUT_OF_TIME)


LLVM = Path(__file__).parent / "ptx" / "llvm"


def test_snippets_ir_and_tv_answer_unknown_whatever_z3_does(deaf_z3, tmp_path):
    """Every kind of pair: snippets, IR against PTX, each function of `tv`."""
    r = _invoke("equiv", "mul.lo.u32 d, a, b;", "mul.lo.u32 d, b, a;", "--timeout", "0.25",
                "--json")
    assert r.exit_code == 3, r.output
    result = json.loads(r.stdout)
    assert (result["verdict"], result["reason"]) == ("unknown", budget.OUT_OF_TIME)
    r = _invoke("equiv", str(LLVM / "une.ll"), str(LLVM / "une_llc14_O2.ptx"), "--function",
                "add", "--timeout", "0.25", "--json")
    assert r.exit_code == 3, r.output
    result = json.loads(r.stdout)
    assert (result["verdict"], result["reason"]) == ("unknown", budget.OUT_OF_TIME)
    pytest.importorskip("llvmlite")
    r = _invoke("tv", str(LLVM / "une.ll"), "--timeout", "0.25", "--json")
    assert r.exit_code == 3, r.output
    *rows, _ = map(json.loads, r.stdout.splitlines())
    assert rows and all((x["verdict"], x["reason"]) == ("unknown", budget.OUT_OF_TIME)
                        for x in rows)
