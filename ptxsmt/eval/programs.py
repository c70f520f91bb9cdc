"""A snippet's compiled program: from memory, else the on-disk cache, else composed from
its core's program (`core.py`), else the code generator (the only step that needs Z3).

Texts of one shape (differing in register names or immediates) share one program;
the cache keys it by the shape's text and the options (a cold run's next text of a
shape finds it among the records this run has put). A shape the fast path cannot
take exactly is remembered too, so a warm run does not try it again. A core's program
comes from memory, the cache, the programs shipped with ptxsmt (`shipped.py`), or the
code generator, in that order.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ..isa.errors import PtxError
from ..sem.options import DEFAULT, Options
from . import cache, shipped
from .fast import FastProgram, Unsupported
from .shape import Shape, shaped

if TYPE_CHECKING:
    from ..program import Program

_UNSUPPORTED = "unsupported: "


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The vectorised form of a snippet (raises PtxError on bad text, Unsupported where it
    cannot be exact)."""
    store = cache.store()
    if store and (hit := store.get(f"text {text}")):
        # a warm cache knows the shape without parsing (a text that parses once parses
        # the same way under the same fingerprint; an error is never cached)
        shape = Shape.from_json(hit[0])
        return compile_shape(shape.text, opts).renamed(shape)
    shape, parsed = shaped(_parsed(text))  # the text's own errors, places, spellings
    if store:
        store.put(f"text {text}", shape.to_json())
    return _shape_program(shape.text, opts, parsed).renamed(shape)


@lru_cache(maxsize=4096)
def compile_shape(text: str, opts: Options) -> FastProgram:
    return _shape_program(text, opts, None)


def _shape_program(text: str, opts: Options, parsed: Program | None) -> FastProgram:
    """The shape's program from the cache, else made (`parsed`: the shape's text parsed,
    where the caller has it: parsing costs as much as composing)."""
    store = cache.store()
    key = f"shape {opts!r} {text}"
    hit = store.get(key) if store else None
    if hit:
        return _program(*hit)
    record, code = _compose_or_generate(parsed or _parsed(text), opts)
    if store:
        store.put(key, record, code)
    return _program(record, code)


def _compose_or_generate(shape: Program, opts: Options) -> tuple[str, bytes | None]:
    """The shape's program composed from its core's where it has one the fast path
    takes, else generated from the shape's own terms."""
    from .core import compose, core_of  # the parser's modules: only where a shape is new

    core = core_of(shape)
    try:
        fast = compose(compile_core(core, opts), shape) if core else None
    except (Unsupported, PtxError):  # compiled whole: its own terms may simplify to what
        fast = None  # the fast path takes; `setp.f16 p|_, a, b` is legal, its core `p|q` not
    return (fast.to_json(), fast.compiled()) if fast else _generate(shape, opts)


@lru_cache(maxsize=4096)
def compile_core(text: str, opts: Options) -> FastProgram:
    """A core's program (its lines are composed, never run, so no bytecode is kept)."""
    store = cache.store()
    key = f"core {opts!r} {text}"
    hit = store.get(key) if store else None
    record = hit[0] if hit else shipped.record(key)
    if record is None:
        record, _ = _generate(_parsed(text), opts)
        if store:
            store.put(key, record)
    return _program(record, None)


def core_record(text: str, opts: Options = DEFAULT) -> str:
    """A core's program as the shipped file keeps it, generated afresh."""
    return _generate(_parsed(text), opts)[0]


def _parsed(text: str) -> Program:
    from ..program import Program  # the parser: only where a text or shape is new

    return Program.parse(text)


def _program(record: str, code: bytes | None) -> FastProgram:
    if record.startswith(_UNSUPPORTED):
        raise Unsupported(record.removeprefix(_UNSUPPORTED))
    return FastProgram.from_json(record, code)


def _generate(program: Program, opts: Options) -> tuple[str, bytes | None]:
    from .codegen import compile_snippet  # imports Z3: only where a program is new

    try:
        fast = compile_snippet(program, opts)
    except Unsupported as e:
        return _UNSUPPORTED + str(e), None
    return fast.to_json(), fast.compiled()
