"""A snippet's compiled program: from memory, else the on-disk cache, else the backend.

The cache keeps a record per text (its shape, so a warm run never parses, and the
shape's program with its bytecode, or why the backend cannot take it) and one per
shape (a new text of a known shape compiles nothing); a batch reads its texts' records
in one query. The cache's fingerprint means nothing needs rebuilding by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from ..fast import FastProgram, Shape, Unsupported, shaped
from ..sem.options import DEFAULT, Options
from . import cache

if TYPE_CHECKING:
    from ..program import Program

_decode = msgspec.json.Decoder().decode


def prefetch(texts: Iterable[str], opts: Options = DEFAULT) -> None:
    """Read the cached records of these texts in one query (not one query a text)."""
    _store().prefetch([_text_key(text, opts) for text in texts])


def missing(texts: Iterable[str], opts: Options = DEFAULT) -> list[str]:
    """The texts the cache holds no record of."""
    texts = list(texts)
    prefetch(texts, opts)
    store = _store()
    return [text for text in texts if store.get(_text_key(text, opts)) is None]


def compile_all(texts: list[str], opts: Options) -> None:
    """Compile the texts (a text's error is told where its lines are answered)."""
    for text in texts:
        with suppress(Exception):
            compile_program(text, opts)


def compile_records(texts: list[str], opts: Options) -> list[tuple[str, str, bytes | None]]:
    """A worker's share (its cache off): the texts compiled, as records to `adopt`."""
    compile_all(texts, opts)
    kept, _MEMORY.pending = _MEMORY.pending, {}
    return [(key, record, code) for key, (record, code) in kept.items()]


def adopt(records: list[tuple[str, str, bytes | None]]) -> None:
    """Records another process compiled, as if compiled here."""
    store = _store()
    for record in records:
        store.put(*record)


def _store() -> cache.Store:
    """The on-disk cache, or where it is off, this process's memory of what it compiled."""
    return cache.store() or _MEMORY


_MEMORY = cache.Store(None)


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text, Unsupported where the backend
    cannot be exact), its inputs named as the text names them."""
    store = _store()
    key = _text_key(text, opts)
    if hit := store.get(key):  # a text that parsed once parses the same
        fields, record = _decode(hit[0])
        return _program(record, hit[1]).renamed(Shape(*fields))
    shape, parsed = shaped(_parsed(text))  # errors name the text's own registers and places
    record, code = _shape_record(shape.text, opts, parsed)
    store.put(key, _encode([shape.fields(), record]), code)
    return _program(record, code).renamed(shape)


def _shape_record(text: str, opts: Options, parsed: Program) -> tuple[dict, bytes | None]:
    """A shape's program record (or why the backend cannot take it) and its bytecode."""
    store = _store()
    key = f"shape {opts!r} {text}"
    hit = store.get(key)
    record, code = hit or _generate(parsed, opts)
    if not hit:
        store.put(key, record, code)
    return _decode(record), code


def _generate(shape: Program, opts: Options) -> tuple[str, bytes | None]:
    from ..fast.codegen import compile_snippet  # Z3: only where a shape is new

    try:
        program = compile_snippet(shape, opts)
    except Unsupported as e:
        return _encode({"unsupported": str(e)}), None
    return _encode(program.record()), program.compiled()


def _program(record: dict, code: bytes | None) -> FastProgram:
    if "unsupported" in record:
        raise Unsupported(record["unsupported"])
    return FastProgram.from_record(record, code)


def _encode(obj: object) -> str:
    return msgspec.json.encode(obj).decode()  # the cache's record column is text


def _text_key(text: str, opts: Options) -> str:
    return f"text {opts!r} {text}"


def _parsed(text: str) -> Program:
    from ..program import Program  # the parser: only where a text is new

    return Program.parse(text)
