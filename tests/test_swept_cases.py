"""The query swept under a NaN case split (`case_split.swept_by_cases`): -O0's `max.f32 d,
x, x`, which opt folds to x, differs from x only where x is a NaN (PTX's max of two NaNs
is any NaN), so no sweep merges the two. Split on x's NaN, each case sweeps alone: an
equal pair is unsat in both cases; a pair that differs only where x is a NaN is sat in
that case, and the independent oracle (tests/oracle_function.py, plain Python) runs both
functions on the counterexample and sees them differ; the cases cover every value of
x, as plain Python classifies its bits."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import oracle_function
import z3

from ptxsmt.function.evaluate import read_function_file
from ptxsmt.smt.queries import functions
from ptxsmt.smt.sweeping import case_split
from ptxsmt.smt.sweeping.case_split import Case, same_operands

_FUNCTION = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{{
\t.reg .pred \t%p<3>;
\t.reg .f32 \t%f<8>;
\tld.param.f32 \t%f1, [f_param_0];
\tld.param.f32 \t%f2, [f_param_1];
{body}
\tst.param.f32 \t[func_retval0], %f6;
\tret;
}}
"""
# -O0: x's max with itself, added to y, and the smaller of the sum and y picked
O0 = """\tmax.f32 \t%f3, %f1, %f1;
\tadd.rn.f32 \t%f4, %f3, %f2;
\tsetp.lt.f32 \t%p1, %f4, %f2;
\tselp.f32 \t%f6, %f4, %f3, %p1;"""
# -O2: the max folded to x (they differ only in the bits of x's NaN)
O2 = """\tadd.rn.f32 \t%f4, %f1, %f2;
\tsetp.lt.f32 \t%p1, %f4, %f2;
\tselp.f32 \t%f6, %f4, %f1, %p1;"""
# planted: where x is a NaN, y returned instead (no difference anywhere else)
PLANTED = """\tadd.rn.f32 \t%f4, %f1, %f2;
\tsetp.lt.f32 \t%p1, %f4, %f2;
\tselp.f32 \t%f5, %f4, %f1, %p1;
\tsetp.nan.f32 \t%p2, %f1, %f1;
\tselp.f32 \t%f6, %f2, %f5, %p2;"""


def _file(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.ptx"
    path.write_text(_FUNCTION.format(body=body))
    return path


def _decided(tmp_path, rhs: str, monkeypatch, lhs: str = O0
             ) -> tuple[functions.FunctionVerdict, list]:
    """The pair `lhs` (-O0) against `rhs`, and what the swept cases answered (spied on)."""
    answers = []
    real = case_split.swept_by_cases

    def spy(*args, **kwargs):
        answers.append((args, real(*args, **kwargs)))
        return answers[-1][1]
    monkeypatch.setattr(case_split, "swept_by_cases", spy)
    a, b = (read_function_file(str(_file(tmp_path, n, t)), "f")
            for n, t in (("O0", lhs), ("rhs", rhs)))
    return functions.check_function_equivalence(a, b, timeout=60), answers


def test_max_of_x_and_x_against_x_is_equivalent_by_the_swept_cases(tmp_path, monkeypatch):
    verdict, answers = _decided(tmp_path, O2, monkeypatch)
    assert verdict.verdict == "equivalent"
    assert [a.decision.result for _, a in answers] == [z3.unsat]


def _bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def test_a_difference_only_at_a_nan_x_is_found_in_its_case(tmp_path, monkeypatch):
    """sat in the case where x is a NaN, replayed; the oracle (plain Python, no z3) runs
    both functions on the counterexample's bits and they differ."""
    verdict, answers = _decided(tmp_path, PLANTED, monkeypatch)
    assert verdict.verdict == "different"
    assert [a.decision.result for _, a in answers] == [z3.sat]
    params = {k: v for k, v in verdict.counterexample.inputs.items() if k.startswith("f_param")}
    runs = [oracle_function.outcome(oracle_function.read(_FUNCTION.format(body=body), "f"),
                                    params) for body in (O0, PLANTED)]
    assert oracle_function.nan_bits(params["f_param_0"], "f32")
    assert not oracle_function.same(runs[0].returns["func_retval0"],
                                    runs[1].returns["func_retval0"], "f32")


VALUES = [0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0,
          0x80000000, 1, 0x807FFFFF, _bits(1.0), _bits(-2.5), 0x7F7FFFFF, 0x12345678]


def _is_nan(bits: int) -> bool:
    """IEEE 754 binary32: exponent all ones, fraction not zero."""
    return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0


def test_the_cases_cover_every_value_and_each_is_the_query_there(tmp_path, monkeypatch):
    """For each x (every class of bits) and y: exactly one case's literals hold, the
    NaN case exactly where plain Python says x is a NaN, and there the case's query is
    the query (a solver's unsat of their difference, the open NaNs alike on both)."""
    _, answers = _decided(tmp_path, O2, monkeypatch)
    (assertions, _sides, *_), _ = answers[0]
    [split] = same_operands(assertions)
    x, y = z3.BitVecs("f_param_0 f_param_1", 32)
    assert split.bits[0].eq(x)
    cases = Case((), tuple(assertions), fold=False).cases(split)
    assert len(cases) == 2
    query = z3.And(*assertions)
    for vx in VALUES:
        for vy in (_bits(1.0), 0x7FC00000, 0x80000000):
            at = [(x, z3.BitVecVal(vx, 32)), (y, z3.BitVecVal(vy, 32))]
            holds = [z3.is_true(z3.simplify(z3.substitute(z3.And(*c.literals), *at)))
                     for c in cases]
            assert holds == [_is_nan(vx), not _is_nan(vx)], hex(vx)
            case = cases[holds.index(True)]
            s = z3.Solver()
            s.add(z3.substitute(z3.And(*case.query) != query, *at))
            assert s.check() == z3.unsat, hex(vx)


def test_a_max_of_two_registers_is_no_split(tmp_path, monkeypatch):
    """max(x, y) is no max of one register: nothing is split, and nothing spent."""
    body = O0.replace("%f3, %f1, %f1", "%f3, %f1, %f2")
    _, answers = _decided(tmp_path, O2, monkeypatch, lhs=body)
    (assertions, *_), answer = answers[0]
    assert same_operands(assertions) == [] and answer is None


def _roots_swept(monkeypatch) -> list[int]:
    """How many roots each sweep is given (spied on): a case's query has its literal."""
    sizes = []
    real = functions.sweep_if_large

    def spy(roots, *args, **kwargs):
        sizes.append(len(roots))
        return real(roots, *args, **kwargs)
    monkeypatch.setattr(functions, "sweep_if_large", spy)
    return sizes


def test_an_undecided_case_leaves_the_pair_to_the_plain_sweep(tmp_path, monkeypatch):
    """The first case's check unknown: the swept cases answer nothing (never unsat),
    and the plain sweep gets the query itself (its two roots, no literal)."""
    real = case_split.check
    calls = []

    def first_unknown(solver, how, budget, emit=None):
        calls.append(solver)
        if len(calls) == 1:
            return case_split.Decision(z3.unknown, reason="stub")
        return real(solver, how, budget, emit)
    monkeypatch.setattr(case_split, "check", first_unknown)
    assert _cases_then_plain(tmp_path, monkeypatch) == ([None], [3, 2])


def test_a_model_that_fails_its_case_is_no_difference(tmp_path, monkeypatch):
    """A sat whose model does not hold the original query (every input zero, where the
    two agree) is no verdict of the swept cases: the plain sweep follows."""
    def zeros(solver, how, budget, emit=None):
        s = z3.Solver()
        s.add(*[v == 0 for v in z3.BitVecs("f_param_0 f_param_1", 32)])
        s.check()
        return case_split.Decision(z3.sat, model=s.model())
    monkeypatch.setattr(case_split, "check", zeros)
    assert _cases_then_plain(tmp_path, monkeypatch) == ([None], [3, 2])


def _cases_then_plain(tmp_path, monkeypatch) -> tuple[list, list[int]]:
    """What the swept cases answered, and the sizes of the queries swept after (the
    pair max(x, x) against mov, decided with `case_split.check` as patched)."""
    sizes = _roots_swept(monkeypatch)
    a, b = (read_function_file(str(_file(tmp_path, n, t)), "f")
            for n, t in (("O0", O0), ("rhs", O2)))
    answers = []
    real = case_split.swept_by_cases
    monkeypatch.setattr(case_split, "swept_by_cases",
                        lambda *args: answers.append(real(*args)) or answers[-1])
    functions.check_function_equivalence(a, b, timeout=30)  # a cap only: the pair is small
    return answers, sizes


def _two_maxes(y_first: bool) -> list[z3.BoolRef]:
    """A query with max(x, x) and max(y, y) of two registers, the one made first first
    (AST ids follow creation order)."""
    from ptxsmt.isa.types import F32
    from ptxsmt.sem.sorts import free_nan, unordered
    regs = z3.BitVecs("y x" if y_first else "x y", 32)
    a, b = (free_nan("max.f32", unordered(r, r), F32) for r in regs)
    return [a != b]


_ORDER = """
import sys
sys.path.insert(0, sys.argv[2])
from test_swept_cases import _two_maxes, same_operands
print([str(s.bits[0]) for s in same_operands(_two_maxes(sys.argv[1] == "1"))])
"""


def test_the_registers_split_by_follow_the_structural_order():
    """The same query with its registers made in the other order (other AST ids: a
    process each) splits by the same registers, in one order."""
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": f"{tests.parent}{os.pathsep}{tests}"}
    orders = [subprocess.run([sys.executable, "-c", _ORDER, first, str(tests)],
                             capture_output=True, text=True, check=True, env=env).stdout
              for first in ("1", "0")]
    assert orders[0] == orders[1] and orders[0].strip() in ("['x', 'y']", "['y', 'x']")


# The other spellings of an operation of x with itself (`case_split.SOURCES`), each a
# -O0 body against -O2's x, read through an instruction that sees x's NaN apart (abs, an
# open NaN of its argument; an add): f6 is what is returned.
COPYSIGN = """\tcopysign.f32 \t%f3, %f1, %f1;
\tabs.f32 \t%f4, %f3;
\tadd.rn.f32 \t%f6, %f4, %f2;"""
# llc-14's copysign of x with itself: -|x| where x's sign bit is set, else |x|
COPYSIGN_LLC14 = """\tabs.f32 \t%f3, %f1;
\tneg.f32 \t%f4, %f3;
\tmov.b32 \t%r1, %f1;
\tshr.u32 \t%r2, %r1, 31;
\tand.b32 \t%r3, %r2, 1;
\tsetp.eq.b32 \t%p1, %r3, 1;
\tselp.f32 \t%f5, %f4, %f3, %p1;
\tabs.f32 \t%f7, %f5;
\tadd.rn.f32 \t%f6, %f7, %f2;"""
ABS_X = """\tabs.f32 \t%f4, %f1;
\tadd.rn.f32 \t%f6, %f4, %f2;"""
# setp.num of x with x: x, else y's min with x (-O0), against the choice after x's NaN test
NUM_X = """\tsetp.num.f32 \t%p1, %f1, %f1;
\tmin.NaN.f32 \t%f3, %f1, %f2;
\tselp.f32 \t%f4, %f1, %f3, %p1;
\tadd.rn.f32 \t%f6, %f4, %f2;"""
NAN_X = """\tsetp.nan.f32 \t%p1, %f1, %f1;
\tmin.NaN.f32 \t%f3, %f1, %f2;
\tselp.f32 \t%f4, %f3, %f1, %p1;
\tadd.rn.f32 \t%f6, %f4, %f2;"""


def _with_regs(body: str) -> str:
    return ("\t.reg .b32 \t%r<4>;\n" if "%r" in body else "") + body


def _split_registers(tmp_path, body: str) -> list[str]:
    """The registers `same_operands` splits by in the query of `body` against ABS_X."""
    a, b = (read_function_file(str(_file(tmp_path, n, _with_regs(t))), "f")
            for n, t in (("O0", body), ("rhs", ABS_X)))
    ea, eb = (functions.encode_function(f, functions.DEFAULT) for f in (a, b))
    query = [ea.returns["func_retval0"] != eb.returns["func_retval0"]]
    return [str(s.bits[0]) for s in same_operands(query)]


def test_each_spelling_of_an_operation_with_itself_is_a_source(tmp_path):
    for body in (COPYSIGN, COPYSIGN_LLC14, NUM_X, NAN_X, O0):
        assert _split_registers(tmp_path, body) == ["f_param_0"], body


def test_the_same_operations_of_two_registers_are_no_source(tmp_path):
    """copysign x, y (both spellings) and setp.num x, y read two registers: no split."""
    two = [COPYSIGN.replace("%f1, %f1", "%f1, %f2"),
           COPYSIGN_LLC14.replace("mov.b32 \t%r1, %f1", "mov.b32 \t%r1, %f2"),
           NUM_X.replace("%p1, %f1, %f1", "%p1, %f1, %f2")]
    for body in two:
        assert _split_registers(tmp_path, body) == [], body


def test_copysign_of_itself_read_by_abs_is_equivalent_by_the_swept_cases(tmp_path,
                                                                         monkeypatch):
    """|copysign(x, x)| + y against |x| + y (both spellings): every case unsat."""
    for body in (COPYSIGN, COPYSIGN_LLC14):
        verdict, answers = _decided(tmp_path, ABS_X, monkeypatch, lhs=_with_regs(body))
        assert verdict.verdict == "equivalent", body
        assert [a.decision.result for _, a in answers] == [z3.unsat], body


def test_a_setp_num_choice_is_equivalent_by_the_swept_cases(tmp_path, monkeypatch):
    verdict, answers = _decided(tmp_path, NAN_X, monkeypatch, lhs=NUM_X)
    assert verdict.verdict == "equivalent"
    assert [a.decision.result for _, a in answers] == [z3.unsat]


def test_never_nan_is_the_value_itself_unless_a_nan_and_never_a_nan():
    """Plain Python's IEEE classes: each NaN of every class goes to no NaN, each other
    value to itself, in the binary32 and binary16 layouts."""
    from ptxsmt.isa.types import F16, F32
    for fmt, values in ((F32, VALUES), (F16, [0x7E00, 0xFC01, 0x7C01, 0x7FFF, 0x7C00,
                                               0xFC00, 0, 0x8000, 1, 0x3C00, 0x7BFF])):
        exp_bits, man_bits = fmt.ebits, fmt.sbits - 1
        for v in values:
            out = z3.simplify(case_split.never_nan(z3.BitVecVal(v, fmt.width), fmt)).as_long()
            is_nan = (v >> man_bits) & ((1 << exp_bits) - 1) == (1 << exp_bits) - 1 \
                and v & ((1 << man_bits) - 1) != 0
            out_nan = (out >> man_bits) & ((1 << exp_bits) - 1) == (1 << exp_bits) - 1 \
                and out & ((1 << man_bits) - 1) != 0
            assert not out_nan, hex(v)
            assert is_nan or out == v, hex(v)


def test_the_last_case_gets_the_time_the_first_left(tmp_path, monkeypatch):
    """The case of a NaN unsat: the case of numbers gets LAST_SHARE of the pair's time
    left (half of it at first), more than the cases' share (SWEPT_SHARE) would leave it."""
    limits = []
    real = case_split.swept_by_cases

    def spy(assertions, sides, solve, how, budget):
        def timed(query, sides, part):
            limits.append((part.seconds, budget.seconds))
            return solve(query, sides, part)
        return real(assertions, sides, timed, how, budget)
    monkeypatch.setattr(case_split, "swept_by_cases", spy)
    a, b = (read_function_file(str(_file(tmp_path, n, t)), "f")
            for n, t in (("O0", O0), ("rhs", O2)))
    assert functions.check_function_equivalence(a, b, timeout=60).verdict == "equivalent"
    (first, whole), (last, _) = limits
    assert first <= case_split.SWEPT_SHARE * whole / 2 + 1e-9
    assert last > case_split.SWEPT_SHARE * whole / 2
    assert last >= case_split.LAST_SHARE / 2 * (whole - first) - 1


def test_the_case_of_numbers_undecided_over_never_nan_is_asked_as_read(tmp_path, monkeypatch):
    """Where the case of numbers over `never_nan` is left undecided, the same case is
    asked again with the register as read (its NaN test read false): its unsat decides
    (fsel-llc14-2002: as read, equivalent in 8 CPU s; over never_nan, unknown at 60)."""
    asked, checked, real = [], [], case_split.swept_by_cases
    real_check = case_split.check

    def check(solver, how, budget):
        checked.append(how)
        if len(checked) == 2:  # the case of numbers over never_nan: as if out of time
            return case_split.Decision(z3.unknown, "held back by the test")
        return real_check(solver, how, budget)

    def spy(assertions, sides, solve, how, budget):
        def recorded(query, sides, part):
            asked.append(z3.And(*query).sexpr())
            return solve(query, sides, part)
        return real(assertions, sides, recorded, how, budget)
    monkeypatch.setattr(case_split, "check", check)
    monkeypatch.setattr(case_split, "swept_by_cases", spy)
    a, b = (read_function_file(str(_file(tmp_path, n, t)), "f")
            for n, t in (("O0", O0), ("rhs", O2)))
    assert functions.check_function_equivalence(a, b, timeout=60).verdict == "equivalent"
    assert len(asked) == 3 and asked[2] != asked[1]  # the case of numbers again, as read
