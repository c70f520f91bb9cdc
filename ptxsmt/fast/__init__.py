"""The fast backend: a snippet's Z3 terms compiled to a straight-line numpy program (`codegen`,
which imports Z3), run without Z3 (`program`); texts that differ only in register names or
immediates share one (`shape`). No batch, cache or I/O here (`ptxsmt.batch`). What it cannot compile
exactly raises `Unsupported`: the caller takes the slow path.
"""

from .program import FastProgram, Unsupported, word_dtype
from .shape import Shape, shaped

__all__ = ["FastProgram", "Shape", "Unsupported", "shaped", "word_dtype"]
