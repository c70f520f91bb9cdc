"""The value of an output the PTX ISA leaves open (any NaN): free of Z3, as a batch
answered from compiled programs never imports the solver."""

from __future__ import annotations


class Unspecified:
    """Where a caller asked to see it rather than an error: a counterexample may hinge
    on it."""

    def __repr__(self) -> str:
        return "unspecified"

    def __reduce__(self) -> str:
        return "UNSPECIFIED"  # one object, also across worker processes (`is` tests)


UNSPECIFIED = Unspecified()
Value = int | bool | Unspecified
