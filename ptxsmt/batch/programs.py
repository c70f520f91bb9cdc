"""A snippet's compiled program: from memory, else the on-disk cache, else the backend.

The cache (`cache.py`) keeps two kinds of record: a text's shape (its renaming, so a
warm run never parses), and a shape's program with its bytecode, or why the backend
cannot take it (the slow path answers, and a warm run does not try again). Texts of one
shape compile once. The cache file's name carries a fingerprint of ptxsmt's sources, so
a program is never older than the semantics it was compiled from, and nothing needs
rebuilding by hand.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from ..fast import FastProgram, Shape, Unsupported, compile_parsed, shaped
from ..sem.options import DEFAULT, Options
from . import cache

if TYPE_CHECKING:
    from ..program import Program

_decode = msgspec.json.Decoder().decode


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text, Unsupported where the backend
    cannot be exact), its inputs named as the text names them."""
    store = cache.store()
    key = f"text {text}"
    hit = store.get(key) if store else None
    if hit:  # a text that parsed once parses the same way under the same fingerprint
        shape = Shape(*_decode(hit[0]))
        return compile_shape(shape.text, opts).renamed(shape)
    shape, parsed = shaped(_parsed(text))  # errors name the text's own registers and places
    if store:
        store.put(key, _encode(shape.fields()))
    return _shape_program(shape.text, opts, parsed).renamed(shape)


@lru_cache(maxsize=4096)
def compile_shape(text: str, opts: Options) -> FastProgram:
    return _shape_program(text, opts, None)


def _shape_program(text: str, opts: Options, parsed: Program | None) -> FastProgram:
    store = cache.store()
    key = f"shape {opts!r} {text}"
    hit = store.get(key) if store else None
    record, code = hit or _generate(parsed or _parsed(text), opts)
    if store and not hit:
        store.put(key, record, code)
    obj = _decode(record)
    if "unsupported" in obj:
        raise Unsupported(obj["unsupported"])
    return FastProgram.from_record(obj, code)


def _generate(shape: Program, opts: Options) -> tuple[str, bytes | None]:
    try:
        program = compile_parsed(shape, opts)
    except Unsupported as e:
        return _encode({"unsupported": str(e)}), None
    return _encode(program.record()), program.compiled()


def _parsed(text: str) -> Program:
    from ..program import Program  # the parser: only where a text is new

    return Program.parse(text)


def _encode(obj: object) -> str:
    return msgspec.json.encode(obj).decode()
