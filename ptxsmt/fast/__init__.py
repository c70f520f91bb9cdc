"""The fast backend: a snippet's Z3 terms compiled to a straight-line numpy program
(`codegen`), run without Z3 (`program`); texts that differ only in register names or
immediates share one (`shape`). No batch, cache or I/O here (`ptxsmt.batch`). What it
cannot compile exactly raises `Unsupported`: the caller takes the slow path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sem.options import DEFAULT, Options
from .program import FastProgram, Unsupported, word_dtype
from .shape import Shape, shaped

if TYPE_CHECKING:
    from ..program import Program

__all__ = ["FastProgram", "Shape", "Unsupported", "compile_parsed", "compile_text",
           "shaped", "word_dtype"]


def compile_parsed(program: Program, opts: Options = DEFAULT) -> FastProgram:
    """The program of a parsed snippet (Unsupported where the code generator cannot be
    exact). Imports Z3."""
    from .codegen import compile_snippet

    return compile_snippet(program, opts)


def compile_text(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text), its inputs named as the text
    names them."""
    from ..program import Program

    shape, parsed = shaped(Program.parse(text))
    return compile_parsed(parsed, opts).renamed(shape)
