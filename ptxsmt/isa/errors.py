"""The one error type for bad input, and how input is quoted inside its message."""

from __future__ import annotations

import json


class PtxError(ValueError):
    """Bad input: the message names the problem, `line`/`col` its place (1-based)."""

    def __init__(self, message: str, line: int | None = None, col: int = 1):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col

    def __str__(self) -> str:
        if self.line is None:  # not about the PTX text (an input value, an option)
            return self.message
        return f"line {self.line}, col {self.col}: {self.message}"


class NotModelled(PtxError):
    """A statement ptxsmt does not model (an opcode or a form outside its families): it
    cannot say whether ptxas takes it, so `check` says "not judged", never legal."""


def quote(text: object, limit: int = 40) -> str:
    """Input inside a message: JSON spelling (control bytes and quotes escaped), cut short
    so a 5,000-digit literal or a binary line cannot flood a terminal or a log."""
    s = text if isinstance(text, str) else str(text)
    if len(s) > limit:
        s = s[:limit] + "…"
    return json.dumps(s, ensure_ascii=False)
