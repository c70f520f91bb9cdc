"""Sifting candidates through ptxas, many per run: which it accepts, which it rejects and why.

One run assembles many candidates (instruction lines, vector cases, replay kernels) in
one module, since a ptxas start costs far more than a line. What a failing run says
decides what happens next (ptxas 13.0's behaviour, scripts/ptxas_probe.py):

* ptxas names the lines of some candidates: those are rejected with its message and
  the rest are assembled again. They are not accepted yet: some checks only run in a
  pass that a clean first pass reaches, so a line with no message from a failing run is
  undecided.
* ptxas names no candidate (it crashed, say): the candidates are split in halves,
  down to a lone one, which is rejected with why the run failed.

A candidate is accepted only by a run that succeeded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Candidate = TypeVar("Candidate")
Accepted = TypeVar("Accepted")  # what a successful run gives per candidate (read-back, warnings)
Rejected = TypeVar("Rejected")  # ptxas's word on a rejected one


@dataclass
class Attempt(Generic[Accepted, Rejected]):
    """What one ptxas run over some candidates said, by position among them."""

    accepted: list[Accepted] | None = None  # one per candidate when the run succeeded
    blamed: dict[int, Rejected] = field(default_factory=dict)  # the candidates ptxas named
    failure: Rejected | None = None  # why it failed, for a lone candidate it did not name


@dataclass
class Sifted(Generic[Accepted, Rejected]):
    """Every candidate's verdict, by its position in the list sifted."""

    accepted: dict[int, Accepted] = field(default_factory=dict)
    rejected: dict[int, Rejected] = field(default_factory=dict)


def sift(candidates: Sequence[Candidate],
         attempt: Callable[[Sequence[Candidate], str], Attempt[Accepted, Rejected]],
         part: str = "") -> Sifted[Accepted, Rejected]:
    """Assemble `candidates` with `attempt` until each one is accepted or rejected.

    `attempt(some, part)` builds a module of `some` candidates, runs ptxas and says what
    it said; `part` tells which part of the list they are, so the module can be named:
    `part` as given for all of it, then "a" (first half) or "b" (second half) appended
    at each split."""
    sifted: Sifted[Accepted, Rejected] = Sifted()
    pending = list(range(len(candidates)))
    while pending:
        run = attempt([candidates[i] for i in pending], part)
        if run.accepted is not None:
            sifted.accepted.update(zip(pending, run.accepted, strict=True))
            break
        if run.blamed:
            sifted.rejected.update((pending[k], why) for k, why in run.blamed.items())
            pending = [i for k, i in enumerate(pending) if k not in run.blamed]
        elif len(pending) == 1:
            sifted.rejected[pending[0]] = run.failure
            break
        else:
            half = len(pending) // 2
            for name, positions in (("a", pending[:half]), ("b", pending[half:])):
                _merge(sifted, positions,
                       sift([candidates[i] for i in positions], attempt, part + name))
            break
    return sifted


def _merge(sifted: Sifted, positions: list[int], part: Sifted) -> None:
    """Add the verdicts on a part of the list, whose items are at `positions` in it."""
    sifted.accepted.update((positions[k], v) for k, v in part.accepted.items())
    sifted.rejected.update((positions[k], v) for k, v in part.rejected.items())
