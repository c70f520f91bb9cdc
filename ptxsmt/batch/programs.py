"""A snippet's compiled program: from memory, else the on-disk cache, else the backend.

One record per (options, text) in the cache (`cache.py`): the text's shape (its
renaming, so a warm run never parses) and the shape's program with its bytecode, or
why the backend cannot take it (the slow path answers, and a warm run does not try
again). Nothing else is kept: the cache file's name carries a fingerprint of ptxsmt's
sources, so a program is never older than the semantics it was compiled from, and no
file needs rebuilding by hand.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from ..fast import FastProgram, Shape, Unsupported, compile_shape
from ..sem.options import DEFAULT, Options
from . import cache

_RECORD = msgspec.json.Decoder(dict)


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text, Unsupported where the backend
    cannot be exact), its inputs named as the text names them."""
    store = cache.store()
    key = f"{opts!r} {text}"
    hit = store.get(key) if store else None
    if hit is None:
        record, code = _compiled(text, opts)  # a PtxError is not kept: the text is reread
        if store:
            store.put(key, record, code)
    else:
        record, code = hit
    obj = _RECORD.decode(record)
    shape = Shape(*obj["shape"])
    if "unsupported" in obj:
        raise Unsupported(obj["unsupported"])
    return FastProgram.from_record(obj["program"], code).renamed(shape)


def _compiled(text: str, opts: Options) -> tuple[str, bytes | None]:
    """The record of a text and its program's bytecode, compiled afresh."""
    try:
        shape, program = compile_shape(text, opts)
    except Unsupported as e:  # the text parses: the code generator refused it
        return _record({"shape": e.shape.fields(), "unsupported": str(e)}), None
    return _record({"shape": shape.fields(), "program": program.record()}), program.compiled()


def _record(obj: dict) -> str:
    return msgspec.json.encode(obj).decode()

