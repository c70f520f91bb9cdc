"""The fast backend: a snippet's Z3 terms compiled to a straight-line numpy program.

`codegen` writes the terms (the very ones the prover reads) one line per Z3 operator;
`program` runs the lines over whole arrays without Z3; `shape` lets texts that differ
only in register names or immediates share one program. Nothing here reads a batch,
keeps a cache or writes output: `ptxsmt.batch` does. An operator the code generator
does not know raises `Unsupported`, and the caller takes the slow path (`ptxsmt.eval`):
the backend never approximates.
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
