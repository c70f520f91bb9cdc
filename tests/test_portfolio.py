"""The solver portfolio (ptxsmt.smt.solving.portfolio, `equiv --solver portfolio`): each solver's
answers checked by plain Python arithmetic, the race's bookkeeping (no child left behind),
disagreement as an error, and z3 alone when the other bindings are missing."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy
import pytest
import z3
from click.testing import CliRunner
from processes import children
from ptx_interp import run

from ptxsmt.cli import main
from ptxsmt.function import read_function
from ptxsmt.smt.queries import functions
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.queries.snippets import check_equivalence
from ptxsmt.smt.solving import budget, decide, portfolio
from ptxsmt.smt.solving.decide import check_with
from ptxsmt.smt.solving.portfolio import SolverDisagreement
from ptxsmt.terms import walk

MASK8 = 0xFF


_BEFORE: set[int] = set()  # this process's children when the test began


@pytest.fixture(autouse=True)
def _children_before():
    _BEFORE.clear()
    _BEFORE.update(children())


def _no_children() -> bool:
    """Every child the portfolio started has been reaped (none running, no zombie)."""
    return not children() - _BEFORE


def _sat_query():
    x, y = z3.BitVec("x", 8), z3.BitVec("y", 8)
    return [x * 3 == 7, y != x, z3.ULT(y, 5)]


@pytest.mark.parametrize("solver", portfolio.SOLVERS)
def test_each_solver_finds_a_model_python_confirms(solver):
    answer = portfolio.solve(_sat_query(), 10, solvers=[solver])
    assert (answer.result, answer.solver) == ("sat", solver)
    x, y = answer.values["x"], answer.values["y"]
    assert (x * 3) & MASK8 == 7 and y != x and y < 5
    assert _no_children()


@pytest.mark.parametrize("solver", portfolio.SOLVERS)
def test_each_solver_names_its_values_as_z3_names_the_constants(solver):
    """A name the text must quote (`|fused mul into add|`, a choice of ptxas's) comes
    back as the constant's own name: a value under another name is never pinned."""
    x, fused = z3.BitVec("r5@12", 8), z3.Bool("fused mul into add")
    answer = portfolio.solve([x * 3 == 7, fused], 10, solvers=[solver])
    assert answer.values == {"r5@12": 173, "fused mul into add": True}  # 173*3 = 519 = 7 mod 256


@pytest.mark.parametrize("solver", portfolio.SOLVERS)
def test_each_solver_proves_unsat(solver):
    x = z3.BitVec("x", 8)  # an odd square is 1 mod 8, an even one 0 or 4: never 3 mod 4
    assert all((v * v) % 4 != 3 for v in range(256))
    answer = portfolio.solve([x * x & 3 == 3], 10, solvers=[solver])
    assert answer.result == "unsat"
    assert _no_children()


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
@pytest.mark.parametrize("large", [10**9, 0])
def test_sweepings_solver_answers_here_and_in_a_child_alike(monkeypatch, large):
    """`solve_here`: a query over LARGE characters is solved in a child process, with
    the answers of one solved in this process."""
    monkeypatch.setattr(portfolio, "LARGE", large)
    answer = portfolio.solve_here(_sat_query(), 10)
    assert (answer.result, answer.solver) == ("sat", "bitwuzla")
    x, y = answer.values["x"], answer.values["y"]
    assert (x * 3) & MASK8 == 7 and y != x and y < 5
    x = z3.BitVec("x", 8)
    assert portfolio.solve_here([x * x & 3 == 3], 10).result == "unsat"
    assert _no_children()


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
def test_a_large_sweeping_query_is_stopped_at_its_limit(monkeypatch):
    """bitwuzla's preprocessing ignores its own limit: the child is killed."""
    monkeypatch.setattr(portfolio, "LARGE", 0)
    monkeypatch.setattr(portfolio, "_run_bitwuzla", _sleep)
    answer = portfolio.solve_here(_sat_query(), 0.2)
    assert answer.result == "unknown" and "stopped" in answer.reason
    assert _no_children()


def test_the_race_gives_one_definite_answer_and_reaps_every_child():
    answer = portfolio.solve(_sat_query(), 10)
    assert answer.result == "sat" and answer.solver in portfolio.SOLVERS
    assert _no_children()


def _sleep(text, timeout):
    time.sleep(600)


def test_solvers_past_the_limit_are_killed_and_the_answer_is_unknown(monkeypatch):
    monkeypatch.setattr(portfolio, "GRACE", 0.1)
    monkeypatch.setattr(portfolio, "RUNNERS", dict.fromkeys(portfolio.SOLVERS, _sleep))
    answer = portfolio.solve(_sat_query(), 0.2)
    assert answer.result == "unknown" and "stopped" in answer.reason
    assert _no_children()


def test_a_solver_timeout_is_unknown_never_unsat():
    # factoring a product of two 31-bit primes: far beyond 0.1 s of bit-blasting
    p, q = 2147483647, 2147483629
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    query = [x * y == p * q, z3.ULT(1, x), z3.ULT(x, 1 << 32), z3.ULT(1, y), z3.ULT(y, 1 << 32),
             x != p, x != q]
    answer = portfolio.solve(query, 0.1)
    assert answer.result == "unknown"
    assert _no_children()


def _clock(monkeypatch) -> list[float]:
    """The clock every budget reads (CPU and wall alike, `budget.py`), as a list the
    test moves forward."""
    now = [0.0]
    monkeypatch.setattr(budget, "_clocks", budget.Clocks(lambda thread: now[0], lambda: now[0]))
    return now


def test_writing_the_query_out_counts_against_its_limit(monkeypatch):
    """The solvers get the limit less the seconds the query took to write out (a large
    one takes seconds); past the limit, no solver starts and the answer is unknown."""
    now, written = _clock(monkeypatch), portfolio.smt2

    def slow(assertions):
        now[0] += 5.0
        return written(assertions)

    def told(text, timeout):
        return "unknown", {}, f"given {timeout:g} s"

    monkeypatch.setattr(portfolio, "smt2", slow)
    monkeypatch.setattr(portfolio, "RUNNERS", dict.fromkeys(portfolio.SOLVERS, told))
    assert "z3: given 3 s" in portfolio.solve(_sat_query(), 8.0, solvers=["z3"]).reason
    monkeypatch.setattr(portfolio, "RUNNERS", dict.fromkeys(portfolio.SOLVERS, _says("sat")))
    answer = portfolio.solve(_sat_query(), 3.0)
    assert answer.result == "unknown" and "written out" in answer.reason
    assert _no_children()


def test_auto_gives_the_race_the_time_z3_left(monkeypatch):
    """`auto`: z3 alone first, for Z3_FIRST_SECONDS; where it stops late, the race gets
    what is left of the limit, not the limit less the seconds z3 was given."""
    pytest.importorskip("bitwuzla")
    now, given = _clock(monkeypatch), []

    def late(s, *assumptions):
        now[0] += 3.5
        return z3.unknown

    monkeypatch.setattr(decide, "check", late)
    monkeypatch.setattr(portfolio, "solve", lambda assertions, timeout, racers:
                        given.append(timeout.left()) or portfolio.Answer("unknown",
                                                                         reason="none"))
    s = z3.Solver()
    s.add(*_sat_query())
    assert check_with(s, "auto", 10).result == z3.unknown and given == [6.5]


def _says(result, values=None):
    def runner(text, timeout):
        return result, values or {}, "" if result != "unknown" else "made up"
    return runner


def test_opposite_answers_raise_never_a_verdict(monkeypatch):
    monkeypatch.setitem(portfolio.RUNNERS, "cvc5", _says("unsat"))
    with pytest.raises(SolverDisagreement, match="cvc5 says unsat"):
        portfolio.solve(_sat_query(), 10, cross_check=True)
    assert _no_children()


def test_a_model_z3_refutes_raises(monkeypatch):
    """bitwuzla (made up) says sat with x = 0, which does not satisfy x*3 = 7."""
    monkeypatch.setattr(portfolio, "RUNNERS", {"z3": _says("unknown"), "cvc5": _says("unknown"),
                                               "bitwuzla": _says("sat", {"x": 0, "y": 1})})
    s = z3.Solver()
    s.add(*_sat_query())
    with pytest.raises(SolverDisagreement, match="bitwuzla says sat"):
        check_with(s, "portfolio", 10)


@pytest.mark.parametrize("winner", ["bitwuzla", "cvc5"])
def test_another_solvers_counterexample_is_replayed(monkeypatch, winner):
    """lo and le differ exactly when a == b; the model comes from `winner` alone."""
    runners = dict.fromkeys(portfolio.SOLVERS, _says("unknown"))
    monkeypatch.setattr(portfolio, "RUNNERS", {**runners, winner: portfolio.RUNNERS[winner]})
    v = check_equivalence("setp.lo.u32 p, a, b;", "setp.le.u32 p, a, b;", solver="portfolio")
    assert v.verdict == "different"
    cex = v.counterexample
    assert cex.inputs["a"] == cex.inputs["b"] and (cex.lhs["p"], cex.rhs["p"]) == (False, True)
    v = check_equivalence("setp.lo.u32 p, a, b;", "setp.gt.u32 p, b, a;", solver="portfolio")
    assert v.verdict == "equivalent"


def test_nobody_answering_is_unknown(monkeypatch):
    monkeypatch.setattr(portfolio, "RUNNERS", dict.fromkeys(portfolio.SOLVERS, _says("unknown")))
    v = check_equivalence("setp.lo.u32 p, a, b;", "setp.le.u32 p, a, b;", solver="portfolio")
    assert v.verdict == "unknown"


def test_without_the_bindings_the_portfolio_is_z3_alone_and_says_so_once(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "bitwuzla", None)  # import fails
    monkeypatch.setitem(__import__("sys").modules, "cvc5", None)
    assert portfolio.unavailable() == ["bitwuzla", "cvc5"]
    answer = portfolio.solve(_sat_query(), 10)
    assert answer.solver == "z3"
    r = CliRunner().invoke(main, ["equiv", "setp.lo.u32 p, a, b;", "setp.le.u32 p, a, b;",
                                  "--solver", "portfolio"])
    assert r.exit_code == 1 and r.stdout.startswith("different")
    assert r.stderr.count("the portfolio is z3 alone") == 1


def test_cli_portfolio_verdicts():
    r = CliRunner().invoke(main, ["equiv", "setp.lo.u32 p, a, b;", "setp.lt.u32 p, a, b;",
                                  "--solver", "portfolio"])
    assert r.exit_code == 0 and r.stdout.startswith("equivalent") and not r.stderr


def _nap():
    time.sleep(600)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc (Linux)")
def test_a_child_dies_with_its_parent():
    """A pool worker terminated mid-race (Ctrl-C on a batch) leaves no solver running."""
    from ptxsmt.smt.solving.child import race

    read, write = os.pipe()
    parent = os.fork()
    if parent == 0:
        os.close(read)
        race({"nap": (_nap_and_tell, (write,))}, 600)
        os._exit(0)
    os.close(write)
    child = int(os.read(read, 32))  # the grandchild's pid, once it runs
    os.close(read)
    os.kill(parent, 9)
    os.waitpid(parent, 0)
    try:
        for _ in range(200):  # the kernel kills it at once; allow a busy machine 20 s
            if _state(child) in ("Z", "gone"):
                break
            time.sleep(0.1)
        assert _state(child) in ("Z", "gone")
    finally:
        if _state(child) not in ("Z", "gone"):  # the test failed: leave nothing running
            os.kill(child, 9)


def _nap_and_tell(write):
    os.write(write, str(os.getpid()).encode())
    _nap()


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


# ---- whole functions: another solver's counterexample, nice and replayed --------------------

PTX = Path(__file__).parent / "ptx"
O3, WRONG = PTX / "func_sm90_O3.ptx", PTX / "func_sm90_O3_wrong.ptx"
PICK = "_Z4pickPKiS0_Piii"  # the wrong rewrite flips the predicate on equal elements


def _pick_pair():
    return (read_function(O3.read_text(), PICK), read_function(WRONG.read_text(), PICK))


def _only(monkeypatch, winner, runner=None):
    """Every solver but `winner` gives up; `winner` runs for real (or as `runner`)."""
    runners = dict.fromkeys(portfolio.SOLVERS, _says("unknown"))
    monkeypatch.setattr(portfolio, "RUNNERS",
                        {**runners, winner: runner or portfolio.RUNNERS[winner]})


def _replays_in_the_interpreter(cex) -> None:
    """The independent interpreter (tests/ptx_interp.py) sees the difference too."""
    memory = {}
    for loc, value in cex.memory.items():
        memory |= {loc.address + k: (value >> 8 * k) & 0xFF for k in range(loc.type.width // 8)}
    params = {k: x for k, x in cex.inputs.items() if "param" in k}
    specials = {k: x for k, x in cex.inputs.items() if "param" not in k}
    finals = [run(p.read_text(), PICK, params, specials, memory)[1] for p in (O3, WRONG)]
    assert finals[0] != finals[1]


@pytest.mark.parametrize("winner", ["bitwuzla", "cvc5"])
def test_another_solvers_function_counterexample_is_made_nice_and_replayed(monkeypatch, winner):
    pytest.importorskip(winner)
    _only(monkeypatch, winner)
    v = check_function_equivalence(*_pick_pair(), timeout=30, solver="portfolio")
    assert v.verdict == "different"
    cex = v.counterexample
    # z3 re-solved with nice values: the three pointers are buffers of their own
    assert [cex.inputs[f"{PICK}_param_{i}"] for i in range(3)] == [0x10000, 0x20000, 0x30000]
    _replays_in_the_interpreter(cex)


def test_when_z3_cannot_make_it_nice_the_winners_model_is_shown_replayed(monkeypatch,
                                                                         tmp_path):
    """z3 makes nothing nice (as if out of time): the winner's own values are the
    counterexample, still replayed through the evaluator."""
    real_z3, told = portfolio.RUNNERS["z3"], tmp_path / "values.json"

    def runner(text, timeout):  # a real model, as "cvc5", told to the test (another process)
        answer = real_z3(text, timeout)
        told.write_text(json.dumps(answer[1]))
        return answer

    _only(monkeypatch, "cvc5", runner)
    monkeypatch.setattr(functions, "prefer_nice", lambda *args, **kwargs: None)
    v = check_function_equivalence(*_pick_pair(), timeout=30, solver="portfolio")
    assert v.verdict == "different"
    found = json.loads(told.read_text())
    shown = {k: x for k, x in v.counterexample.inputs.items() if k in found}
    assert shown and shown == {k: found[k] for k in shown}
    _replays_in_the_interpreter(v.counterexample)


def _quotient_pair(compare: str):
    """`x / d != 0` against `x >= d` (`compare`), d = y | 1: a division by a variable,
    which z3's simplifier writes `bvudiv_i`."""
    def func(body: str):
        return read_function(
            ".version 7.0\n.target sm_80\n.address_size 64\n"
            ".visible .func (.param .b32 ret) f(.param .b32 x, .param .b32 y)\n{\n"
            ".reg .b32 %r<8>;\n.reg .pred %p<2>;\n"
            "ld.param.u32 %r1, [x];\nld.param.u32 %r6, [y];\nor.b32 %r2, %r6, 1;\n"
            f"{body}\nselp.u32 %r3, 1, 0, %p1;\nst.param.b32 [ret+0], %r3;\nret;\n}}\n", "f")
    return (func("div.u32 %r4, %r1, %r2;\nsetp.ne.s32 %p1, %r4, 0;"),
            func(f"setp.{compare}.u32 %p1, %r1, %r2;"))


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
@pytest.mark.parametrize(("compare", "verdict"), [("ge", "equivalent"), ("gt", "different")])
def test_bitwuzla_alone_decides_a_division_by_a_variable(monkeypatch, compare, verdict):
    """The query's `bvudiv_i` by a variable is read by bitwuzla as `bvudiv`
    (`smt2.standard`): its unsat is the verdict, and its sat a counterexample z3
    completes and the evaluator replays (x = d, where x / d is 1 and x > d fails)."""
    _only(monkeypatch, "bitwuzla")
    v = check_function_equivalence(*_quotient_pair(compare), timeout=30, solver="portfolio")
    assert v.verdict == verdict, v.reason
    if verdict == "different":
        cex = v.counterexample
        assert cex.inputs["x"] == cex.inputs["y"] | 1
        assert (cex.lhs.returns["ret"], cex.rhs.returns["ret"]) == (1, 0)  # replayed


def test_unknown_from_every_solver_names_each_reason(monkeypatch):
    monkeypatch.setattr(portfolio, "RUNNERS", {
        "z3": _says("unknown"), "bitwuzla": _sleep, "cvc5": _raises})
    monkeypatch.setattr(portfolio, "GRACE", 0.1)
    v = check_function_equivalence(*_pick_pair(), timeout=0.2, solver="portfolio")
    assert v.verdict == "unknown"
    assert "z3: made up" in v.reason and "bitwuzla: stopped" in v.reason
    assert "cvc5: failed: RuntimeError: cannot read it" in v.reason
    v = check_equivalence("setp.lo.u32 p, a, b;", "setp.lo.u32 p, a, b;", timeout=0.2,
                          solver="portfolio")
    assert v.verdict == "unknown" and "z3: made up" in v.reason  # never equivalent
    assert _no_children()


def _raises(text, timeout):
    raise RuntimeError("cannot read it")


def test_the_first_definite_answer_wins_and_the_others_are_stopped(monkeypatch):
    """bitwuzla and cvc5 would run for ten minutes: z3's sat ends the race at once."""
    monkeypatch.setattr(portfolio, "RUNNERS", {
        "z3": portfolio.RUNNERS["z3"], "bitwuzla": _sleep, "cvc5": _sleep})
    answer = portfolio.solve(_sat_query(), 600)
    assert (answer.result, answer.solver) == ("sat", "z3")
    assert _no_children()



def _wrong_unsat(text, timeout):
    return "unsat", {}, ""


def _z3_first_gives_up(monkeypatch) -> list[tuple]:
    """z3's first check (auto's seconds of z3 alone) answers unknown, as a z3 that ran out
    of time would; every later check (completing another solver's model) is z3's own.
    Returns what each check asked (its solver's assertions), in order."""
    real, calls = decide.check, []

    def check(s, budget, *assumptions):
        calls.append([*s.assertions(), *assumptions])
        return z3.unknown if len(calls) == 1 else real(s, budget, *assumptions)
    monkeypatch.setattr(decide, "check", check)
    return calls


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
def test_auto_hands_a_query_z3_has_not_decided_to_the_race(monkeypatch):
    """`--solver auto`: z3 alone first (made to give up), then bitwuzla races z3 (whose
    racer gives up at once: bitwuzla's is the only definite answer, whichever process is
    faster); bitwuzla's model becomes z3's, checked by z3 with the winner's values folded
    in and by plain arithmetic here."""
    calls = _z3_first_gives_up(monkeypatch)
    monkeypatch.setattr(portfolio, "RUNNERS", {**portfolio.RUNNERS, "z3": _says("unknown")})
    solver = z3.Solver()
    solver.add(*_sat_query())
    decision = check_with(solver, "auto", 600)
    assert (decision.result, decision.solver) == (z3.sat, "bitwuzla")
    x, y = (decision.model.eval(z3.BitVec(n, 8)).as_long() for n in "xy")
    assert (x * 3) & MASK8 == 7 and y != x and y < 5
    # the second check: a query of its own, bitwuzla's values put in (x*3 computed)
    # and held, so that its model is the winner's
    assert len(calls) == 2
    asked = z3.And(calls[1])
    pins = [a for a in calls[1] if z3.is_eq(a) and any(map(z3.is_bv_value, a.children()))]
    rest = [a for a in calls[1] if not any(a.eq(p) for p in pins)]
    assert not any(walk.is_free(t) for t in walk.subterms(*rest)), rest
    held = z3.Solver()
    held.add(asked, z3.Or(z3.BitVec("x", 8) != x, z3.BitVec("y", 8) != y))
    assert held.check() == z3.unsat
    assert _no_children()


def test_auto_asks_no_other_solver_of_a_query_z3_decides_at_once(monkeypatch):
    """Racers that would answer wrong are never started: z3 decided within its seconds."""
    monkeypatch.setattr(portfolio, "RUNNERS", dict.fromkeys(portfolio.SOLVERS, _wrong_unsat))
    solver = z3.Solver()
    solver.add(*_sat_query())
    decision = check_with(solver, "auto", 600)
    assert (decision.result, decision.solver) == (z3.sat, "z3")

def _interrupt_the_parent():
    os.kill(os.getppid(), signal.SIGINT)
    time.sleep(600)


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, as the command line has it: a test runner's worker
    may have left the signal ignored (one CI run's xdist worker did), and a race then
    waits its whole deadline for an interruption that never comes."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_stops_every_solver():
    """A SIGINT in the parent (the children ignore it) ends the race: every child is
    killed and reaped, and the interruption goes on up to the command line."""
    from ptxsmt.smt.solving.child import race

    with pytest.raises(KeyboardInterrupt):
        race({"a": (_interrupt_the_parent, ()), "b": (_nap, ())}, 60)
    assert _no_children()



def _wake_often(stop: threading.Event) -> None:
    while not stop.wait(0.001):
        pass


@pytest.mark.usefixtures("python_sigint")
def test_a_ctrl_c_while_forking_orphans_no_child():
    """With another thread running (the CLI's interrupt watcher, a pytest-xdist worker's),
    the system may give SIGINT to that thread, and Python then raises it in this one
    between any two bytecodes: also between a fork and the child's entry in the table.
    Before the handler only noted it while forking, about half of these races left a
    child running."""
    from ptxsmt.smt.solving.child import race

    stop = threading.Event()
    busy = threading.Thread(target=_wake_often, args=(stop,))
    busy.start()
    try:
        for _ in range(20):
            with pytest.raises(KeyboardInterrupt):
                race({"a": (_interrupt_the_parent, ()), "b": (_nap, ()), "c": (_nap, ())}, 60)
            assert _no_children()
    finally:
        stop.set()
        busy.join()

# ---- a model whose difference lies only in values the ISA leaves open -----------------------

ADD = """.version 8.4
.target sm_90
.address_size 64

.visible .func  (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{{
	.reg .f32 	%f<4>;
	.reg .pred 	%p<2>;
	.reg .b32 	%r<2>;
	ld.param.f32 	%f1, [f_param_0];
	ld.param.f32 	%f2, [f_param_1];
	{body}
	st.param.f32 	[func_retval0], %f3;
	ret;
}}
"""
MAGIC = 0x3F9E0651  # a float no nice-value search tries
COMMUTED = "neg.f32 %f3, %f2;\n\tsub.f32 %f3, %f1, %f3;"
# the sum as a - (-b) (equal bits wherever no NaN is involved; the NaNs the ISA leaves open
# are another instruction's), and 0.0 where the first parameter's bits are MAGIC: the only
# difference that is not a NaN's
PLANTED = COMMUTED + f"""
	mov.b32 	%r1, %f1;
	setp.eq.b32 	%p1, %r1, {MAGIC:#x};
	@%p1 mov.f32 	%f3, 0f00000000;"""


def _sum_bits(a: int, b: int) -> int:
    """f32 a + b, rounded to nearest even, as numpy computes it (a and b no NaN)."""
    with numpy.errstate(all="ignore"):
        total = numpy.array([a], numpy.uint32).view(numpy.float32) + \
            numpy.array([b], numpy.uint32).view(numpy.float32)
    return int(total.view(numpy.uint32)[0])


def test_a_nan_only_difference_is_asked_again_until_a_definite_one():
    """The nicest first model (f_param_0 = 0.0) differs only through the sum's open NaN;
    asked again under the NaN choice that made the sides agree, the solver must find
    the planted difference, which every NaN choice keeps."""
    first = read_function(ADD.format(body="add.f32 %f3, %f1, %f2;"), "f")
    v = check_function_equivalence(first, read_function(ADD.format(body=PLANTED), "f"))
    assert v.verdict == "different", v.reason
    a, b = v.counterexample.inputs["f_param_0"], v.counterexample.inputs["f_param_1"]
    assert a == MAGIC
    assert v.counterexample.lhs.returns["func_retval0"] == _sum_bits(a, b)
    assert v.counterexample.rhs.returns["func_retval0"] == 0


def test_a_difference_only_through_open_nans_is_no_difference_by_default():
    """docs/spec-notes.md note 14: equal up to NaN payloads; under --nan exact the two
    open NaNs may be chosen apart, and the verdict says that is all."""
    first = read_function(ADD.format(body="add.f32 %f3, %f1, %f2;"), "f")
    second = read_function(ADD.format(body=COMMUTED), "f")
    v = check_function_equivalence(first, second)
    assert (v.verdict, v.up_to_nan_payloads) == ("equivalent", True)
    v = check_function_equivalence(first, second, timeout=4, nan="exact")
    assert (v.verdict, v.counterexample.nan_payloads_only) == ("different", True)


def test_commuted_operands_of_add_are_one_instruction():
    """Spec notes 10: "a + b" names no order, so its open NaN is one of the pair."""
    first = read_function(ADD.format(body="add.f32 %f3, %f1, %f2;"), "f")
    swapped = read_function(ADD.format(body="add.f32 %f3, %f2, %f1;"), "f")
    assert check_function_equivalence(first, swapped).verdict == "equivalent"


def test_when_z3_runs_out_of_time_the_nice_steps_go_on_locally(monkeypatch):
    """The first nice-value check times out (made up): from then on each step keeps the
    other inputs at the last model's values, and the pointers still become buffers."""
    real, calls = functions.check, []

    def first_times_out(solver, *assumptions):
        calls.append(len(assumptions))
        return z3.unknown if calls.count(1) == 1 and len(assumptions) == 1 else \
            real(solver, *assumptions)

    monkeypatch.setattr(functions, "check", first_times_out)
    v = check_function_equivalence(*_pick_pair(), timeout=30)
    assert v.verdict == "different" and 1 in calls
    cex = v.counterexample
    assert [cex.inputs[f"{PICK}_param_{i}"] for i in range(3)] == [0x10000, 0x20000, 0x30000]
    _replays_in_the_interpreter(cex)


# ---- each solver is handed only what it reads -------------------------------------------

def _odd_float_query():
    """A square below zero in a format bitwuzla reads no way (8 exponent bits, 11 of
    precision: neither its own nor bf16, which it reads in f32): unsat (a square is
    never negative)."""
    x = z3.FP("x", z3.FPSort(8, 11))
    return [z3.fpIsNormal(x), z3.fpLT(z3.fpMul(z3.RNE(), x, x), z3.FPVal(0.0, x.sort()))]


def test_a_solver_is_handed_only_a_query_whose_sorts_it_reads():
    """bitwuzla reads f16, f32, f64 and f128 (and bf16 written in f32), no other
    format ("Unsupported experimental floating-point format"); no bit-vector solver
    reads Int. Such a solver is not asked,
    and says why; the others answer."""
    refused = portfolio.unreadable(_odd_float_query(), portfolio.SOLVERS)
    assert refused == {"bitwuzla": "not asked: it reads no (_ FloatingPoint 8 11)"}
    h = z3.FP("h", z3.FloatHalf())
    assert portfolio.unreadable([z3.fpIsNaN(h), z3.Select(z3.K(z3.BitVecSort(8), h),
                                                          z3.BitVec("i", 8)) == h],
                                portfolio.SOLVERS) == {}
    n = z3.Int("n")
    assert set(portfolio.unreadable([n > 0], portfolio.SOLVERS)) == {"bitwuzla", "cvc5"}
    answer = portfolio.solve(_odd_float_query(), 30, ["bitwuzla"])
    assert answer.result == "unknown" and answer.reason == f"bitwuzla: {refused['bitwuzla']}"
    assert portfolio.solve_here(_odd_float_query(), 10).reason == refused["bitwuzla"]
    assert _no_children()


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla and cvc5")
def test_the_race_on_a_query_one_solver_cannot_read_is_the_others(monkeypatch):
    """bitwuzla (here made to say sat to anything) is never started on a format it
    cannot read; z3 and cvc5
    both prove it, and nobody disagrees."""
    monkeypatch.setitem(portfolio.RUNNERS, "bitwuzla", _says("sat"))
    answer = portfolio.solve(_odd_float_query(), 30, cross_check=True)
    assert answer.result == "unsat" and answer.solver in ("z3", "cvc5")
    assert _no_children()


@pytest.mark.skipif(bool(portfolio.unavailable()), reason="needs bitwuzla")
def test_auto_goes_on_with_z3_alone_where_bitwuzla_cannot_read(monkeypatch):
    """No race is started for a query in a float format bitwuzla cannot read once z3's
    first seconds are out: z3 goes on
    alone, and an unknown would say why bitwuzla was not asked."""
    _z3_first_gives_up(monkeypatch)

    def no_race(*args, **kwargs):
        raise AssertionError("a race was started")
    monkeypatch.setattr(portfolio, "solve", no_race)
    solver = z3.Solver()
    solver.add(*_odd_float_query())
    assert check_with(solver, "auto", 600).result == z3.unsat
    monkeypatch.setattr(decide, "check", lambda s, *assumptions: z3.unknown)
    decision = check_with(solver, "auto", 600)
    assert decision.result == z3.unknown
    assert "bitwuzla: not asked: it reads no (_ FloatingPoint 8 11)" in decision.reason
