"""The fast backend: a snippet's Z3 terms compiled to a straight-line numpy program.

`codegen` writes the terms (the very ones the prover reads) one line per Z3 operator;
`program` runs the lines over whole arrays without Z3; `shape` lets texts that differ
only in register names or immediates share one program. Nothing here reads a batch,
keeps a cache or writes output: `ptxsmt.batch` does. An operator the code generator
does not know raises `Unsupported`, and the caller takes the slow path (`ptxsmt.eval`):
the backend never approximates.
"""

from __future__ import annotations

from ..sem.options import DEFAULT, Options
from .program import FastProgram, Unsupported, word_dtype
from .shape import Shape, shaped

__all__ = ["FastProgram", "Shape", "Unsupported", "compile_text", "compile_shape", "word_dtype"]


def compile_shape(text: str, opts: Options = DEFAULT) -> tuple[Shape, FastProgram]:
    """The shape of a snippet and the shape's program (PtxError on bad text, Unsupported
    where the code generator cannot be exact). Imports Z3."""
    from ..program import Program
    from .codegen import compile_snippet

    shape, parsed = shaped(Program.parse(text))
    try:
        return shape, compile_snippet(parsed, opts)
    except Unsupported as e:
        e.shape = shape  # the text parsed: a caller may keep why, by its shape
        raise


def compile_text(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet, its inputs named as the text names them."""
    shape, program = compile_shape(text, opts)
    return program.renamed(shape)
