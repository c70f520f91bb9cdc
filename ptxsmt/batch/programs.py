"""A snippet's compiled program: from memory, else the on-disk cache, else the backend.
A record per text (its shape: a warm run never parses) and per shape (a new text of a
known shape compiles nothing); a batch reads its texts' records in one query.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from ..fast import FastProgram, Shape, Unsupported, shaped
from ..isa.types import ptx_type
from ..sem.options import DEFAULT, Options
from . import cache

if TYPE_CHECKING:
    from ..program import Program


def prefetch(texts: Iterable[str], opts: Options = DEFAULT) -> None:
    """Read the cached records of these texts in one query (not one query a text)."""
    _store().prefetch([_text_key(text, opts) for text in texts])


def missing(texts: Iterable[str], opts: Options = DEFAULT) -> list[str]:
    """The texts the cache holds no record of."""
    texts = list(texts)
    prefetch(texts, opts)
    store = _store()
    return [text for text in texts if store.get(_text_key(text, opts)) is None]


def compile_records(texts: list[str], opts: Options) -> list[tuple[str, str, bytes | None]]:
    """Compile the texts (a text's error is told where its lines are answered); the records
    this process's memory took since the last call (a worker's, its cache off), to `adopt`."""
    for text in texts:
        with suppress(Exception):
            compile_program(text, opts)
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


class Record(msgspec.Struct, omit_defaults=True):
    """A shape's program as the cache keeps it (its bytecode beside it), or why the
    backend cannot take the shape. Read typed: a warm batch reads one a text."""

    slots: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    types: dict[str, str] = {}
    lines: tuple[tuple[str, str], ...] = ()
    results: tuple[str, ...] = ()
    unsupported: str | None = None


_ShapeFields = tuple[str, dict[str, str], dict[str, int | bool], dict[str, str]]
_text_record = msgspec.json.Decoder(tuple[_ShapeFields, Record]).decode
_shape_record = msgspec.json.Decoder(Record).decode


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text, Unsupported where the backend
    cannot be exact), its inputs named as the text names them."""
    store = _store()
    key = _text_key(text, opts)
    if hit := store.get(key):  # a text that parsed once parses the same
        fields, record = _text_record(hit[0])
        return _program(record, hit[1]).renamed(Shape(*fields))
    from ..program import Program  # the parser: only where a text is new

    shape, parsed = shaped(Program.parse(text))  # errors name the text's own registers
    shape_key = f"shape {opts!r} {shape.text}"
    if hit := store.get(shape_key):
        record, code = _shape_record(hit[0]), hit[1]
    else:
        record, code = _generate(parsed, opts)
        store.put(shape_key, msgspec.json.encode(record).decode(), code)  # the column is text
    fields = (shape.text, shape.registers, shape.constants, shape.spelling)  # Shape(*fields)
    store.put(key, msgspec.json.encode((fields, record)).decode(), code)
    return _program(record, code).renamed(shape)


def _generate(shape: Program, opts: Options) -> tuple[Record, bytes | None]:
    from ..fast.codegen import compile_snippet  # Z3: only where a shape is new

    try:
        program = compile_snippet(shape, opts)
    except Unsupported as e:
        return Record(unsupported=str(e)), None
    return Record(program.slots, program.outputs, {k: t.name for k, t in program.types.items()},
                  program.lines, program.results), program.compiled()


def _program(record: Record, code: bytes | None) -> FastProgram:
    if record.unsupported is not None:
        raise Unsupported(record.unsupported)
    return FastProgram(record.slots, record.outputs,
                       {k: ptx_type(t) for k, t in record.types.items()},
                       record.lines, record.results, code=code)


def _text_key(text: str, opts: Options) -> str:
    return f"text {opts!r} {text}"
