"""Whole functions of a PTX file as formulas: `ptxsmt eval FILE.ptx --function F` and
`ptxsmt equiv A.ptx B.ptx --function F`.

    fn = read_function(Path("k.ptx").read_text(), "_Z4pickPKiS0_Piii")
    enc = encode_function(fn)        # ptxsmt.function.execute; imports Z3

Reading a function needs no solver; `execute` (symbolic execution), `state` (paths and
their merge), `memory` (state spaces as arrays of bytes) and `instructions` (ld, st,
cvta, ... and the opaque rest) do; mul.wide, mad and the other
arithmetic are the catalogue's, from sem/ (`program.execute`).
"""

from __future__ import annotations

from ..isa.errors import PtxError, quote
from ..isa.module import Function, read_module


def read_function(text: str, name: str | None = None) -> Function:
    """The function `name` of a PTX module (the only one with a body when `name` is
    None); raise `PtxError` naming what is wrong."""
    defined = [f for f in read_module(text).functions if f.body is not None]
    if name is None:
        if len(defined) != 1:
            names = ", ".join(f.name for f in defined) or "none"
            raise PtxError(f"the file defines {len(defined)} functions ({names}); "
                           "name one with --function (in a batch line, \"function\")")
        return defined[0]
    for f in defined:
        if f.name == name:
            return f
    raise PtxError(f"no function {quote(name)} in the file (it defines "
                   f"{', '.join(f.name for f in defined) or 'none'})")
