"""`functions._agreement`: does some choice of the values the ISA leaves open make two
functions agree on a model's inputs? bitwuzla is asked first, and only its unsat is
taken (the model is then a counterexample); anything else is z3's to decide, as before.
The functions: tests/ptx/functions/open_branch.ptx (each stores where a * b is a NaN)."""

from __future__ import annotations

import pytest
from test_function_soundness import OPEN_BRANCH, _fn

from ptxsmt.smt.queries import functions
from ptxsmt.smt.solving.portfolio import Answer, unavailable

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
