"""The one way ptxsmt asks z3 for an answer.

z3 handles SIGINT inside check() itself: it cancels the search and answers
`unknown` ("interrupted from keyboard", "canceled"). Taken at face value that
turns a Ctrl-C into a verdict; here it becomes the KeyboardInterrupt it was.
"""

from __future__ import annotations

import z3

INTERRUPTED = ("interrupted", "canceled")


def check(solver: z3.Solver, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
    result = solver.check(*assumptions)
    if result == z3.unknown and any(w in solver.reason_unknown() for w in INTERRUPTED):
        raise KeyboardInterrupt
    return result
