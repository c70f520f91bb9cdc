"""Whole functions of a PTX file as formulas: `ptxsmt eval FILE.ptx --function F` and
`ptxsmt equiv A.ptx B.ptx --function F`.

    fn = read_function(Path("k.ptx").read_text(), "_Z4pickPKiS0_Piii")
    enc = encode_function(fn)        # ptxsmt.function.encode; imports Z3

Reading a function needs no solver; encoding it does: `encode` (the walk over the body:
branches, jump tables, calls inlined), `unroll` (loops, --unroll K), `effects` (what
reading and writing registers, parameters and memory does to a path), `state` (paths
and their merge), `memory` (state spaces as arrays of bytes, the generic windows),
`instructions` (ld, st, cvta, mov, ... and the uninterpreted rest) and `evaluate` (a
function on concrete inputs: its values, raw; `eval.values` spells them); mul.wide, mad
and the other arithmetic are the catalogue's, from sem/ (`program.execute`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..isa.errors import PtxError, quote
from ..isa.module import (
    Function,
    ModuleVariable,
    operand_names,
    read_module,
    read_module_variable,
    written_variables,
)


def read_function(text: str, name: str | None = None) -> Function:
    """The function `name` of a PTX module (the only one with a body when `name` is
    None); raise `PtxError` naming what is wrong."""
    module = read_module(text, only=name)  # only that function's body (and its callees')
    defined = [f for f in module.functions if f.defined]
    variables = dict(_variables(module.variables))
    named = {n for f in defined if f.body is not None for n in operand_names(f.body)}
    written = written_variables(text, {k for k, v in variables.items()
                                       if v.space == "global" and k in named})
    variables = {k: replace(v, written=k in written) for k, v in variables.items() if k in named}
    functions = {f.name: f for f in defined}  # one dict, shared: a module has thousands
    header = (module.target, module.version) if module.target and module.version else None
    for f in defined:
        f.module = functions
        f.variables = variables
        f.header = header
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
                   f"{', '.join([f.name for f in defined] + module.unread) or 'none'})")


def _variables(statements) -> Iterator[tuple[str, ModuleVariable]]:
    """The module's variables ptxsmt can read (one it cannot, a `.texref` say, stays an
    address and nothing more)."""
    for st in statements:
        try:
            yield read_module_variable(st.text, st.line, st.col)
        except PtxError:
            continue
