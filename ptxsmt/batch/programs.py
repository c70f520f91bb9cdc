"""A snippet's compiled program: from memory, else the on-disk cache, else the backend.
A record per text (its own program, names and immediates in place: a warm run neither
parses nor renames) and per shape (a new text of a known shape compiles nothing); a batch
reads its texts' records in one query.
"""

from __future__ import annotations

from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from ..fast import FastProgram, Unsupported, shaped
from ..isa.types import ptx_type
from ..sem.options import DEFAULT, Options
from . import cache

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future

    from ..program import Program


def missing(texts: list[str], opts: Options = DEFAULT) -> list[str]:
    """The texts the cache holds no record of (their records read in one query, not one a text)."""
    store, prefix = _store(), _text_prefix(opts)
    store.prefetch([prefix + text for text in texts])
    return [text for text in texts if store.known.get(prefix + text) is None]


def compile_shared(submit: Callable[..., Future | None], texts: list[str], opts: Options,
                   jobs: int) -> None:
    """The texts' programs compiled, a share in this process and in each of `jobs` - 1
    workers (`submit`), then read in one query (a worker writes what it compiled to the
    cache, or hands it back where there is none). A worker that fails costs time, never
    an answer: its texts are compiled here, where their lines are answered."""
    futures = [submit(compile_records, texts[k::jobs], opts) for k in range(1, jobs)]
    compile_records(texts[::jobs], opts)  # this one's share: in its own store
    for future in futures:
        with suppress(Exception):  # the worker failed (or died), or never started
            for key, record in future.result():
                _store().put(key, record)
    missing(texts, opts)


def compile_records(texts: list[str], opts: Options) -> list[tuple[str, bytes]]:
    """Compile the texts (a text's error is told where its lines are answered) and write
    their records to the cache; the records it could not write (no cache: this process's
    memory of them)."""
    for text in texts:
        with suppress(Exception):
            compile_program(text, opts)
    store = _store()
    store.flush()
    kept, store.pending = store.pending, {}
    return list(kept.items())


def _store() -> cache.Store:
    """The on-disk cache, or where it is off, this process's memory of what it compiled."""
    return cache.store() or _MEMORY


_MEMORY = cache.Store(None)


class Record(msgspec.Struct, array_like=True, gc=False):
    """A FastProgram as the cache keeps it (msgpack: its bytecode as it is), types by name.
    Read typed: a warm batch reads one a text."""

    slots: tuple[str, ...]
    outputs: tuple[str, ...]
    types: dict[str, str]
    lines: tuple[tuple[str, str], ...]
    results: tuple[str, ...]
    spelling: dict[str, str]
    bound: dict[str, int | bool]
    code: bytes


_encode = msgspec.msgpack.encode
_decode = msgspec.msgpack.Decoder(Record | str).decode  # str: why the backend refuses it


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The program of a snippet (PtxError on bad text, Unsupported where the backend
    cannot be exact), its inputs named as the text names them."""
    store = _store()
    key = _text_prefix(opts) + text
    if hit := store.get(key):  # a text that parsed once parses the same
        return _program(_decode(hit))
    from ..program import Program  # the parser: only where a text is new

    shape, parsed = shaped(Program.parse(text))  # errors name the text's own registers
    shape_key = f"shape {opts!r} {shape.text}"
    hit = store.get(shape_key)  # a new text of a known shape compiles nothing
    record = _decode(hit) if hit else _generate(parsed, opts)
    store.put(shape_key, _encode(record))  # where it was there: nothing written
    if type(record) is not str:
        record = _record(_program(record).renamed(shape))
    store.put(key, _encode(record))
    return _program(record)


def _generate(shape: Program, opts: Options) -> Record | str:
    from ..fast.codegen import compile_snippet  # Z3: only where a shape is new

    try:
        return _record(compile_snippet(shape, opts))
    except Unsupported as e:
        return str(e)


def _record(program: FastProgram) -> Record:
    return Record(program.slots, program.outputs, {k: t.name for k, t in program.types.items()},
                  program.lines, program.results, program.spelling, dict(program.bound),
                  program.code or program.compiled())


def _program(record: Record | str) -> FastProgram:
    if type(record) is str:
        raise Unsupported(record)
    return FastProgram(record.slots, record.outputs,
                       {k: ptx_type(t) for k, t in record.types.items()}, record.lines,
                       record.results, record.spelling, record.bound, record.code)


@lru_cache(maxsize=64)
def _text_prefix(opts: Options) -> str:
    """A text's key less the text (written once: Options' repr costs)."""
    return f"text {opts!r} "
