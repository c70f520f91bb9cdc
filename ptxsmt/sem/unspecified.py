"""The value of an output the PTX ISA leaves open (any NaN), and one such value as a
caller chose it: free of Z3, as a batch answered from compiled programs never imports
the solver."""

from __future__ import annotations

from dataclasses import dataclass

from ..isa.literals import hex_bits


class Unspecified:
    """Where a caller asked to see it rather than an error: a counterexample may hinge
    on it."""

    def __repr__(self) -> str:
        return "unspecified"

    def __reduce__(self) -> str:
        return "UNSPECIFIED"  # one object, also across worker processes (`is` tests)


UNSPECIFIED = Unspecified()
Value = int | bool | Unspecified


@dataclass(frozen=True)
class OpenValue:
    """A value the ISA leaves open, as an evaluation was told to take it: the free
    function's name (`sem.sorts.free_nan`'s, a fused-or-not choice's), its argument's
    bits (the operands it is open on) and the value taken, with their widths."""

    name: str
    argument: int
    argument_width: int
    value: Value
    width: int  # 1: a Boolean

    @property
    def input(self) -> str:
        """The input name that gives it (`open[mul.rn.f32 NaN of 0x...]`)."""
        return f"open[{self.name} of {hex_bits(self.argument, self.argument_width)}]"

    @property
    def spelled(self) -> str | bool:
        """Its value as eval reads it back (hex bits, or a Boolean)."""
        return bool(self.value) if self.width == 1 else hex_bits(int(self.value), self.width)
