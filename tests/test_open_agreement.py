"""`functions._agreement`: does some choice of the values the ISA leaves open make two
functions agree on a model's inputs? bitwuzla is asked first, and only its unsat is
taken (the model is then a counterexample); anything else is z3's to decide, as before.
The functions: tests/ptx/functions/open_branch.ptx (each stores where a * b is a NaN)."""

from __future__ import annotations

import pytest
import z3
from test_function_soundness import OPEN_BRANCH, _fn

from ptxsmt.smt.queries import functions
from ptxsmt.smt.solving.portfolio import Answer, unavailable
from ptxsmt.smt.sweeping import fraig

pytestmark = pytest.mark.skipif("bitwuzla" in unavailable(), reason="bitwuzla not installed")


def _spied(monkeypatch, answer: str | None = None) -> list[str]:
    """What `solve_here` answered to `_agreement`, each time; `answer`: its answer forced."""
    seen: list[str] = []
    real = functions.solve_here

    def spy(assertions, seconds):
        out = real(assertions, seconds) if answer is None else Answer(answer, "bitwuzla")
        seen.append(out.result)
        return out

    monkeypatch.setattr(functions, "solve_here", spy)
    return seen


def test_a_difference_for_every_choice_of_an_open_nan_is_bitwuzlas_unsat(monkeypatch):
    """parity (1 or 2 where a * b is a NaN) against three (3): no choice of that NaN
    makes them agree; bitwuzla's unsat says so, and the verdict is different."""
    seen = _spied(monkeypatch)
    v = functions.check_function_equivalence(_fn(OPEN_BRANCH, "parity"),
                                             _fn(OPEN_BRANCH, "three"))
    assert v.verdict == "different" and seen == ["unsat"]


def test_bitwuzla_undecided_leaves_the_choice_to_z3(monkeypatch):
    """parity against one agrees where the NaN's bits are odd: with bitwuzla answering
    unknown, z3 finds that choice and the verdict stays unknown, never different."""
    seen = _spied(monkeypatch, "unknown")
    v = functions.check_function_equivalence(_fn(OPEN_BRANCH, "parity"),
                                             _fn(OPEN_BRANCH, "one"))
    assert v.verdict == "unknown" and seen and set(seen) == {"unknown"}


def test_a_simulated_difference_carries_the_open_values_that_made_it():
    """A difference the simulation finds only under its own choice of an open value
    (g(x) != 0: none where g is 0, the canonical choice; some where g is its hash) is
    a witness with that choice: the query holds at the witness as it stands, with no
    search for the value (mixed-100-llvm22-0-planted: 10 CPU s of z3 and no model)."""
    x = z3.BitVec("x", 32)
    g = z3.Function("g", z3.BitVecSort(32), z3.BitVecSort(32))
    root = g(x + 1) != 0
    _, stats = fraig.sweep([root], [x], None, until_witness=True)
    pinned = dict((str(c), v) for c, v in stats.witness)
    assert "x" in pinned and "g(x + 1)" in pinned
    assert z3.is_true(z3.simplify(z3.substitute(root, *stats.witness)))
