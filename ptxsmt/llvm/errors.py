"""Bad IR and IR this encoding does not model: each one line naming the problem and where."""

from __future__ import annotations

from ..isa.errors import PtxError


class LlvmError(PtxError):
    """IR that does not parse or verify, or llvmlite missing."""


class Unsupported(LlvmError):
    """Valid IR outside what the encoding models (a loop, a call, a fast-math flag that
    licenses rewrites): refused, never guessed. `reason` is a short class for tallies."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"unsupported {reason}: {detail}")
        self.reason = reason
